#!/usr/bin/env bash
# Single-cluster topology in network namespaces, shared by the demo, the
# end-to-end test and the pps bench. Source it, then call topo_up/topo_down.
#
#   underlay  ${P}u   bridge br0, one port per host (10.200.0.0/24)
#   host h1   ${P}h1  10.200.0.1  bouncer of S1, divider of VPC 100; pod p1a (S1)
#   host h2   ${P}h2  10.200.0.2  bouncer of S2;                     pods p2a, p2b (S2)
#   host h3   ${P}h3  10.200.0.3  (compute only);                    pod p1b (S1)
#   VPC 100: S1 10.1.1.0/24, S2 10.1.2.0/24. Pods are namespaces ${P}<pod>.
#
# Each host programs only what it needs: its own pods' subnets, plus the
# subnets it bounces (bouncer) or divides (divider). So h3 reaches S2 through
# the divider, and the direct-path cache takes over after the first packets.
#
# Every address lives inside namespaces made here; nothing leaves the box.

: "${P:=xgd}"                # namespace prefix
: "${XGATE:=xgate}"          # the CLI binary
: "${XDP_MODE:=native}"
VNI=100
POD_MTU=1400                 # underlay 1500 - XG_ENCAP_LEN (62), rounded down

declare -A HOST_IP=([h1]=10.200.0.1 [h2]=10.200.0.2 [h3]=10.200.0.3)
declare -A POD_HOST=([p1a]=h1 [p1b]=h3 [p2a]=h2 [p2b]=h2)
declare -A POD_IP=([p1a]=10.1.1.11 [p1b]=10.1.1.12 [p2a]=10.1.2.21 [p2b]=10.1.2.22)
declare -A POD_MAC=([p1a]=02:00:0a:01:01:0b [p1b]=02:00:0a:01:01:0c [p2a]=02:00:0a:01:02:15 [p2b]=02:00:0a:01:02:16)
declare -A POD_GW=([p1a]=10.1.1.1 [p1b]=10.1.1.1 [p2a]=10.1.2.1 [p2b]=10.1.2.1)
HOSTS=(h1 h2 h3)
PODS=(p1a p1b p2a p2b)

source "$(dirname "${BASH_SOURCE[0]}")/pod.sh"

xg() { local h=$1; shift; "$XGATE" -N "${P}$h" "$@"; }
nsx() { local n=$1; shift; ip netns exec "${P}$n" "$@"; }

# The far end of a veth that our programs XDP_TX or redirect into must run
# XDP itself, or the frames sit in its ring (see docs/architecture.md).
peer_stub() { "$XGATE" -N "$1" attach "$2" pass --mode "$XDP_MODE"; }

topo_down() {
	local n
	# exact names only: another user's prefix may start with ours
	for n in "${HOSTS[@]}"; do
		[ -e "/run/netns/${P}$n" ] && "$XGATE" -N "${P}$n" reset >/dev/null 2>&1
		"$XGATE" -n "${P}$n" reset >/dev/null 2>&1
	done
	for n in u "${HOSTS[@]}" "${PODS[@]}"; do
		[ -e "/run/netns/${P}$n" ] || continue
		ip netns pids "${P}$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "${P}$n" 2>/dev/null
	done
	return 0
}

topo_up() {
	local h p host
	ip netns add "${P}u"
	nsx u ip link set lo up
	nsx u ip link add br0 type bridge
	nsx u ip link set br0 up
	for h in "${HOSTS[@]}"; do
		ip netns add "${P}$h"
		nsx "$h" ip link set lo up
		ip link add "${P}$h-u" netns "${P}u" type veth peer name eth0 netns "${P}$h"
		nsx u ip link set "${P}$h-u" master br0 up
		peer_stub "${P}u" "${P}$h-u" || return 1
		nsx "$h" ip addr add "${HOST_IP[$h]}/24" dev eth0
		nsx "$h" ip link set eth0 up
	done
	for p in "${PODS[@]}"; do
		pod_up "${P}$p" "${P}${POD_HOST[$p]}" "v$p" "${POD_MAC[$p]}" "${POD_IP[$p]}/24" \
			"${POD_GW[$p]}" || return 1
	done

	# Data plane: transit on every host NIC, agent on every pod veth.
	for h in "${HOSTS[@]}"; do
		xg "$h" attach eth0 transit --mode "$XDP_MODE" || return 1
		xg "$h" vpc add $VNI dividers "${HOST_IP[h1]}" || return 1
	done
	# h1: bouncer S1 + divider (all subnets); h2: bouncer S2 (+ its pods' S2);
	# h3: only S1, for its pod.
	xg h1 subnet add $VNI 10.1.1.0/24 bouncers "${HOST_IP[h1]}" || return 1
	xg h1 subnet add $VNI 10.1.2.0/24 bouncers "${HOST_IP[h2]}" || return 1
	xg h2 subnet add $VNI 10.1.2.0/24 bouncers "${HOST_IP[h2]}" || return 1
	xg h3 subnet add $VNI 10.1.1.0/24 bouncers "${HOST_IP[h1]}" || return 1
	for p in "${PODS[@]}"; do
		host=${POD_HOST[$p]}
		xg "$host" endpoint add $VNI "${POD_IP[$p]}" mac "${POD_MAC[$p]}" dev "v$p" || return 1
		xg "$host" attach "v$p" agent --mode "$XDP_MODE" || return 1
		# the subnet's bouncer holds every endpoint of the subnet
		case ${POD_IP[$p]} in
		10.1.1.*) [ "$host" != h1 ] && { xg h1 endpoint add $VNI "${POD_IP[$p]}" mac "${POD_MAC[$p]}" host "${HOST_IP[$host]}" || return 1; } ;;
		10.1.2.*) [ "$host" != h2 ] && { xg h2 endpoint add $VNI "${POD_IP[$p]}" mac "${POD_MAC[$p]}" host "${HOST_IP[$host]}" || return 1; } ;;
		esac
	done
	# xgate keeps the next hops it was given (bouncers, dividers, endpoint
	# hosts) as kernel-managed entries. Direct paths lead to hosts it was
	# not given (h2 <-> h3): without these pings they would go by the bouncer
	# (docs/architecture.md, "Underlay neighbours"), and single_cluster.sh
	# counts the direct ones.
	for h in "${HOSTS[@]}"; do
		for other in "${HOSTS[@]}"; do
			[ "$h" = "$other" ] || nsx "$h" ping -c1 -W1 "${HOST_IP[$other]}" >/dev/null 2>&1 || true
		done
	done
	return 0
}

# counter HOST DEV REASON -> packets
counter() {
	xg "$1" stats "$2" -o json | python3 -c '
import json,sys
d=json.load(sys.stdin); r=sys.argv[1]
print(sum(v.get(r,{}).get("packets",0) for v in (x["counters"] for x in d)))' "$3"
}
