# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2034 # WT_IMPL, WT_VERSION: for the script
#
# The WireGuard path for bench/cross_cluster.sh: the kernel path of
# bench/cross/ktopo.sh inside the clusters, and a WireGuard tunnel between
# the two gateways over the WAN instead of ktopo.sh's VXLAN. Source
# deploy/lib/mtopo.sh and bench/cross/ktopo.sh first, set P, XGATE and
# MT_RUN, then call wt_build on a topology mtopo_up built; wt_down removes
# it (wireguard-go processes first, then the namespaces). Method and
# layout: docs/bench.md "cross_cluster".
#
# wt_build removes xgate (kt_unxgate), builds the cluster side as ktopo.sh
# does (kt_inside: br100 + vxlan100 on h2, the gateway holding 10.1.c.1 on
# its vxlan100) and adds, on the gateways of clusters 1 and 2:
#
#   wg-<P>-<c>   a WireGuard device in the gateway's namespace: the kernel's
#                (ip link add type wireguard) when that works, else
#                wireguard-go (userspace, a TUN device), started in the
#                namespace with `ip netns exec`, in the foreground, its PID
#                kept in WT_PIDS; a private key made per run (wg genkey),
#                UDP port 51820 on wan0's address (198.18.c.2), one peer:
#                the other gateway, endpoint its wan0 address, allowed-ips
#                its pods' subnet 10.1.<other>.0/24
#   route        10.1.<other>.0/24 dev wg-<P>-<c>
#
# The device's name carries the prefix because wireguard-go's control
# socket (/var/run/wireguard/NAME.sock) is one directory for every
# namespace. MTU: WireGuard's own rule (wg-quick), the WAN link's MTU - 80
# (IPv6 outer header, the worst case): 1512 - 80 = 1432; the pods stay at
# mtopo.sh's 1400, as on the two other paths, so every path carries the
# same 1400-byte packets (TCP MSS 1360) and nothing is fragmented (a
# 1400-byte packet is 1460 bytes on the WAN here, 1450 on vxwan, 1400 + the
# tunnel header with xgate).
#
# After wt_build: WT_IMPL (module or wireguard-go), WT_VERSION (what ran,
# for the report), WT_PIDS (wireguard-go's, empty with the module).

WT_PORT=51820
WT_PIDS=()
WT_IMPL=
WT_VERSION=
WT_SOCKDIR=/var/run/wireguard
wt_dev() { echo "wg-${P}-$1"; } # wt_dev C: the WireGuard device of gateway C
wt_mtu() { echo $((WAN_MTU - 80)); }

# wt_module: does this kernel have WireGuard? (a device made and removed
# in gateway 1's namespace)
wt_module() {
	ip -n "${P}-c1gw" link add "$(wt_dev 1)" type wireguard 2>/dev/null || return 1
	ip -n "${P}-c1gw" link del "$(wt_dev 1)"
}

# wt_start C: the WireGuard device of gateway C, up to its configuration
wt_start() {
	local c=$1 dev pid
	dev=$(wt_dev "$c")
	if [ "$WT_IMPL" = module ]; then
		kt_ok nsm "c${c}gw" ip link add "$dev" type wireguard || return 1
		return 0
	fi
	# foreground (-f): its PID is the one we kill; ip netns exec and env
	# exec it, so $! is wireguard-go's own PID
	ip netns exec "${P}-c${c}gw" env LOG_LEVEL=error wireguard-go -f "$dev" \
		>"$MT_RUN/wireguard-go.$c.log" 2>&1 &
	pid=$!
	WT_PIDS+=("$pid")
	for _ in $(seq 100); do
		[ -S "$WT_SOCKDIR/$dev.sock" ] && nsm "c${c}gw" ip link show "$dev" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "wgtopo: wireguard-go did not bring up $dev in ${P}-c${c}gw: $(tail -n 3 "$MT_RUN/wireguard-go.$c.log")" >&2
	return 1
}

# wt_peer C OTHER: keys, the peer, MTU and route of gateway C
wt_peer() {
	local c=$1 o=$2 dev
	dev=$(wt_dev "$c")
	kt_ok nsm "c${c}gw" wg set "$dev" listen-port $WT_PORT private-key "$MT_RUN/wg$c.key" \
		peer "$(cat "$MT_RUN/wg$o.pub")" allowed-ips "10.1.$o.0/24" \
		endpoint "$(pub_ip "$o"):$WT_PORT" || return 1
	kt_ok nsm "c${c}gw" ip link set "$dev" mtu "$(wt_mtu)" up || return 1
	kt_ok nsm "c${c}gw" ip route add "10.1.$o.0/24" dev "$dev" || return 1
}

wt_build() { # on the mtopo topology of prefix $P
	local c
	command -v wg >/dev/null || { echo "wgtopo: 'wg' is missing (deploy/deps.sh installs wireguard-tools)" >&2; return 1; }
	kt_unxgate || return 1
	kt_inside 1 || return 1
	kt_inside 2 || return 1
	if wt_module; then
		WT_IMPL=module
		# its encryption runs in kworkers on every CPU, which the CPU
		# accounting (bench/lib/pps.sh) does not see: say so where it prints
		WT_VERSION="kernel module $(cat /sys/module/wireguard/version 2>/dev/null || uname -r) (crypto in kworkers on every CPU: not in ns/pkt CPU)"
	else
		command -v wireguard-go >/dev/null ||
			{ echo "wgtopo: no WireGuard in this kernel and 'wireguard-go' is missing (deploy/deps.sh installs it)" >&2; return 1; }
		WT_IMPL=wireguard-go
		WT_VERSION="$(wireguard-go --version 2>/dev/null | awk 'NR == 1 {print $1, $2}') (userspace, TUN; package $(dpkg-query -W -f='${Version}' wireguard-go 2>/dev/null || echo '?'))"
	fi
	for c in 1 2; do
		(umask 077 && wg genkey >"$MT_RUN/wg$c.key") || return 1
		wg pubkey <"$MT_RUN/wg$c.key" >"$MT_RUN/wg$c.pub" || return 1
		wt_start "$c" || return 1
	done
	wt_peer 1 2 || return 1
	wt_peer 2 1 || return 1
}

# wt_affinity CPULIST: every thread of every wireguard-go process on CPULIST
wt_affinity() {
	local pid
	for pid in "${WT_PIDS[@]}"; do taskset -a -pc "$1" "$pid" >/dev/null 2>&1; done
	return 0
}

# wt_down: the wireguard-go processes (SIGTERM: they remove their socket and
# TUN device), then the topology (mtopo_down). Also cleans up after a run
# that was killed: its processes die with the namespaces (mtopo_down kills
# what runs in them), their sockets are removed here.
wt_down() {
	local pid c
	for pid in "${WT_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${WT_PIDS[@]}"; do
		for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	mtopo_down
	for c in 1 2; do rm -f "$WT_SOCKDIR/$(wt_dev "$c").sock"; done
	return 0
}

# wt_leftovers: what wt_down must have removed, one line each
wt_leftovers() {
	local pid c dev
	for pid in "${WT_PIDS[@]}"; do
		kill -0 "$pid" 2>/dev/null && echo "process $pid ($(cat "/proc/$pid/comm" 2>/dev/null))"
	done
	for c in 1 2; do
		dev=$(wt_dev "$c")
		[ -e "$WT_SOCKDIR/$dev.sock" ] && echo "socket $WT_SOCKDIR/$dev.sock"
		# a device whose namespace is gone lands in the root namespace
		ip link show "$dev" >/dev/null 2>&1 && echo "device $dev (root namespace)"
	done
	return 0
}
