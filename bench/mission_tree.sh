#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# mission_tree: edgeclusterd trees on 127.0.0.1, the `local` driver (issue 4,
# section 6). Measures:
#  1. latency: a chain root -> c1 -> ... -> cD over ws://, then the same over
#     wss:// (TLS on every daemon). One mission at a time is created at the
#     root (HTTP POST), placed on the leaf only, with a command and a
#     stateCheck that prints "ok NAME"; timed from the POST until the leaf's
#     own API shows it applied and checked, and until the root's state map
#     shows the leaf's path ("c1/c2/c3/c4") with that value; every level on
#     the way is watched too (per-hop breakdown).
#  2. scale: a tree of N daemons (fan-out F per level, e.g. root -> 10 -> 89),
#     M missions created at the root with no placement (every cluster applies
#     every one), in MissionLists (--bulk; or one POST each); until every
#     cluster applied all M (each one's own API), and until the root holds
#     every (mission, path) state (N x M keys).
#  3. RSS (VmRSS, VmHWM, RssAnon of /proc/PID/status) of every daemon of the
#     scale tree, idle and after the missions: min / median / max.
# Targets (issue 4): <= 100 ms to depth 4; 1000 missions x 100 clusters in
# <= 5 s; <= 20 MB RSS per daemon. Method and results: docs/bench.md,
# section "mission_tree".
#
#   usage: bench/mission_tree.sh [options] EDGECLUSTERD_BINARY TREE_PROBE_BINARY
#   e.g.   bench/mission_tree.sh build/control/edgeclusterd build/bench/tree_probe
#   (cmake target: bench_mission_tree)
#
#   --depth D        latency chain depth (default 4: 5 daemons)
#   --repeat N       missions timed, one after the other, per chain (default 20)
#   --clusters N     daemons in the scale tree, the root included (default 100)
#   --fanout F       children per cluster in the scale tree (default 10)
#   --missions M     missions created at the root in the scale run (default 1000)
#   --bulk N         scale: create them N per POST, as a MissionList (default:
#                    all in one, up to the API's 5000 per list; 0: one
#                    Mission per POST)
#   --kind K         scale missions: content (default: a file), command (and
#                    /bin/true), check (and a stateCheck printing "ok")
#   --preload        scale: create the missions at the root before the other
#                    daemons start, then time from their start (attach and
#                    initial sync instead of live propagation)
#   --no-wss         skip the second latency chain (wss://)
#   --only WHAT      latency or scale
#   --heartbeat S    [Intervals] Heartbeat of every daemon (default 10, the daemon's default)
#   --statecheck S   [Intervals] StateCheck (default 30, the daemon's default)
#   --dir DIR        where the temporary directory goes (default /tmp; /dev/shm: no fsync cost)
#   --timeout S      limit of the scale run's wait (default 900)
#   --keep           keep the temporary directory (configs, logs, databases, raw figures)
#   --verbose
#
# Exit: 0 when it ran (no assertion on any figure), 1 on setup failure, 2 on
# usage, 130 when interrupted. Every daemon it started is stopped (SIGTERM,
# then SIGKILL) and its temporary directory removed on exit, on failure and
# on Ctrl-C.

set -u -o pipefail

DEPTH=4
REPEAT=20
CLUSTERS=100
FANOUT=10
MISSIONS=1000
KIND=content
WSS=1
ONLY=
HB=10
SC=30
DIR=/tmp
TIMEOUT=900
KEEP=0
VERBOSE=0
PRELOAD=0
BULK=
usage() { sed -n '/^#   usage:/,/^#   --verbose/p' "$0" | cut -c3-; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--depth) DEPTH=${2:?}; shift 2 ;;
	--repeat) REPEAT=${2:?}; shift 2 ;;
	--clusters) CLUSTERS=${2:?}; shift 2 ;;
	--fanout) FANOUT=${2:?}; shift 2 ;;
	--missions) MISSIONS=${2:?}; shift 2 ;;
	--bulk) BULK=${2:?}; shift 2 ;;
	--kind) KIND=${2:?}; shift 2 ;;
	--no-wss) WSS=0; shift ;;
	--preload) PRELOAD=1; shift ;;
	--only) ONLY=${2:?}; shift 2 ;;
	--heartbeat) HB=${2:?}; shift 2 ;;
	--statecheck) SC=${2:?}; shift 2 ;;
	--dir) DIR=${2:?}; shift 2 ;;
	--timeout) TIMEOUT=${2:?}; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--verbose|-v) VERBOSE=1; shift ;;
	-h|--help) usage 0 ;;
	--*) echo "mission_tree: unknown option $1" >&2; usage >&2 ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage >&2
bad() { echo "mission_tree: $*" >&2; exit 2; }
range() { # range OPTION VALUE MIN [MAX]: a whole number in [MIN, MAX], or exit 2
	case $2 in '' | *[!0-9]*) bad "$1 takes a whole number, not '$2'" ;; esac
	[ "$2" -ge "$3" ] || bad "$1 is at least $3"
	[ -z "${4:-}" ] || [ "$2" -le "$4" ] || bad "$1 is at most $4"
}
range --depth "$DEPTH" 1 20
range --repeat "$REPEAT" 1
range --clusters "$CLUSTERS" 2 1000
range --fanout "$FANOUT" 1 99
range --missions "$MISSIONS" 1
[ -n "$BULK" ] || BULK=$((MISSIONS < 5000 ? MISSIONS : 5000))
range --bulk "$BULK" 0 "$MISSIONS"
range --heartbeat "$HB" 1
range --statecheck "$SC" 1
range --timeout "$TIMEOUT" 0
case $KIND in content|command|check) ;; *) bad "--kind content|command|check" ;; esac
case $ONLY in ""|latency|scale) ;; *) bad "--only latency|scale" ;; esac
V=() # tree_probe's -v
[ "$VERBOSE" = 1 ] && V=(-v)
# the scale run's missions: what tree_probe scale creates, and how the rows name them
SCALE_ARGS=(--missions "$MISSIONS" --bulk "$BULK" --kind "$KIND")
HOW=$KIND MLABEL="$MISSIONS missions"
[ "$BULK" -gt 0 ] && HOW+=", $BULK per POST" MLABEL+=" ($BULK per POST)"

ECD=$(readlink -f "$1")
PROBE=$(readlink -f "$2")
fail() { echo "mission_tree: $*" >&2; exit 1; }
[ -x "$ECD" ] || fail "edgeclusterd binary '$1' not found"
[ -x "$PROBE" ] || fail "tree_probe binary '$2' not found"
for c in openssl ss curl; do command -v $c > /dev/null || fail "$c is missing (deploy/deps.sh)"; done
[ -d "$DIR" ] || fail "--dir $DIR: no such directory"

T=$(mktemp -d "$DIR/xgb-tree-XXXXXX") || fail "mktemp failed"
declare -A PID # name -> pid, the daemons that run now
PROBE_PID=
# Daemons are disowned (bash would report each one we kill): wait until gone.
reap() {
	local p t
	for p in "$@"; do
		for ((t = 0; t < 300; t++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done
	done
}
stop_all() { # SIGTERM (the daemon stops its commands), SIGKILL what is left after 6 s
	local p t
	[ ${#PID[@]} -gt 0 ] || return 0
	for p in "${PID[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for ((t = 0; t < 60; t++)); do
		for p in "${PID[@]}"; do kill -0 "$p" 2>/dev/null && break; p=; done
		[ -z "$p" ] && break
		sleep 0.1
	done
	for p in "${PID[@]}"; do kill -9 "$p" 2>/dev/null; done
	reap "${PID[@]}"
	PID=()
}
cleanup() {
	[ -n "$PROBE_PID" ] && { kill -9 "$PROBE_PID"; wait "$PROBE_PID"; } 2>/dev/null
	stop_all
	if [ "$KEEP" = 1 ]; then echo "mission_tree: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- limits: N daemons, each with up to 4 commands at once, and the probe's connections ----
N_MAX=$CLUSTERS
[ "$ONLY" = latency ] && N_MAX=$((DEPTH + 1))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((N_MAX + 64)) ]; then
	ulimit -n "$(ulimit -Hn)" 2>/dev/null
	[ "$(ulimit -n)" -ge $((N_MAX + 64)) ] || fail "open files limit $(ulimit -n) < $((N_MAX + 64))"
fi
if [ "$(ulimit -u)" != unlimited ] && [ "$(ulimit -u)" -lt $((N_MAX * 6 + 500)) ]; then
	ulimit -u $((N_MAX * 6 + 500)) 2>/dev/null ||
		echo "mission_tree: warning: ulimit -u $(ulimit -u) may be too low for $N_MAX daemons" >&2
fi
[ "$(cat /proc/sys/kernel/pid_max)" -gt $((N_MAX * 6 + 1000)) ] || fail "kernel.pid_max too low"
avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
[ "$avail" -gt $((N_MAX * 40)) ] || fail "MemAvailable ${avail} MB: too little for $N_MAX daemons (~40 MB each)"
free_mb=$(df -Pm "$T" | awk 'NR == 2 {print $4}')
[ "$free_mb" -gt $((N_MAX * 20 + 200)) ] || fail "$T: ${free_mb} MB free, too little for $N_MAX databases"

rand_hex() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
TOK=tok-$(rand_hex)
JOIN=join-$(rand_hex)
export XGATE_TOKEN=$TOK

# ports: a block of free listening ports below the ephemeral range
port_block() { # port_block N: the first port of N free ones
	local n=$1 b t
	for ((t = 0; t < 50; t++)); do
		b=$((20000 + (RANDOM * 7 + $$ + t * 997) % 10000))
		ss -Hltn | awk -v b="$b" -v e=$((b + n)) '{ sub(/.*:/, "", $4); if ($4 >= b && $4 < e) x = 1 } END { exit x }' &&
			{ echo "$b"; return 0; }
	done
	return 1
}

# ---- configs and daemons ----
# conf DIR NAME PORT PARENT_PORT|"" TLS(0|1) DEPTH: write DIR/NAME.conf
conf() {
	local d=$1 n=$2 port=$3 pp=$4 tls=$5 depth=$6
	{
		echo "[Cluster]"
		echo "Name = $n"
		echo "Labels = bench=mission-tree, depth=d$depth"
		if [ -n "$pp" ]; then
			if [ "$tls" = 1 ]; then echo "Parent = wss://localhost:$pp"; else echo "Parent = ws://127.0.0.1:$pp"; fi
			echo "JoinToken = $JOIN"
		fi
		echo "[API]"
		echo "Listen = 127.0.0.1:$port"
		echo "Token = $TOK"
		[ "$tls" = 1 ] && printf 'TLSCert = %s\nTLSKey = %s\nCA = %s\n' "$T/srv.pem" "$T/srv.key" "$T/ca.pem"
		echo "[Hub]"
		echo "JoinToken = $JOIN"
		echo "[Store]"
		echo "Database = $d/$n.db"
		echo "[Intervals]"
		echo "Heartbeat = $HB"
		echo "StateCheck = $SC"
	} > "$d/$n.conf"
}
start() { # start DIR NAME
	"$ECD" -c "$1/$2.conf" >> "$1/$2.log" 2>&1 < /dev/null &
	PID[$2]=$!
	disown "$!"
}
died() { # died: 0 (true) when a daemon that should run is gone
	local n
	for n in "${!PID[@]}"; do
		kill -0 "${PID[$n]}" 2>/dev/null && continue
		echo "mission_tree: $n died; the end of its log:" >&2
		tail -5 "$CUR/$n.log" >&2
		return 0
	done
	return 1
}
# shellcheck source=../deploy/lib/ca.sh
source "$(dirname "$0")/../deploy/lib/ca.sh"
tls_files() {
	[ -f "$T/srv.pem" ] || test_ca "$T" "xgate mission_tree bench CA"
}

# probe ARGS...: run tree_probe in the background (a signal to this script is
# then handled at once), its stdout in $CUR/probe.out, stderr shown; its exit
# status. probe_start and probe_wait: the same in two halves.
probe_start() {
	"$PROBE" "$@" > "$CUR/probe.out" &
	PROBE_PID=$!
}
probe_wait() {
	local rc
	wait "$PROBE_PID"
	rc=$?
	PROBE_PID=
	return $rc
}
probe() { probe_start "$@"; probe_wait; }
field() { # field KEY: the value of KEY=VALUE in the probe's output
	sed -n "s/.*\<$1=\([0-9]*\).*/\1/p" "$CUR/probe.out"
}

# ---- /proc figures ----
proc() { # proc FILE NAME...: /proc/PID/FILE of each daemon NAME (those still there)
	local f=$1 n; shift
	for n in "$@"; do cat "/proc/${PID[$n]}/$f" 2>/dev/null; done
}
# rss_row WHAT NAME...: | daemons | VmRSS | VmHWM | RssAnon (min / median / max, MB) | target | met? |
rss_row() {
	local what=$1; shift
	proc status "$@" | awk -v what="$what" '
		function mm(a, k,   i, j, t) { # sort a[1..k]
			for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		}
		function f(a, k) { mm(a, k); return sprintf("%.1f / %.1f / %.1f", a[1] / 1024, a[int((k + 1) / 2)] / 1024, a[k] / 1024) }
		/^VmRSS:/ { r[++nr] = $2 } /^VmHWM:/ { h[++nh] = $2 } /^RssAnon:/ { a[++na] = $2 }
		END {
			if (nr == 0) { printf "| %s | - | - | - | <= 20 MB | |\n", what; exit }
			mm(h, nh)
			printf "| %s (%d) | %s | %s | %s | <= 20 MB | %s |\n", what, nr, f(r, nr), f(h, nh), f(a, na), (h[nh] <= 20 * 1024) ? "yes" : "NO"
		}'
}
hwm_max() { # hwm_max NAME...: the largest VmHWM, MB
	proc status "$@" | awk '/^VmHWM:/ && $2 > m { m = $2 } END { printf "%.1f", m / 1024 }'
}
cpu_ticks() { # cpu_ticks NAME...: user + system time, clock ticks
	proc stat "$@" | awk '{ sub(/.*\) /, ""); t += $12 + $13 } END { print t + 0 }'
}
ratio() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { printf f, a / b }'; } # ratio A B FORMAT
col() { # col PATTERN FIELD FILE: a field of the first table row that contains PATTERN
	awk -v p="$1" -v f="$2" 'index($0, p) { n = split($0, a, "|"); v = a[f + 1]; gsub(/^ +| +$/, "", v); print v; exit }' "$3"
}
stats() { # stats PATTERN FILE: "median / p90 / max" of a latency row
	echo "$(col "$1" 2 "$2") / $(col "$1" 3 "$2") / $(col "$1" 4 "$2")"
}

SUMMARY=()
srow() { SUMMARY+=("$(printf '| %s | %s | %s | %s |' "$@")"); }

# ---- 1. latency to depth D ----
run_chain() { # run_chain ws|wss
	local mode=$1 tls=0 base k n p scheme host names=()
	[ "$mode" = wss ] && { tls=1; tls_files || fail "openssl could not make the test certificates"; }
	CUR=$T/chain-$mode
	mkdir -p "$CUR"
	base=$(port_block $((DEPTH + 1))) || fail "no free block of $((DEPTH + 1)) ports"
	scheme=http host=127.0.0.1
	[ $tls = 1 ] && scheme=https host=localhost
	names=(root)
	for ((k = 1; k <= DEPTH; k++)); do names+=("c$k"); done
	: > "$CUR/clusters"
	p=
	for ((k = 0; k <= DEPTH; k++)); do
		n=${names[k]}
		conf "$CUR" "$n" $((base + k)) "$( [ $k -gt 0 ] && echo $((base + k - 1)))" $tls "$k"
		[ $k -gt 0 ] && p=${p:+$p/}$n
		echo "${p:-root} $scheme://$host:$((base + k))" >> "$CUR/clusters"
		start "$CUR" "$n"
		# clusters start at unrelated times: so do their hubs' 200 ms polls
		sleep "$(printf '0.%03d' $((RANDOM % 200)))"
	done
	echo "== latency, $mode: a chain of $((DEPTH + 1)) daemons, root -> ${names[*]:1} (127.0.0.1:$base-$((base + DEPTH)))"
	probe ready --timeout 60 --ca "$T/ca.pem" "$CUR/clusters" || { died; fail "the $mode chain did not link up"; }
	echo "   linked in $(field linked_ms) ms (every child attached, link up)"
	died && fail "a daemon of the $mode chain died"
	sleep 2
	probe latency "${V[@]}" --repeat "$REPEAT" --ca "$T/ca.pem" --raw "$CUR/raw.txt" --prefix "lat-$mode" \
		"$CUR/clusters" || echo "mission_tree: some $mode missions did not get there (see above)" >&2
	died && fail "a daemon of the $mode chain died"
	echo
	echo "| ms after the POST ($mode, depth $DEPTH, $REPEAT missions) | median | p90 | max | target | met? | resolution |"
	echo "|---|---|---|---|---|---|---|"
	cat "$CUR/probe.out"
	cp "$CUR/probe.out" "$T/latency-$mode.md"
	[ "$VERBOSE" = 1 ] && { echo; echo "raw ($CUR/raw.txt):"; cat "$CUR/raw.txt"; }
	echo
	srow "create at the root -> the root shows the depth-$DEPTH leaf's state ($mode), median / p90 / max" \
		"$(stats "state at the root" "$CUR/probe.out")" "<= 100 ms" "$(col "state at the root" 6 "$CUR/probe.out")"
	srow "create at the root -> applied at the leaf, its own API ($mode), median / p90 / max" \
		"$(stats "applied at the leaf" "$CUR/probe.out")" "" ""
	stop_all
}

# ---- 2. scale: N daemons, M missions; 3. RSS ----
# scale_tree: the tree, index 0 the root, in NAMES, PATHS (root-relative),
# PAR (the parent's index; -1) and DEP (depth), its depth in TREE_DEPTH.
# Level by level, each level takes up to F children per node of the one
# above, spread round-robin (100, F 10: root -> 10 -> 9 or 8 each).
scale_tree() {
	local lvl_s=0 lvl_e=1 nprev add j p n kids=(0)
	NAMES=(root) PATHS=(root) PAR=(-1) DEP=(0) TREE_DEPTH=0
	while [ ${#NAMES[@]} -lt "$CLUSTERS" ]; do
		nprev=$((lvl_e - lvl_s))
		add=$((nprev * FANOUT))
		[ $add -gt $((CLUSTERS - ${#NAMES[@]})) ] && add=$((CLUSTERS - ${#NAMES[@]}))
		for ((j = 0; j < add; j++)); do
			p=$((lvl_s + j % nprev))
			kids[p]=$((kids[p] + 1))
			if [ "$p" = 0 ]; then printf -v n 'c%02d' "${kids[p]}"; else printf -v n '%s-%02d' "${NAMES[p]}" "${kids[p]}"; fi
			NAMES+=("$n")
			if [ "$p" = 0 ]; then PATHS+=("$n"); else PATHS+=("${PATHS[p]}/$n"); fi
			PAR+=("$p") DEP+=($((DEP[p] + 1))) kids+=(0)
		done
		lvl_s=$lvl_e lvl_e=${#NAMES[@]}
		TREE_DEPTH=$((TREE_DEPTH + 1))
	done
}

# The two ways to run it set run_scale's t0 (time 0, ns), c0 and r0 (CPU
# ticks of all daemons and of the root then) and start the probe that
# watches (scale_probe [--no-create]), whose rows run_scale adds to
# $CUR/scale.md.
scale_probe() {
	probe_start scale "${V[@]}" "$@" "${SCALE_ARGS[@]}" --timeout "$TIMEOUT" --raw "$CUR/raw.txt" \
		"$CUR/clusters"
}
# scale_live: the tree forms (idle figures: rss_idle, hwm_idle), then the
# probe creates the missions (time 0: before its first POST) and watches.
scale_live() {
	local i
	for ((i = 0; i < CLUSTERS; i++)); do start "$CUR" "${NAMES[i]}"; done
	probe ready --tree --timeout $((TREE_DEPTH * HB * 2 + 120)) "$CUR/clusters" ||
		{ died; fail "the tree did not form (see $CUR/*.log with --keep)"; }
	echo "   every child attached after $(field linked_ms) ms;" \
		"the root lists all $CLUSTERS, ok, after $(field tree_ms) ms" \
		"(rows travel up with heartbeats: Heartbeat $HB s per level)"
	died && fail "a daemon died while the tree formed"
	sleep 3
	rss_idle=$(rss_row "all daemons, idle" "${NAMES[@]}")
	rss_idle+=$'\n'$(rss_row "the root, idle" root)
	hwm_idle=$(hwm_max "${NAMES[@]}")
	c0=$(cpu_ticks "${NAMES[@]}")
	r0=$(cpu_ticks root)
	t0=$(date +%s%N)
	echo "   creating $MISSIONS missions ($HOW) at the root, no placement: $((CLUSTERS * MISSIONS)) applies ..."
	scale_probe
}
# scale_preload: the missions are at the root before any other cluster
# starts; then the others start, level by level (time 0: before the first):
# attach, the full list, fetch, apply, report.
scale_preload() {
	local i j k
	start "$CUR" root
	probe ready --timeout 30 "$CUR/root-only" || { died; fail "the root did not start"; }
	echo "   preload: creating $MISSIONS missions ($HOW) at the root alone ..."
	probe scale --create-only "${SCALE_ARGS[@]}" "$CUR/root-only" ||
		fail "could not create the missions at the root"
	cat "$CUR/probe.out" >> "$CUR/scale.md"
	sleep 3
	c0=$(cpu_ticks root)
	r0=$c0
	echo "   starting the other $((CLUSTERS - 1)) daemons: $((CLUSTERS * MISSIONS)) applies ..."
	t0=$(date +%s%N)
	# the probe first (time 0), it takes "not listening" for "not yet"
	scale_probe --no-create
	# level by level, each once its parents listen (a child that finds its
	# parent not listening yet may stay stuck: see docs/bench.md)
	for ((i = 1; i < CLUSTERS; i++)); do
		if [ "${DEP[i]}" -gt "${DEP[i - 1]}" ] && [ "${DEP[i]}" -gt 1 ]; then
			for ((j = 0; j < i; j++)); do
				[ "${DEP[j]}" = $((DEP[i] - 1)) ] || continue
				for ((k = 0; k < 100; k++)); do
					curl -sf -m 1 -o /dev/null "http://127.0.0.1:$((BASE + j))/healthz" && break
					sleep 0.05
				done
			done
		fi
		start "$CUR" "${NAMES[i]}"
	done
	echo "   ($((CLUSTERS - 1)) daemons started, level by level, in $((($(date +%s%N) - t0) / 1000000)) ms)"
}

# scale_srow WHAT PATTERN: a summary row from the scale table's row PATTERN
scale_srow() {
	local v
	v=$(col "$2" 2 "$CUR/scale.md")
	[ "$PRELOAD" = 0 ] && v+=" ($(col "$2" 3 "$CUR/scale.md"))"
	srow "$MLABEL x $CLUSTERS clusters: $1" "$v" "<= 5 s" "$(col "$2" 5 "$CUR/scale.md")"
}

run_scale() {
	local i p k shape t0 c0 c1 r0 r1 wall hz rss_idle='' hwm_idle=- first how
	local rss_after rss_root_after hwm_after list_t
	CUR=$T/scale
	mkdir -p "$CUR"
	scale_tree
	BASE=$(port_block "$CLUSTERS") || fail "no free block of $CLUSTERS ports"
	: > "$CUR/clusters"
	for ((i = 0; i < CLUSTERS; i++)); do
		p=
		[ "${PAR[i]}" -ge 0 ] && p=$((BASE + PAR[i]))
		conf "$CUR" "${NAMES[i]}" $((BASE + i)) "$p" 0 "${DEP[i]}"
		echo "${PATHS[i]} http://127.0.0.1:$((BASE + i))" >> "$CUR/clusters"
	done
	head -1 "$CUR/clusters" > "$CUR/root-only"
	shape=$(for ((k = 1; k <= TREE_DEPTH; k++)); do
		awk -v k=$k 'NR > 1 { n = split($1, a, "/"); if (n == k) c++ } END { printf "%d at depth %d, ", c, k }' "$CUR/clusters"
	done)
	echo "== scale: $CLUSTERS daemons (root; ${shape%, }), fan-out $FANOUT, ws://127.0.0.1:$BASE-$((BASE + CLUSTERS - 1))"
	hz=$(getconf CLK_TCK)
	: > "$CUR/scale.md"
	if [ "$PRELOAD" = 0 ]; then scale_live; else scale_preload; fi
	probe_wait || echo "mission_tree: the scale run did not complete (see above)" >&2
	cat "$CUR/probe.out" >> "$CUR/scale.md"
	wall=$((($(date +%s%N) - t0) / 1000000))
	c1=$(cpu_ticks "${NAMES[@]}")
	r1=$(cpu_ticks root)
	died && fail "a daemon died during the scale run"
	sleep 3
	rss_after=$(rss_row "all daemons, after the missions" "${NAMES[@]}")
	rss_root_after=$(rss_row "the root, after the missions" root)
	hwm_after=$(hwm_max "${NAMES[@]}")
	# what an operator's `xgate mission get` at the root costs it now
	list_t=$(curl -s -o "$CUR/list.json" -w '%{time_total} %{size_download}' -H "Authorization: Bearer $TOK" \
		"$(awk 'NR == 1 {print $2}' "$CUR/clusters")/apis/edge.xgate.io/v1/missions")
	first="after the first POST" how="after the first POST (after the last)"
	[ "$PRELOAD" = 1 ] && first+=" (preload: after the start)" how="preloaded, after the daemons' start"
	echo
	echo "| $MISSIONS missions x $CLUSTERS clusters ($HOW$([ "$PRELOAD" = 1 ] && echo ", preloaded at the root")) | $first | after the last POST | target | met? | resolution |"
	echo "|---|---|---|---|---|---|"
	cat "$CUR/scale.md"
	cp "$CUR/scale.md" "$T/scale.md"
	echo
	echo "   daemons' CPU time during the run: $(ratio $((c1 - c0)) "$hz" %.1f) s" \
		"(the root $(ratio $((r1 - r0)) "$hz" %.1f) s) in $(ratio "$wall" 1000 %.1f) s of wall clock:" \
		"$(ratio $(((c1 - c0) * 1000)) $((hz * wall)) %.2f) CPUs on average"
	echo "   database and WAL files: $(du -sm --apparent-size "$CUR" | cut -f1) MB in all"
	echo
	echo "| RSS, MB: min / median / max | VmRSS | VmHWM (peak) | RssAnon (private) | target | met? (max VmHWM) |"
	echo "|---|---|---|---|---|---|"
	[ -n "$rss_idle" ] && echo "$rss_idle"
	echo "$rss_after"
	echo "$rss_root_after"
	rss_row "the root, after one GET of the mission list ($(ratio "${list_t#* }" 1e6 "%.1f MB") in $(ratio "${list_t% *}" 0.001 "%.0f ms"))" root
	echo
	scale_srow "every cluster applied all, $how" "every cluster has applied all"
	scale_srow "the root has all $((MISSIONS * CLUSTERS)) states, $how" "the root has every"
	srow "RSS per daemon, max VmHWM over $CLUSTERS: idle / after the missions (before the list GET)" "$hwm_idle / $hwm_after MB" "<= 20 MB" \
		"$(awk -v a="$hwm_after" -v b="$hwm_idle" 'BEGIN { print (a <= 20 && (b == "-" || b <= 20)) ? "yes" : "NO" }')"
	stop_all
}

echo "mission_tree: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), databases in $T ($(df -PT "$T" | awk 'NR == 2 {print $2}'))"
echo "  every daemon: driver local, [Intervals] Heartbeat $HB s (HeartbeatTimeout $((3 * HB)) s), StateCheck $SC s," \
	"CommandTimeout 60 s; the probe polls each level's API every ~0.5 ms (latency)"
echo
[ "$ONLY" = scale ] || {
	run_chain ws
	[ "$WSS" = 1 ] && run_chain wss
}
[ "$ONLY" = latency ] || run_scale

echo "| figure | measured | target | met? |"
echo "|---|---|---|---|"
printf '%s\n' "${SUMMARY[@]}"
