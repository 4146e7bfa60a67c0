#!/usr/bin/env bash
# A pod: a network namespace behind a veth whose host end is in a host's
# namespace, shared by deploy/lib/topo.sh and deploy/lib/mtopo.sh. Expects
# XGATE, XDP_MODE and POD_MTU set by the sourcing script.

# pod_up POD_NS HOST_NS VETH MAC ADDR/LEN GATEWAY
pod_up() {
	local ns=$1 hns=$2 veth=$3 mac=$4 addr=$5 gw=$6
	ip netns add "$ns" && ip -n "$ns" link set lo up || return 1
	# the overlay is IPv4 only: keep pods from chattering IPv6 into it
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip link add "$veth" netns "$hns" type veth peer name eth0 netns "$ns" || return 1
	ip -n "$ns" link set eth0 address "$mac" mtu "$POD_MTU"
	# XDP sees no checksum-offload state: a pod must send complete L4
	# checksums, so TX checksum offload is off on its interface.
	ip netns exec "$ns" ethtool -K eth0 tx off >/dev/null
	ip -n "$ns" addr add "$addr" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" route add default via "$gw"
	# the far end of a veth our programs redirect into must run XDP itself
	"$XGATE" -N "$ns" attach eth0 pass --mode "$XDP_MODE" || return 1
	ip -n "$hns" link set "$veth" mtu "$POD_MTU" up
}
