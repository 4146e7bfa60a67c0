#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# session_open: fornaxd's session opens and pod placements, against the
# original's targets (seed 004: session open p99 50 ms with an idle
# instance, 100 sessions/s; Dirigent's ~2,500 placements/s for ~100 nodes).
#
#  1. control plane alone: fornaxd on 127.0.0.1 and fx_probe's simulated
#     node agents (--nodes, each answering at once): pod placements per
#     second (A applications of P/A pods each, created at once; from the
#     first POST to the last PodCreate a node received), then S session
#     opens C at a time (POST -> the watch event saying Available): opens/s;
#     then, on a fresh fornaxd, 1,000 opens one at a time: the latency of an
#     open without queueing behind others (p50, p99). Each POST is a new TCP
#     connection, as a client's first request is. fornaxd's RSS after the
#     first run, and again with 10,000 sessions.
#  2. real pods: bench/session_open_real.sh (fornaxd and a real nodeagentd
#     on namespaces; target bench_session_open_real).
#
#   usage: bench/session_open.sh [options] FORNAXD FX_PROBE
#   e.g.   bench/session_open.sh build/control/fornaxd build/bench/fx_probe
#   (cmake target: bench_session_open)
#
#   --nodes N        simulated node agents (default 100)
#   --apps A         applications (default 10)
#   --pods P         pods in all (default 2000)
#   --sessions S     opens (default 2000; at most P)
#   --concurrency C  opens in flight (default 16)
#   --big N          sessions for the RSS figure (default 10000; 0: skip)
#   --keep           keep the temporary directory (configs, logs, databases)
#
# Exit: 0 when it ran (no assertion on any figure), 1 on a failure.
set -u
NODES=100 APPS=10 PODS=2000 SESSIONS=2000 CONC=16 BIG=10000 KEEP=
while [ $# -gt 2 ]; do
	case $1 in
	--nodes) NODES=$2; shift 2 ;;
	--apps) APPS=$2; shift 2 ;;
	--pods) PODS=$2; shift 2 ;;
	--sessions) SESSIONS=$2; shift 2 ;;
	--concurrency) CONC=$2; shift 2 ;;
	--big) BIG=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	*) echo "session_open: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ $# = 2 ] || { sed -n '/usage:/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
FORNAXD=$(readlink -f "$1")
PROBE=$(readlink -f "$2")
T=$(mktemp -d /tmp/xgb-fx-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	[ -n "$KEEP" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

TOK=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
JOIN=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

# start NAME: a fresh fornaxd; PORT and PID
start() {
	PORT=$(port)
	cat > "$T/$1.conf" <<EOF
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
MaxSessionsPerClient = 0
[Store]
Database = $T/$1.db
[Nodes]
JoinToken = $JOIN
EOF
	"$FORNAXD" -c "$T/$1.conf" 2>> "$T/$1.log" &
	PID=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null && return 0; sleep 0.05; done
	echo "session_open: fornaxd did not start: $(tail -3 "$T/$1.log")" >&2
	exit 1
}
stop() { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=; }
# probe NAME ARGS: fx_probe against the running fornaxd, its RESULT lines in $T/NAME.out
probe() {
	local n=$1
	shift
	"$PROBE" cp --server "127.0.0.1:$PORT" --token "$TOK" --join "$JOIN" "$@" > "$T/$n.out" 2> "$T/$n.err" ||
		{ echo "session_open: fx_probe $n failed: $(tail -5 "$T/$n.err")" >&2; exit 1; }
}
# field NAME KIND KEY: KEY's value on NAME's RESULT line of KIND
field() { awk -v k="$3" '$1 == "RESULT" && $2 ~ "^'"$2"'=" { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' "$T/$1.out"; }

echo "session_open: fornaxd with $NODES simulated nodes (control plane alone), $(nproc) cores"
start cp
IDLE_RSS=$(rss_mb "$PID")
probe cp --nodes "$NODES" --apps "$APPS" --pods "$PODS" --sessions "$SESSIONS" --concurrency "$CONC"
CP_RSS=$(rss_mb "$PID")
stop
sed 's/^/  /' "$T/cp.out" | grep -v RESULT
start lat
probe lat --nodes "$NODES" --apps "$APPS" --pods 1000 --sessions 1000 --concurrency 1
stop
sed 's/^/  /' "$T/lat.out" | grep -v RESULT
if [ "$BIG" -gt 0 ]; then
	start big
	probe big --nodes "$NODES" --apps "$APPS" --pods "$BIG" --sessions "$BIG" --concurrency 64
	BIG_RSS=$(rss_mb "$PID")
	stop
fi

printf '\n%-44s %14s %14s %14s\n' "figure" "fornaxd" "target" "original"
printf '%-44s %14s %14s %14s\n' "pod placements/s ($NODES nodes, $PODS pods)" "$(field cp placements per_s)" ">= 2500" "(unmeasured)"
printf '%-44s %14s %14s %14s\n' "session opens/s (concurrency $CONC)" "$(field cp opens per_s)" ">= 1000" "100 (target)"
printf '%-44s %14s %14s %14s\n' "open p50/p99, ms (concurrency $CONC)" "$(field cp opens p50_ms)/$(field cp opens p99_ms)" "" ""
printf '%-44s %14s %14s %14s\n' "open p50, ms (one at a time)" "$(field lat opens p50_ms)" "" ""
printf '%-44s %14s %14s %14s\n' "open p99, ms (one at a time)" "$(field lat opens p99_ms)" "<= 5" "50 (target)"
printf '%-44s %14s %14s %14s\n' "fornaxd RSS idle, MB" "$IDLE_RSS" "" ""
printf '%-44s %14s %14s %14s\n' "fornaxd RSS, $PODS pods + $SESSIONS sessions, MB" "$CP_RSS" "" ""
[ "$BIG" -gt 0 ] && printf '%-44s %14s %14s %14s\n' "fornaxd RSS, $BIG pods + $BIG sessions, MB" "$BIG_RSS" "" ""
exit 0
