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
#     every one); until every cluster applied all M (each one's own API), and
#     until the root holds every (mission, path) state (N x M keys).
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
usage() { sed -n '/^#   usage:/,/^#   --verbose/p' "$0" | cut -c3-; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--depth) DEPTH=${2:?}; shift 2 ;;
	--repeat) REPEAT=${2:?}; shift 2 ;;
	--clusters) CLUSTERS=${2:?}; shift 2 ;;
	--fanout) FANOUT=${2:?}; shift 2 ;;
	--missions) MISSIONS=${2:?}; shift 2 ;;
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
case "$DEPTH$REPEAT$CLUSTERS$FANOUT$MISSIONS$HB$SC$TIMEOUT" in
*[!0-9]*) echo "mission_tree: options take whole numbers" >&2; exit 2 ;;
esac
case $KIND in content|command|check) ;; *) echo "mission_tree: --kind content|command|check" >&2; exit 2 ;; esac
case $ONLY in ""|latency|scale) ;; *) echo "mission_tree: --only latency|scale" >&2; exit 2 ;; esac
[ "$DEPTH" -ge 1 ] && [ "$DEPTH" -le 20 ] || { echo "mission_tree: --depth 1-20" >&2; exit 2; }
[ "$CLUSTERS" -ge 2 ] && [ "$CLUSTERS" -le 1000 ] || { echo "mission_tree: --clusters 2-1000" >&2; exit 2; }
[ "$FANOUT" -ge 1 ] && [ "$FANOUT" -le 99 ] || { echo "mission_tree: --fanout 1-99" >&2; exit 2; }
[ "$REPEAT" -ge 1 ] && [ "$MISSIONS" -ge 1 ] && [ "$HB" -ge 1 ] && [ "$SC" -ge 1 ] || usage >&2

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

TOK=tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
JOIN=join-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
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
tls_files() {
	[ -f "$T/srv.pem" ] && return 0
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=xgate mission_tree bench CA" \
		-keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null &&
		openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$T/srv.key" \
			-out "$T/srv.csr" 2>/dev/null &&
		printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$T/ext" &&
		openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
			-days 2 -extfile "$T/ext" -out "$T/srv.pem" 2>/dev/null
}

# probe ARGS...: run tree_probe in the background (a signal to this script is
# then handled at once), its stdout in $CUR/probe.out, stderr shown
probe() {
	local rc
	"$PROBE" "$@" > "$CUR/probe.out" &
	PROBE_PID=$!
	wait "$PROBE_PID"
	rc=$?
	PROBE_PID=
	return $rc
}

# ---- /proc figures ----
# rss_row WHAT NAME...: | daemons | VmRSS | VmHWM | RssAnon (min / median / max, MB) | target | met? |
rss_row() {
	local what=$1 n; shift
	for n in "$@"; do cat "/proc/${PID[$n]}/status" 2>/dev/null; done | awk -v what="$what" -v n=$# '
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
	local n
	for n in "$@"; do cat "/proc/${PID[$n]}/status" 2>/dev/null; done |
		awk '/^VmHWM:/ && $2 > m { m = $2 } END { printf "%.1f", m / 1024 }'
}
cpu_ticks() { # cpu_ticks NAME...: user + system time, clock ticks
	local n
	for n in "$@"; do cat "/proc/${PID[$n]}/stat" 2>/dev/null; done |
		awk '{ sub(/.*\) /, ""); t += $12 + $13 } END { print t + 0 }'
}
col() { # col PATTERN FIELD FILE: a field of the first table row that contains PATTERN
	awk -v p="$1" -v f="$2" 'index($0, p) { n = split($0, a, "|"); v = a[f + 1]; gsub(/^ +| +$/, "", v); print v; exit }' "$3"
}

SUMMARY=()
srow() { SUMMARY+=("$(printf '| %s | %s | %s | %s |' "$@")"); }

# ---- 1. latency to depth D ----
run_chain() { # run_chain ws|wss
	local mode=$1 tls=0 base k n p scheme host names=() lat
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
	echo "   linked in $(sed 's/.*linked_ms=\([0-9]*\).*/\1/' "$CUR/probe.out") ms (every child attached, link up)"
	died && fail "a daemon of the $mode chain died"
	sleep 2
	local v=()
	[ "$VERBOSE" = 1 ] && v=(-v)
	probe latency "${v[@]}" --repeat "$REPEAT" --ca "$T/ca.pem" --raw "$CUR/raw.txt" --prefix "lat-$mode" \
		"$CUR/clusters" || echo "mission_tree: some $mode missions did not get there (see above)" >&2
	died && fail "a daemon of the $mode chain died"
	echo
	echo "| ms after the POST ($mode, depth $DEPTH, $REPEAT missions) | median | p90 | max | target | met? | resolution |"
	echo "|---|---|---|---|---|---|---|"
	cat "$CUR/probe.out"
	cp "$CUR/probe.out" "$T/latency-$mode.md"
	[ "$VERBOSE" = 1 ] && { echo; echo "raw ($CUR/raw.txt):"; cat "$CUR/raw.txt"; }
	echo
	lat="state at the root"
	srow "create at the root -> the root shows the depth-$DEPTH leaf's state ($mode), median / p90 / max" \
		"$(col "$lat" 2 "$CUR/probe.out") / $(col "$lat" 3 "$CUR/probe.out") / $(col "$lat" 4 "$CUR/probe.out")" \
		"<= 100 ms" "$(col "$lat" 6 "$CUR/probe.out")"
	lat="applied at the leaf"
	srow "create at the root -> applied at the leaf, its own API ($mode), median / p90 / max" \
		"$(col "$lat" 2 "$CUR/probe.out") / $(col "$lat" 3 "$CUR/probe.out") / $(col "$lat" 4 "$CUR/probe.out")" "" ""
	stop_all
}

# ---- 2. scale: N daemons, M missions; 3. RSS ----
run_scale() {
	local base i j k n p lvl_s lvl_e nprev add names=() paths=() par=() dep=() kids=() depth=0
	local t0 c0 c1 r0 r1
	CUR=$T/scale
	mkdir -p "$CUR"
	# the tree, level by level: each level takes up to F children per node of
	# the one above, spread round-robin (100, F 10: root -> 10 -> 9 or 8 each)
	names=(root) paths=(root) par=(-1) dep=(0) kids=(0)
	lvl_s=0 lvl_e=1
	while [ ${#names[@]} -lt "$CLUSTERS" ]; do
		nprev=$((lvl_e - lvl_s))
		add=$((nprev * FANOUT))
		[ $add -gt $((CLUSTERS - ${#names[@]})) ] && add=$((CLUSTERS - ${#names[@]}))
		for ((j = 0; j < add; j++)); do
			p=$((lvl_s + j % nprev))
			kids[p]=$((kids[p] + 1))
			if [ "$p" = 0 ]; then printf -v n 'c%02d' "${kids[p]}"; else printf -v n '%s-%02d' "${names[p]}" "${kids[p]}"; fi
			names+=("$n")
			if [ "$p" = 0 ]; then paths+=("$n"); else paths+=("${paths[p]}/$n"); fi
			par+=("$p") dep+=($((dep[p] + 1))) kids+=(0)
		done
		lvl_s=$lvl_e lvl_e=${#names[@]}
		depth=$((depth + 1))
	done
	base=$(port_block "$CLUSTERS") || fail "no free block of $CLUSTERS ports"
	: > "$CUR/clusters"
	for ((i = 0; i < CLUSTERS; i++)); do
		p=
		[ "${par[i]}" -ge 0 ] && p=$((base + par[i]))
		conf "$CUR" "${names[i]}" $((base + i)) "$p" 0 "${dep[i]}"
		echo "${paths[i]} http://127.0.0.1:$((base + i))" >> "$CUR/clusters"
	done
	head -1 "$CUR/clusters" > "$CUR/root-only"
	local shape
	shape=$(for ((k = 1; k <= depth; k++)); do
		awk -v k=$k 'NR > 1 { n = split($1, a, "/"); if (n == k) c++ } END { printf "%d at depth %d, ", c, k }' "$CUR/clusters"
	done)
	echo "== scale: $CLUSTERS daemons (root; ${shape%, }), fan-out $FANOUT, ws://127.0.0.1:$base-$((base + CLUSTERS - 1))"
	local v=() rss_idle='' rss_root_idle='' hwm_idle=- wall hz
	[ "$VERBOSE" = 1 ] && v=(-v)
	hz=$(getconf CLK_TCK)
	if [ "$PRELOAD" = 0 ]; then
		for ((i = 0; i < CLUSTERS; i++)); do start "$CUR" "${names[i]}"; done
		probe ready --tree --timeout $((depth * HB * 2 + 120)) "$CUR/clusters" ||
			{ died; fail "the tree did not form (see $CUR/*.log with --keep)"; }
		echo "   every child attached after $(sed 's/.*linked_ms=\([0-9]*\).*/\1/' "$CUR/probe.out") ms;" \
			"the root lists all $CLUSTERS, ok, after $(sed 's/.*tree_ms=\([0-9]*\).*/\1/' "$CUR/probe.out") ms" \
			"(rows travel up with heartbeats: Heartbeat $HB s per level)"
		died && fail "a daemon died while the tree formed"
		sleep 3
		rss_idle=$(rss_row "all daemons, idle" "${names[@]}")
		rss_root_idle=$(rss_row "the root, idle" root)
		hwm_idle=$(hwm_max "${names[@]}")
		c0=$(cpu_ticks "${names[@]}")
		r0=$(cpu_ticks root)
		t0=$(date +%s%N)
		echo "   creating $MISSIONS missions ($KIND) at the root, no placement: $((CLUSTERS * MISSIONS)) applies ..."
		probe scale "${v[@]}" --missions "$MISSIONS" --kind "$KIND" --timeout "$TIMEOUT" \
			--raw "$CUR/raw.txt" "$CUR/clusters" || echo "mission_tree: the scale run did not complete (see above)" >&2
		cp "$CUR/probe.out" "$CUR/scale.md"
	else
		# preload: the missions are at the root before any other cluster starts;
		# then all start at once: attach, the full list, fetch, apply, report
		start "$CUR" root
		probe ready --timeout 30 "$CUR/root-only" || { died; fail "the root did not start"; }
		echo "   preload: creating $MISSIONS missions ($KIND) at the root alone ..."
		probe scale --create-only --missions "$MISSIONS" --kind "$KIND" "$CUR/root-only" ||
			fail "could not create the missions at the root"
		cp "$CUR/probe.out" "$CUR/scale.md"
		sleep 3
		c0=$(cpu_ticks root)
		r0=$c0
		echo "   starting the other $((CLUSTERS - 1)) daemons: $((CLUSTERS * MISSIONS)) applies ..."
		t0=$(date +%s%N)
		# the probe first (time 0), it takes "not listening" for "not yet"
		"$PROBE" scale "${v[@]}" --no-create --missions "$MISSIONS" --kind "$KIND" --timeout "$TIMEOUT" \
			--raw "$CUR/raw.txt" "$CUR/clusters" > "$CUR/probe.out" &
		PROBE_PID=$!
		# level by level, each once its parents listen (a child that finds its
		# parent not listening yet may stay stuck: see docs/bench.md)
		for ((i = 1; i < CLUSTERS; i++)); do
			if [ "${dep[i]}" -gt "${dep[i - 1]}" ] && [ "${dep[i]}" -gt 1 ]; then
				for ((j = 0; j < i; j++)); do
					[ "${dep[j]}" = $((dep[i] - 1)) ] || continue
					for ((k = 0; k < 100; k++)); do
						curl -sf -m 1 -o /dev/null "http://127.0.0.1:$((base + j))/healthz" && break
						sleep 0.05
					done
				done
			fi
			start "$CUR" "${names[i]}"
		done
		echo "   ($((CLUSTERS - 1)) daemons started, level by level, in $((($(date +%s%N) - t0) / 1000000)) ms)"
		wait "$PROBE_PID" || echo "mission_tree: the scale run did not complete (see above)" >&2
		PROBE_PID=
		cat "$CUR/probe.out" >> "$CUR/scale.md"
	fi
	wall=$((($(date +%s%N) - t0) / 1000000))
	c1=$(cpu_ticks "${names[@]}")
	r1=$(cpu_ticks root)
	died && fail "a daemon died during the scale run"
	sleep 3
	local rss_after rss_root_after hwm_after list_t
	rss_after=$(rss_row "all daemons, after the missions" "${names[@]}")
	rss_root_after=$(rss_row "the root, after the missions" root)
	hwm_after=$(hwm_max "${names[@]}")
	# what an operator's `xgate mission get` at the root costs it now
	list_t=$(curl -s -o "$CUR/list.json" -w '%{time_total} %{size_download}' -H "Authorization: Bearer $TOK" \
		"$(awk 'NR == 1 {print $2}' "$CUR/clusters")/apis/edge.xgate.io/v1/missions")
	echo
	echo "| $MISSIONS missions x $CLUSTERS clusters ($KIND$([ "$PRELOAD" = 1 ] && echo ", preloaded at the root")) | after the first POST$([ "$PRELOAD" = 1 ] && echo " (preload: after the start)") | after the last POST | target | met? | resolution |"
	echo "|---|---|---|---|---|---|"
	cat "$CUR/scale.md"
	cp "$CUR/scale.md" "$T/scale.md"
	echo
	echo "   daemons' CPU time during the run: $(awk -v t=$((c1 - c0)) -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }') s" \
		"(the root $(awk -v t=$((r1 - r0)) -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }') s) in" \
		"$(awk -v w=$wall 'BEGIN { printf "%.1f", w / 1000 }') s of wall clock:" \
		"$(awk -v t=$((c1 - c0)) -v hz="$hz" -v w=$wall 'BEGIN { printf "%.2f", t / hz / (w / 1000) }') CPUs on average"
	echo "   database and WAL files: $(du -sm --apparent-size "$CUR" | cut -f1) MB in all"
	echo
	echo "| RSS, MB: min / median / max | VmRSS | VmHWM (peak) | RssAnon (private) | target | met? (max VmHWM) |"
	echo "|---|---|---|---|---|---|"
	[ -n "$rss_idle" ] && echo "$rss_idle" && echo "$rss_root_idle"
	echo "$rss_after"
	echo "$rss_root_after"
	rss_row "the root, after one GET of the mission list ($(awk -v s="${list_t#* }" 'BEGIN { printf "%.1f MB", s / 1e6 }') in $(awk -v t="${list_t% *}" 'BEGIN { printf "%.0f ms", t * 1000 }'))" root
	echo
	local a="every cluster has applied all" r="the root has every" how="after the first POST (after the last)"
	[ "$PRELOAD" = 1 ] && how="preloaded, after the daemons' start"
	srow "$MISSIONS missions x $CLUSTERS clusters: every cluster applied all, $how" \
		"$(col "$a" 2 "$CUR/scale.md")$([ "$PRELOAD" = 0 ] && echo " ($(col "$a" 3 "$CUR/scale.md"))")" "<= 5 s" "$(col "$a" 5 "$CUR/scale.md")"
	srow "$MISSIONS missions x $CLUSTERS clusters: the root has all $((MISSIONS * CLUSTERS)) states, $how" \
		"$(col "$r" 2 "$CUR/scale.md")$([ "$PRELOAD" = 0 ] && echo " ($(col "$r" 3 "$CUR/scale.md"))")" "<= 5 s" "$(col "$r" 5 "$CUR/scale.md")"
	srow "RSS per daemon, max VmHWM over $CLUSTERS: idle / after the missions (before the list GET)" "$hwm_idle / $hwm_after MB" "<= 20 MB" \
		"$(awk -v a="$hwm_after" -v b="$hwm_idle" 'BEGIN { print (a <= 20 && (b == "-" || b <= 20)) ? "yes" : "NO" }')"
	stop_all
}

echo "mission_tree: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), databases in $T ($(df -PT "$T" | awk 'NR == 2 {print $2}'))"
echo "  every daemon: driver local, [Intervals] Heartbeat $HB s (HeartbeatTimeout $((3 * HB)) s), StateCheck $SC s," \
	"CommandTimeout 60 s; store synchronous=FULL; the hubs poll their revision every 200 ms and"
echo "  coalesce state reports for 50 ms (not configurable); the probe polls each level's API every ~0.5 ms (latency)"
echo
[ "$ONLY" = scale ] || {
	run_chain ws
	[ "$WSS" = 1 ] && run_chain wss
}
[ "$ONLY" = latency ] || run_scale

echo "| figure | measured | target | met? |"
echo "|---|---|---|---|"
printf '%s\n' "${SUMMARY[@]}"
