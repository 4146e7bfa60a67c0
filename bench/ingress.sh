#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# ingress: session ingress, xgate against the kernel's NAT on the same
# topology, side by side in one run. Method and results: docs/bench.md,
# section "ingress".
#
#   usage: bench/ingress.sh [--secs N] [--runs N] [--warmup N] [--no-scale]
#                           [--verbose] XGATE_BINARY PPS_GEN_BINARY SESS_FILL_BINARY
#          bench/ingress.sh --setup-only|--teardown XGATE_BINARY PPS_GEN_BINARY SESS_FILL_BINARY
#   e.g.   bench/ingress.sh build/userspace/xgate build/bench/pps_gen build/bench/sess_fill
#   (cmake target: bench_ingress)
#
#   Topology, twice (prefix xgi: xgate, xgn: nftables): a client namespace
#   ${P}c (10.88.0.2) on a public segment to the node ${P}n (10.88.0.1 on
#   ${P}nic), and a pod ${P}p (10.1.1.5) behind the node's veth vpod.
#   Sessions: UDP 10.88.0.1:5353 -> 10.1.1.5:5353, TCP :30201 -> :5201.
#     xgate   : `ingress` (XDP) on ${P}nic DNATs and redirects into vpod;
#               `agent` on vpod SNATs the replies (on-node form).
#     nftables: a pass stub (XDP_PASS) on ${P}nic, then the host stack:
#               prerouting dnat through a map keyed by the destination port
#               (`dnat ip to udp dport map @sess_udp`), conntrack on (what a
#               host-port setup does), forwarding to vpod.
#   Rows:
#   - 64 B UDP: the client's generator (pps_gen, pinned to CPU 0) blasts one
#     flow at the UDP session; counted at the pod's eth0 (rx_packets, a tc
#     drop there keeps the pod's stack out of both); the entry veth's NAPI
#     thread is pinned to CPU 1, so the whole data path runs on one core.
#     Best of --runs windows, interleaved; CPU ns per delivered packet.
#   - TCP: iperf3 (one stream, --secs) client -> session -> pod.
#   - churn: sessions added then deleted while the TCP stream runs: xgate
#     through libxgate (sess_fill, one entry a call, as the daemons will),
#     nftables as one `nft -f` batch of map elements each way.
#   - scale (xgate, unless --no-scale): 10, 1,000, 100,000 and 1,000,000
#     sessions in the maps (sess_fill), one UDP window each, and the maps'
#     memory per session (bpftool's memlock of xg_sess + xg_sess_rev).
#
# Exit: 0 when it ran (no assertion on the numbers), 1 on setup failure,
# 2 on usage, 130 when interrupted. Every namespace and xgate instance it
# made is removed on exit, Ctrl-C included. Traffic stays inside them.

set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PPS_SELF=ingress
# shellcheck source=lib/pps.sh
source "$HERE/lib/pps.sh"
SCALE=1
PPS_FLAGS=([--no-scale]=SCALE)
pps_args 3 "$@"
set -- "${PPS_ARGV[@]}"

XGATE=$(readlink -f "$1")
GEN=$(readlink -f "$2")
FILL=$(readlink -f "$3")
[ "$(id -u)" = 0 ] || fail "needs root (namespaces, XDP)"
[ -x "$XGATE" ] || fail "xgate binary '$1' not found"
[ -x "$GEN" ] || fail "pps_gen binary '$2' not found"
[ -x "$FILL" ] || fail "sess_fill binary '$3' not found"
for t in ip nft iperf3 bpftool taskset timeout jq; do
	command -v $t >/dev/null || fail "'$t' is missing (deploy/deps.sh installs it)"
done

PX=xgi
PK=xgn
VNI=100
POD_IP=10.1.1.5
POD_MAC=02:00:0a:01:01:05
PUB=10.88.0.1
CLI_IP=10.88.0.2
MAX_SESS=1100000 # room for the scale rows' 1,000,000 and the bench's own
XDP_MODE=native
POD_MTU=1500
# shellcheck source=../deploy/lib/pod.sh
source "$HERE/../deploy/lib/pod.sh"
xg() { local p=$1; shift; XGATE_MAX_SESSIONS=$MAX_SESS "$XGATE" -N "${p}n" "$@"; }
nsx() { local n=$1; shift; ip netns exec "$n" "$@"; }

NS_SUFFIXES=(c n p)
teardown() {
	local p=$1 s
	[ -e "/run/netns/${p}n" ] && "$XGATE" -N "${p}n" reset >/dev/null 2>&1
	"$XGATE" -n "${p}n" reset >/dev/null 2>&1
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
	pps_gen_stop
	for p in $PX $PK; do teardown $p; done
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
	return 0
}
trap cleanup EXIT
trap 'echo "ingress: interrupted" >&2; exit 130' INT TERM HUP
TMP=$(mktemp -d /tmp/bench_ingress.XXXXXX) || fail "mktemp"
[ "$MODE" = teardown ] && exit 0
for p in $PX $PK; do teardown $p; done

pin_napi() {
	local p=$1 pid n=0
	for pid in $(ps -eo pid=,comm= | awk -v pre="napi/${p}nic-" 'index($2, pre) == 1 {print $1}'); do
		taskset -pc "$DP_CPU" "$pid" >/dev/null && n=$((n + 1))
		NAPI_PIDS[$p]="${NAPI_PIDS[$p]:-} $pid"
	done
	[ "$n" -gt 0 ] || echo "ingress: warning: no NAPI thread for ${p}nic; data path not pinned" >&2
}

# build PREFIX: client, node and pod namespaces, the public segment.
build_common() {
	local p=$1 s
	for s in c n; do
		run ip netns add "${p}$s"
		run ip -n "${p}$s" link set lo up
	done
	run ip link add eth0 netns "${p}c" type veth peer name "${p}nic" netns "${p}n"
	run ip -n "${p}c" addr add $CLI_IP/24 dev eth0
	run ip -n "${p}n" addr add $PUB/24 dev "${p}nic"
	run nsx "${p}c" ethtool -K eth0 tx off >/dev/null # complete checksums, as from a wire
	run ip -n "${p}c" link set eth0 up
	run ip -n "${p}n" link set "${p}nic" up
	run nsx "${p}n" sysctl -qw net.ipv4.ip_forward=1
	pod_up "${p}p" "${p}n" vpod $POD_MAC $POD_IP/24 10.1.1.1 >"$TMP/pod.$p" 2>&1 ||
		{ cat "$TMP/pod.$p" >&2; fail "pod_up ($p)"; }
	# the client takes the node's XDP_TX/redirected replies
	run "$XGATE" -N "${p}c" attach eth0 pass
}
# threaded PREFIX: the entry veth's NAPI (it exists once XDP is attached)
# runs as a thread pinned to the data-path CPU
threaded() {
	run nsx "${1}n" sh -c "echo 1 > /sys/class/net/${1}nic/threaded"
	pin_napi "$1"
}

log "building the xgate topology ($PX*)"
build_common $PX
run xg $PX host set ip $PUB
run xg $PX vpc add $VNI
run xg $PX subnet add $VNI 10.1.1.0/24 bouncers $PUB
run xg $PX endpoint add $VNI $POD_IP mac $POD_MAC dev vpod
run xg $PX attach vpod agent
run xg $PX attach ${PX}nic ingress
threaded $PX
run xg $PX ingress add udp $PUB:5353 vni $VNI $POD_IP:5353
run xg $PX ingress add tcp $PUB:30201 vni $VNI $POD_IP:5201

log "building the nftables topology ($PK*)"
build_common $PK
# pps_gen sends xdp_frames: the entry veth must run XDP to take them; the
# stub passes everything to the stack
run "$XGATE" -N "${PK}n" attach ${PK}nic pass
threaded $PK
run ip -n "${PK}n" addr add 10.1.1.1/24 dev vpod
# the pps sink drops the pod's ARP too: its neighbour is set, as xgate's
# endpoint entry carries its MAC
run ip -n "${PK}n" neigh replace $POD_IP lladdr $POD_MAC dev vpod nud permanent
cat >"$TMP/nat.nft" <<EOF
table ip xgbench {
	map sess_udp {
		type inet_service : ipv4_addr . inet_service
		elements = { 5353 : $POD_IP . 5353 }
	}
	map sess_tcp {
		type inet_service : ipv4_addr . inet_service
		elements = { 30201 : $POD_IP . 5201 }
	}
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr $PUB dnat ip to udp dport map @sess_udp
		ip daddr $PUB dnat ip to tcp dport map @sess_tcp
	}
}
EOF
run nsx "${PK}n" nft -f "$TMP/nat.nft"

gen_args() {
	local p=$1
	echo -N "${p}c" -i eth0 --encap none --dmac "$(mac_of "${p}n" "${p}nic")" \
		--smac "$(mac_of "${p}c" eth0)" --src $CLI_IP --dst $PUB --sport 40000 --dport 5353
}
path_drops() {
	local p=$1
	echo $(($(pps_counters "${p}n" vpod | awk '{print $2 + $3}') + $(pps_counters "${p}p" eth0 | awk '{print $2 + $3}')))
}
for p in $PX $PK; do
	run "$GEN" -N "${p}p" -i eth0 --tc-drop
	n=$(pps_burst "${p}p" "$p") || fail "generator failed ($p)"
	[ "$n" -gt 0 ] || fail "no packet reached the pod through the session ($p)"
	log "$p: $n packets reached the pod in the check"
done
[ "$MODE" = setup ] && pps_setup_done "topologies ${PX}* and ${PK}* are up; remove them with: $0 --teardown $*"

one_run() { # one_run NAME PREFIX
	pps_window "$2" "${2}n" "${2}nic" "${2}p" "$2"
	pps_account "$1" "$r  $1"
}
load=$(cut -d' ' -f1 /proc/loadavg)
echo "ingress: $RUNS x ${SECS}s windows per path (after ${WARMUP}s warm-up), generator on CPU $GEN_CPU," \
	"data path on CPU $DP_CPU ($NCPU CPUs, load average $load before the start)"
for ((r = 1; r <= RUNS; r++)); do
	one_run xgate $PX
	one_run nft $PK
done

# ---- scale: the same window with N sessions in the maps --------------------
mem_of() { # memlock bytes of the instance's two session maps
	local m t=0 v
	for m in xg_sess xg_sess_rev; do
		v=$(bpftool map show pinned "/sys/fs/bpf/xgate/${PX}n/$m" -j | jq '.bytes_memlock // 0')
		t=$((t + v))
	done
	echo $t
}
declare -A SC_MPPS=() SC_NS=() SC_MEM=() SC_ADD=()
SCALE_NS=(10 1000 100000 1000000)
if [ "$SCALE" = 1 ]; then
	base=$(mem_of)
	for n in "${SCALE_NS[@]}"; do
		out=$("$FILL" "${PX}n" $VNI add "$n") || fail "sess_fill add $n: $out"
		SC_ADD[$n]=$(echo "$out" | awk '{print $NF}')
		SC_MEM[$n]=$(awk -v a="$(mem_of)" -v b="$base" -v n="$n" 'BEGIN { printf "%.0f", (a - b) / n }')
		r=scale
		unset "BEST[s$n]" "NSPKT[s$n]"
		pps_window $PX ${PX}n ${PX}nic ${PX}p $PX
		pps_account "s$n" "$n sessions"
		SC_MPPS[$n]=${BEST[s$n]}
		SC_NS[$n]=${NSPKT[s$n]:-n/a}
		"$FILL" "${PX}n" $VNI del "$n" >/dev/null || fail "sess_fill del $n"
	done
fi

# ---- TCP (iperf3) and churn while it flows ---------------------------------
declare -A TCP=() CH_ADD=() CH_DEL=()
CHURN_N=50000 # a port-keyed map holds at most 64k: the same count for both
for p in $PX $PK; do
	nsx "${p}p" tc qdisc del dev eth0 clsact 2>/dev/null # the pps sink goes: the pod's stack answers now
	nsx "${p}p" iperf3 -s -B $POD_IP -p 5201 -1 >/dev/null 2>&1 &
	srv=$!
	sleep 0.5
	nsx "${p}c" timeout $((SECS + 20)) iperf3 -c $PUB -p 30201 -t "$SECS" -J >"$TMP/iperf.$p" 2>/dev/null &
	cli=$!
	sleep 1
	if [ "$p" = $PX ]; then
		a=$("$FILL" "${PX}n" $VNI add $CHURN_N) || fail "churn add: $a"
		d=$("$FILL" "${PX}n" $VNI del $CHURN_N) || fail "churn del: $d"
		CH_ADD[$p]=$(echo "$a" | awk '{print $NF}')
		CH_DEL[$p]=$(echo "$d" | awk '{print $NF}')
	else
		awk -v n=$CHURN_N 'BEGIN { printf "add element ip xgbench sess_udp { ";
			for (i = 0; i < n; i++) printf "%s%d : 10.%d.%d.%d . %d", i ? ", " : "", 10000 + i, 64 + int(i / 65536), int(i / 256) % 256, i % 256, 10000 + i;
			print " }" }' >"$TMP/add.nft"
		sed 's/^add element/delete element/; s/ : [0-9.]* \. [0-9]*//g' "$TMP/add.nft" >"$TMP/del.nft"
		t0=$(pps_now); nsx "${p}n" nft -f "$TMP/add.nft" || fail "nft add batch"; t1=$(pps_now)
		nsx "${p}n" nft -f "$TMP/del.nft" || fail "nft del batch"; t2=$(pps_now)
		CH_ADD[$p]=$(awk -v n=$CHURN_N -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f/s", n / (b - a) }')
		CH_DEL[$p]=$(awk -v n=$CHURN_N -v a="$t1" -v b="$t2" 'BEGIN { printf "%.0f/s", n / (b - a) }')
	fi
	wait $cli
	wait $srv 2>/dev/null
	TCP[$p]=$(jq -r '.end.sum_received.bits_per_second / 1e9 | . * 100 | floor / 100' "$TMP/iperf.$p" 2>/dev/null || echo n/a)
done

# ---- report ----------------------------------------------------------------
W=52
printf '\n%-*s | %11s | %9s | %-10s | %8s | %s\n' $W "64 B UDP, client -> session -> pod (one core)" \
	"Mpps (best)" "vs nft" "ns/pkt CPU" "offered" "windows (Mpps)"
pps_rule $W "-+-------------+-----------+------------+----------+---------------"
row() {
	printf '%-*s | %11s | %9s | %-10s | %8s | %s\n' $W "$2" "${BEST[$1]}" \
		"$(pps_ratio "${BEST[$1]}" "${BEST[nft]}")" "${NSPKT[$1]:-n/a}" "${OFFERED[$1]}" "${WIN_LIST[$1]}"
}
row xgate "xgate: XDP DNAT + redirect, agent SNAT"
row nft "nftables: dnat via port map, conntrack, forward"
echo "CPU per packet, nftables / xgate: $(pps_ratio "${NSPKT[nft]:-0}" "${NSPKT[xgate]:-0}");" \
	"CPU $DP_CPU in the best windows: xgate ${BUSY[xgate]}, nftables ${BUSY[nft]}."
pps_contended_note
echo "drops after the entry (vpod, pod eth0): xgate ${PDROPS[xgate]}, nftables ${PDROPS[nft]}"
echo
printf '%-*s | %14s | %16s | %16s\n' $W "TCP and churn" "iperf3 Gbit/s" "adds while TCP" "deletes while TCP"
pps_rule $W "-+----------------+------------------+-----------------"
printf '%-*s | %14s | %16s | %16s\n' $W "xgate (libxgate, one session a call)" "${TCP[$PX]}" "${CH_ADD[$PX]}" "${CH_DEL[$PX]}"
printf '%-*s | %14s | %16s | %16s\n' $W "nftables (one nft -f batch of $CHURN_N)" "${TCP[$PK]}" "${CH_ADD[$PK]}" "${CH_DEL[$PK]}"
if [ "$SCALE" = 1 ]; then
	echo
	printf '%-*s | %11s | %-10s | %13s | %s\n' $W "xgate, sessions in the maps" "Mpps" "ns/pkt CPU" "bytes/session" "adds (sess_fill)"
	pps_rule $W "-+-------------+------------+---------------+-----------------"
	for n in "${SCALE_NS[@]}"; do
		printf '%-*s | %11s | %-10s | %13s | %s\n' $W "$n" "${SC_MPPS[$n]}" "${SC_NS[$n]}" "${SC_MEM[$n]}" "${SC_ADD[$n]}"
	done
fi
exit 0
