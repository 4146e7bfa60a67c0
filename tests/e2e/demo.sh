#!/usr/bin/env bash
# The README's first command, as a user runs it: deploy/demo.sh against this
# build. What it shows must hold (pings answered, the tenants apart, the
# mesh up, the edge tree whole, the mission's states at the root, sessions
# served through the ingress by both nodes and closed), and it leaves
# nothing behind.   usage: demo.sh BUILD_DIR
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(readlink -f "$1")
source "$HERE/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }
export DEMO_PREFIX=xgd$$ DEMO_FX_PREFIX=f$(($$ % 100000))
OUT=$(mktemp /tmp/xgt-demo-XXXXXX)
trap 'rm -f "$OUT"' EXIT

bash "$HERE/../../deploy/demo.sh" "$BUILD" > "$OUT" 2>&1
rc=$?
[ $rc = 0 ] && ok "the demo ran to its end" || not_ok "the demo exited $rc: $(tail -5 "$OUT")"
n=$(grep -c '3 of 3 replies' "$OUT")
[ "$n" = 6 ] && ok "six cross-cluster pings, every reply back" || not_ok "pings: $n of 6 lines with 3 of 3 replies"
grep -q 'from 1t (VPC 200) 10.1.3.11 (a VPC 100 pod in edge-3) answers: nobody' "$OUT" &&
	ok "VPC 200 does not reach VPC 100" || not_ok "tenants: $(grep 'from 1t' "$OUT")"
[ "$(grep -cE '^  gw[123] +gw[123] +up ' "$OUT")" = 6 ] && ok "the mesh: six peerings up" ||
	not_ok "mesh: $(grep -E '^  gw[123] +gw' "$OUT")"
[ "$(grep -cE '^  gw[123] +gw[123] +up .* (aes-256-gcm|chacha20-poly1305)$' "$OUT")" = 6 ] &&
	ok "all six encrypted (the default mode)" || not_ok "ciphers: $(grep -E '^  gw[123] +gw' "$OUT")"
grep -q 'the root sees: cloud=ok edge-1=ok edge-2/edge-3=ok edge-2=ok' "$OUT" &&
	ok "the edge tree: the root sees all four clusters" || not_ok "tree: $(grep 'root sees' "$OUT")"
grep -qE '^  edge-1 +running since' "$OUT" && grep -qE '^  edge-2/edge-3 +running since' "$OUT" &&
	grep -qE '^  edge-2 +not matched' "$OUT" &&
	ok "the mission ran where its labels matched (edge-1, edge-2/edge-3), its states at the root" ||
	not_ok "mission states: $(grep -A6 'its states' "$OUT")"
n=0
for i in 1 2 3 4 5 6; do
	grep -Eq "^  demo-$i +node-[ab] +10\.88\.[12]\.1:[0-9]+ +[0-9.]+ +hello from session $i\$" "$OUT" && n=$((n + 1))
done
[ $n = 6 ] && ok "six sessions opened, each client's curl got its own session's data" ||
	not_ok "sessions: $n of 6 served: $(grep -A8 'SESSION  ' "$OUT")"
grep -Eq '^  demo-[0-9] +node-a ' "$OUT" && grep -Eq '^  demo-[0-9] +node-b ' "$OUT" &&
	ok "served by both nodes" || not_ok "not both nodes: $(grep -E '^  demo-' "$OUT")"
[ "$(grep -cE '^  demo-[1-6] +echo +Closed ' "$OUT")" = 6 ] && ok "all six closed" ||
	not_ok "closed: $(grep -E '^  demo-[1-6] +echo ' "$OUT")"
[ "$(grep -c "now gets: no answer" "$OUT")" = 2 ] && ok "closed sessions' endpoints no longer answer" ||
	not_ok "after the close: $(grep 'now gets' "$OUT")"
grep -q 'done: no namespaces, pins or daemons left' "$OUT" && ok "it says it cleaned up" || not_ok "no teardown line"
left=$(ip netns list | grep -cE "^($DEMO_PREFIX-|xgt${DEMO_FX_PREFIX}-)")
[ "$left" = 0 ] && ok "no namespace of the demo is left" || not_ok "$left namespaces left"
[ ! -e "/tmp/$DEMO_PREFIX-tree" ] && [ ! -e "/tmp/$DEMO_PREFIX-run" ] && [ ! -e "/tmp/$DEMO_PREFIX-fx" ] &&
	[ ! -e "/sys/fs/cgroup/freezer/xgt${DEMO_FX_PREFIX}" ] && ok "nor its run directories and cgroups" ||
	not_ok "run directories left: $(ls -d /tmp/$DEMO_PREFIX-* 2>/dev/null)"
pgrep -f "/tmp/$DEMO_PREFIX-" > /dev/null && not_ok "daemons left: $(pgrep -af "/tmp/$DEMO_PREFIX-")" || ok "nor its daemons"
summary
