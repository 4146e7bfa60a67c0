#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# pps_veth: 64-byte UDP packets per second through ONE transit hop on the
# veth topology of deploy/lib/topo.sh, xgate against the kernel's own path
# (VXLAN + bridge) built on the same namespaces, side by side in one run.
#
#   usage: bench/pps_veth.sh [--secs N] [--runs N] [--warmup N] [--verbose]
#                            XGATE_BINARY PPS_GEN_BINARY
#   e.g.   bench/pps_veth.sh build/userspace/xgate build/bench/pps_gen
#   (cmake target: bench_pps_veth)
#
# What is measured (docs/bench.md, "pps_veth"):
#   generator ns ${P}g, a 4th "host" 10.200.0.9 on the underlay bridge, sends
#   pre-encapsulated frames to bouncer h1 for pod p1b, which lives on h3:
#     xgate : Geneve (VNI 100, XG_OPT_HOST) -> h1 transit (bouncer, XDP_TX)
#             -> underlay -> h3 transit (decap, redirect) -> pod p1b
#     kernel: VXLAN (VNI 100) -> h1 vxlan100 + br100 (hairpin) -> vxlan100
#             re-encap -> underlay -> h3 vxlan100 + br100 -> vp1b -> pod p1b
#   Inner frame: Ethernet/IPv4/UDP, 60 bytes (64 with the FCS a veth never
#   carries). Counted where it arrives: the rx_packets of p1b's eth0, where a
#   tc drop ends it (same cheap sink for both paths). Best of --runs windows
#   of --secs seconds per path, the paths interleaved.
#   CPUs: generator pinned to CPU 0; the entry veth's NAPI runs threaded and
#   pinned to CPU 1, so the whole data path runs on CPU 1 (one core).
#
# Exit: 0 when it ran (no assertion on the numbers), 1 on setup failure,
# 2 on usage. Every namespace and xgate instance it made is removed on exit,
# Ctrl-C included.

set -u -o pipefail

SECS=5
RUNS=2
WARMUP=1
VERBOSE=0
usage() { sed -n '8,11p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--secs) SECS=${2:?}; shift 2 ;;
	--runs) RUNS=${2:?}; shift 2 ;;
	--warmup) WARMUP=${2:?}; shift 2 ;;
	--verbose|-v) VERBOSE=1; shift ;;
	-h|--help) usage ;;
	--*) echo "pps_veth: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage
case "$SECS$RUNS$WARMUP" in *[!0-9]*) echo "pps_veth: --secs/--runs/--warmup take whole numbers" >&2; exit 2 ;; esac
[ "$SECS" -ge 1 ] && [ "$RUNS" -ge 1 ] || usage

XGATE=$(readlink -f "$1")
GEN=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
TOPO=$HERE/../deploy/lib/topo.sh

fail() { echo "pps_veth: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (namespaces, XDP, BPF_PROG_RUN)"
[ -x "$XGATE" ] || fail "xgate binary '$1' not found"
[ -x "$GEN" ] || fail "pps_gen binary '$2' not found"
[ -r "$TOPO" ] || fail "cannot read $TOPO"
for t in ip tc bridge ethtool taskset timeout jq; do
	command -v $t >/dev/null || fail "'$t' is missing"
done

# Namespace prefixes: xgate topology and kernel topology. Short: device
# names like ${P}h1-u must fit in 15 characters.
PX=xgb
PK=xgk
# shellcheck source=../deploy/lib/topo.sh
P=$PX XGATE=$XGATE source "$TOPO"

NCPU=$(nproc)
GEN_CPU=0
DP_CPU=$((NCPU > 1 ? 1 : 0))
GEN_IP=10.200.0.9
VMAC=02:00:0a:01:01:63   # the sending (virtual) pod behind the generator host
VIP=10.1.1.99
DST=p1b                  # destination pod, on h3; h1 is the bouncer of S1

GEN_PIDS=()
NS_SUFFIXES=(u g "${HOSTS[@]}" "${PODS[@]}")
# Exactly the namespaces and instances this script makes; never a glob (a
# prefix like "xgb" also matches other benches' namespaces, e.g. xgbench-*).
teardown() {
	local p=$1 s h
	for h in "${HOSTS[@]}"; do
		[ -e "/run/netns/${p}$h" ] && "$XGATE" -N "${p}$h" reset >/dev/null 2>&1
		"$XGATE" -n "${p}$h" reset >/dev/null 2>&1
	done
	for s in "${NS_SUFFIXES[@]}"; do
		[ -e "/run/netns/${p}$s" ] || continue
		ip netns pids "${p}$s" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "${p}$s" 2>/dev/null
	done
	return 0
}
cleanup() {
	local pid p
	trap - EXIT INT TERM HUP
	for pid in "${GEN_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${GEN_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for p in $PX $PK; do teardown $p; done
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
	return 0
}
trap cleanup EXIT
trap 'echo "pps_veth: interrupted" >&2; exit 130' INT TERM HUP
TMP=$(mktemp -d /tmp/pps_veth.XXXXXX) || fail "mktemp"

log() { [ "$VERBOSE" = 1 ] && echo "# $*" >&2; return 0; }
run() { "$@" || fail "setup failed: $*"; }
mac_of() { ip -n "$1" -br link show dev "$2" | awk '{print $3}'; }

# ---- leftovers of an earlier, killed run --------------------------------
for p in $PX $PK; do
	for sfx in "${NS_SUFFIXES[@]}"; do
		if [ -e "/run/netns/${p}$sfx" ]; then
			echo "pps_veth: removing namespaces ${p}{${NS_SUFFIXES[*]}} left by an earlier run" >&2
			teardown $p
			break
		fi
	done
done

# ---- common part: topology + generator host + sink ----------------------
# build PREFIX: topo.sh topology, then the generator namespace ${P}g whose
# veth peer ${P}g-u sits on the underlay bridge.
build_common() {
	local p=$1 h
	P=$p topo_up >/dev/null 2>&1 || { P=$p topo_up; fail "topo_up ($p) failed"; }
	run ip netns add "${p}g"
	run ip -n "${p}g" link set lo up
	run ip link add "${p}g-u" netns "${p}u" type veth peer name eth0 netns "${p}g"
	run ip -n "${p}u" link set "${p}g-u" master br0 up
	run ip -n "${p}g" addr add $GEN_IP/24 dev eth0
	run ip -n "${p}g" link set eth0 up
	# The generator transmits xdp_frames: the receiving end needs XDP (a
	# pass stub) to take them. Its NAPI runs as a kernel thread pinned to
	# the data-plane CPU, so everything downstream runs there, away from
	# the generator. Part of the apparatus, identical for both paths.
	run "$XGATE" -N "${p}u" attach "${p}g-u" pass
	run ip netns exec "${p}u" sh -c "echo 1 > /sys/class/net/${p}g-u/threaded"
	pin_napi "$p"
	# No bridge-netfilter on our bridges (it is global on older kernels,
	# per-namespace on newer ones; it would tax both paths).
	for h in u h1 h2 h3; do
		ip netns exec "${p}$h" sysctl -qw net.bridge.bridge-nf-call-iptables=0 \
			net.bridge.bridge-nf-call-ip6tables=0 \
			net.bridge.bridge-nf-call-arptables=0 >/dev/null 2>&1
	done
	# Static underlay fdb: the bridge must never flood our frames.
	for h in h1 h3; do
		run bridge -n "${p}u" fdb replace "$(mac_of "${p}$h" eth0)" dev "${p}$h-u" master static
	done
	run bridge -n "${p}u" fdb replace "$(mac_of "${p}g" eth0)" dev "${p}g-u" master static
	# Sink: the frame counts as delivered when p1b's eth0 receives it; a tc
	# drop right there keeps the pod's stack (UDP lookup, ICMP) out of both
	# paths alike.
	run ip netns exec "${p}$DST" tc qdisc add dev eth0 clsact
	run ip netns exec "${p}$DST" tc filter add dev eth0 ingress matchall action drop
	run ip netns exec "${p}$DST" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
}

pin_napi() {
	local p=$1 pid n=0
	for pid in $(ps -eo pid=,comm= | awk -v pre="napi/${p}g-u-" 'index($2, pre) == 1 {print $1}'); do
		taskset -pc "$DP_CPU" "$pid" >/dev/null && n=$((n + 1))
	done
	[ "$n" -gt 0 ] || echo "pps_veth: warning: no NAPI thread found for ${p}g-u; data path not pinned" >&2
}

# ---- xgate topology: topo.sh as is --------------------------------------
log "building the xgate topology ($PX*)"
build_common $PX

# ---- kernel topology: the same, xgate removed, VXLAN + bridges instead --
log "building the kernel topology ($PK*)"
build_common $PK
for h in h1 h2 h3; do run "$XGATE" -N "${PK}$h" reset; done
for h in h1 h2 h3; do run "$XGATE" -N "${PK}u" detach "${PK}$h-u"; done
for p in "${PODS[@]}"; do run "$XGATE" -N "${PK}$p" detach eth0; done
# Both hosts of the hop get a VXLAN device for VNI 100 in a bridge br100.
for h in h1 h3; do
	run ip -n "${PK}$h" link add vxlan100 type vxlan id 100 local "${HOST_IP[$h]}" \
		dev eth0 dstport 4789 nolearning
	run ip -n "${PK}$h" link add br100 type bridge
	run ip -n "${PK}$h" link set vxlan100 master br100
	run ip -n "${PK}$h" link set vxlan100 up
	run ip -n "${PK}$h" link set br100 up
	ip netns exec "${PK}$h" sysctl -qw net.bridge.bridge-nf-call-iptables=0 \
		net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0 >/dev/null 2>&1
done
# h1, the "bouncer": the frame comes in on vxlan100 and goes back out of it
# (hairpin), re-encapsulated toward h3 by vxlan100's fdb.
DMAC=${POD_MAC[$DST]}
run bridge -n "${PK}h1" link set dev vxlan100 hairpin on
run bridge -n "${PK}h1" fdb replace "$DMAC" dev vxlan100 master static
run bridge -n "${PK}h1" fdb replace "$DMAC" dev vxlan100 dst "${HOST_IP[h3]}" self permanent
# h3: decap into br100, which holds the pod's veth.
run ip -n "${PK}h3" link set "v$DST" master br100
run bridge -n "${PK}h3" fdb replace "$DMAC" dev "v$DST" master static

# ---- measurement ---------------------------------------------------------
# counters NS DEV -> "rx_packets rx_dropped tx_dropped"
counters() {
	ip netns exec "$1" sh -c "cd /sys/class/net/$2/statistics && cat rx_packets rx_dropped tx_dropped" |
		tr '\n' ' '
}
now() { date +%s.%N; }

# gen PREFIX ENCAP SECONDS: start the generator in the background
gen_start() {
	local p=$1 encap=$2 t=$3 opt=()
	[ "$encap" = geneve ] && opt=(--opt-host $GEN_IP)
	timeout -k 2 $((t + 5)) taskset -c $GEN_CPU "$GEN" -N "${p}g" -i eth0 -t "$t" \
		--encap "$encap" --vni $VNI \
		--dmac "$(mac_of "${p}h1" eth0)" --smac "$(mac_of "${p}g" eth0)" \
		--src $GEN_IP --dst "${HOST_IP[h1]}" \
		--inner-dmac "$DMAC" --inner-smac $VMAC --inner-src $VIP \
		--inner-dst "${POD_IP[$DST]}" "${opt[@]}" >"$TMP/gen.out" 2>"$TMP/gen.err" &
	GEN_PIDS+=($!)
}


# Sanity: a short burst must reach the pod on both paths before timing.
check_path() {
	local p=$1 encap=$2 a b
	a=$(counters "${p}$DST" eth0 | awk '{print $1}')
	timeout 10 "$GEN" -N "${p}g" -i eth0 -t 0.2 --repeat 64 --encap "$encap" --vni $VNI \
		--dmac "$(mac_of "${p}h1" eth0)" --smac "$(mac_of "${p}g" eth0)" \
		--src $GEN_IP --dst "${HOST_IP[h1]}" --inner-dmac "$DMAC" --inner-smac $VMAC \
		--inner-src $VIP --inner-dst "${POD_IP[$DST]}" \
		$([ "$encap" = geneve ] && echo --opt-host $GEN_IP) >/dev/null ||
		fail "generator failed on $p ($encap)"
	sleep 0.3
	b=$(counters "${p}$DST" eth0 | awk '{print $1}')
	[ $((b - a)) -gt 0 ] || fail "no packet reached pod $DST on the $encap path ($p)"
	log "$encap path ($p): $((b - a)) packets reached $DST in the check"
}
check_path $PX geneve
check_path $PK vxlan

# xgate_stats PREFIX TAG: snapshot the per-reason counters of h1 and h3
xgate_stats() {
	local h
	for h in h1 h3; do
		"$XGATE" -N "${1}$h" stats -o json >"$TMP/st.$h.$2" 2>/dev/null || echo '[]' >"$TMP/st.$h.$2"
	done
}
# xgate_delta: "host/dev/reason +n" for every counter that grew since "a"
xgate_delta() {
	local h
	for h in h1 h3; do
		jq -nr --arg h "$h" --slurpfile a "$TMP/st.$h.a" --slurpfile b "$TMP/st.$h.b" '
			def flat: [.[] | .dev as $d | .counters | to_entries[]
			           | {key: "\($d)/\(.key)", value: .value.packets}] | from_entries;
			($a[0] | flat) as $x | ($b[0] | flat) as $y
			| $y | to_entries[] | select(.value > ($x[.key] // 0))
			| "\($h)/\(.key) \(.value - ($x[.key] // 0))"'
	done
}

declare -A BEST WIN_LIST OFFERED
# one_run NAME PREFIX ENCAP
one_run() {
	local name=$1 p=$2 encap=$3 c0 c1 e0 e1 t0 t1 d mpps pid
	[ "$p" = $PX ] && xgate_stats "$p" a
	gen_start "$p" "$encap" $((WARMUP + SECS + 1))
	pid=${GEN_PIDS[-1]}
	sleep "$WARMUP"
	c0=$(counters "${p}$DST" eth0); t0=$(now)
	e0=$(counters "${p}u" "${p}g-u")
	sleep "$SECS"
	c1=$(counters "${p}$DST" eth0); t1=$(now)
	e1=$(counters "${p}u" "${p}g-u")
	wait "$pid" || fail "generator failed: $(cat "$TMP/gen.err")"
	d=$(( $(echo "$c1" | awk '{print $1}') - $(echo "$c0" | awk '{print $1}') ))
	mpps=$(awk -v d="$d" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", d / (b - a) / 1e6 }')
	WIN_LIST[$name]="${WIN_LIST[$name]:-}${WIN_LIST[$name]:+ }$mpps"
	if awk -v a="$mpps" -v b="${BEST[$name]:-0}" 'BEGIN { exit !(a > b) }'; then
		BEST[$name]=$mpps
		# offered at the entry: taken by the entry veth + dropped there (ring full)
		OFFERED[$name]=$(awk -v a="$e0" -v b="$e1" -v s0="$t0" -v s1="$t1" 'BEGIN {
			split(a, x, " "); split(b, y, " ");
			printf "%.2f", ((y[1] - x[1]) + (y[2] - x[2])) / (s1 - s0) / 1e6 }')
	fi
	log "$name: $mpps Mpps delivered (gen: $(cat "$TMP/gen.out"))"
	if [ "$p" = $PX ]; then
		xgate_stats "$p" b
		xgate_delta >>"$TMP/xstats"
	fi
	return 0
}

echo "pps_veth: $RUNS x ${SECS}s windows per path, generator on CPU $GEN_CPU, data path on CPU $DP_CPU ($NCPU CPUs)"
for ((r = 1; r <= RUNS; r++)); do
	one_run xgate $PX geneve
	one_run kernel $PK vxlan
done

# ---- report --------------------------------------------------------------
kern=${BEST[kernel]}
printf '\n%-44s | %11s | %-17s | %8s | %s\n' "path (64 B inner UDP, one transit hop)" "Mpps (best)" "windows (Mpps)" \
	"offered" "vs kernel"
printf '%s\n' "---------------------------------------------+-------------+-------------------+----------+----------"
row() {
	local name=$1 label=$2
	printf '%-44s | %11s | %-17s | %8s | %s\n' "$label" "${BEST[$name]}" "${WIN_LIST[$name]}" \
		"${OFFERED[$name]}" "$(awk -v a="${BEST[$name]}" -v b="$kern" 'BEGIN {
			if (b > 0) printf "%.2fx", a / b; else print "n/a" }')"
}
row xgate "xgate: Geneve -> XDP bouncer -> XDP decap"
row kernel "kernel: VXLAN -> bridge (hairpin) -> VXLAN"
echo
echo "offered: Mpps reaching the entry veth (taken + dropped for a full ring); the generator"
echo "         outruns both paths, so the delivered rate is the data path's capacity on one core."
# data-plane counters of the xgate windows (incl. warm-up), summed over runs
if [ -s "$TMP/xstats" ]; then
	echo "xgate data-plane counters over all xgate runs (h1 = bouncer, h3 = destination host):"
	awk '{s[$1] += $2} END {for (k in s) printf "  %-40s %12d\n", k, s[k]}' "$TMP/xstats" | sort
	grep -q '/drop_' "$TMP/xstats" || echo "  (no drop reason grew)"
fi
exit 0
