#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# pps_veth: 64-byte UDP packets per second through ONE transit hop on the
# veth topology of deploy/lib/topo.sh, xgate against the kernel's own path
# (VXLAN + bridge) built on the same namespaces, side by side in one run.
# Method and results: docs/bench.md, section "pps_veth".
#
#   usage: bench/pps_veth.sh [--secs N] [--runs N] [--warmup N] [--no-direct]
#                            [--verbose] XGATE_BINARY PPS_GEN_BINARY
#          bench/pps_veth.sh --setup-only|--teardown XGATE_BINARY PPS_GEN_BINARY
#   e.g.   bench/pps_veth.sh build/userspace/xgate build/bench/pps_gen
#   (cmake target: bench_pps_veth)
#
#   generator ns ${P}g, a 4th "host" 10.200.0.9 on the underlay bridge, sends
#   pre-encapsulated frames to bouncer h1 for pod p1b, which lives on h3:
#     xgate : Geneve (VNI 100, XG_OPT_HOST) -> h1 transit (bouncer, XDP_TX)
#             -> underlay -> h3 transit (decap, redirect) -> pod p1b
#     kernel: VXLAN (VNI 100) -> h1 vxlan100 + br100 (hairpin) -> vxlan100
#             re-encap -> underlay -> h3 vxlan100 + br100 -> vp1b -> pod p1b
#   and, as a reference without the hop, the same frames straight to h3.
#   Inner frame: Ethernet/IPv4/UDP, 60 bytes (64 with the FCS a veth never
#   carries). Counted where it arrives: the rx_packets of p1b's eth0, where a
#   tc ingress drop ends it (same cheap sink for both paths). Best of --runs
#   windows of --secs seconds per path, the paths interleaved; also the CPU
#   time the data path spent per packet (robust to steal and other load).
#   CPUs: generator pinned to CPU 0; the entry veth's NAPI runs threaded and
#   pinned to CPU 1, so the whole data path runs on CPU 1 (one core).
#
# Exit: 0 when it ran (no assertion on the numbers), 1 on setup failure,
# 2 on usage, 130 when interrupted. Every namespace and xgate instance it
# made is removed on exit, Ctrl-C included.

set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PPS_SELF=pps_veth
# options, helpers (fail, log, run, mac_of), generator, window accounting
# shellcheck source=lib/pps.sh
source "$HERE/lib/pps.sh"
DIRECT=1
PPS_FLAGS=([--no-direct]=DIRECT)   # --no-direct: skip the no-hop reference paths
pps_args 2 "$@"                     # and the common options
set -- "${PPS_ARGV[@]}"

XGATE=$(readlink -f "$1")
GEN=$(readlink -f "$2")
TOPO=$HERE/../deploy/lib/topo.sh

[ "$(id -u)" = 0 ] || fail "needs root (namespaces, XDP, BPF_PROG_RUN)"
[ -x "$XGATE" ] || fail "xgate binary '$1' not found"
[ -x "$GEN" ] || fail "pps_gen binary '$2' not found"
[ -r "$TOPO" ] || fail "cannot read $TOPO"
for t in ip bridge taskset timeout jq; do
	command -v $t >/dev/null || fail "'$t' is missing"
done

# Namespace prefixes: xgate topology and kernel topology. Short: device
# names like ${P}h1-u must fit in 15 characters.
PX=xgb
PK=xgk
# shellcheck source=../deploy/lib/topo.sh
P=$PX XGATE=$XGATE source "$TOPO"

GEN_IP=10.200.0.9
VMAC=02:00:0a:01:01:63   # the sending (virtual) pod behind the generator host
VIP=10.1.1.99
DST=p1b                  # destination pod, on h3; h1 is the bouncer of S1

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
	local p
	trap - EXIT INT TERM HUP
	pps_gen_stop # the one generator still running, if any
	for p in $PX $PK; do teardown $p; done
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
	return 0
}
trap cleanup EXIT
trap 'echo "pps_veth: interrupted" >&2; exit 130' INT TERM HUP
TMP=$(mktemp -d /tmp/pps_veth.XXXXXX) || fail "mktemp"

if [ "$MODE" = teardown ]; then
	exit 0 # the EXIT trap removes everything
fi

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
	P=$p topo_up >"$TMP/topo.$p" 2>&1 || { cat "$TMP/topo.$p" >&2; fail "topo_up ($p) failed"; }
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
	for h in u h1 h2 h3; do pps_no_brnf "${p}$h"; done
	# Static underlay fdb: the bridge must never flood our frames.
	for h in h1 h3; do
		run bridge -n "${p}u" fdb replace "$(mac_of "${p}$h" eth0)" dev "${p}$h-u" master static sticky
	done
	run bridge -n "${p}u" fdb replace "$(mac_of "${p}g" eth0)" dev "${p}g-u" master static sticky
	# Sink: the frame counts as delivered when p1b's eth0 receives it; a tc
	# ingress drop program (pps_gen --tc-drop) right there keeps the pod's
	# stack (UDP lookup, ICMP port unreachable) out of both paths alike.
	run "$GEN" -N "${p}$DST" -i eth0 --tc-drop
	run ip netns exec "${p}$DST" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
}

pin_napi() {
	local p=$1 pid n=0
	for pid in $(ps -eo pid=,comm= | awk -v pre="napi/${p}g-u-" 'index($2, pre) == 1 {print $1}'); do
		taskset -pc "$DP_CPU" "$pid" >/dev/null && n=$((n + 1))
		NAPI_PIDS[$p]="${NAPI_PIDS[$p]:-} $pid"
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
for h in h1 h2 h3; do run "$XGATE" -N "${PK}u" detach "${PK}$h-u" 2>/dev/null; done
for p in "${PODS[@]}"; do run "$XGATE" -N "${PK}$p" detach eth0 2>/dev/null; done
# Both hosts of the hop get a VXLAN device for VNI 100 in a bridge br100.
for h in h1 h3; do
	run ip -n "${PK}$h" link add vxlan100 type vxlan id 100 local "${HOST_IP[$h]}" \
		dev eth0 dstport 4789 nolearning
	run ip -n "${PK}$h" link add br100 type bridge
	run ip -n "${PK}$h" link set vxlan100 master br100
	run ip -n "${PK}$h" link set vxlan100 up
	run ip -n "${PK}$h" link set br100 up
	pps_no_brnf "${PK}$h"
done
# h1, the "bouncer": the frame comes in on vxlan100 and goes back out of it
# (hairpin), re-encapsulated toward h3 by vxlan100's fdb.
DMAC=${POD_MAC[$DST]}
run bridge -n "${PK}h1" link set dev vxlan100 hairpin on
run bridge -n "${PK}h1" fdb replace "$DMAC" dev vxlan100 master static sticky
run bridge -n "${PK}h1" fdb replace "$DMAC" dev vxlan100 dst "${HOST_IP[h3]}" self permanent
# h3: decap into br100, which holds the pod's veth.
run ip -n "${PK}h3" link set "v$DST" master br100
run bridge -n "${PK}h3" fdb replace "$DMAC" dev "v$DST" master static sticky

# ---- measurement ---------------------------------------------------------
# gen_args PREFIX ENCAP VIA: generator arguments for frames sent to host VIA
# (h1: through the bouncer, one transit hop; h3: straight to the pod's host)
# shellcheck disable=SC2046
gen_args() {
	local p=$1 encap=$2 via=$3
	echo -N "${p}g" -i eth0 --encap "$encap" --vni $VNI \
		--dmac "$(mac_of "${p}$via" eth0)" --smac "$(mac_of "${p}g" eth0)" \
		--src $GEN_IP --dst "${HOST_IP[$via]}" \
		--inner-dmac "$DMAC" --inner-smac $VMAC --inner-src $VIP --inner-dst "${POD_IP[$DST]}" \
		$([ "$encap" = geneve ] && echo --opt-host $GEN_IP)
}

# Sanity: a short burst must reach the pod on every path before timing.
check_path() {
	local p=$1 encap=$2 via=$3 n
	n=$(pps_burst "${p}$DST" "$p" "$encap" "$via") || fail "generator failed on $p ($encap via $via)"
	[ "$n" -gt 0 ] || fail "no packet reached pod $DST on the $encap path via $via ($p)"
	log "$encap path via $via ($p): $n packets reached $DST in the check"
}
for via in h1 h3; do
	check_path $PX geneve $via
	check_path $PK vxlan $via
done
[ "$MODE" = setup ] &&
	pps_setup_done "topologies ${PX}* and ${PK}* are up; remove them with: $0 --teardown $*"

# path_drops PREFIX -> summed rx_dropped + tx_dropped of every device the
# frames cross after the entry veth (whose drops are the generator's excess)
path_drops() {
	local p=$1 nd n=0 v
	for nd in "u:${p}h1-u" "h1:eth0" "u:${p}h3-u" "h3:eth0" "h3:v$DST" "$DST:eth0"; do
		v=$(pps_counters "${p}${nd%%:*}" "${nd#*:}" | awk '{print $2 + $3}')
		n=$((n + v))
	done
	echo "$n"
}

# one_run NAME PREFIX ENCAP VIA: one window (bench/lib/pps.sh), and the
# counters of h1 and h3 that grew during it (xgate)
one_run() {
	local name=$1 p=$2 encap=$3 via=$4
	[ "$p" = $PX ] && pps_xstats_snap a "$p" h1 h3
	pps_window "$p" "${p}u" "${p}g-u" "${p}$DST" "$p" "$encap" "$via"
	pps_account "$name" "$r  $name"
	if [ "$p" = $PX ]; then
		pps_xstats_snap b "$p" h1 h3
		pps_xstats_delta / h1 h3 >>"$TMP/xstats"
	fi
	return 0
}

load=$(cut -d' ' -f1 /proc/loadavg)
echo "pps_veth: $RUNS x ${SECS}s windows per path (after ${WARMUP}s warm-up), generator on CPU $GEN_CPU," \
	"data path on CPU $DP_CPU ($NCPU CPUs, load average $load before the start)"
for ((r = 1; r <= RUNS; r++)); do
	one_run xgate $PX geneve h1
	one_run kernel $PK vxlan h1
	if [ "$DIRECT" = 1 ]; then
		one_run xgate_direct $PX geneve h3
		one_run kernel_direct $PK vxlan h3
	fi
done

# ---- report --------------------------------------------------------------
W=50
printf '\n%-*s | %11s | %9s | %-10s | %8s | %s\n' $W "path (64 B inner UDP frames, one transit hop)" \
	"Mpps (best)" "vs kernel" "ns/pkt CPU" "offered" "windows (Mpps)"
pps_rule $W "-+-------------+-----------+------------+----------+---------------"
row() {
	local name=$1 label=$2 base=$3
	printf '%-*s | %11s | %9s | %-10s | %8s | %s\n' $W "$label" "${BEST[$name]}" \
		"$(pps_ratio "${BEST[$name]}" "${BEST[$base]}")" "${NSPKT[$name]:-n/a}" "${OFFERED[$name]}" \
		"${WIN_LIST[$name]}"
}
row xgate "xgate: Geneve, XDP bouncer (h1), XDP decap (h3)" kernel
row kernel "kernel: VXLAN, br100 hairpin (h1), VXLAN+br (h3)" kernel
if [ "$DIRECT" = 1 ]; then
	row xgate_direct "no hop, xgate: Geneve straight to h3" kernel_direct
	row kernel_direct "no hop, kernel: VXLAN straight to h3" kernel_direct
	hop() { awk -v a="${NSPKT[$1]:-0}" -v b="${NSPKT[$2]:-0}" 'BEGIN { printf "%d", a - b }'; }
	hx=$(hop xgate xgate_direct)
	hk=$(hop kernel kernel_direct)
	echo
	echo "the transit hop alone (ns/pkt CPU with the hop - without it): xgate $hx ns, kernel $hk ns" \
		"(kernel / xgate = $(pps_ratio "$hk" "$hx"))"
fi
echo
echo "Mpps: delivered to pod $DST (rx_packets of its eth0), best window. ns/pkt CPU: CPU time of the"
echo "data-path threads per delivered packet, lowest window (steal, idle, other work excluded); kernel / xgate:" \
	"$(pps_ratio "${NSPKT[kernel]:-0}" "${NSPKT[xgate]:-0}")."
pps_contended_note
echo "offered: Mpps the generator pushed at the entry veth (taken + dropped for a full ring);"
echo "it outruns both paths, so the delivered rate is the data path's capacity on one core."
echo "CPU $DP_CPU in the best windows: xgate ${BUSY[xgate]}, kernel ${BUSY[kernel]}."
echo "drops on the path after the entry (rx/tx_dropped of every veth end crossed):" \
	"xgate ${PDROPS[xgate]}, kernel ${PDROPS[kernel]}"
# data-plane counters of the xgate windows (incl. warm-up), summed over runs
if [ -s "$TMP/xstats" ]; then
	echo "xgate counters that grew during the xgate runs (h1 = bouncer, h3 = destination host):"
	awk '{s[$1] += $2} END {for (k in s) printf "  %-40s %12d\n", k, s[k]}' "$TMP/xstats" | sort
	grep -q '/drop_' "$TMP/xstats" || echo "  (no drop reason grew)"
fi
exit 0
