#!/usr/bin/env bash
# Runs the libFuzzer harnesses of a fuzz tree one after the other, each for
# a bounded time, from its checked-in corpus (corpus/<harness>/, which
# includes the regress-* inputs of past crashes) and dictionary
# (<harness>.dict), then prints a table: harness, execs/s, total execs,
# crashes. Fails if any harness crashed, leaked, timed out, ran out of memory
# or had a sanitizer report. See docs/fuzzing.md.
#
#   run.sh [-t SECONDS] [-r RUNS] [-o DIR] BINDIR [HARNESS...]
#     -t  seconds per harness (default $FUZZ_SECONDS, else 20)
#     -r  at most this many executions per harness too (0: no limit; default 2000000)
#     -o  keep the corpora grown here (corpus-<harness>/, reused by the next
#         run) and each run's logs and crashing inputs (run-<time>/); default:
#         a temporary directory, kept only when something failed
#   BINDIR is the fuzz tree's tests/fuzz; HARNESS names some of them (default: all).
# Exit: 0 clean, 1 a harness failed, 77 no fuzz tree (ctest: skipped).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
secs=${FUZZ_SECONDS:-20}
runs=2000000
out=
while getopts "t:r:o:" o; do
	case $o in
	t) secs=$OPTARG ;;
	r) runs=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
bindir=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$bindir" ] || ! ls "$bindir"/fuzz_* >/dev/null 2>&1; then
	echo "fuzz: no harnesses in '${bindir}': build the fuzz tree first (make fuzz-build)" >&2
	exit 77
fi
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
	for f in "$bindir"/fuzz_*; do
		[ -x "$f" ] && [ -f "$f" ] && harnesses+=("$(basename "$f")")
	done
fi
keep=1
if [ -z "$out" ]; then
	out=$(mktemp -d /tmp/xgate-fuzz-run.XXXXXX)
	keep=0
fi
run=$out/run-$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
# the edgeclusterd harnesses' stores: in memory when the machine has /dev/shm
scratch=$(mktemp -d "$([ -w /dev/shm ] && echo /dev/shm || echo /tmp)/xgate-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch

# leaks are findings; UBSan stops at the first report (built with
# -fno-sanitize-recover) and says where
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

failed=0
rows=()
for h in "${harnesses[@]}"; do
	bin=$bindir/$h
	if [ ! -x "$bin" ]; then
		echo "fuzz: no harness $bin" >&2
		failed=1
		rows+=("$h|-|-|-|missing")
		continue
	fi
	work=$out/corpus-$h
	mkdir -p "$work"
	args=(-max_total_time="$secs" -rss_limit_mb=2048 -timeout=25 -close_fd_mask=3
	      -print_final_stats=1 -artifact_prefix="$run/$h-")
	[ "$runs" != 0 ] && args+=(-runs="$runs")
	[ -f "$here/$h.dict" ] && args+=(-dict="$here/$h.dict")
	given=()
	[ -d "$here/corpus/$h" ] && given=("$here/corpus/$h")
	echo "fuzz: $h for ${secs}s" >&2
	"$bin" "${args[@]}" "$work" "${given[@]}" </dev/null >"$run/$h.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/$h.log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$run/$h.log" | tail -1)
	crashes=$(find "$run" -maxdepth 1 -name "$h-*" -type f | wc -l)
	result=ok
	if [ $rc -ne 0 ] || [ "$crashes" -gt 0 ]; then
		result="FAILED (exit $rc)"
		failed=1
		keep=1
		echo "---- $h: the end of $run/$h.log" >&2
		grep -v '^#[0-9]' "$run/$h.log" | tail -60 >&2
		for a in $(find "$run" -maxdepth 1 -name "$h-*" -type f); do
			echo "fuzz: $h: reproduce with: $bin $a" >&2
			echo "      then keep it as tests/fuzz/corpus/$h/regress-<what> with the fix" >&2
		done
	fi
	rows+=("$h|${rate:--}|${execs:--}|$crashes|$result")
done

printf '%-20s %10s %12s %8s  %s\n' harness execs/s "total execs" crashes result
for r in "${rows[@]}"; do
	IFS='|' read -r h rate execs crashes result <<<"$r"
	printf '%-20s %10s %12s %8s  %s\n' "$h" "$rate" "$execs" "$crashes" "$result"
done
if [ $keep -eq 1 ]; then
	echo "fuzz: corpora in $out, logs and crashing inputs in $run" >&2
else
	rm -rf "$out"
fi
exit $failed
