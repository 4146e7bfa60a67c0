#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# fornax_failover: active/standby fornaxd on a three-member etcd cluster on
# loopback ([Store] Election = on), two simulated nodes (tests/fornax/simnode.py)
# given both cores' URLs.
#  1. failover time, over N kills: open K sessions on the leader (each
#     Available), kill -9 it, time until the new leader has a new session
#     Available (the client's view of "opens resume"); every session opened
#     before the kill must be Available on the new leader (lost ones are
#     counted; the figure must be 0); the killed one restarts as the standby.
#     The floor is the lease TTL (ElectionTTL): the dead leader's key goes
#     with its lease; printed with the figures.
#  2. watch lag: M applications created on the leader, each timed until the
#     standby serves it (GET polled every 5 ms).
#  3. throughput, etcd next to SQLite in the same run: application
#     creates/s, pod placements/s and session opens/s
#     (bench/fornax_throughput.sh, which says what touches the store).
#
#   usage: bench/fornax_failover.sh [--kills N] [--ttl S] [--sessions K] [--apps M] [--keep] FORNAXD FX_PROBE
#   (defaults: 20 kills, TTL 3 s with Timeout 1 s, 5 sessions per kill, 50 applications)
#
# Exit: 0 when it ran and no acknowledged session was lost, 1 otherwise.
set -u
KILLS=20 TTL=3 K=5 M=50 KEEP=
while [ $# -gt 2 ]; do
	case $1 in
	--kills) KILLS=$2; shift 2 ;;
	--ttl) TTL=$2; shift 2 ;;
	--sessions) K=$2; shift 2 ;;
	--apps) M=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	*) echo "unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ $# = 2 ] || { sed -n 3,20p "$0" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
PROBE=$(readlink -f "$2")
TESTS=$HERE/../tests
source "$TESTS/lib.sh"
source "$TESTS/edge/lib.sh"
source "$TESTS/etcd.sh"
source "$HERE/fornax_throughput.sh"
PY=/usr/bin/python3
T=$(mktemp -d /tmp/xgb-fxfo-XXXXXX)
declare -A PID FXT_PID
SIMS=
cleanup() {
	for p in "${PID[@]}" "${FXT_PID[@]}" $SIMS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	etcd_stop
	[ -n "$KEEP" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM
etcd_start 3 || { echo "no etcd cluster" >&2; exit 1; }
trap cleanup EXIT

TOK=$(secret tok)
JOIN=$(secret join)
PREFIX=/xgb-fo$$/
V1=/apis/core.fornax-serverless.centaurusinfra.io/v1
APPS=/namespaces/default/applications
SESS=/namespaces/default/applicationsessions
PORTS="$(free_port) $(free_port)"
for p in $PORTS; do
	cat > "$T/$p.conf" <<EOF
[API]
Listen = 127.0.0.1:$p
Token = $TOK
[Store]
Backend = etcd
Endpoints = $ETCD_ENDPOINTS
Prefix = $PREFIX
Timeout = 1s
Election = on
ElectionTTL = ${TTL}s
[Nodes]
JoinToken = $JOIN
EOF
done
now_ms() { echo $(($(date +%s%N) / 1000000)); }
start() { "$FXD" -c "$T/$1.conf" 2>> "$T/$1.log" & PID[$1]=$!; }
healthy() { curl -sf -m 2 "http://127.0.0.1:$1/healthz" >/dev/null; }
get() { curl -sf -m 3 -H "Authorization: Bearer $TOK" "http://127.0.0.1:$1$V1$2"; }
post() {
	curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary "$3" "http://127.0.0.1:$1$V1$2"
}
app() {
	printf '{"metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","command":["/bin/srv"],"ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"10m","memory":"8Mi"}}}],"scalingPolicy":{"minimumInstance":0,"maximumInstance":%s,"burst":4,"scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":4,"low":2}}}}' "$1" "$2"
}
session() { printf '{"metadata":{"name":"%s"},"spec":{"applicationName":"echo","sessionData":"aGk=","openTimeoutSeconds":30,"killInstanceWhenSessionClosed":false}}' "$1"; }
avail() { [ "$(get "$1" "$SESS/$2" | jq -r .status.sessionStatus 2>/dev/null)" = Available ]; }
leader() { for p in $PORTS; do healthy "$p" && { echo "$p"; return; }; done; }
pct() { sort -n | awk -v q="$1" '{v[NR]=$1} END {i=int(q*(NR-1)+0.999); printf "%d", v[i+1]}'; }

for p in $PORTS; do start "$p"; sleep 1; done
wait_for 15 test -n "$(leader)" || { echo "no leader" >&2; exit 1; }
URLS=$(for p in $PORTS; do printf 'ws://127.0.0.1:%s,' "$p"; done)
for n in node-a node-b; do
	$PY "$TESTS/fornax/simnode.py" run "${URLS%,}" "$n" "$T/sim" --join "$JOIN" --pods 2000 2>> "$T/sim-$n.log" &
	SIMS="$SIMS $!"
done
L=$(leader)
[ "$(post "$L" $APPS "$(app echo 4000)")" = 201 ] || { echo "cannot create echo" >&2; exit 1; }
nready() { [ "$(get "$1" /nodes | jq '[.items[]|select(.status.conditions[0].status=="True")]|length')" = 2 ]; }
wait_for 20 nready "$L" || { echo "nodes did not link" >&2; exit 1; }

: > "$T/failover" ; LOST=0 S=0
for k in $(seq 1 "$KILLS"); do
	L=$(leader)
	for p in $PORTS; do [ "$p" != "$L" ] && O=$p; done
	want=
	for _ in $(seq 1 "$K"); do
		S=$((S + 1))
		[ "$(post "$L" $SESS "$(session "s$S")")" = 201 ] && wait_for 10 avail "$L" "s$S" && want="$want s$S"
	done
	t0=$(now_ms)
	kill -9 "${PID[$L]}"
	wait "${PID[$L]}" 2>/dev/null
	S=$((S + 1))
	until healthy "$O" && [ "$(post "$O" $SESS "$(session "s$S")")" = 201 ]; do sleep 0.02; done
	until avail "$O" "s$S"; do sleep 0.01; done
	t1=$(now_ms)
	echo $((t1 - t0)) >> "$T/failover"
	for s in $want; do wait_for 10 avail "$O" "$s" || LOST=$((LOST + 1)); done
	start "$L"
	wait_for 10 grep -q "standby as" "$T/$L.log"
	printf 'kill %2d: %5d ms\n' "$k" $((t1 - t0))
done

L=$(leader)
for p in $PORTS; do [ "$p" != "$L" ] && O=$p; done
: > "$T/lag"
for i in $(seq 1 "$M"); do
	[ "$(post "$L" $APPS "$(app "lag$i" 1)")" = 201 ] || continue
	t0=$(now_ms)
	until get "$O" "$APPS/lag$i" >/dev/null; do sleep 0.005; done
	echo $(($(now_ms) - t0)) >> "$T/lag"
done

echo
echo "fornax_failover: 3 etcd members, 2 fornaxd, 2 simulated nodes; Timeout 1 s, ElectionTTL ${TTL} s"
printf '%-44s %8s %8s %8s\n' "" p50 p99 max
printf '%-44s %8s %8s %8s\n' "failover, kill -9 -> new session Available (ms)" \
	"$(pct 0.5 < "$T/failover")" "$(pct 0.99 < "$T/failover")" "$(sort -n "$T/failover" | tail -1)"
printf '%-44s %8s %8s %8s\n' "watch lag, leader 201 -> standby GET (ms)" \
	"$(pct 0.5 < "$T/lag")" "$(pct 0.99 < "$T/lag")" "$(sort -n "$T/lag" | tail -1)"
echo "floor: the lease TTL, $((TTL * 1000)) ms, counted from the leader's last renewal (every TTL/3): $((TTL * 2000 / 3))-$((TTL * 1000)) ms after the kill; plus up to 1000 ms (the standby's campaign interval) and the nodes' relink"
echo "kills: $KILLS; sessions Available before a kill and missing after it: $LOST (must be 0)"
TP=0
fx_throughput "$FXD" "$PROBE" "$ETCD_ENDPOINTS" "$T" || TP=1
[ "$LOST" = 0 ] && [ "$TP" = 0 ]
