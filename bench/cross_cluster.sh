#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# cross_cluster: pod to pod ACROSS TWO CLUSTERS, through xgate's gateways
# (auth mode and encrypt mode), side by side with the kernel's own path
# (VXLAN + bridge + IP routing) and with that path over a WireGuard tunnel
# between the gateways, on the same namespaces, pods, veths and MTUs, in the
# same run:
#   pps: 64-byte UDP frames sent from pod 1b's eth0 (10.1.1.12, cluster 1,
#        host h2), counted where they arrive, pod 2b's eth0 (10.1.2.12,
#        cluster 2, host h2); best window, and CPU time per packet;
#   TCP: iperf3 from pod 1b to pod 2b: Mbit/s and retransmits.
# Method, the layouts and results: docs/bench.md, section "cross_cluster".
#
#   usage: bench/cross_cluster.sh [--secs N] [--runs N] [--warmup N]
#                [--no-pps] [--no-tcp] [--no-variant] [--no-wg] [--no-encrypt]
#                [--verbose]
#                XGATE_BINARY GATEWAYD_BINARY PPS_GEN_BINARY
#          bench/cross_cluster.sh --setup-only|--teardown XGATE GATEWAYD PPS_GEN
#   e.g.   bench/cross_cluster.sh build/userspace/xgate build/userspace/gatewayd \
#                build/bench/pps_gen
#   (cmake target: bench_cross_cluster)
#
#   xgate : deploy/lib/mtopo.sh as the demo builds it (3 clusters, gatewayd
#           mesh, every peer Mode = auth), prefix xcx: 1b -> agent (XDP on
#           v1b) -> gateway 1 (XDP, authenticated tunnel: SipHash) -> WAN
#           router -> gateway 2 -> bouncer h1 (XDP_TX) -> h2 (XDP decap) ->
#           2b, once ping has warmed the direct path (printed from the xgate
#           counters that grew);
#   xgate encrypt: the same built again (prefix xce), Mode = encrypt
#           (tunnel type 1): each gateway's program hands the tunnel frames
#           to xgate-cryptd (next to GATEWAYD_BINARY; AF_XDP workers, AEAD),
#           pinned to the data-path CPU in the pps windows and counted in its
#           CPU time; its options (--nice, --busy-poll, ...): CROSS_CRYPTD_ARGS
#           in the environment, default none; --no-encrypt skips it;
#   xgate, gateways know the pods' hosts (a variant, --no-variant skips it):
#           an endpoint entry for the destination pod on each gateway, so
#           gateway 2 sends straight to h2: the kernel path's hop count;
#   kernel: the same topology built again (prefix xck), xgate removed,
#           bench/cross/ktopo.sh: bridge + VXLAN on the hosts, the gateways
#           routing between their cluster VXLAN and a VXLAN over the WAN;
#   wg:     the kernel path again (prefix xcw), WireGuard between the
#           gateways instead of the WAN VXLAN (bench/cross/wgtopo.sh): the
#           kernel's module where it exists, else wireguard-go (printed);
#           --no-wg skips it.
#   Prefixes: xcx, xce, xck, xcw; CROSS_PREFIX=yy in the environment makes
#   them yyx, yye, yyk, yyw (one run at a time per prefix: a second one waits).
#   CPUs: pps_gen pinned to CPU 0; the entry veth's NAPI (v1b, host side of
#   1b's veth) runs threaded on CPU 1, so the whole data path runs on CPU 1.
#   wireguard-go and xgate-cryptd run on CPU 1 too in the pps windows (their
#   CPU time is the data path's), on both CPUs for TCP; iperf3 is not pinned
#   (the TCP figures use both CPUs). xgate-cryptd's CPU per frame it sealed
#   or opened (64 B in the pps windows, ~1400 B in TCP) is printed next to
#   tun_aead's (next to PPS_GEN_BINARY) seal and open of the same cipher.
#   After the timed runs, one more TCP window on the encrypt path under
#   perf record -a -g (not timed) splits the workers' CPU into their own
#   work and the next hops the kernel runs in their context after their
#   transmits; the workers' own CPU per frame is compared with tun_aead too
#   (left out without perf: package linux-perf).
#   Each run times every path once (pps windows, then TCP), interleaved.
#
# Exit: 0 when it ran (no assertion on the numbers), 1 on setup failure,
# 2 on usage, 130 when interrupted. Every namespace, xgate instance (pins)
# and process it made (gatewayd, xgate-cryptd, wireguard-go with its socket
# and TUN device included) is removed on exit, Ctrl-C included, and checked.

set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PPS_SELF=cross_cluster
# options, helpers (fail, log, run, mac_of), generator, window accounting
# shellcheck source=lib/pps.sh
source "$HERE/lib/pps.sh"
DO_PPS=1
DO_TCP=1
VARIANT=1
DO_WG=1
DO_ENC=1
# shellcheck disable=SC2317 # (run by pps_args, as PPS_HELP)
help() { sed -n '4,/^# Exit:/p' "$0" | cut -c3-; sed -n '/^# Exit:/,/^$/p' "$0" | sed 1d | cut -c3-; exit 0; }
PPS_FLAGS=([--no-pps]=DO_PPS [--no-tcp]=DO_TCP [--no-variant]=VARIANT [--no-wg]=DO_WG [--no-encrypt]=DO_ENC)
PPS_HELP=help
pps_args 3 "$@" # and the common options
set -- "${PPS_ARGV[@]}"

XGATE=$(readlink -f "$1")
GATEWAYD=$(readlink -f "$2")
GEN=$(readlink -f "$3")
CRYPTD=$(dirname "$GATEWAYD")/xgate-cryptd # encrypt mode's workers (mtopo.sh)
# their options (mtopo.sh's cryptd_start), to measure them: none by default,
# since none of them raised the rate reliably (docs/bench.md, cross_cluster)
CRYPTD_ARGS=${CROSS_CRYPTD_ARGS:-}
TUN_AEAD=$(dirname "$GEN")/tun_aead         # the cipher alone, for the workers' figure
MTOPO=$HERE/../deploy/lib/mtopo.sh

[ "$(id -u)" = 0 ] || fail "needs root (namespaces, XDP, BPF_PROG_RUN)"
for b in "$XGATE" "$GATEWAYD" "$GEN"; do [ -x "$b" ] || fail "binary '$b' not found"; done
[ "$DO_ENC" = 0 ] || [ -x "$CRYPTD" ] || fail "encrypt path: '$CRYPTD' not found (built next to gatewayd; --no-encrypt skips the path)"
[ -r "$MTOPO" ] || fail "cannot read $MTOPO"
for t in ip bridge tc taskset timeout jq iperf3 ethtool nsenter; do
	command -v $t >/dev/null || fail "'$t' is missing (deploy/deps.sh installs it)"
done

# The topologies, all built by mtopo.sh; exact namespace names ${P}-...
# CROSS_PREFIX (environment, default xc) starts every prefix: runs with
# different ones do not touch each other's namespaces
XC=${CROSS_PREFIX:-xc}
[[ $XC =~ ^[a-z][a-z0-9]{0,5}$ ]] || fail "CROSS_PREFIX '$XC': 1 to 6 lower-case letters and digits, a letter first"
PX=${XC}x   # xgate, auth mode
PE=${XC}e   # xgate, encrypt mode
PK=${XC}k   # kernel
PW=${XC}w   # kernel inside the clusters, WireGuard between the gateways
P=$PX
# shellcheck source=../deploy/lib/mtopo.sh
source "$MTOPO"
# shellcheck source=cross/ktopo.sh
source "$HERE/cross/ktopo.sh"
# shellcheck source=cross/wgtopo.sh
source "$HERE/cross/wgtopo.sh"
# in_topo PREFIX CMD...: run an mtopo.sh function (or any command) on the
# topology PREFIX (bash locals are seen by the functions it calls). MT_MODE:
# the gateways' tunnel mode, also what mtopo_up builds (the crypt veth);
# mtopo.sh's default is encrypt, so every other topology says auth.
in_topo() { local P=$1 MT_RUN=/tmp/$1-run MT_MODE=${TOPO_MODE[$1]:-auth}; shift; "$@"; }

SRC=1b
DST=2b
# the hosts with xgate a frame can cross, in path order (for the counters;
# the WAN router between the gateways runs none)
XG_NS=(c1h2 c1h1 c1gw c2gw c2h1 c2h2)

BG_PIDS=()
GWD_PIDS=
LOCK= # lock_take

# ---- the topologies and the paths, as tables ---------------------------------
# A topology: its prefix in ALL_TOPOS (what cleanup removes, built or
# not) and, when this run builds it, in TOPOS; how it is built on mtopo_up's
# namespaces (TOPO_BUILD, run with P set) and removed (TOPO_DOWN); whether it
# runs xgate (XG_TOPO: its counters are read around the pps windows, its
# gatewayds checked at the end) or v1b needs a pass stub for the pps windows
# (STUB_ENTRY: no xgate agent there). A path:
# a name in PATHS, its topology (PATH_TOPO), its row's label (LABEL), hooks
# run around all its windows (PATH_ON/PATH_OFF) and around its pps windows
# only (PPS_ON/PPS_OFF). Adding a path on an existing topology is a line in
# each table.
ALL_TOPOS=("$PX" "$PE" "$PK" "$PW")
TOPOS=("$PX")
[ "$DO_ENC" = 1 ] && TOPOS+=("$PE")
TOPOS+=("$PK")
[ "$DO_WG" = 1 ] && TOPOS+=("$PW")
declare -A TOPO_BUILD=([$PX]=mesh_up [$PE]=mesh_up [$PK]=kt_build [$PW]=wt_build)
declare -A TOPO_DOWN=([$PX]=mtopo_down [$PE]=mtopo_down [$PK]=mtopo_down [$PW]=wt_down)
declare -A TOPO_NAME=([$PX]="xgate (auth)" [$PE]="xgate (encrypt)" [$PK]=kernel [$PW]=WireGuard)
declare -A TOPO_MODE=([$PE]=encrypt) # the gateways' Mode (in_topo); auth elsewhere
declare -A XG_TOPO=([$PX]=1 [$PE]=1) STUB_ENTRY=([$PK]=1 [$PW]=1)
PATHS=(xgate)
[ "$DO_ENC" = 1 ] && PATHS+=(xgate_enc)
PATHS+=(kernel)
[ "$DO_WG" = 1 ] && PATHS+=(wg)
[ "$VARIANT" = 1 ] && PATHS+=(xgate_ep)
declare -A PATH_TOPO=([xgate]=$PX [xgate_enc]=$PE [xgate_ep]=$PX [kernel]=$PK [wg]=$PW)
declare -A LABEL=(
	[xgate]="xgate auth: agent, gw tunnel (SipHash), bouncer, decap"
	[xgate_enc]="xgate encrypt: the same, AEAD in xgate-cryptd"
	[xgate_ep]="xgate auth, gateways know the pods' hosts (no bouncer)"
	[kernel]="kernel: bridge+VXLAN, gw routing, VXLAN over WAN"
	[wg]="kernel: bridge+VXLAN, gw routing, WireGuard on WAN"
)
declare -A PATH_ON=([xgate_ep]=variant_on) PATH_OFF=([xgate_ep]=variant_off)
# the processes that encrypt (wireguard-go, xgate-cryptd): on the data-path
# CPU in the pps windows (the whole path on one core, as on the others), on
# every CPU for TCP
declare -A PPS_ON=([wg]="wt_affinity $DP_CPU" [xgate_enc]="cryptd_affinity $DP_CPU")
declare -A PPS_OFF=([wg]="wt_affinity 0-$((NCPU - 1))" [xgate_enc]="cryptd_affinity 0-$((NCPU - 1))")
# the ratio columns of the report: each path against these
REFS=(kernel)
[ "$DO_WG" = 1 ] && REFS+=(wg)
CRYPTD_PIDS=() # mesh_up's on the encrypt topology
# shellcheck disable=SC2317 # (run through PPS_ON/PPS_OFF)
cryptd_affinity() { # cryptd_affinity CPULIST: every thread of every xgate-cryptd
	local pid
	for pid in "${CRYPTD_PIDS[@]}"; do taskset -a -pc "$1" "$pid" >/dev/null 2>&1; done
	return 0
}
topo_exists() { # topo_exists PREFIX: any namespace of that topology left?
	local n
	for n in $(mt_all_ns); do [ -e "/run/netns/$1-$n" ] && return 0; done
	return 1
}
leftovers() { # what a run must not leave: namespaces, pins, gatewayd pid files
	local p n
	for p in "${ALL_TOPOS[@]}"; do
		for n in $(mt_all_ns); do
			[ -e "/run/netns/$p-$n" ] && echo "netns $p-$n"
			[ -e "/sys/fs/bpf/xgate/$p-$n" ] && echo "pins /sys/fs/bpf/xgate/$p-$n"
		done
		[ -e "/tmp/$p-run" ] && echo "directory /tmp/$p-run"
	done
	for n in $GEN_PID "${BG_PIDS[@]}" $GWD_PIDS "${CRYPTD_PIDS[@]}"; do kill -0 "$n" 2>/dev/null && echo "process $n ($(cat /proc/$n/comm 2>/dev/null))"; done
	in_topo "$PW" wt_leftovers # wireguard-go processes, sockets, TUN devices
	return 0
}
cleanup() {
	local p pid left
	trap - EXIT INT TERM HUP
	pps_gen_stop
	for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${BG_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for p in "${ALL_TOPOS[@]}"; do in_topo "$p" "${TOPO_DOWN[$p]}"; done
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
	[ -n "$LOCK" ] && [ "$(cat "$LOCK" 2>/dev/null)" = $$ ] && rm -f "$LOCK"
	left=$(leftovers)
	if [ -n "$left" ]; then
		echo "cross_cluster: left behind after teardown:" >&2
		echo "$left" | sed 's/^/  /' >&2
	else
		echo "teardown: no namespace (${PX}-*, ${PE}-*, ${PK}-*, ${PW}-*), pin (/sys/fs/bpf/xgate/${PX}-*," \
			"${PE}-*, ${PK}-*, ${PW}-*), gatewayd, xgate-cryptd, wireguard-go (process, socket, device)," \
			"generator or iperf3 left"
	fi
	return 0
}
if [ "$MODE" = teardown ]; then
	cleanup
	exit 0
fi
# One run at a time on the machine: the prefixes are fixed, and a run
# removes whatever it finds of them as left by an earlier run. Taken before
# the traps: a run that waits, or gives up, tears nothing down.
lock_take() {
	local pid i
	LOCK=/run/lock/xgate-cross_cluster-$XC.pid
	for i in $(seq 900); do
		(set -o noclobber; echo $$ >"$LOCK") 2>/dev/null && return 0
		pid=$(cat "$LOCK" 2>/dev/null)
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q cross_cluster "/proc/$pid/cmdline" 2>/dev/null; then
			[ "$i" = 1 ] && echo "cross_cluster: waiting for the run of PID $pid to finish ($LOCK)" >&2
			sleep 1
		else
			rm -f "$LOCK" # its run is gone
		fi
	done
	fail "the run of PID $pid still holds $LOCK after 15 minutes"
}
lock_take
trap cleanup EXIT
trap 'echo "cross_cluster: interrupted" >&2; exit 130' INT TERM HUP
TMP=$(mktemp -d /tmp/cross_cluster.XXXXXX) || fail "mktemp"

run_q() { "$@" >/dev/null || fail "setup failed: $*"; } # (the command's output only)

# ---- leftovers of an earlier, killed run --------------------------------
for p in "${ALL_TOPOS[@]}"; do
	if topo_exists "$p" || [ -e "/tmp/$p-run" ]; then
		echo "cross_cluster: removing topology $p-* left by an earlier run" >&2
		in_topo "$p" "${TOPO_DOWN[$p]}"
	fi
done

# ---- the topologies --------------------------------------------------------
# (a function whose output is redirected runs in a subshell: a signal's trap
# would otherwise run with that redirection, and its messages be lost; the
# builders run in this shell: they keep PIDs)
t0=$(date +%s)
for p in "${TOPOS[@]}"; do
	log "building the ${TOPO_NAME[$p]} topology ($p-*): mtopo_up, ${TOPO_BUILD[$p]}"
	(in_topo "$p" mtopo_up) >"$TMP/topo.$p" 2>&1 || { grep -v '^xgate: note' "$TMP/topo.$p" >&2; fail "mtopo_up ($p) failed"; }
	in_topo "$p" "${TOPO_BUILD[$p]}"
	rc=$?
	if [ -n "${XG_TOPO[$p]:-}" ]; then
		GWD_PIDS="$GWD_PIDS $(cat "/tmp/$p-run"/gw*.pid 2>/dev/null | tr '\n' ' ')" # to check they are gone at the end
		[ "${TOPO_MODE[$p]:-}" = encrypt ] && mapfile -t CRYPTD_PIDS < <(cat "/tmp/$p-run"/cryptd*.pid 2>/dev/null)
		[ $rc = 0 ] || { tail -n 5 "/tmp/$p-run"/gw*.log >&2; fail "the gatewayd mesh did not come up"; }
	fi
	[ $rc = 0 ] || fail "${TOPO_NAME[$p]} path setup failed (${TOPO_BUILD[$p]})"
done
if [ "$DO_ENC" = 1 ]; then
	CPU_PIDS[$PE]="${CRYPTD_PIDS[*]}"
	# the gateways' agreed cipher, as gatewayd reports it
	# their scheduling as the kernel has it (SCHED_FIFO 1 unless the options say otherwise)
	sched=$(awk '{ if ($41 == 1) print "SCHED_FIFO " $40; else if ($41 == 0) print "SCHED_OTHER, nice " $19; else print "policy " $41 }' \
		"/proc/${CRYPTD_PIDS[0]}/stat" 2>/dev/null)
	echo "cross_cluster: encrypt path: xgate-cryptd PIDs ${CRYPTD_PIDS[*]} (options: ${CRYPTD_ARGS:-none}; ${sched:-scheduling unknown}); peer gw2 of gateway 1:" \
		"$("$XGATE" gw peers --socket "$(in_topo "$PE" gw_sock 1)" -o json 2>/dev/null | jq -c '.[] | select(.name == "gw2") | del(.name)' 2>/dev/null)"
fi
if [ "$DO_WG" = 1 ]; then
	CPU_PIDS[$PW]="${WT_PIDS[*]}"
	echo "cross_cluster: WireGuard path: $WT_VERSION, device MTU $(wt_mtu) (pods $POD_MTU, WAN $WAN_MTU)"
fi

# All: no bridge netfilter (per namespace here; it would tax every path),
# and a static underlay fdb, so that no bridge floods a one-way stream once
# an entry ages out (the pps windows send one way only).
for p in "${TOPOS[@]}"; do
	for n in $(mt_all_ns); do
		[ -e "/run/netns/$p-$n" ] && pps_no_brnf "$p-$n"
	done
	for c in 1 2; do
		for h in h1 h2 gw; do
			run bridge -n "$p-c${c}u" fdb replace "$(mac_of "$p-c$c$h" eth0)" dev "$h" master static sticky
		done
	done
done

# Permanent neighbours on the underlays and the WAN links, on every
# topology. XDP's next-hop lookup (bpf_fib_lookup) needs a valid entry and
# never refreshes one; and once the system holds more than gc_thresh1 (128)
# ARP entries over all its namespaces (three topologies do), the garbage
# collector drops an entry the stack has not used for gc_stale_time (60 s):
# from then on xgate's path drops every packet (drop_no_neigh, seen on
# c2gw and c1h2 two minutes into a run). The kernel paths resolve through
# the stack; they get the same entries.
static_neigh() { # static_neigh PREFIX
	local p=$1 c h o
	for c in 1 2; do
		for h in h1 h2 gw; do
			for o in h1 h2 gw; do
				[ "$h" = "$o" ] && continue
				run ip -n "$p-c$c$h" neigh replace "$(host_ip "$c" "$o")" \
					lladdr "$(mac_of "$p-c$c$o" eth0)" dev eth0 nud permanent
			done
		done
		run ip -n "$p-c${c}gw" neigh replace "198.18.$c.1" lladdr "$(mac_of "$p-wan" "r$c")" dev wan0 nud permanent
		run ip -n "$p-wan" neigh replace "$(pub_ip "$c")" lladdr "$(mac_of "$p-c${c}gw" wan0)" dev "r$c" nud permanent
	done
}
for p in "${TOPOS[@]}"; do static_neigh "$p"; done

# Warm every path both ways: ARP everywhere, xgate's direct path (h2
# learns from the first reply that 10.1.2.12 is behind gateway 1), the
# WireGuard handshake.
for p in "${TOPOS[@]}"; do
	for pair in "$SRC $DST" "$DST $SRC"; do
		read -r a b <<<"$pair"
		ip netns exec "$p-p$a" ping -c3 -i0.2 -W1 "${POD_IP[$b]}" >/dev/null 2>&1 ||
			fail "ping from pod $a to $b failed on the $p topology"
	done
done
log "topologies up and warm in $(($(date +%s) - t0)) s"

# Same pods: what the pods' eth0 do with a TCP/UDP datagram must match
# across topologies (checksum in software, TCP segmented in software by
# GSO: veth marks more features "fixed" while its peer runs XDP, which
# changes nothing of this).
offloads() {
	ip netns exec "$1" ethtool -k eth0 | awk '$1 ~ /^(tx-checksum-ip-generic|tx-tcp-segmentation|tx-udp-segmentation|generic-segmentation-offload|generic-receive-offload|tx-scatter-gather|rx-gro-list|rx-udp-gro-forwarding):$/ {print $1, $2}'
}
for pod in $SRC $DST; do
	fx=$(offloads "$PX-p$pod")
	for p in "${TOPOS[@]}"; do
		fk=$(offloads "$p-p$pod")
		[ "$fx" = "$fk" ] || echo "cross_cluster: warning: pod $pod's eth0 offloads differ between" \
			"$PX and $p: $(diff <(echo "$fx") <(echo "$fk") | grep '^[<>]' | tr -s '\t\n' '  ')" >&2
	done
done

# ---- the generator's entry, the sink ----------------------------------------
# The generator sends xdp_frames out of 1b's eth0 into v1b: v1b must run
# XDP to take them. On xgate it runs the agent (the path under test); on
# the kernel path a pass stub is attached for the pps windows only (the
# apparatus, not the path: detached for TCP). Its NAPI runs as a kernel
# thread pinned to the data-path CPU; every later step runs in softirqs
# raised from it, so on that CPU too.
napi_threads() { ps -eo pid=,comm= | awk 'index($2, "napi/v1b-") == 1 {print $1}' | sort; }
entry_on() { # entry_on PREFIX
	local p=$1 before pid n=0
	before=$(napi_threads)
	[ -n "${STUB_ENTRY[$p]:-}" ] && run_q "$XGATE" -N "$p-c1h2" attach "v$SRC" pass
	run ip netns exec "$p-c1h2" sh -c "echo 1 > /sys/class/net/v$SRC/threaded"
	if [ -z "${NAPI_PIDS[$p]:-}" ] || ! kill -0 ${NAPI_PIDS[$p]} 2>/dev/null; then
		NAPI_PIDS[$p]=$(comm -13 <(echo "$before") <(napi_threads) | tr '\n' ' ')
	fi
	for pid in ${NAPI_PIDS[$p]}; do taskset -pc "$DP_CPU" "$pid" >/dev/null && n=$((n + 1)); done
	[ "$n" -gt 0 ] || echo "cross_cluster: warning: no NAPI thread for $p-c1h2 v$SRC; data path not pinned" >&2
}
entry_off() { # entry_off PREFIX
	[ -n "${STUB_ENTRY[$1]:-}" ] || return 0
	run_q "$XGATE" -N "$1-c1h2" detach "v$SRC"
	NAPI_PIDS[$1]=
}
# Sink: a tc ingress drop (pps_gen --tc-drop) on 2b's eth0, for the pps
# windows only: the frame counts there (rx_packets), and neither pod's
# stack (UDP lookup, ICMP port unreachable) is in the path.
sink_on() { run "$GEN" -N "$1-p$DST" -i eth0 --tc-drop; }
sink_off() { run ip netns exec "$1-p$DST" tc qdisc del dev eth0 clsact; }

# The variant: each gateway holds an endpoint entry for the far pod's host
# (the gateway then sends to that host, not to the subnet's bouncer).
# shellcheck disable=SC2317 # (run through PATH_ON)
variant_on() {
	run "$XGATE" -N "$PX-c2gw" endpoint add 100 "${POD_IP[$DST]}" mac "${POD_MAC[$DST]}" host "$(host_ip 2 h2)"
	run "$XGATE" -N "$PX-c1gw" endpoint add 100 "${POD_IP[$SRC]}" mac "${POD_MAC[$SRC]}" host "$(host_ip 1 h2)"
}
# shellcheck disable=SC2317 # (run through PATH_OFF)
variant_off() {
	run "$XGATE" -N "$PX-c2gw" endpoint del 100 "${POD_IP[$DST]}"
	run "$XGATE" -N "$PX-c1gw" endpoint del 100 "${POD_IP[$SRC]}"
}

# path NAME -> its topology prefix; its hooks (the tables above)
prefix_of() { echo "${PATH_TOPO[$1]}"; }
path_on() { ${PATH_ON[$1]:-}; return 0; }
path_off() { ${PATH_OFF[$1]:-}; return 0; }
pps_on() { ${PPS_ON[$1]:-}; return 0; }
pps_off() { ${PPS_OFF[$1]:-}; return 0; }

# gen_args PREFIX: a 60-byte frame (64 with the FCS) from 1b to 2b's UDP
# discard port, addressed as 1b's own stack addresses it: to the MAC its
# neighbour table has for its default gateway
declare -A GWMAC=()
gen_args() {
	local p=$1
	echo -N "$p-p$SRC" -i eth0 --encap none --dmac "${GWMAC[$p]}" --smac "${POD_MAC[$SRC]}" \
		--src "${POD_IP[$SRC]}" --dst "${POD_IP[$DST]}"
}
for p in "${TOPOS[@]}"; do
	GWMAC[$p]=$(ip -n "$p-p$SRC" neigh show "10.1.1.1" dev eth0 | awk '{for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1)}')
	[ -n "${GWMAC[$p]}" ] || fail "pod $SRC has no neighbour entry for 10.1.1.1 ($p)"
	log "$p: pod $SRC's gateway 10.1.1.1 is at ${GWMAC[$p]}"
done

# Sanity: a short burst must reach the pod on every path before timing.
check_path() {
	local name=$1 p n
	p=$(prefix_of "$name")
	n=$(pps_burst "$p-p$DST" "$p") || fail "generator failed on $name"
	[ "$n" -gt 0 ] || fail "no packet reached pod $DST on the $name path"
	log "$name: $n packets reached $DST in the check"
}
if [ "$DO_PPS" = 1 ]; then
	for name in "${PATHS[@]}"; do
		p=$(prefix_of "$name")
		path_on "$name"; pps_on "$name"; entry_on "$p"; sink_on "$p"
		check_path "$name"
		sink_off "$p"; entry_off "$p"; pps_off "$name"; path_off "$name"
	done
fi
[ "$MODE" = setup ] &&
	pps_setup_done "topologies $(for p in "${TOPOS[@]}"; do printf '%s-* (%s) ' "$p" "${TOPO_NAME[$p]}"; done)are up; remove them with: $0 --teardown $*"

# ---- drops on the path (the CPU accounting: bench/lib/pps.sh) -------------------
# path_drops PREFIX -> rx_dropped + tx_dropped summed over every device of
# the namespaces after the entry (v1b's rx_dropped is the generator's
# excess: the entry ring was full), and the UDP sockets' buffer overflows
# in them (RcvbufErrors + SndbufErrors: wireguard-go's tunnel socket)
path_drops() {
	local p=$1 n d v sum=0
	for n in c1h2 c1u c1gw wan c2gw c2u c2h1 c2h2 "p$DST"; do
		v=$(ip netns exec "$p-$n" awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ {print $6 + $7}' /proc/net/snmp)
		sum=$((sum + ${v:-0}))
		for d in $(ip -n "$p-$n" -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}'); do
			[ "$d" = lo ] && continue
			[ "$n/$d" = "c1h2/v$SRC" ] && continue
			v=$(pps_counters "$p-$n" "$d" | awk '{print $2 + $3}')
			sum=$((sum + v))
		done
	done
	echo "$sum"
}

# ---- the crypto workers' cost (encrypt path) -----------------------------------
# worker_snap TAG: the CPU ticks of gateway 1's and 2's xgate-cryptd and
# every xgate counter of the two gateways ("c<c>/<dev>/<reason> n"), into
# $TMP/wk.TAG
worker_snap() {
	local c t
	for c in 1 2; do
		t=$(awk '{print $14 + $15}' "/proc/${CRYPTD_PIDS[$((c - 1))]}/stat" 2>/dev/null)
		echo "cpu$c ${t:-0}"
		"$XGATE" -N "$PE-c${c}gw" stats -o json 2>/dev/null |
			jq -r --arg c "$c" '.[] | .dev as $d | .counters | to_entries[] | "c\($c)/\($d)/\(.key) \(.value.packets)"'
	done >"$TMP/wk.$1"
}
# worker_add KIND: what the workers did from snapshot a to b, added to
# WK[KIND:...]: cpu1/cpu2 (ticks), out1/out2 (frames each sent on: sealed
# ones counted where they arrive, the other gateway's wan0 gw_to_worker;
# opened ones on its own crypt veth's peer xgc1, every reason), data (the
# frames sealed by gateway 1: in TCP, the data segments)
declare -A WK=()
worker_add() {
	local k v
	while read -r k v; do WK[$1:$k]=$((${WK[$1:$k]:-0} + v)); done < <(awk '
		NR == FNR { a[$1] = $2; next } { d[$1] = $2 - a[$1] }
		END { o1 = d["c2/wan0/gw_to_worker"] + 0; o2 = d["c1/wan0/gw_to_worker"] + 0
		      for (k in d) { if (k ~ /^c1\/xgc1\//) o1 += d[k]; if (k ~ /^c2\/xgc1\//) o2 += d[k] }
		      print "cpu1", d["cpu1"] + 0; print "cpu2", d["cpu2"] + 0
		      print "out1", o1; print "out2", o2; print "data", d["c2/wan0/gw_to_worker"] + 0 }' \
		"$TMP/wk.a" "$TMP/wk.b")
}
# worker_ns KIND WORKER(1|2|both) -> CPU ns per frame (both: per frame of
# data, sealed + opened, the other direction's frames charged to it)
worker_ns() {
	local cpu out
	case $2 in
	both) cpu=$((${WK[$1:cpu1]:-0} + ${WK[$1:cpu2]:-0})) out=${WK[$1:data]:-0} ;;
	*) cpu=${WK[$1:cpu$2]:-0} out=${WK[$1:out$2]:-0} ;;
	esac
	awk -v c="$cpu" -v o="$out" -v hz="$CLK_TCK" 'BEGIN { if (o > 0) printf "%.0f", c * 1e9 / hz / o; else print "n/a" }'
}

# ---- where the workers' CPU goes (encrypt path, perf) ------------------------
# The workers' CPU time (/proc/<pid>/stat) holds more than the workers' own
# work: a transmit on an AF_XDP socket in copy mode hands an skb to the veth,
# and when the system call re-enables bottom halves the kernel runs the
# softirq work it raised there, in the worker's context: the next hops of the
# path (on gateway 1 the WAN router and gateway 2's program; on gateway 2
# its program on xgc1, the bouncer, the decap and pod 2b's TCP receive).
# worker_profile: one more TCP window on the encrypt path after the timed
# runs (perf slows what it samples: its figures are not in the tables),
# every CPU sampled with call chains (perf record -a -g); each sample is put
# in one class by its stack: the AF_XDP receive path (the copy into the
# umem, the wake-up, the TX skb's release; wherever it ran: the workers'),
# the next hops (a worker's sample under net_rx_action), or the workers' own
# (the rest of their samples: user space, the TX kick up to the veth, poll,
# map reads). Sets WP[...] (sample counts); skipped without perf.
# iperf_server PREFIX OUT: a one-shot iperf3 server in pod DST of topology
# PREFIX, its output to OUT; returns once it listens; its pid in SRV_PID
iperf_server() {
	local i
	ip netns exec "$1-p$DST" timeout $((SECS + 20)) iperf3 -s -1 -B "${POD_IP[$DST]}" >"$2" 2>&1 &
	SRV_PID=$!
	BG_PIDS+=("$SRV_PID")
	for i in $(seq 100); do
		ip netns exec "$1-p$DST" ss -Hltn "sport = :5201" | grep -q . && break
		sleep 0.05
	done
}

declare -A WP=()
worker_profile() {
	local srv k v
	command -v perf >/dev/null || return 0
	iperf_server "$PE" /dev/null
	srv=$SRV_PID
	ip netns exec "$PE-p$SRC" timeout $((SECS + 20)) iperf3 -c "${POD_IP[$DST]}" -t $((SECS + 1)) >/dev/null 2>&1 &
	sleep 1
	worker_snap a
	perf record -a -g -e cpu-clock -F 999 -o "$TMP/perf.data" -- sleep "$SECS" >/dev/null 2>&1
	worker_snap b && worker_add prof
	wait "$srv" 2>/dev/null
	BG_PIDS=()
	while read -r k v; do WP[$k]=$v; done < <(perf script -i "$TMP/perf.data" -F pid,ip,sym 2>/dev/null |
		awk -v w="${CRYPTD_PIDS[0]} ${CRYPTD_PIDS[1]}" '
		BEGIN { n = split(w, a, " "); for (i = 1; i <= n; i++) W[a[i]] = 1 }
		function one() {
			if (pid == "") return
			if (st ~ / (__xsk_map_redirect|__xsk_map_flush|__xsk_rcv|xsk_destruct_skb) /) c["rx"]++
			else if (!(pid in W)) return
			else if (st ~ / (net_rx_action|handle_softirqs|__do_softirq) /) c["hops"]++
			else if (leaf ~ /aes|gcm|chacha|poly1305|salsa|sodium/) c["cipher"]++
			else if (st ~ / xsk_sendmsg /) c["kick"]++
			else if (st ~ / (do_sys_poll|schedule) /) c["poll"]++
			else c["rest"]++
			if (pid in W) c["workers"]++
		}
		/^[^\t]/ { one(); pid = $1; st = " "; leaf = ""; next }
		/^\t/ { if (leaf == "") leaf = $2; st = st $2 " " }
		END { one(); for (k in c) print k, c[k] }')
}
# worker_share CLASSES... -> their samples in percent of the workers' samples
worker_share() {
	local n=0 k
	for k in "$@"; do n=$((n + ${WP[$k]:-0})); done
	awk -v n="$n" -v t="${WP[workers]:-0}" 'BEGIN { if (t > 0) printf "%.1f", 100 * n / t; else print "n/a" }'
}

# ---- one pps window ------------------------------------------------------------
pps_run() { # pps_run NAME: one window (bench/lib/pps.sh); which hops xgate's took
	local name=$1 p
	p=$(prefix_of "$name")
	path_on "$name"; pps_on "$name"; entry_on "$p"; sink_on "$p"
	[ -n "${XG_TOPO[$p]:-}" ] && pps_xstats_snap a "$p-" "${XG_NS[@]}"
	[ "$p" = "$PE" ] && worker_snap a
	pps_window "$p" "$p-c1h2" "v$SRC" "$p-p$DST" "$p"
	[ "$p" = "$PE" ] && worker_snap b && worker_add pps
	if [ -n "${XG_TOPO[$p]:-}" ]; then
		pps_xstats_snap b "$p-" "${XG_NS[@]}"
		pps_xstats_delta " " "${XG_NS[@]}" | sed "s/^/$name /" >>"$TMP/xstats"
	fi
	sink_off "$p"; entry_off "$p"; pps_off "$name"; path_off "$name"
	pps_account "$name" "$r  pps  $name"
}

# ---- one TCP window --------------------------------------------------------------
declare -A TCP_BEST TCP_RETR TCP_LIST
tcp_run() { # tcp_run NAME
	local name=$1 p srv mbps retr
	p=$(prefix_of "$name")
	path_on "$name"
	iperf_server "$p" "$TMP/iperf.srv"
	srv=$SRV_PID
	[ "$p" = "$PE" ] && worker_snap a
	ip netns exec "$p-p$SRC" timeout $((SECS + 20)) iperf3 -c "${POD_IP[$DST]}" -t "$SECS" -O 1 -J \
		>"$TMP/iperf.json" 2>"$TMP/iperf.err"
	[ "$p" = "$PE" ] && worker_snap b && worker_add tcp
	wait "$srv" 2>/dev/null
	BG_PIDS=()
	path_off "$name"
	mbps=$(jq -r '.end.sum_received.bits_per_second // empty | . / 1e6 | floor' "$TMP/iperf.json" 2>/dev/null)
	retr=$(jq -r '.end.sum_sent.retransmits // empty' "$TMP/iperf.json" 2>/dev/null)
	if [ -z "$mbps" ]; then
		echo "  run $r  TCP  $name: iperf3 failed: $(jq -r '.error // empty' "$TMP/iperf.json" 2>/dev/null)$(head -c 200 "$TMP/iperf.err")"
		TCP_LIST[$name]="${TCP_LIST[$name]:-}${TCP_LIST[$name]:+ }fail"
		return 0
	fi
	TCP_LIST[$name]="${TCP_LIST[$name]:-}${TCP_LIST[$name]:+ }$mbps/$retr"
	if [ "$mbps" -gt "${TCP_BEST[$name]:-0}" ]; then
		TCP_BEST[$name]=$mbps
		TCP_RETR[$name]=$retr
	fi
	echo "  run $r  TCP  $name: $mbps Mbit/s, $retr retransmits"
	return 0
}

load=$(cut -d' ' -f1 /proc/loadavg)
echo "cross_cluster: $RUNS runs; pps: ${SECS}s windows (after ${WARMUP}s warm-up), generator on CPU $GEN_CPU," \
	"data path on CPU $DP_CPU; TCP: iperf3 -t $SECS ($NCPU CPUs, load average $load before the start)"
for ((r = 1; r <= RUNS; r++)); do
	if [ "$DO_PPS" = 1 ]; then
		for name in "${PATHS[@]}"; do pps_run "$name"; done
	fi
	if [ "$DO_TCP" = 1 ]; then
		for name in "${PATHS[@]}"; do tcp_run "$name"; done
	fi
done
[ "$DO_ENC" = 1 ] && [ "$DO_TCP" = 1 ] && worker_profile

# ---- report -----------------------------------------------------------------------
W=56
R=32 # a ratio column: "pps 1.23x, CPU 0.45x, TCP 1.02x"
printf '\n%-*s | %9s | %10s | %10s | %6s' $W "path (pod 1b, cluster 1 -> pod 2b, cluster 2)" \
	"Mpps" "ns/pkt CPU" "TCP Mbit/s" "retr"
for ref in "${REFS[@]}"; do printf ' | %-*s' $R "this/$ref"; done
echo
pps_rule $W "-+-----------+------------+------------+-------$(for ref in "${REFS[@]}"; do printf -- '-+-%s' "$(printf '%*s' $R '' | tr ' ' -)"; done)"
for name in "${PATHS[@]}"; do
	printf '%-*s | %9s | %10s | %10s | %6s' $W "${LABEL[$name]}" "${BEST[$name]:--}" \
		"${NSPKT[$name]:--}" "${TCP_BEST[$name]:--}" "${TCP_RETR[$name]:--}"
	for ref in "${REFS[@]}"; do
		if [ "$name" = "$ref" ]; then
			rat="1 (reference)"
		else
			rat="pps $(pps_ratio "${BEST[$name]:-0}" "${BEST[$ref]:-0}"), CPU $(pps_ratio "${NSPKT[$name]:-0}" "${NSPKT[$ref]:-0}"), TCP $(pps_ratio "${TCP_BEST[$name]:-0}" "${TCP_BEST[$ref]:-0}")"
		fi
		printf ' | %-*s' $R "$rat"
	done
	echo
done
[ "$DO_WG" = 1 ] && echo "wg: $WT_VERSION between the gateways, device MTU $(wt_mtu)"
if [ "$DO_ENC" = 1 ] && [ "$DO_WG" = 1 ]; then
	echo "xgate encrypt / wireguard-go, this run: pps $(pps_ratio "${BEST[xgate_enc]:-0}" "${BEST[wg]:-0}"), TCP" \
		"$(pps_ratio "${TCP_BEST[xgate_enc]:-0}" "${TCP_BEST[wg]:-0}"), CPU per packet" \
		"$(pps_ratio "${NSPKT[xgate_enc]:-0}" "${NSPKT[wg]:-0}") (target: pps and TCP >= 1.5x)"
fi
echo
if [ "$DO_PPS" = 1 ]; then
	echo "Mpps: 64-byte UDP frames (60 B + FCS) delivered to pod $DST (rx_packets of its eth0), best of $RUNS windows"
	echo "of ${SECS}s. ns/pkt CPU: CPU time of the data-path threads per delivered packet, lowest window"
	echo "(steal, idle, other work excluded). Ratios: for pps and TCP higher is better for xgate, for CPU lower."
	for name in "${PATHS[@]}"; do
		printf '  %-9s windows (Mpps): %-40s offered %s Mpps; drops on the path %s\n' "$name" \
			"${WIN_LIST[$name]}" "${OFFERED[$name]:--}" "${PDROPS[$name]}"
	done
	pps_contended_note
	echo "CPU $DP_CPU in the best windows:"
	for name in "${PATHS[@]}"; do printf '  %-9s %s\n' "$name" "${BUSY[$name]:--}"; done
fi
if [ "$DO_TCP" = 1 ]; then
	echo "TCP: iperf3 $SRC -> $DST, ${SECS}s after a 1s omitted start, best of $RUNS (receiver's Mbit/s;"
	echo "retransmits of that run). Every run, Mbit/s/retransmits:"
	for name in "${PATHS[@]}"; do printf '  %-9s %s\n' "$name" "${TCP_LIST[$name]:-}"; done
fi
# the crypto workers against the cipher alone, on the same machine in the
# same run (tun_aead: libsodium's AEAD call, one core, the data-path CPU)
if [ "$DO_ENC" = 1 ]; then
	cipher=$("$XGATE" gw peers --socket "/tmp/$PE-run/gw1.sock" -o json 2>/dev/null |
		jq -r '.[] | select(.name == "gw2") | .cipher' 2>/dev/null)
	echo "xgate-cryptd (encrypt path; cipher ${cipher:-?}): CPU per frame over all windows of a kind"
	[ "$DO_PPS" = 1 ] && echo "  pps windows (64 B): gateway 1 $(worker_ns pps 1) ns per frame (seals), gateway 2" \
		"$(worker_ns pps 2) ns per frame (opens); frames ${WK[pps:out1]:-0} / ${WK[pps:out2]:-0}"
	[ "$DO_TCP" = 1 ] && echo "  TCP (data ~1400 B): $(worker_ns tcp both) ns per data frame, sealed on gateway 1 +" \
		"opened on gateway 2, the ACKs' work charged to it (${WK[tcp:data]:-0} data frames)"
	if [ "$DO_TCP" = 1 ] && [ -n "${WP[workers]:-}" ]; then
		own=$(worker_share cipher kick poll rest rx)
		own_ns=$(awk -v w="$(worker_ns tcp both)" -v s="$own" 'BEGIN { if (w != "n/a" && s != "n/a") printf "%.0f", w * s / 100; else print "n/a" }')
		echo "  where it goes (a TCP window more, under perf -a -g, not timed; ${WP[workers]} samples of the workers):"
		echo "    the workers' own $own %: cipher $(worker_share cipher) %, TX kick (copy mode: an skb per frame," \
			"up to the veth) $(worker_share kick) %, poll and wake-ups $(worker_share poll) %, the rest" \
			"$(worker_share rest) %, the AF_XDP receive path (umem copy, wake-up; any context) $(worker_share rx) %"
		echo "    the next hops, run as softirq work in the workers' context after their transmits:" \
			"$(worker_share hops) %"
		echo "  TCP (data ~1400 B), the workers' own: $own_ns ns per data frame ($own % of the figure above)"
		# the same window alone: a sample is 1/999 s of one CPU (cpu-clock)
		echo "  the profiled window alone (${WK[prof:data]:-0} data frames): all the workers' CPU $(worker_ns prof both) ns," \
			"their own $(awk -v n="$(worker_share cipher kick poll rest rx)" -v t="${WP[workers]}" -v d="${WK[prof:data]:-0}" \
				'BEGIN { if (d > 0 && n != "n/a") printf "%.0f", n / 100 * t * 1e9 / 999 / d; else print "n/a" }') ns per data frame (perf slows both)"
	fi
	if [ -x "$TUN_AEAD" ]; then
		taskset -c "$DP_CPU" "$TUN_AEAD" 100000 >"$TMP/aead" 2>&1
		echo "  tun_aead, same run, CPU $DP_CPU (ns per frame: libsodium's AEAD call; xgtun: the tunnel's seal/open):"
		awk -v c="${cipher:-}" 'NR == 1 || c == "" || $1 == c' "$TMP/aead" | sed 's/^/    /'
		if [ "$DO_TCP" = 1 ] && [ -n "$cipher" ]; then
			awk -v c="$cipher" -v w="$(worker_ns tcp both)" '$1 == c && $2 == 1400 && w != "n/a" {
				printf "  workers (all their CPU) / libsodium at 1400 B (seal + open %d ns): %.2fx\n", $3 + $5, w / ($3 + $5) }' "$TMP/aead"
			[ -n "${own_ns:-}" ] && awk -v c="$cipher" -v w="$own_ns" '$1 == c && $2 == 1400 && w != "n/a" {
				printf "  workers (their own work) / libsodium at 1400 B: %.2fx (target: <= 1.6x)\n", w / ($3 + $5) }' "$TMP/aead"
		fi
	fi
fi
# the hops xgate's pps windows took: counters that grew on each host
if [ -s "$TMP/xstats" ]; then
	echo "xgate counters that grew during the pps windows (summed over runs; host device/reason; small"
	echo "pass_* counts, i.e. host ARP and the gatewayd sessions' TCP, left out):"
	for name in "${PATHS[@]}"; do
		grep -q "^$name " "$TMP/xstats" || continue
		# in path order; a hop is a counter (not pass_*) that grew by a tenth of the largest or more
		awk -v n="$name" -v src="$SRC" -v dst="$DST" '$1 == n {
			k = $2 " " $3; if (!(k in s)) o[++m] = k; s[k] += $4; if (s[k] > max) max = s[k] }
			END { printf "  %s:\n", n
			      for (i = 1; i <= m; i++) if (s[o[i]] * 100 >= max || o[i] ~ /\/drop_/)
			          printf "    %-40s %12d\n", o[i], s[o[i]]
			      printf "    hops: pod %s -> ", src
			      for (i = 1; i <= m; i++) if (s[o[i]] * 10 >= max && o[i] !~ /\/pass_/)
			          printf "%s -> ", o[i]
			      printf "pod %s\n", dst }' "$TMP/xstats"
	done
	grep -q '/drop_' "$TMP/xstats" && echo "  (a drop reason grew: see above)"
fi
exit 0
