# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# The kernel's own path for bench/cross_cluster.sh, on a topology that
# deploy/lib/mtopo.sh built (namespaces, veths, addresses, MTUs, pods: all
# as in the xgate topology). Source deploy/lib/mtopo.sh first, set P and
# XGATE, then call kt_build. Method and layout: docs/bench.md "cross_cluster".
#
# kt_build removes xgate (every instance reset, which detaches the programs
# and the pass stubs; no gatewayd runs there) and adds, in clusters 1 and 2:
#
#   host h2 (10.20c.0.2)   br100 = v<c>b (the pod's veth, MTU 1400) + vxlan100
#                          (VNI 100, UDP 4789, on eth0, no learning, static fdb)
#   gateway (10.20c.0.254) vxlan100 (VNI 100 on eth0) holds 10.1.c.1/24, the
#                          pods' default gateway: it routes between the
#                          cluster's VXLAN and vxwan (VNI 1000 on wan0,
#                          198.18.c.2 -> the other gateway, 10.99.0.c/24),
#                          10.1.<other>.0/24 via the other gateway's vxwan
#   WAN router             as built: routes 198.18.1.0/24 <-> 198.18.2.0/24
#
# so a packet from pod <c>b to the other cluster's pod takes: pod veth ->
# h2 (bridge, VXLAN encap) -> underlay bridge -> gateway (VXLAN decap, IP
# forward, VXLAN encap) -> WAN router (IP forward) -> gateway (decap,
# forward, encap) -> underlay bridge -> h2 (decap, bridge) -> pod veth.
# The MTUs stay those of mtopo.sh: pods 1400, underlay 1500 (vxlan100 gets
# 1450), WAN 1512 (vxwan gets 1462): no fragmentation anywhere, as in xgate.

KT_VNI=100
KT_WAN_VNI=1000
KT_PORT=4789
kt_gwmac() { printf '02:6b:0a:01:%02x:01' "$1"; }   # gateway c's vxlan100 (10.1.c.1)
kt_wanmac() { printf '02:6b:0a:63:00:%02x' "$1"; }  # gateway c's vxwan (10.99.0.c)

# kt_ok CMD...: run, and say what failed
kt_ok() { "$@" || { echo "ktopo: failed: $*" >&2; return 1; }; }

kt_unxgate() { # every xgate instance of this topology: programs, stubs, pins
	local n
	for n in $(mt_all_ns); do
		[ -e "/run/netns/${P}-$n" ] || continue
		kt_ok "$XGATE" -N "${P}-$n" reset >/dev/null || return 1
	done
}

# kt_inside C: host h2 and the cluster side of the gateway of cluster C (the
# part bench/cross/wgtopo.sh shares)
kt_inside() {
	local c=$1 h2 gw pod mac
	h2=$(host_ip "$c" h2)
	gw=$(host_ip "$c" gw)
	pod=${c}b
	mac=${POD_MAC[$pod]}
	# h2: the pod's veth and vxlan100 in br100
	kt_ok nsm "c${c}h2" ip link add vxlan100 type vxlan id $KT_VNI local "$h2" dev eth0 \
		dstport $KT_PORT nolearning || return 1
	kt_ok nsm "c${c}h2" ip link add br100 type bridge || return 1
	kt_ok nsm "c${c}h2" ip link set vxlan100 master br100 up || return 1
	kt_ok nsm "c${c}h2" ip link set "v$pod" master br100 || return 1
	kt_ok nsm "c${c}h2" ip link set br100 up || return 1
	# static: the bridge never floods our frames, nothing ages out
	kt_ok nsm "c${c}h2" bridge fdb replace "$mac" dev "v$pod" master static || return 1
	kt_ok nsm "c${c}h2" bridge fdb replace "$(kt_gwmac "$c")" dev vxlan100 master static || return 1
	kt_ok nsm "c${c}h2" bridge fdb replace "$(kt_gwmac "$c")" dev vxlan100 dst "$gw" self permanent || return 1
	# broadcast (the pod's ARP for its gateway) goes to the gateway only
	kt_ok nsm "c${c}h2" bridge fdb append 00:00:00:00:00:00 dev vxlan100 dst "$gw" self permanent || return 1
	# gateway: cluster side
	kt_ok nsm "c${c}gw" ip link add vxlan100 address "$(kt_gwmac "$c")" type vxlan id $KT_VNI \
		local "$gw" dev eth0 dstport $KT_PORT nolearning || return 1
	kt_ok nsm "c${c}gw" ip addr add "10.1.$c.1/24" dev vxlan100 || return 1
	kt_ok nsm "c${c}gw" ip link set vxlan100 up || return 1
	kt_ok nsm "c${c}gw" bridge fdb replace "$mac" dev vxlan100 dst "$h2" self permanent || return 1
	kt_ok nsm "c${c}gw" ip neigh replace "${POD_IP[$pod]}" lladdr "$mac" dev vxlan100 nud permanent || return 1
	kt_ok nsm "c${c}gw" sysctl -qw net.ipv4.ip_forward=1 || return 1
}

# kt_cluster C OTHER: host h2 and the gateway of cluster C, routing to OTHER
kt_cluster() {
	local c=$1 o=$2
	kt_inside "$c" || return 1
	# gateway: WAN side, a point-to-point VXLAN to the other gateway
	kt_ok nsm "c${c}gw" ip link add vxwan address "$(kt_wanmac "$c")" type vxlan id $KT_WAN_VNI \
		local "$(pub_ip "$c")" remote "$(pub_ip "$o")" dev wan0 dstport $KT_PORT nolearning || return 1
	kt_ok nsm "c${c}gw" ip addr add "10.99.0.$c/24" dev vxwan || return 1
	kt_ok nsm "c${c}gw" ip link set vxwan up || return 1
	kt_ok nsm "c${c}gw" ip neigh replace "10.99.0.$o" lladdr "$(kt_wanmac "$o")" dev vxwan nud permanent || return 1
	kt_ok nsm "c${c}gw" ip route add "10.1.$o.0/24" via "10.99.0.$o" dev vxwan || return 1
}

kt_build() { # on the mtopo topology of prefix $P
	kt_unxgate || return 1
	kt_cluster 1 2 || return 1
	kt_cluster 2 1 || return 1
}
