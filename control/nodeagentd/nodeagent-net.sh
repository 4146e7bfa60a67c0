#!/usr/bin/env bash
# nodeagentd's pod network (docs/serverless.md, "nodeagentd"): the node's
# part, run by the daemon once per configuration; it may be run again (a
# restart of the daemon repeats it). Each pod's part (a namespace, a veth
# with the `agent` program, the endpoint entry) is the daemon's own, made
# in-process (control/nodeagentd/agent/na_podnet.c): it is a cold open's path.
#   node INSTANCE XGATE VNI CIDR NODEIP [NETNS_PREFIX VETH_PREFIX]
#       the tenant's VPC and the pod subnet of this node (bounced here);
#       with the prefixes (a new store), first the pods' namespaces, veths
#       and endpoint entries a lost store named
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
*)
	die "usage: nodeagent-net.sh node INSTANCE XGATE VNI CIDR NODEIP [NETNS_PREFIX VETH_PREFIX]"
	;;
esac
