#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# edge_failover: two edgeclusterd roots on a three-member etcd cluster on
# loopback (TLS with client certificates), active/standby, with C child
# clusters whose Parent lists both roots (tests/edge/failover_lib.sh, the
# setup of the edge_failover test). For each lease setting (ElectionTTL S,
# Timeout S/3 but at most 1 s), N kills -9 of the leading root; per kill:
#  (a) kill -> the standby leads (its /healthz 200, polled every 20 ms);
#  (b) kill -> a mission created at the new leader acknowledged (201;
#      POSTed again while it answers 503 or 5xx);
#  (c) kill -> that mission applied by every child and each child's state
#      of it reported up to the new leader (GET polled every 20 ms).
# Where (a) goes: the lease's expiry (an etcdctl watch of the leader key
# sees it deleted), then the standby's campaign and takeover (its log line
# "leads now"; lines are stamped as they come). Before each kill, M missions
# are created at the leader (201): one missing at the new leader is lost
# (the figure must be 0); a child not linked and healthy at the new leader
# within 30 s failed to relink (counted). The killed root restarts as the
# standby before the next kill.
#
#   usage: bench/edge_failover.sh [--kills N] [--ttls "1 3"] [--children C] [--missions M]
#          [--keep] EDGECLUSTERD
#   (defaults: 20 kills per lease, leases of 1 s and 3 s, 2 children, 2 missions per kill;
#   the test cluster's etcd has --election-timeout 500, so its least lease is 1 s)
#
# Exit: 0 when it ran and no acknowledged mission was lost, 1 otherwise.
set -u
KILLS=20 TTLS="1 3" NC=2 M=2 KEEP=
while [ $# -gt 1 ]; do
	case $1 in
	--kills) KILLS=$2; shift 2 ;;
	--ttls) TTLS=$2; shift 2 ;;
	--children) NC=$2; shift 2 ;;
	--missions) M=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	*) echo "unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ $# = 1 ] || { sed -n 3,27p "$0" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
TESTS=$HERE/../tests
source "$TESTS/etcd.sh"
source "$TESTS/edge/failover_lib.sh"
source "$HERE/lib/failover.sh"
etcd_test_stop() { edfo_stop; }
etcd_test xgb-edfo 3 tls || { echo "no etcd cluster" >&2; exit 1; }

# the roots' logs stamped (the children's as the test has them)
start_root() {
	"$ECD" -c "$T/$1.conf" 2> >(stamp >> "$T/$1.log") &
	PID[$1]=$!
	wait_for 15 curl -s -o /dev/null "$(url "$1")/healthz"
}
# a mission without a stateCheck: its state at a cluster is "applied" once done
post() { # post ROOT NAME: the HTTP code
	curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary \
		"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Mission\",\"metadata\":{\"name\":\"$2\"},\"spec\":{\"command\":{\"command\":[\"/bin/true\"]}}}" \
		"$(url "$1")/apis/edge.xgate.io/v1/missions"
}
reported() { # reported ROOT MISSION: every child's state of it is "applied" at ROOT
	[ "$(api "$1" "missions/$2" | jq -r --arg c "$CH" '[.state[($c | split(" "))[]]] | map(. == "applied") | all')" = true ]
}
leader() { for n in r1 r2; do [ "$(code $n)" = 200 ] && { echo $n; return; }; done; }
has_leader() { [ -n "$(leader)" ]; }

LOST_ALL=0
for ttl in $TTLS; do
	to=$((ttl * 1000 / 3))
	[ $to -gt 1000 ] && to=1000
	D=$T/ttl$ttl
	mkdir -p "$D"
	CH=$(seq -f 'c%g' 1 "$NC" | paste -sd' ')
	EDFO_PREFIX=/xgb-edfo$$-$ttl/ edfo_confs "${to}ms" "${ttl}s" $CH
	ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" --cacert "$T/ca.pem" --cert "$T/srv.pem" \
		--key "$T/srv.key" watch "${PREFIX}leader" 2>/dev/null > >(stamp > "$D/watch") &
	WPID=$!
	start_root r1 && wait_for 10 is 200 code r1 || { echo "r1 does not lead: $(tail -3 "$T/r1.log")" >&2; exit 1; }
	start_root r2
	for c in $CH; do start "$c"; done
	want=$(for n in root $CH; do echo "$n=ok"; done | sort | paste -sd' ')
	wait_for 30 is "$want" tree_at r1 || { echo "children did not attach: $(tree_at r1)" >&2; exit 1; }
	LOST=0 RELINK=0 S=0
	for k in $(seq 1 "$KILLS"); do
		L=$(leader)
		[ -n "$L" ] || { wait_for 20 has_leader && L=$(leader); }
		O=$([ "$L" = r1 ] && echo r2 || echo r1)
		acked=
		for _ in $(seq 1 "$M"); do
			S=$((S + 1))
			[ "$(post "$L" "b$S")" = 201 ] && acked="$acked b$S"
		done
		kill_leader "${PID[$L]}"
		until [ "$(code "$O")" = 200 ]; do sleep 0.02; done
		ta=$(now_ms)
		S=$((S + 1))
		until [ "$(post "$O" "b$S")" = 201 ]; do sleep 0.02; done
		tb=$(now_ms)
		until reported "$O" "b$S"; do
			sleep 0.02
			[ $(($(now_ms) - tb)) -gt 60000 ] && break
		done
		tc=$(now_ms)
		reported "$O" "b$S" && echo $((tc - t0)) >> "$D/c" || RELINK=$((RELINK + 1))
		echo $((ta - t0)) >> "$D/a"
		echo $((tb - t0)) >> "$D/b"
		texp=$(first_after "$D/watch" "$t0" DELETE)
		tlead=$(first_after "$T/$O.log" "$t0" "leads now")
		if [ -n "$texp" ] && [ -n "$tlead" ]; then
			echo $((texp - t0)) >> "$D/p.expiry"
			echo $((tlead - texp)) >> "$D/p.campaign"
			echo $((ta - tlead)) >> "$D/p.healthz"
			echo $((tc - tb)) >> "$D/p.down"
		fi
		for s in $acked; do api "$O" "missions/$s" > /dev/null || LOST=$((LOST + 1)); done
		wait_for 30 is "$want" tree_at "$O" || RELINK=$((RELINK + 1))
		start_root "$L"
		wait_for 10 is 503 code "$L"
		printf 'lease %s s, kill %2d: standby leads %5d ms, 201 %5d ms, children report %5d ms\n' \
			"$ttl" "$k" $((ta - t0)) $((tb - t0)) $((tc - t0))
	done
	# every acknowledged mission, at the end, at whichever root leads
	L=$(leader)
	n=$(api "$L" missions | jq '[.items[].metadata.name | select(startswith("b"))] | length')
	{
		echo
		echo "edge_failover: 3 etcd members (TLS), 2 roots, $NC children; Timeout ${to}ms, ElectionTTL ${ttl} s; $KILLS kills"
		row_head
		row "(a) kill -9 -> the standby leads (/healthz 200) (ms)" "$D/a"
		row "  the lease expires (the leader key deleted)" "$D/p.expiry"
		row "  the standby's campaign and takeover (log: leads now)" "$D/p.campaign"
		row "  -> /healthz 200 seen" "$D/p.healthz"
		row "(b) kill -9 -> a mission at the new leader 201 (ms)" "$D/b"
		row "(c) kill -9 -> every child applied it, state at the leader" "$D/c"
		row "  201 -> every child's state up (relink, apply, report)" "$D/p.down"
		echo "acknowledged missions lost: $LOST (must be 0); at the end the leader has $n of $S made; children that failed to relink: $RELINK"
		echo "leaders that lost the lead without being killed: $(cat "$T"/r1.log "$T"/r2.log | grep -c 'no longer the leader')"
	} | tee -a "$T/summary"
	LOST_ALL=$((LOST_ALL + LOST))
	edfo_stop
	for n in r1 r2 $CH; do mv "$T/$n.log" "$D/" 2>/dev/null; rm -f "$T/$n.db"*; done
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
cat "$T/summary"
[ "$LOST_ALL" = 0 ]
