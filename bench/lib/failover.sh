# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
#
# What the failover benches share (bench/edge_failover.sh,
# bench/fornax_failover.sh): times in ms, the daemons' logs and the etcdctl
# watch stamped as their lines come (where a failover's time goes is read
# from those stamps), the kill, and the p50/p99/max table. Sourced, never run.
#   now_ms                    the time now, in ms
#   stamp                     stdin to stdout, each line prefixed with its now_ms
#   first_after FILE MS PAT   the stamp of FILE's first line after MS holding PAT
#   kill_leader PID           kill -9 PID and wait for it; t0 = when, in ms
#   pct Q                     the Q quantile (0.5, 0.99) of the numbers on stdin
#   row_head                  the table's header: p50 p99 max
#   row LABEL FILE            LABEL and the p50, p99 and max of FILE's numbers
#                             (nothing when FILE is empty); labels ROW_W wide
ROW_W=${ROW_W:-58}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
stamp() { while IFS= read -r l; do printf '%s %s\n' $((${EPOCHREALTIME/./} / 1000)) "$l"; done; }
first_after() {
	awk -v t="$2" -v p="$3" '$1 > t && index($0, p) {print $1; exit}' "$1"
}
kill_leader() {
	t0=$(now_ms)
	kill -9 "$1"
	wait "$1" 2>/dev/null
}
pct() { sort -n | awk -v q="$1" '{v[NR]=$1} END {i=int(q*(NR-1)+0.999); printf "%d", v[i+1]}'; }
row_head() { printf '%-*s %8s %8s %8s\n' "$ROW_W" "" p50 p99 max; }
row() {
	[ -s "$2" ] && printf '%-*s %8s %8s %8s\n' "$ROW_W" "$1" "$(pct 0.5 < "$2")" "$(pct 0.99 < "$2")" \
		"$(sort -n "$2" | tail -1)"
}
