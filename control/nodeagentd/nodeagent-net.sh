#!/usr/bin/env bash
# nodeagentd's pod network (docs/serverless.md, "nodeagentd"): the cold
# path of a pod, run by the daemon once per pod and once per configuration.
# Every step may be run again (a restart of the daemon repeats it).
#   node INSTANCE XGATE VNI CIDR NODEIP [NETNS_PREFIX VETH_PREFIX]
#       the tenant's VPC and the pod subnet of this node (bounced here);
#       with the prefixes (a new store), first the pods' namespaces, veths
#       and endpoint entries a lost store named
#   up   INSTANCE XGATE NETNS VETH VNI ADDR/LEN MAC GATEWAY MTU
#       a network namespace, a veth (the pod's eth0, its host side running
#       the `agent` program) and the pod's endpoint entry
#   down INSTANCE XGATE NETNS VETH VNI ADDR
#       the reverse
set -u
op=${1:-}
shift || true
die() { echo "nodeagent-net $op: $*" >&2; exit 1; }
# xgate's "already exists" (4) and "not found" (3) are what a repeat gives
ok_if() { # ok_if CODE... -- command
	local codes=() rc
	while [ "$1" != "--" ]; do codes+=("$1"); shift; done
	shift
	"$@"
	rc=$?
	[ $rc = 0 ] && return 0
	for c in "${codes[@]}"; do [ $rc = "$c" ] && return 0; done
	return $rc
}
case "$op" in
node)
	[ $# = 5 ] || [ $# = 7 ] ||
		die "usage: node INSTANCE XGATE VNI CIDR NODEIP [NETNS_PREFIX VETH_PREFIX]"
	inst=$1 xg=$2 vni=$3 cidr=$4 nodeip=$5
	if [ $# = 7 ]; then
		nsp=$6 vp=$7
		"$xg" -n "$inst" endpoint ls -o json 2>/dev/null |
			jq -r --arg vp "$vp" '.[] | select(.dev != null and (.dev | test("^" + $vp + "[0-9]+$"))) | "\(.vni) \(.ip) \(.dev)"' |
			while read -r v a d; do
				"$xg" -n "$inst" detach "$d" >/dev/null 2>&1
				"$xg" -n "$inst" endpoint del "$v" "$a" >/dev/null 2>&1
			done
		for d in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^$vp[0-9]+$"); do
			ip link del "$d" 2>/dev/null
		done
		for n in $(ip netns list | awk '{print $1}' | grep -E "^$nsp[0-9]+$"); do
			ip netns del "$n"
		done
	fi
	ok_if 4 -- "$xg" -n "$inst" vpc add "$vni" || die "vpc add $vni failed"
	ok_if 4 -- "$xg" -n "$inst" subnet add "$vni" "$cidr" bouncers "$nodeip" ||
		die "subnet add $vni $cidr failed"
	;;
up)
	[ $# = 9 ] || die "usage: up INSTANCE XGATE NETNS VETH VNI ADDR/LEN MAC GATEWAY MTU"
	inst=$1 xg=$2 ns=$3 veth=$4 vni=$5 addr=$6 mac=$7 gw=$8 mtu=$9
	# a namespace or veth left by a pod of this slot that ended unseen
	ip netns del "$ns" 2>/dev/null
	ip link del "$veth" 2>/dev/null
	ip netns add "$ns" || die "netns add $ns"
	ip -n "$ns" link set lo up
	# the overlay is IPv4 only: keep pods from chattering IPv6 into it
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip link add "$veth" type veth peer name eth0 netns "$ns" || die "veth $veth"
	ip -n "$ns" link set eth0 address "$mac" mtu "$mtu"
	# XDP sees no checksum-offload state: the pod sends complete checksums
	ip netns exec "$ns" ethtool -K eth0 tx off >/dev/null
	ip -n "$ns" addr add "$addr" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" route add default via "$gw" || die "route via $gw"
	# the far end of a veth the programs redirect into runs XDP itself
	"$xg" -N "$ns" attach eth0 pass --mode native || die "attach pass in $ns"
	ip link set "$veth" mtu "$mtu" up
	ok_if 3 -- "$xg" -n "$inst" endpoint del "$vni" "${addr%/*}" 2>/dev/null
	"$xg" -n "$inst" endpoint add "$vni" "${addr%/*}" mac "$mac" dev "$veth" ||
		die "endpoint add $vni ${addr%/*}"
	"$xg" -n "$inst" attach "$veth" agent --mode native || die "attach agent on $veth"
	;;
down)
	[ $# = 6 ] || die "usage: down INSTANCE XGATE NETNS VETH VNI ADDR"
	inst=$1 xg=$2 ns=$3 veth=$4 vni=$5 addr=$6
	"$xg" -n "$inst" detach "$veth" >/dev/null 2>&1
	ok_if 3 -- "$xg" -n "$inst" endpoint del "$vni" "$addr" || die "endpoint del $vni $addr"
	ip link del "$veth" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	true
	;;
*)
	die "usage: nodeagent-net.sh node|up|down ..."
	;;
esac
