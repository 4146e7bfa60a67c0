#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# fornax_throughput: fornaxd on etcd ([Store] Backend = etcd, Election = on,
# so every write is the fenced txn) next to fornaxd on SQLite, in the same
# run, each a fresh daemon with nothing else connected:
#  - application creates/s, N one at a time (a curl process each, so a few
#    ms per request are the client's);
#  - pod placements/s and session opens/s with fx_probe's simulated nodes
#    (bench/session_open.sh's "cp" run: A applications, P pods, S opens C at
#    a time, POST -> the watch event saying Available). Opens and placements
#    do not touch the store on either backend (sessions and pods live in
#    memory and on the nodes), so they should come out the same; only the
#    application creates before them do.
#
# Sourced by bench/fornax_failover.sh (which calls fx_throughput on its
# etcd cluster), or run alone:
#   usage: bench/fornax_throughput.sh FORNAXD FX_PROBE
#   (starts its own three-member etcd on loopback; tests/etcd.sh)
# Options through the environment: FXT_CREATES (200), FXT_NODES (20),
# FXT_APPS (4), FXT_PODS (400), FXT_SESSIONS (400), FXT_CONC (16).

# fxt_start NAME STORE_SECTION: a fresh fornaxd on its own port; FXT_PORT[NAME]
fxt_start() {
	local p
	p=$(free_port)
	printf '[API]\nListen = 127.0.0.1:%s\nToken = %s\nMaxSessionsPerClient = 0\n[Store]\n%s\n[Nodes]\nJoinToken = %s\n' \
		"$p" "$FXT_TOK" "$2" "$FXT_JOIN" > "$FXT_DIR/$1.conf"
	"$FXT_FXD" -c "$FXT_DIR/$1.conf" 2>> "$FXT_DIR/$1.log" &
	FXT_PID[$1]=$!
	FXT_PORT[$1]=$p
	wait_for 15 curl -sf -m 2 "http://127.0.0.1:$p/healthz" -o /dev/null ||
		{ echo "fornax_throughput: $1 did not start: $(tail -3 "$FXT_DIR/$1.log")" >&2; return 1; }
}

fxt_stop() {
	kill "${FXT_PID[$1]}" 2>/dev/null
	wait "${FXT_PID[$1]}" 2>/dev/null
}

# fxt_creates NAME: creates/s of FXT_CREATES applications, one at a time
fxt_creates() {
	local t0 i ok=0 ms
	t0=$(date +%s%N)
	for i in $(seq 1 "$FXT_CREATES"); do
		[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $FXT_TOK" \
			-H 'Content-Type: application/json' \
			--data-binary "$(printf '{"metadata":{"name":"cr%s"},"spec":{"containers":[{"name":"c","command":["/bin/srv"],"ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"10m","memory":"8Mi"}}}],"scalingPolicy":{"minimumInstance":0,"maximumInstance":1,"burst":4,"scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":4,"low":2}}}}' "$i")" \
			"http://127.0.0.1:${FXT_PORT[$1]}/apis/core.fornax-serverless.centaurusinfra.io/v1/namespaces/default/applications")" = 201 ] &&
			ok=$((ok + 1))
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	awk -v n="$ok" -v ms="$ms" 'BEGIN {printf "%.0f", n * 1000 / (ms ? ms : 1)}'
}

# fxt_probe NAME: fx_probe cp against NAME; its RESULT lines in $FXT_DIR/NAME.out
fxt_probe() {
	"$FXT_PROBE" cp --server "127.0.0.1:${FXT_PORT[$1]}" --token "$FXT_TOK" --join "$FXT_JOIN" \
		--nodes "$FXT_NODES" --apps "$FXT_APPS" --pods "$FXT_PODS" --sessions "$FXT_SESSIONS" \
		--concurrency "$FXT_CONC" > "$FXT_DIR/$1.out" 2> "$FXT_DIR/$1.err" ||
		{ echo "fornax_throughput: fx_probe on $1 failed: $(tail -3 "$FXT_DIR/$1.err")" >&2; return 1; }
}

# fxt_field NAME KIND KEY: KEY's value on NAME's RESULT line of KIND
fxt_field() {
	awk -v kind="$2" -v k="$3" '$1 == "RESULT" && index($2, kind "=") == 1 {
		for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' "$FXT_DIR/$1.out"
}

# fx_throughput FORNAXD FX_PROBE ENDPOINTS DIR: the table on stdout; 1 on a failure
fx_throughput() {
	FXT_FXD=$1 FXT_PROBE=$2 FXT_DIR=$4/throughput
	FXT_CREATES=${FXT_CREATES:-200} FXT_NODES=${FXT_NODES:-20} FXT_APPS=${FXT_APPS:-4}
	FXT_PODS=${FXT_PODS:-400} FXT_SESSIONS=${FXT_SESSIONS:-400} FXT_CONC=${FXT_CONC:-16}
	FXT_TOK=$(secret tok) FXT_JOIN=$(secret join)
	declare -gA FXT_PID FXT_PORT
	mkdir -p "$FXT_DIR"
	local b rc=0 cr_etcd cr_sq
	# one backend at a time, so the two do not share the CPUs
	fxt_start etcd "$(printf 'Backend = etcd\nEndpoints = %s\nPrefix = /xgb-tp%s/\nTimeout = 1s\nElection = on' "$3" "$$")" || return 1
	cr_etcd=$(fxt_creates etcd)
	fxt_probe etcd || rc=1
	fxt_stop etcd
	fxt_start sqlite "Database = $FXT_DIR/sq.db" || return 1
	cr_sq=$(fxt_creates sqlite)
	fxt_probe sqlite || rc=1
	fxt_stop sqlite
	[ "$rc" = 0 ] || return 1
	echo
	echo "fornax_throughput: a fresh fornaxd per backend; etcd = 3 members, Election = on (fenced txns)"
	printf '%-52s %10s %10s\n' "" etcd SQLite
	printf '%-52s %10s %10s\n' "application creates/s, one at a time ($FXT_CREATES)" "$cr_etcd" "$cr_sq"
	printf '%-52s %10s %10s\n' "pod placements/s ($FXT_NODES simulated nodes, $FXT_PODS pods)" \
		"$(fxt_field etcd placements per_s)" "$(fxt_field sqlite placements per_s)"
	for b in per_s p50_ms p99_ms; do
		printf '%-52s %10s %10s\n' "session opens, $b ($FXT_SESSIONS, concurrency $FXT_CONC)" \
			"$(fxt_field etcd opens $b)" "$(fxt_field sqlite opens $b)"
	done
	echo "note: session opens and placements do not touch the store on either backend (sessions and"
	echo "pods are in fornaxd's memory and on the nodes); application creates do (etcd: a fenced txn)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	[ $# = 2 ] || { sed -n '/usage:/,/FXT_CONC/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
	HERE=$(cd "$(dirname "$0")" && pwd)
	source "$HERE/../tests/lib.sh"
	source "$HERE/../tests/edge/lib.sh"
	source "$HERE/../tests/etcd.sh"
	FXT_T=$(mktemp -d /tmp/xgb-fxtp-XXXXXX)
	declare -A FXT_PID
	fxt_cleanup() {
		local p
		for p in "${FXT_PID[@]}"; do kill -9 "$p" 2>/dev/null; done
		wait 2>/dev/null
		etcd_stop
		rm -rf "$FXT_T"
	}
	trap fxt_cleanup EXIT
	trap "exit 130" INT TERM
	etcd_start 3 || { echo "no etcd cluster" >&2; exit 1; }
	trap fxt_cleanup EXIT
	fx_throughput "$(readlink -f "$1")" "$(readlink -f "$2")" "$ETCD_ENDPOINTS" "$FXT_T"
fi
