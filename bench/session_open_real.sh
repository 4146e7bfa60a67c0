#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# session_open, real pods: fornaxd and one real nodeagentd on this host, on
# namespaces as in tests/e2e/serverless.sh (deploy/lib/fxbed.sh: fornaxd in
# its own namespace serving TLS on a cluster network, the node with its xgate
# instance and ingress), an application of fornax-echo pods, and fx_probe
# `opens` (in the cluster network's namespace, https verified against the
# test CA; every POST a new connection, TLS handshake included, as a
# client's first request). An open is timed from the POST to the watch event
# saying Available; fornaxd's own figure (the session's availableTimeMicro -
# creationTimeMicro) is shown beside it.
#
#  warm  a pool of W standby pods (frozen), filled first; the policy's low
#        threshold is then set to 0 so that no pod starts while opens run:
#        W opens one at a time (p50, p99).
#  idle  the pool brought to 100 pods (W of them holding sessions):
#        nodeagentd's RSS, and its CPU over 10 s with nothing happening
#        (utime+stime from /proc/PID/stat).
#  rate  a pool of B more standby pods, then B opens 16 at a time
#        (opens/s), with fornaxd's and nodeagentd's CPU meanwhile.
#  cold  minimumInstance 0, no standby (idle thresholds 0): every open
#        starts a pod (placement, namespace, veth, cgroup, the process, its
#        session service), K opens one at a time, each posted 150 ms after
#        the last one ended (p50, p99): fornaxd sizes a pool in rounds at
#        most 100 ms apart (FX_ROUND_MS), so an open posted as soon as the
#        last one ended waits for the next round and takes a round's length
#        whatever the node does; 150 ms apart, its round is due when it
#        arrives. Then K more back to back, as before (the round's pace).
#        App initialisation is excluded by the choice of app: fornax-echo is
#        ready as soon as it has bound its port and said so on the session
#        socket (a few system calls), so the figure is the platform's.
#
#   usage: bench/session_open_real.sh [options] XGATE FORNAXD NODEAGENTD FORNAX_ECHO FX_PROBE
#   (cmake target: bench_session_open_real; needs root)
#
#   --warm W     opens one at a time on W standby pods (default 40; at most 100)
#   --batch B    opens 16 at a time on B more standby pods (default 140: with
#                the 100 before, at most 253 pods, the addresses of a node's /24)
#   --cold K     cold opens (default 40)
#   --ec         fornaxd's certificate on a P-256 key (default RSA-2048, as the
#                tests'): every open is a new TLS connection, so the server's
#                key is part of what an open costs
#   --keep       keep the temporary directory (configs, logs, databases)
#
# Exit: 0 when it ran (no assertion on any figure), 1 on a failure.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
W=40 B=140 K=40 KEEP= FX_KEY=
while [ $# -gt 5 ]; do
	case $1 in
	--warm) W=$2; shift 2 ;;
	--batch) B=$2; shift 2 ;;
	--cold) K=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--ec) FX_KEY=ec; shift ;;
	*) echo "session_open_real: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ $# = 5 ] || { sed -n '/usage:/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "session_open_real: needs root" >&2; exit 2; }
XGATE=$(readlink -f "$1")
FXD=$(readlink -f "$2")
NAD=$(readlink -f "$3")
ECHO=$(readlink -f "$4")
PROBE=$(readlink -f "$5")
NETSH=$HERE/../control/nodeagentd/nodeagent-net.sh
FX_P=$$
FX_T=$(mktemp -d /tmp/xgb-fxr-XXXXXX)
FX_PODS=$((100 + B + 5)) # a /24 of pod addresses: at most 253
source "$HERE/../deploy/lib/ca.sh"
source "$HERE/../deploy/lib/fxbed.sh"
cleanup() {
	fx_bed_down
	[ -n "$KEEP" ] && echo "kept $FX_T" || rm -rf "$FX_T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "session_open_real: $*" >&2; for f in "$FX_T"/*.log; do echo "--- $f" >&2; tail -5 "$f" >&2; done; exit 1; }
say() { echo "session_open_real: $*"; }
xc() { # xc OBJECT VERB ARGS: the CLI from the cluster network
	local o=$1 v=$2
	shift 2
	ip netns exec "$(fx_ns lan)" "$XGATE" "$o" "$v" --server "https://$FX_CORE_IP:$FX_PORT" \
		--token "$FX_TOKEN" --ca "$FX_T/ca.pem" "$@"
}
q() { fx_curl "$FX_API$1" | jq -r "$2"; }
standby() { q "/namespaces/default/pods" "[.items[]|select(.metadata.labels.application==\"$1\" and .status.fornaxState==\"Standby\")]|length"; }
npods() { q "/namespaces/default/pods" '.items|length'; }
wait_until() { # wait_until SECONDS WHAT CMD...
	local end=$((SECONDS + $1)) what=$2
	shift 2
	until "$@"; do [ $SECONDS -ge $end ] && die "$what: not within $1 s"; sleep 0.2; done
}
app() { # app NAME LOW HIGH: create or change (the CLI)
	cat >"$FX_T/$1.json" <<EOF
{"metadata":{"name":"$1"},"spec":{"containers":[{"name":"echo","command":["$ECHO"],
 "args":["--port","8080"],"ports":[{"containerPort":8080,"protocol":"TCP"}],
 "resources":{"requests":{"cpu":"10m","memory":"4Mi"},"limits":{"cpu":"500m","memory":"32Mi"}}}],
 "usingNodeSessionService":true,
 "scalingPolicy":{"minimumInstance":0,"maximumInstance":400,"burst":10,
  "scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":$3,"low":$2}}}}
EOF
	xc app apply -f "$FX_T/$1.json" >/dev/null || die "app apply $1 ($2..$3)"
}
has_standby() { [ "$(standby "$1")" -ge "$2" ] 2>/dev/null; }
# probe NAME APP N C [OPTION...]: N opens of APP, C at a time; RESULT line in NAME.out
probe() {
	local name=$1 a=$2 n=$3 c=$4
	shift 4
	ip netns exec "$(fx_ns lan)" "$PROBE" opens --server "$FX_CORE_IP:$FX_PORT" --ca "$FX_T/ca.pem" \
		--token "$FX_TOKEN" --app "$a" --sessions "$n" --concurrency "$c" --prefix "$name" "$@" \
		>"$FX_T/$name.out" 2>"$FX_T/$name.err" || die "fx_probe $name: $(tail -3 "$FX_T/$name.err")"
}
field() { awk -v k="$2" '$1 == "RESULT" { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' "$FX_T/$1.out"; }
# server NAME: fornaxd's own open times of NAME-* (ms): "p50/p99"
server() {
	fx_curl "$FX_API/namespaces/default/applicationsessions" | jq -r --arg p "$1-" '
		[.items[] | select(.metadata.name | startswith($p)) |
		 (.status.availableTimeMicro - .status.creationTimeMicro) / 1000] | sort |
		if length == 0 then "-" else
		"\(.[(length * 0.5 | ceil) - 1] * 10 | round / 10)/\(.[(length * 0.99 | ceil) - 1] * 10 | round / 10)" end'
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

say "fornaxd's TLS key: ${FX_KEY:-rsa}; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared: figures are upper bounds)"
fx_bed_up && fx_node 1 node-a || die "namespaces"
fx_fornaxd || die "fornaxd did not start"
fx_nad node-a
NADPID=$FX_NAD_node_a
node_ready() { xc node get node-a -o json 2>/dev/null | jq -e '.status.conditions[0].status == "True"' >/dev/null; }
wait_until 30 "node-a Ready" node_ready

# ---- warm, one at a time ----
app warm "$W" "$W"
wait_until 180 "$W standby pods" has_standby warm "$W"
app warm 0 "$W"
say "warm: $W standby pods; $W opens one at a time"
probe w1 warm "$W" 1

# ---- nodeagentd with 100 pods ($W holding sessions, the rest standby) ----
app warm $((100 - W)) $((100 - W))
wait_until 180 "100 pods" has_standby warm $((100 - W))
sleep 2
PODS=$(npods)
NAD_RSS=$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$NADPID/status")
# RssAnon: what is the daemon's own; the rest is shared libraries (libcrypto,
# libwebsockets, SQLite, libbpf, libc) mapped in every process using them
NAD_ANON=$(awk '/^RssAnon/ {printf "%.1f", $2 / 1024}' "/proc/$NADPID/status")
# Pss: its share of every page, the shared ones divided among the processes
# mapping them (what it adds to a host, not what it maps)
NAD_PSS=$(awk '/^Pss:/ {printf "%.1f", $2 / 1024}' "/proc/$NADPID/smaps_rollup")
t0=$(cpu_ticks "$NADPID")
sleep 10
t1=$(cpu_ticks "$NADPID")
NAD_CPU=$(awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", 100 * d / hz / 10}')
FXD_RSS=$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$FX_FXD_PID/status")
say "nodeagentd with $PODS pods: RSS $NAD_RSS MB ($NAD_ANON private), CPU $NAD_CPU % of a core over 10 s idle"

# ---- warm, 16 at a time ----
app warm "$B" "$B"
wait_until 300 "$B standby pods" has_standby warm "$B"
app warm 0 "$B"
say "warm: $B standby pods; $B opens 16 at a time"
# where the time goes: the daemons' CPU over the run, against its wall time
f0=$(cpu_ticks "$FX_FXD_PID") n0=$(cpu_ticks "$FX_NAD_node_a") s0=$(date +%s%N)
probe w2 warm "$B" 16
f1=$(cpu_ticks "$FX_FXD_PID") n1=$(cpu_ticks "$FX_NAD_node_a") s1=$(date +%s%N)
busy() { awk -v d="$1" -v hz="$(getconf CLK_TCK)" -v ns="$2" 'BEGIN {printf "%.0f", 100 * d / hz / (ns / 1e9)}'; }
W2_FXD=$(busy $((f1 - f0)) $((s1 - s0)))
W2_NAD=$(busy $((n1 - n0)) $((s1 - s0)))
say "during the $B opens 16 at a time ($(((s1 - s0) / 1000000)) ms): fornaxd $W2_FXD %, nodeagentd $W2_NAD % of a core"

# ---- cold ----
xc app delete warm >/dev/null
no_pods() { [ "$(npods)" = 0 ]; }
wait_until 120 "the warm pods gone" no_pods
# and gone from the node (their namespaces, veths and cgroups): a cold open
# should not queue behind 100 teardowns; the veths go with their namespaces,
# in the kernel's cleanup, a little later
node_quiet() {
	! ip netns list 2>/dev/null | grep -q "^xgt$FX_P-p1-" &&
		! ip -n "$(fx_ns n1)" -o link show 2>/dev/null | grep -q ": x1$FX_P[0-9]*@"
}
wait_until 120 "the node done with the warm pods" node_quiet
sleep 1
app cold 0 0
say "cold: no standby pod; $K opens one at a time, each 150 ms after the last (each starts a pod)"
probe c1 cold "$K" 1 --gap 150
say "cold, back to back: $K more, each as soon as the last one ended"
probe c2 cold "$K" 1

# the slowest opens by fornaxd's clock: which ones, and when
slowest() {
	fx_curl "$FX_API/namespaces/default/applicationsessions" | jq -r --arg p "$1-" '
		[.items[] | select(.metadata.name | startswith($p)) |
		 {n: .metadata.name, ms: ((.status.availableTimeMicro - .status.creationTimeMicro) / 1000 | round)}] |
		sort_by(-.ms) | .[:3] | map("\(.n) \(.ms) ms") | join(", ")'
}
say "slowest cold opens: $(slowest c1)"
row() { printf '%-46s %16s %14s %14s\n' "$@"; }
echo
row "figure" "xgate" "target" "original"
row "warm open p50/p99, ms (one at a time)" "$(field w1 p50_ms)/$(field w1 p99_ms)" "p99 <= 5" "p99 50 (target)"
row "  fornaxd's own p50/p99, ms" "$(server w1)" "" ""
row "warm opens/s (16 at a time)" "$(field w2 per_s)" ">= 1000" "100 (target)"
row "  p50/p99 at 16 at a time, ms" "$(field w2 p50_ms)/$(field w2 p99_ms)" "" ""
row "  fornaxd's own p50/p99 then, ms" "$(server w2)" "" ""
row "  CPU meanwhile, fornaxd / nodeagentd, % core" "$W2_FXD / $W2_NAD" "" ""
row "cold open p50/p99, ms (one at a time)" "$(field c1 p50_ms)/$(field c1 p99_ms)" "p99 <= 150" "1500 (target)"
row "  fornaxd's own p50/p99, ms" "$(server c1)" "" ""
row "  back to back (fornaxd's round), p50/p99, ms" "$(field c2 p50_ms)/$(field c2 p99_ms)" "" ""
row "nodeagentd RSS with $PODS pods, MB" "$NAD_RSS" "<= 10" "200 (budget)"
row "  of it private (RssAnon), MB" "$NAD_ANON" "" ""
row "  its proportional share (Pss), MB" "$NAD_PSS" "" ""
row "nodeagentd CPU idle (10 s, $PODS pods), % core" "$NAD_CPU" "~0" "50 (budget)"
row "fornaxd RSS then, MB" "$FXD_RSS" "" ""
exit 0
