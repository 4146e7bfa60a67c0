# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2153 # PPS_SELF: set by the script
#
# What bench/pps_veth.sh and bench/cross_cluster.sh share: their common
# options, small helpers, the generator (pps_gen), one timed pps window and
# its accounting (Mpps, CPU ns per packet, busy %, the contended '*' mark,
# best-of bookkeeping), xgate counter snapshots and pieces of the report.
# Sourced (at the top level, not from a function), never run. Method:
# docs/bench.md, sections "pps_veth" and "cross_cluster".
#
# Before sourcing, the script sets
#   PPS_SELF      its name, for messages ("pps_veth")
# and, before pps_args, PPS_FLAGS and PPS_HELP if it needs them (see there).
# Sourcing defines the helpers usage (prints the script's "#   usage:"
# header), fail, log, run and mac_of; sets the option defaults SECS=5
# RUNS=3 WARMUP=1 VERBOSE=0 MODE=run, the CPUs (NCPU, GEN_CPU=0 for the
# generator, DP_CPU=1 for the data path, 0 on one CPU), CLK_TCK, KSOFTIRQD
# (ksoftirqd of DP_CPU), GEN_PID= and CONTENDED=0; and declares the
# associative arrays
#   NAPI_PIDS[PREFIX]  the entry veth's NAPI thread(s) of topology PREFIX (the
#                      script fills it in when it pins them to DP_CPU)
#   CPU_PIDS[PREFIX]   other processes that run topology PREFIX's data path
#                      (a userspace tunnel daemon), every thread counted
#   BEST WIN_LIST OFFERED NSPKT BUSY PDROPS, indexed by path NAME
#                      (pps_account fills them; see there)
# The functions also use, once set by the script: XGATE, GEN (the binaries),
# TMP (a scratch directory) and the two hooks
#   gen_args ARGS...   prints pps_gen's arguments (all but -t) for one stream
#   path_drops PREFIX  prints rx_dropped + tx_dropped summed over the devices
#                      a frame crosses after the entry veth

# ---- options, messages ------------------------------------------------------
# shellcheck disable=SC2034 # MODE: for the script
SECS=5 RUNS=3 WARMUP=1 VERBOSE=0 MODE=run
# usage: the script's header from "#   usage:" to "#   (cmake", on stderr; exit 2
usage() { sed -n '/^#   usage:/,/^#   (cmake/p' "$0" | cut -c3- >&2; exit 2; }
# pps_args NARGS "$@": parses the command line; leaves the NARGS positional
# arguments in the array PPS_ARGV (set -- "${PPS_ARGV[@]}" after it). The
# common options:
#   --secs N, --runs N, --warmup N   (SECS, RUNS: whole numbers >= 1; WARMUP >= 0)
#   --verbose|-v                     (VERBOSE=1: log writes to stderr)
#   --setup-only                     (MODE=setup: build both topologies, leave them up)
#   --teardown                       (MODE=teardown: remove what --setup-only left)
#   -h|--help                        runs PPS_HELP (default: usage)
# and the script's own, switches that each set a variable to 0: the
# associative array PPS_FLAGS maps them to the variable's name, e.g.
# PPS_FLAGS=([--no-tcp]=DO_TCP). A bad command line: usage (exit 2).
declare -A PPS_FLAGS=()
PPS_HELP=usage
pps_args() {
	local nargs=$1
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--secs) SECS=${2:?}; shift 2 ;;
		--runs) RUNS=${2:?}; shift 2 ;;
		--warmup) WARMUP=${2:?}; shift 2 ;;
		--verbose|-v) VERBOSE=1; shift ;;
		--setup-only) MODE=setup; shift ;;
		--teardown) MODE=teardown; shift ;;
		-h|--help) "$PPS_HELP" ;;
		--*)
			[ -n "${PPS_FLAGS[$1]:-}" ] || { echo "$PPS_SELF: unknown option $1" >&2; usage; }
			printf -v "${PPS_FLAGS[$1]}" 0
			shift ;;
		*) break ;;
		esac
	done
	[ $# -eq "$nargs" ] || usage
	case "$SECS$RUNS$WARMUP" in *[!0-9]*) echo "$PPS_SELF: --secs/--runs/--warmup take whole numbers" >&2; exit 2 ;; esac
	[ "$SECS" -ge 1 ] && [ "$RUNS" -ge 1 ] || usage
	# shellcheck disable=SC2034 # for the script
	PPS_ARGV=("$@")
}
fail() { echo "$PPS_SELF: $*" >&2; exit 1; }
log() { [ "$VERBOSE" = 1 ] && echo "# $*" >&2; return 0; }
run() { "$@" || fail "setup failed: $*"; }
mac_of() { ip -n "$1" -br link show dev "$2" | awk '{print $3}'; } # mac_of NS DEV
# pps_no_brnf NS: no bridge netfilter in NS (it would tax both paths alike)
pps_no_brnf() {
	ip netns exec "$1" sysctl -qw net.bridge.bridge-nf-call-iptables=0 \
		net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0 >/dev/null 2>&1
}
# pps_setup_done MESSAGE: for --setup-only: keep everything up (the EXIT
# trap is dropped, TMP removed), say MESSAGE, exit 0
pps_setup_done() {
	trap - EXIT
	rm -rf "$TMP"
	echo "$PPS_SELF: $1"
	exit 0
}

# ---- counters -------------------------------------------------------------------
# pps_counters NS DEV -> "rx_packets rx_dropped tx_dropped " of DEV in NS
pps_counters() {
	ip netns exec "$1" sh -c "cd /sys/class/net/$2/statistics && cat rx_packets rx_dropped tx_dropped" |
		tr '\n' ' '
}
# pps_delivered NS -> rx_packets of eth0 in NS (the sink: a pod's eth0)
pps_delivered() { pps_counters "$1" eth0 | awk '{print $1}'; }
pps_now() { date +%s.%N; }

# ---- CPU accounting -------------------------------------------------------------
# pps_cpu_ticks PREFIX -> "dp cpu steal", clock ticks (CLK_TCK a second) since boot:
#  dp:    CPU time of the threads that run the data path: the entry veth's
#         NAPI thread(s) NAPI_PIDS[PREFIX] (every softirq it raises runs
#         inside it), ksoftirqd of the data-path CPU (softirqs deferred
#         there) and the processes CPU_PIDS[PREFIX] (/proc/PID/stat of a
#         process sums its threads); other work on the CPU (builds, other
#         benches) is not counted;
#  cpu:   busy time of the whole data-path CPU (user+nice+system+irq+softirq);
#  steal: time the hypervisor gave the CPU's vCPU to someone else.
NCPU=$(nproc)
GEN_CPU=0
DP_CPU=$((NCPU > 1 ? 1 : 0))
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100) # unit of /proc/stat and /proc/PID/stat
KSOFTIRQD=$(ps -eo pid=,comm= | awk -v n="ksoftirqd/$DP_CPU" '$2 == n {print $1}')
declare -A NAPI_PIDS=() CPU_PIDS=()
pps_cpu_ticks() {
	local pid dp=0 t
	for pid in ${NAPI_PIDS[$1]:-} $KSOFTIRQD ${CPU_PIDS[$1]:-}; do
		t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) && dp=$((dp + t))
	done
	awk -v c="cpu$DP_CPU" -v dp="$dp" '$1 == c { print dp, $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat
}

# ---- the generator ----------------------------------------------------------------
GEN_PID=
# pps_gen_start SECONDS ARGS...: pps_gen pinned to GEN_CPU, in the background
# for SECONDS, with the arguments gen_args ARGS... prints; its output goes to
# $TMP/gen.out and $TMP/gen.err; sets GEN_PID
pps_gen_start() {
	local secs=$1
	shift
	# shellcheck disable=SC2046
	timeout -k 2 $((secs + 5)) taskset -c $GEN_CPU "$GEN" $(gen_args "$@") -t "$secs" \
		>"$TMP/gen.out" 2>"$TMP/gen.err" &
	GEN_PID=$!
}
# pps_gen_wait: wait for the generator pps_gen_start started; fail if it failed
pps_gen_wait() {
	wait "$GEN_PID" || { GEN_PID=; fail "generator failed: $(cat "$TMP/gen.err")"; }
	GEN_PID=
}
# pps_gen_stop: for the EXIT trap: stop the generator if one still runs
# (GEN_PID is kept, for a check that it is gone)
pps_gen_stop() {
	[ -n "$GEN_PID" ] || return 0
	kill "$GEN_PID" 2>/dev/null
	wait "$GEN_PID" 2>/dev/null
	return 0
}
# pps_burst SINK_NS ARGS...: sanity check before timing: a short burst
# (gen_args ARGS...) not pinned; prints how many packets reached eth0 of
# SINK_NS; returns 1 if the generator failed
pps_burst() {
	local sink=$1 a b
	shift
	a=$(pps_delivered "$sink")
	# shellcheck disable=SC2046
	timeout 10 "$GEN" $(gen_args "$@") -t 0.2 --repeat 64 >/dev/null || return 1
	sleep 0.3
	b=$(pps_delivered "$sink")
	echo $((b - a))
}

# ---- one pps window ---------------------------------------------------------------
# pps_window PREFIX ENTRY_NS ENTRY_DEV SINK_NS ARGS...: one timed window on
# topology PREFIX: the generator (gen_args ARGS...) runs WARMUP + SECS + 1 s;
# after WARMUP s, SECS s are measured. Sets the window's samples, start (0)
# and end (1):
#   W_C0 W_C1  packets delivered (rx_packets of SINK_NS's eth0)
#   W_T0 W_T1  time (s, pps_now)
#   W_U0 W_U1  pps_cpu_ticks PREFIX
#   W_E0 W_E1  pps_counters ENTRY_NS ENTRY_DEV (the entry veth: what the
#              generator offered, taken + dropped for a full ring)
#   W_D0 W_D1  path_drops PREFIX
# Fails (exit) when the generator failed.
pps_window() {
	local p=$1 ens=$2 edev=$3 sink=$4
	shift 4
	pps_gen_start $((WARMUP + SECS + 1)) "$@"
	sleep "$WARMUP"
	W_D0=$(path_drops "$p")
	W_E0=$(pps_counters "$ens" "$edev")
	W_C0=$(pps_delivered "$sink"); W_T0=$(pps_now); W_U0=$(pps_cpu_ticks "$p")
	sleep "$SECS"
	W_C1=$(pps_delivered "$sink"); W_T1=$(pps_now); W_U1=$(pps_cpu_ticks "$p")
	W_E1=$(pps_counters "$ens" "$edev")
	W_D1=$(path_drops "$p")
	pps_gen_wait
}
# pps_account NAME RUN_LABEL: the accounting of the window pps_window
# measured last, for path NAME; prints "  run RUN_LABEL: <Mpps> Mpps, ..."
# (and, with --verbose, the generator's output). Updates, for NAME:
#   WIN_LIST  every window's Mpps, space separated; a '*' after one where
#             other work took more than 15% of DP_CPU (and CONTENDED=1)
#   PDROPS    drops on the path (path_drops), summed over the windows
#   NSPKT     data-path CPU ns per delivered packet, lowest window
#   BEST      Mpps, best window; and for that window:
#   BUSY      "<cpu>% (data path <dp>%, steal <steal>%)" of DP_CPU
#   OFFERED   Mpps offered at the entry (taken + dropped there)
pps_account() {
	local name=$1 d mpps ns busy mark
	d=$((W_C1 - W_C0))
	mpps=$(awk -v d="$d" -v a="$W_T0" -v b="$W_T1" 'BEGIN { printf "%.3f", d / (b - a) / 1e6 }')
	# CPU time the data path used per delivered packet (ns), and how busy
	# the CPU was (%)
	ns=$(awk -v a="$W_U0" -v b="$W_U1" -v d="$d" -v hz="$CLK_TCK" 'BEGIN { split(a, x, " "); split(b, y, " ");
		if (d > 0) printf "%.0f", (y[1] - x[1]) * 1e9 / hz / d; else print "n/a" }')
	busy=$(awk -v a="$W_U0" -v b="$W_U1" -v s0="$W_T0" -v s1="$W_T1" -v hz="$CLK_TCK" 'BEGIN {
		split(a, x, " "); split(b, y, " "); f = 100 / hz / (s1 - s0);
		printf "%.0f%% (data path %.0f%%, steal %.0f%%)", (y[2] - x[2]) * f,
			(y[1] - x[1]) * f, (y[3] - x[3]) * f }')
	# a window where other work shared the data-path CPU is marked with *
	mark=$(awk -v a="$W_U0" -v b="$W_U1" -v s0="$W_T0" -v s1="$W_T1" -v hz="$CLK_TCK" 'BEGIN {
		split(a, x, " "); split(b, y, " ");
		if ((y[1] - x[1]) * 100 / hz / (s1 - s0) < 85) print "*" }')
	[ -n "$mark" ] && CONTENDED=1
	WIN_LIST[$name]="${WIN_LIST[$name]:-}${WIN_LIST[$name]:+ }$mpps$mark"
	PDROPS[$name]=$((${PDROPS[$name]:-0} + W_D1 - W_D0))
	# lowest CPU cost over the windows
	if [ "$ns" != n/a ] && awk -v a="$ns" -v b="${NSPKT[$name]:-0}" 'BEGIN { exit !(b == 0 || a < b) }'; then
		NSPKT[$name]=$ns
	fi
	if awk -v a="$mpps" -v b="${BEST[$name]:-0}" 'BEGIN { exit !(a > b) }'; then
		BEST[$name]=$mpps
		BUSY[$name]=$busy
		# offered at the entry: taken by the entry veth + dropped there (ring full)
		OFFERED[$name]=$(awk -v a="$W_E0" -v b="$W_E1" -v s0="$W_T0" -v s1="$W_T1" 'BEGIN {
			split(a, x, " "); split(b, y, " ");
			printf "%.2f", ((y[1] - x[1]) + (y[2] - x[2])) / (s1 - s0) / 1e6 }')
	fi
	echo "  run $2: $mpps Mpps, CPU $DP_CPU busy $busy, $ns ns/packet of CPU"
	log "$name generator: $(cat "$TMP/gen.out")"
	return 0
}
# shellcheck disable=SC2034 # BUSY, OFFERED: for the script's report
declare -A BEST=() WIN_LIST=() OFFERED=() NSPKT=() BUSY=() PDROPS=()
CONTENDED=0

# ---- xgate's counters -------------------------------------------------------------
# pps_xstats_snap TAG PREFIX HOST...: snapshot of the per-reason counters
# (xgate stats -o json) of namespace PREFIX+HOST, for each HOST, into
# $TMP/st.HOST.TAG ('[]' when xgate fails)
pps_xstats_snap() {
	local tag=$1 p=$2 h
	shift 2
	for h in "$@"; do
		"$XGATE" -N "$p$h" stats -o json >"$TMP/st.$h.$tag" 2>/dev/null || echo '[]' >"$TMP/st.$h.$tag"
	done
}
# pps_xstats_delta SEP HOST...: "HOST<SEP>dev/reason n" for every counter that
# grew by n from snapshot a to snapshot b, host by host
pps_xstats_delta() {
	local sep=$1 h
	shift
	for h in "$@"; do
		jq -nr --arg h "$h" --arg sep "$sep" --slurpfile a "$TMP/st.$h.a" --slurpfile b "$TMP/st.$h.b" '
			def flat: [.[] | .dev as $d | .counters | to_entries[]
			           | {key: "\($d)/\(.key)", value: .value.packets}] | from_entries;
			($a[0] | flat) as $x | ($b[0] | flat) as $y
			| $y | to_entries[] | select(.value > ($x[.key] // 0))
			| "\($h)\($sep)\(.key) \(.value - ($x[.key] // 0))"'
	done
}

# ---- the report -------------------------------------------------------------------
# pps_ratio A B -> "A/B" as "1.23x", "n/a" unless both are > 0
pps_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
# pps_rule WIDTH REST: the line under a table's header: WIDTH dashes, then REST
pps_rule() { printf '%s\n' "$(printf '%*s' "$1" '' | tr ' ' -)$2"; }
# pps_contended_note: explains the '*' of WIN_LIST, if any window had one
pps_contended_note() {
	[ "$CONTENDED" = 1 ] || return 0
	echo "*: other work took more than 15% of CPU $DP_CPU in that window (shared machine); its rate understates."
}
