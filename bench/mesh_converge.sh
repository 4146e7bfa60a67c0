#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# mesh_converge: N gatewayd daemons in a full mesh on 127.0.0.1 (every
# gateway has every other as [Peer]), control plane only, for several N.
# Measures, per N: the mesh start until converged; a subnet added at run
# time on one gateway until ALL N-1 others have it (and its withdrawal);
# a gateway killed (kill -9) until all others dropped its routes; a gateway
# frozen (SIGSTOP, found by the hold timer) until the same.
# Method and results: docs/bench.md, section "mesh_converge".
#
#   usage: bench/mesh_converge.sh [--sizes "10 50 100"] [--reps N] [--kills N]
#                 [--grace S] [--hold S] [--interval MS] [--settle S]
#                 [--no-hang] [--keep] [--verbose]
#                 GATEWAYD_BINARY XGATE_BINARY MESH_PROBE_BINARY
#   e.g.   bench/mesh_converge.sh build/userspace/gatewayd build/userspace/xgate \
#                 build/bench/mesh_probe
#   (cmake target: bench_mesh_converge)
#
#   --sizes     mesh sizes, 3-250 (default "10 50 100")
#   --reps      run-time subnet add/del repetitions per size (default 5)
#   --kills     gateways killed one after the other per size (default 2)
#   --grace     GraceTime of every gateway, s (default 2)
#   --hold      HoldTime, s (default 3; Keepalive is 1)
#   --interval  least time between two queries to one gatewayd, ms (default 5)
#   --settle    quiet time after convergence, before the run-time figures (default 3)
#   --no-hang   skip the SIGSTOP row
#   --keep      keep the temporary directory (configs, logs, databases)
#
# Exit: 0 when it ran (no assertion on any time), 1 on setup failure, 2 on
# usage, 130 when interrupted. Every gatewayd it started is killed and its
# temporary directory removed on exit, on failure and on Ctrl-C.

set -u -o pipefail

SIZES="10 50 100"
REPS=5
KILLS=2
GRACE=2
HOLD=3
KEEPALIVE=1
INTERVAL=5
SETTLE=3
HANG=1
KEEP=0
VERBOSE=0
usage() { sed -n '/^#   usage:/,/^#   --keep/p' "$0" | cut -c3- >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) SIZES=${2:?}; shift 2 ;;
	--reps) REPS=${2:?}; shift 2 ;;
	--kills) KILLS=${2:?}; shift 2 ;;
	--grace) GRACE=${2:?}; shift 2 ;;
	--hold) HOLD=${2:?}; shift 2 ;;
	--interval) INTERVAL=${2:?}; shift 2 ;;
	--settle) SETTLE=${2:?}; shift 2 ;;
	--no-hang) HANG=0; shift ;;
	--keep) KEEP=1; shift ;;
	--verbose|-v) VERBOSE=1; shift ;;
	-h|--help) usage ;;
	--*) echo "mesh_converge: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -eq 3 ] || usage
case "$REPS$KILLS$GRACE$HOLD$INTERVAL$SETTLE${SIZES// /}" in
*[!0-9]*) echo "mesh_converge: options take whole numbers" >&2; exit 2 ;;
esac
for n in $SIZES; do
	[ "$n" -ge 3 ] && [ "$n" -le 250 ] || { echo "mesh_converge: sizes must be 3-250" >&2; exit 2; }
done
if [ "$HOLD" -le "$KEEPALIVE" ]; then
	echo "mesh_converge: --hold must exceed Keepalive ($KEEPALIVE s)" >&2
	exit 2
fi
[ "$REPS" -ge 1 ] || usage

GWD=$(readlink -f "$1")
XG=$(readlink -f "$2")
PROBE=$(readlink -f "$3")
fail() { echo "mesh_converge: $*" >&2; exit 1; }
[ -x "$GWD" ] || fail "gatewayd binary '$1' not found"
[ -x "$XG" ] || fail "xgate binary '$2' not found"
[ -x "$PROBE" ] || fail "mesh_probe binary '$3' not found"

T=$(mktemp -d /tmp/xgb-mesh-XXXXXX) || fail "mktemp failed"
# Listen ports below the ephemeral range (32768+), so that no outgoing
# connection of the mesh can hold one; each size gets its own block.
BASE=$((20000 + ($$ % 8000)))
declare -A PID # index -> pid, for the mesh that runs now
PROBE_PID=
# Daemons are disowned (bash would report each one we kill), so they are
# reaped by bash without a job: wait until the pid is gone.
reap() {
	local p t
	for p in "$@"; do
		for ((t = 0; t < 500; t++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.01; done
	done
}
cleanup() {
	local p
	[ -n "$PROBE_PID" ] && { kill -9 "$PROBE_PID"; wait "$PROBE_PID"; } 2>/dev/null
	for p in "${PID[@]}"; do kill -9 "$p" 2>/dev/null; done
	reap "${PID[@]}"
	if [ "$KEEP" = 1 ]; then echo "mesh_converge: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- limits: each session is a thread, N*(N+1) threads for a mesh of N ----
MAXN=0
for n in $SIZES; do [ "$n" -gt "$MAXN" ] && MAXN=$n; done
need_fds=$((MAXN + 64))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need_fds" ]; then
	ulimit -n "$(ulimit -Hn)" 2>/dev/null
	[ "$(ulimit -n)" -ge "$need_fds" ] || fail "open files limit $(ulimit -n) < $need_fds"
fi
threads=$((MAXN * (MAXN + 1)))
if [ "$(ulimit -u)" != unlimited ] && [ "$(ulimit -u)" -lt $((threads + 1000)) ]; then
	ulimit -u $((threads + 1000)) 2>/dev/null ||
		echo "mesh_converge: warning: ulimit -u $(ulimit -u) may be too low for $threads threads" >&2
fi
for f in /proc/sys/kernel/threads-max /proc/sys/kernel/pid_max; do
	[ "$(cat $f)" -gt $((threads + 2000)) ] || fail "$f is $(cat $f): too low for $threads threads"
done

# ---- keys, once for the largest mesh (in memory: no subshell per peer) ----
declare -a KEY PUB NAME
for ((i = 0; i < MAXN; i++)); do
	KEY[i]=$("$XG" gw genkey) || fail "xgate gw genkey failed"
	PUB[i]=$("$XG" gw pubkey <<< "${KEY[i]}") || fail "xgate gw pubkey failed"
	printf -v "NAME[i]" 'gw-%03d' "$i"
done

# conf N INDEX PORT0: gateway INDEX of a mesh of N, every other one a peer
conf() {
	local n=$1 i=$2 p0=$3 j
	printf '[Gateway]\nName = %s\nCluster = edge-%03d\nPrivateKey = %s\n' "${NAME[i]}" "$i" "${KEY[i]}"
	# PublicAddress is only announced (no data plane here): nothing binds it
	printf 'ListenAddress = 127.0.0.1:%d\nPublicAddress = 127.0.0.1:%d\n' $((p0 + i)) \
		$((p0 + i + 10000))
	printf 'Database = %s/%s.db\nKeepalive = %d\nHoldTime = %d\nGraceTime = %d\n' "$D" "${NAME[i]}" \
		"$KEEPALIVE" "$HOLD" "$GRACE"
	printf 'Subnet = 100 10.%d.%d.0/24\n' $((1 + i / 256)) $((i % 256))
	for ((j = 0; j < n; j++)); do
		[ "$j" -eq "$i" ] ||
			printf '\n[Peer]\nName = %s\nPublicKey = %s\nEndpoint = 127.0.0.1:%d\n' \
				"${NAME[j]}" "${PUB[j]}" $((p0 + j))
	done
}
socks() { # socks N [EXCEPT...]: control sockets of the mesh, some left out
	local n=$1 i x skip; shift
	for ((i = 0; i < n; i++)); do
		skip=0
		for x in "$@"; do [ "$x" = "$i" ] && skip=1; done
		[ $skip = 1 ] || printf '%s ' "$D/${NAME[i]}.sock"
	done
}
alive() { # alive N: indexes of the gatewayds still running
	local i
	for ((i = 0; i < $1; i++)); do [ -n "${PID[$i]:-}" ] && printf '%s ' "$i"; done
}
dead() { # dead N: indexes of those killed
	local i
	for ((i = 0; i < $1; i++)); do [ -z "${PID[$i]:-}" ] && printf '%s ' "$i"; done
}

# probe ARGS...: run mesh_probe, its result line in $R; 0 when it got there
# everywhere. In the background, so that a signal to this script is handled
# at once (bash waits for a foreground child before running a trap).
probe() {
	local v=() rc
	[ "$VERBOSE" = 1 ] && v=(-v)
	"$PROBE" --interval "$INTERVAL" "${v[@]}" "$@" > "$D/probe.out" 2>> "$D/probe.log" &
	PROBE_PID=$!
	wait "$PROBE_PID"
	rc=$?
	PROBE_PID=
	R=$(cat "$D/probe.out")
	[ "$VERBOSE" = 1 ] && echo "    probe: $R" | cut -c1-300 >&2
	return $rc
}
field() { # field KEY: a value of the last probe's result line
	local kv
	for kv in $R; do [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }; done
	echo 0
}
secs() { awk -v ms="$1" 'BEGIN { printf "%.3f s", ms / 1000 }'; }

# ---- results: one table row per figure ----
ROWS=()
row() { ROWS+=("$(printf '| %s | %s | %s | %s | %s | %s | %s |' "$@")"); }
# result [detect]: the last probe as "ms:resolution_ms", or "fail:ms" when the
# condition was not reached everywhere (or its check failed)
result() {
	local t=last
	[ "${1:-}" = detect ] && t=detect
	if [ "$(field ok)" = 1 ]; then
		awk -v a="$(field ${t}_ms)" -v b="$(field ${t}_lo_ms)" 'BEGIN { printf "%s:%.1f", a, a - b }'
	else
		echo "fail:$(field ${t}_ms)"
		echo "    probe did not get there: $R" | cut -c1-300 >&2
	fi
}
# figure N WHAT TARGET_MS|- RESULT...: median and worst of the results, ok?
# judged on the worst, resolution the largest of them
figure() {
	local n=$1 what=$2 target=$3 r vals=() failed=0 med worst res ok tgt=-; shift 3
	for r in "$@"; do
		case $r in fail:*) failed=1 ;; *) vals+=("${r%%:*}") ;; esac
	done
	if [ ${#vals[@]} -gt 0 ]; then
		med=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
		worst=$(printf '%s\n' "${vals[@]}" | sort -g | tail -1)
		res=$(printf '%s\n' "$@" | awk -F: '$1 != "fail" && $2 > m {m = $2} END {printf "%.0f ms", m}')
		med=$(secs "$med")
		worst=$(secs "$worst")
	else
		med=- worst=- res=-
	fi
	[ "$target" = - ] || tgt="<= $(secs "$target")"
	if [ $failed = 1 ]; then
		worst="not reached"
		ok=NO
	elif [ "$target" = - ]; then
		ok=""
	else
		ok=$(awk -v w="${worst% s}" -v t="$target" 'BEGIN { print (w * 1000 <= t) ? "yes" : "NO" }')
	fi
	row "$n" "$what" "$med" "$worst" "$tgt" "$ok" "$res"
	printf '  %-66s %s (worst %s, resolution %s)\n' "$what" "$med" "$worst" "$res"
}

cpu_ticks() { # cpu_ticks: user + system time of the running gatewayds, in clock ticks
	local p
	for p in "${PID[@]}"; do cat "/proc/$p/stat" 2>/dev/null; done |
		awk '{ sub(/.*\) /, ""); t += $12 + $13 } END { print t + 0 }'
}

stop_mesh() {
	local i
	for i in "${!PID[@]}"; do kill -9 "${PID[$i]}" 2>/dev/null; done
	reap "${PID[@]}"
	PID=()
}
died() { # died: 0 (true) when a gatewayd that should run is gone
	local i
	for i in "${!PID[@]}"; do
		kill -0 "${PID[$i]}" 2>/dev/null && continue
		echo "mesh_converge: ${NAME[i]} died; the end of $D/${NAME[i]}.log:" >&2
		tail -5 "$D/${NAME[i]}.log" >&2
		return 0
	done
	return 1
}

# run_size N BLOCK: one mesh of N, its ports in block BLOCK
run_size() {
	local n=$1 p0=$((BASE + $2 * 256)) i k a since started res=() dres=() det=()
	D=$T/n$n
	mkdir -p "$D"
	for ((i = 0; i < n; i++)); do conf "$n" "$i" "$p0" > "$D/${NAME[i]}.conf"; done
	echo "== N=$n: $n gatewayds, $((n * (n - 1) / 2)) sessions, 127.0.0.1:$p0-$((p0 + n - 1)), $D"

	# 1. start: the clock runs from before the first daemon is started. The
	# polls are 50 ms apart here, to leave the CPUs to the daemons.
	since=$(date +%s%N)
	for ((i = 0; i < n; i++)); do
		"$GWD" -c "$D/${NAME[i]}.conf" -s "$D/${NAME[i]}.sock" >> "$D/${NAME[i]}.log" 2>&1 < /dev/null &
		PID[$i]=$!
		disown "$!"
	done
	started=$((($(date +%s%N) - since) / 1000000))
	# shellcheck disable=SC2046
	probe --interval 50 --since "$since" --timeout $((30 + n / 2)) up=$((n - 1)) $(socks "$n")
	died && return 1
	figure "$n" "mesh start -> converged (all sessions up, all subnets)" - "$(result)"
	local hz t0 t1 flaps
	hz=$(getconf CLK_TCK)
	t0=$(cpu_ticks)
	flaps=$(cat "$D"/*.log | grep -c -e "hold timer expired" -e "handshake failed" -e "session failed")
	echo "    ($n processes started in $(secs "$started"), the first gateway converged at" \
		"$(secs "$(field first_ms)"); gatewayd CPU time" \
		"$(awk -v t="$t0" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }') s;" \
		"sessions failed or timed out during the start: $flaps)"
	sleep "$SETTLE"
	t1=$(cpu_ticks)
	echo "    (the converged mesh, idle: $(awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$SETTLE" \
		'BEGIN { printf "%.1f", 100 * d / hz / s }')% of one CPU," \
		"keepalives every $KEEPALIVE s on $((n * (n - 1))) session ends)"

	# 2. a new subnet at run time on one gateway, until all others have it; then its withdrawal
	for ((k = 0; k < REPS; k++)); do
		a=$(((n / 2 + k) % n))
		# shellcheck disable=SC2046
		probe --timeout 10 --ctl "$D/${NAME[a]}.sock" "subnet add 300 10.200.$k.0/24" \
			"has=${NAME[a]},10.200.$k.0/24" $(socks "$n" "$a")
		res+=("$(result)")
		sleep 0.5
		# shellcheck disable=SC2046
		probe --timeout 10 --ctl "$D/${NAME[a]}.sock" "subnet del 300 10.200.$k.0/24" \
			"lacks=${NAME[a]},10.200.$k.0/24" $(socks "$n" "$a")
		dres+=("$(result)")
		sleep 0.5
	done
	figure "$n" "subnet add on one gw -> all $((n - 1)) others have it" 1000 "${res[@]}"
	figure "$n" "subnet del on one gw -> all $((n - 1)) others dropped it" 1000 "${dres[@]}"

	# 3. kill -9: the kernel closes the dead gateway's sockets, the others see
	# their sessions end at once; its routes stay, stale, for GraceTime
	res=() det=()
	for ((k = 0; k < KILLS; k++)); do
		case $k in 0) a=1 ;; 1) a=$((n - 1)) ;; *) a=$(((n / 3 + k) % n)) ;; esac
		[ -n "${PID[$a]:-}" ] && [ "$(alive "$n" | wc -w)" -ge 3 ] || continue
		# shellcheck disable=SC2046
		probe --timeout $((GRACE + 15)) --signal KILL "${PID[$a]}" "gone=${NAME[a]}" \
			$(socks "$n" $(dead "$n") "$a")
		res+=("$(result)")
		det+=("$(result detect)")
		reap "${PID[$a]}"
		unset "PID[$a]"
	done
	if [ ${#res[@]} -gt 0 ]; then
		figure "$n" "kill -9 one gw -> all others saw its session end" - "${det[@]}"
		figure "$n" "kill -9 one gw -> all others removed its route (GraceTime $GRACE s)" \
			$(((GRACE + 1) * 1000)) "${res[@]}"
	fi

	# 4. SIGSTOP: nothing closes the frozen gateway's sockets; the others'
	# hold timers find it (HoldTime after the last keepalive it sent)
	if [ "$HANG" = 1 ] && [ "$(alive "$n" | wc -w)" -ge 3 ]; then
		a=$((n / 4 + 2))
		[ -n "${PID[$a]:-}" ] || a=$(alive "$n" | awk '{print $NF}')
		# shellcheck disable=SC2046
		probe --timeout $((HOLD + GRACE + 15)) --signal STOP "${PID[$a]}" "gone=${NAME[a]}" \
			$(socks "$n" $(dead "$n") "$a")
		figure "$n" "SIGSTOP one gw -> all others saw its session end (HoldTime $HOLD s)" \
			$(((HOLD + 1) * 1000)) "$(result detect)"
		figure "$n" "SIGSTOP one gw -> all others removed its route (Hold $HOLD + Grace $GRACE s)" \
			$(((HOLD + GRACE + 1) * 1000)) "$(result)"
	fi
	died && return 1
	stop_mesh
	echo
}

echo "mesh_converge: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  Keepalive $KEEPALIVE s, HoldTime $HOLD s, GraceTime $GRACE s;" \
	"probe interval $INTERVAL ms; sizes: $SIZES"
echo
blk=0
for n in $SIZES; do
	run_size "$n" $((blk % 4)) || fail "mesh of $n did not run, see above"
	blk=$((blk + 1))
done

echo "| N | what | measured (median) | worst | target | ok? | resolution |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "measured: when the LAST gateway had it (an upper bound), the median over the repetitions"
echo "(add/del: $REPS, kill: $KILLS, SIGSTOP: $HANG); ok? judged on the worst; resolution: the"
echo "largest (upper - lower bound) of the last gateway's time over the repetitions."
