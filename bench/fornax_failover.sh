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
#     with its lease; printed with the figures. Where the time goes, per
#     kill: the lease's expiry (an etcdctl watch of the leader key sees it
#     deleted), the standby's campaign winning, its takeover (fence, reread,
#     sweep), the client's retry to a 201, and the node's SessionState
#     (fornaxd's log lines are stamped as they come). The nodes report to
#     both cores: none registers again at a failover (counted).
#  2. watch lag: M applications created on the leader, each timed until the
#     standby serves it (GET polled every 5 ms).
#  3. throughput, etcd next to SQLite in the same run: application
#     creates/s, pod placements/s and session opens/s
#     (bench/fornax_throughput.sh, which says what touches the store).
#
#   usage: bench/fornax_failover.sh [--kills N] [--ttl S] [--timeout T] [--sessions K] [--apps M]
#          [--keep] FORNAXD FX_PROBE
#   (defaults: 20 kills, ElectionTTL 1 s with Timeout 300ms, 5 sessions per kill, 50
#   applications; the test cluster's etcd has --election-timeout 500, so its least lease is 1 s)
#
# Exit: 0 when it ran and no acknowledged session was lost, 1 otherwise.
set -u
KILLS=20 TTL=1 TO=300ms K=5 M=50 KEEP=
while [ $# -gt 2 ]; do
	case $1 in
	--kills) KILLS=$2; shift 2 ;;
	--ttl) TTL=$2; shift 2 ;;
	--timeout) TO=$2; shift 2 ;;
	--sessions) K=$2; shift 2 ;;
	--apps) M=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	*) echo "unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ $# = 2 ] || { sed -n 3,30p "$0" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
PROBE=$(readlink -f "$2")
TESTS=$HERE/../tests
source "$TESTS/etcd.sh"
source "$HERE/fornax_throughput.sh"
source "$TESTS/fornax/ha_lib.sh"
ROW_W=50
source "$HERE/lib/failover.sh"
declare -A PID FXT_PID
SIMS= WPID=
etcd_test_stop() { for p in "${PID[@]}" "${FXT_PID[@]}" $SIMS $WPID; do kill -9 "$p" 2>/dev/null; done; }
etcd_test xgb-fxfo 3 || { echo "no etcd cluster" >&2; exit 1; }

TOK=$(secret tok)
JOIN=$(secret join)
PREFIX=/xgb-fo$$/
V1=/apis/core.fornax-serverless.centaurusinfra.io/v1
APPS=/namespaces/default/applications
SESS=/namespaces/default/applicationsessions
PORTS="$(free_port) $(free_port)"
HA_TTL=${TTL}s HA_TIMEOUT=$TO
for p in $PORTS; do ha_conf "$T/$p.conf" "$p"; done
start() { "$FXD" -c "$T/$1.conf" 2> >(stamp >> "$T/$1.log") & PID[$1]=$!; }
healthy() { ha_healthy "$1"; }
# linked LOG FROM: after line FROM of LOG (a core's log, appended to across its
# restarts), it started as a standby and every node registered with it. A
# standby's nodes link a moment after it says "standby as" (it listens later;
# their first join goes to the leader, then they come back with a credential):
# a kill before that would count their first registrations as relinks.
linked() {
	tail -n +$(($2 + 1)) "$1" |
		awk '/standby as/ {s = 1} s && /registered/ {seen[$4] = 1} END {exit !(s && length(seen) >= 2)}'
}
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

for p in $PORTS; do start "$p"; sleep 1; done
# the leader key's deletes: when the dead leader's lease expired
ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" watch "${PREFIX}leader" 2>/dev/null | stamp > "$T/watch" &
WPID=$!
wait_for 15 test -n "$(leader)" || { echo "no leader" >&2; exit 1; }
URLS=$(for p in $PORTS; do printf 'ws://127.0.0.1:%s,' "$p"; done)
HA_SIM_ARGS="--pods 2000"
ha_sims "${URLS%,}" "$T/sim" "$T/sim" node-a node-b
SIMS=$HA_SIMS
L=$(leader)
[ "$(post "$L" $APPS "$(app echo 4000)")" = 201 ] || { echo "cannot create echo" >&2; exit 1; }
nready() { [ "$(get "$1" /nodes | jq '[.items[]|select(.status.conditions[0].status=="True")]|length')" = 2 ]; }
wait_for 20 nready "$L" || { echo "nodes did not link" >&2; exit 1; }
for p in $PORTS; do [ "$p" != "$L" ] && O=$p; done
wait_for 20 linked "$T/$O.log" 0 || { echo "nodes did not link to the standby" >&2; exit 1; }

: > "$T/failover" ; LOST=0 S=0 RELINK=0
for k in $(seq 1 "$KILLS"); do
	L=$(leader)
	for p in $PORTS; do [ "$p" != "$L" ] && O=$p; done
	want=
	for _ in $(seq 1 "$K"); do
		S=$((S + 1))
		[ "$(post "$L" $SESS "$(session "s$S")")" = 201 ] && wait_for 10 avail "$L" "s$S" && want="$want s$S"
	done
	regs=$(grep -c registered "$T/$O.log")
	kill_leader "${PID[$L]}"
	S=$((S + 1))
	until healthy "$O" && [ "$(post "$O" $SESS "$(session "s$S")")" = 201 ]; do sleep 0.02; done
	t201=$(now_ms)
	until avail "$O" "s$S"; do sleep 0.01; done
	t1=$(now_ms)
	echo $((t1 - t0)) >> "$T/failover"
	if [ "$(grep -c registered "$T/$O.log")" != "$regs" ]; then
		RELINK=$((RELINK + 1))
		echo "kill $k: registered again on $O (killed at $t0):"
		grep registered "$T/$O.log" | tail -n +$((regs + 1)) | sed 's/^/  /'
	fi
	texp=$(first_after "$T/watch" "$t0" DELETE)
	twon=$(first_after "$T/$O.log" "$t0" "leader as")
	tlead=$(first_after "$T/$O.log" "$t0" "leads now")
	if [ -n "$texp" ] && [ -n "$twon" ] && [ -n "$tlead" ]; then
		echo $((texp - t0)) >> "$T/p.expiry"
		echo $((twon - texp)) >> "$T/p.campaign"
		echo $((tlead - twon)) >> "$T/p.takeover"
		echo $((t201 - tlead)) >> "$T/p.client"
		echo $((t1 - t201)) >> "$T/p.node"
	fi
	for s in $want; do wait_for 10 avail "$O" "$s" || LOST=$((LOST + 1)); done
	n=$(wc -l < "$T/$L.log")
	start "$L"
	wait_for 10 linked "$T/$L.log" "$n" || echo "kill $k: the nodes did not link to the restarted $L" >&2
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
echo "fornax_failover: 3 etcd members, 2 fornaxd, 2 simulated nodes; Timeout $TO, ElectionTTL ${TTL} s"
row_head
row "failover, kill -9 -> new session Available (ms)" "$T/failover"
row "  the lease expires (the leader key deleted)" "$T/p.expiry"
row "  the standby's campaign wins" "$T/p.campaign"
row "  its takeover (fence, reread, sweep)" "$T/p.takeover"
row "  the client's retry -> 201" "$T/p.client"
row "  201 -> Available (the node's report)" "$T/p.node"
row "watch lag, leader 201 -> standby GET (ms)" "$T/lag"
echo "floor: the lease TTL, $((TTL * 1000)) ms, counted from the leader's last renewal (every TTL/3): $((TTL * 2000 / 3))-$((TTL * 1000)) ms after the kill, plus etcd's expiry check (every 500 ms); then a campaign (when the standby's watch sees the key deleted). Nodes relinked at a failover: $RELINK of $KILLS (they report to every core)"
echo "leaders that lost the lead without being killed (a renewal too late): $(cat "$T"/*.log | grep -c 'no longer the leader')"
echo "kills: $KILLS; sessions Available before a kill and missing after it: $LOST (must be 0)"
TP=0
fx_throughput "$FXD" "$PROBE" "$ETCD_ENDPOINTS" "$T" || TP=1
[ "$LOST" = 0 ] && [ "$TP" = 0 ]
