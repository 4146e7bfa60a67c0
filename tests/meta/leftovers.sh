#!/usr/bin/env bash
# Runs last in ctest: nothing the other tests made may outlive them.
# Every test names its namespaces and xgate instances after its own PID
# (xgt<pid>, xgc<pid>-..., xgd<pid>-..., xgtc<pid>, xgt-fx-<pid>, etcd's
# xgte<pid>); what
# carries the PID of a process that is gone is a leftover. (PIDs still
# alive belong to a run in progress, e.g. a second suite on the machine.)
# Also: no pins at the bpffs root (an object loaded without our pin root).
set -u
source "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }
pat='^(xgt-fx-|xgtc|xgt|xgc|xgd)([0-9]+)(-.*)?$'
dead() { # dead NAME: NAME is one of ours and its test process is gone
	[[ $1 =~ $pat ]] && ! kill -0 "${BASH_REMATCH[2]}" 2>/dev/null
}
left=""
for n in $(ip netns list | awk '{print $1}'); do dead "$n" && left="$left $n"; done
[ -z "$left" ] && ok "no network namespace left by a test" || not_ok "namespaces left:$left"
left=""
for d in /sys/fs/bpf/xgate/*; do [ -e "$d" ] && dead "$(basename "$d")" && left="$left $(basename "$d")"; done
[ -z "$left" ] && ok "no xgate instance (pinned maps) left by a test" || not_ok "pins left:$left"
# etcd members of tests/etcd.sh: named xgte<pid>-m<i>, data in $TMPDIR/xgte<pid>
left=""
for n in $(ps -eo args= | sed -n 's/^etcd --name \(xgte[0-9]*\)-m[0-9]* .*/\1/p' | sort -u); do
	[[ $n =~ ^xgte([0-9]+)$ ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null && left="$left $n"
done
for d in "${TMPDIR:-/tmp}"/xgte*; do
	[[ $(basename "$d") =~ ^xgte([0-9]+)$ ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null &&
		left="$left $d"
done
[ -z "$left" ] && ok "no etcd member or data left by a test" || not_ok "etcd left:$left"
root=$(ls /sys/fs/bpf | grep '^xg_' | tr '\n' ' ')
[ -z "$root" ] && ok "no xgate map pinned at the bpffs root" || not_ok "pinned at /sys/fs/bpf: $root"
summary
