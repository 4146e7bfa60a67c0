#!/usr/bin/env bash
# End to end on the demo's topology (deploy/lib/mtopo.sh) in auth mode: three clusters,
# gateway XDP on both NICs of each gateway, three gatewayds meshing over the
# WAN router. Cross-cluster ping (every ordered pair) and TCP (every cluster
# pair); the direct path back through the gateway; VPC 200 isolated from VPC
# 100 on the same addresses; kill -9 of a gatewayd in the middle of a TCP
# transfer, and its restart, without the transfer stalling; an attacker on
# the WAN replaying, tampering with and spoofing tunnel packets, all dropped
# and counted.   usage: multi_cluster.sh PATH/TO/xgate PATH/TO/gatewayd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
MT_MODE=auth # type 0: the attacker's tampered copy is dropped by XDP (bad_mac); encrypt: multi_cluster_encrypt.sh
source "$HERE/lib_mtopo.sh" "$@"
mc_up "three clusters up (native XDP everywhere)" "mesh up: every gateway has both peers with data-plane keys"
# gatewayd keeps the next hop toward each peer's public address (the WAN
# router) as a kernel-managed entry: the tunnel's frames leave by XDP alone
bad=""
for c in "${CLUSTERS[@]}"; do
	nsm "c${c}gw" ip -d neigh show "198.18.$c.1" | grep -q 'managed.*proto 88' || bad="$bad gw$c"
done
[ -z "$bad" ] && ok "every gateway keeps a managed entry for its WAN next hop" ||
	not_ok "no managed entry for the WAN router on:$bad"

# ---- VPC 100 across clusters ------------------------------------------------
V100=(1a 1b 2a 2b 3a 3b)
for s in "${V100[@]}"; do
	bad=""
	for d in "${V100[@]}"; do
		[ "${POD_C[$s]}" = "${POD_C[$d]}" ] && continue
		podx "$s" ping -c2 -i0.2 -W1 "${POD_IP[$d]}" >/dev/null 2>&1 || bad="$bad $d"
	done
	[ -z "$bad" ] && ok "ping from $s to every pod of VPC 100 in the other clusters" ||
		not_ok "ping from $s failed to:$bad"
done

learned() { # learned HOST ADDR VIA: HOST's direct-path cache has VPC 100 ADDR at VIA
	xgm "$1" cache ls -o json | /usr/bin/python3 -c '
import json,sys
d=json.load(sys.stdin)
sys.exit(0 if any(e["vni"]==100 and e["ip"]==sys.argv[1] and e["host"]==sys.argv[2] for e in d) else 1)' "$2" "$3"
}
learned c2h2 10.1.1.11 "$(host_ip 2 gw)" && ok "c2h2 learned that 1a is reached through its gateway (direct path)" ||
	not_ok "direct path: c2h2 cache: $(xgm c2h2 cache ls 2>&1)"

for pair in "1a 2b" "2a 3b" "3a 1b"; do
	set -- $pair
	if tcp "$1" "$2" 2; then
		read -r bytes _ <<<"$(iperf_sum "$1")"
		[ "${bytes:-0}" -gt 1000000 ] && ok "TCP $1 -> $2 across clusters: $bytes bytes" ||
			not_ok "TCP $1 -> $2: only ${bytes:-0} bytes"
	else
		not_ok "TCP $1 -> $2: iperf3 failed"
	fi
done

# ---- VPC 200: same addresses, another tenant ---------------------------------
whoami_up 2a 2t 3a
[ "$(whoami 1a 10.1.2.11)" = "2a vpc 100" ] && ok "VPC 100 pod 1a reaches 10.1.2.11 = 2a" ||
	not_ok "1a -> 10.1.2.11 answered '$(whoami 1a 10.1.2.11)'"
[ "$(whoami 1t 10.1.2.11)" = "2t vpc 200" ] && ok "VPC 200 pod 1t reaches 10.1.2.11 = 2t (same address, its own VPC)" ||
	not_ok "1t -> 10.1.2.11 answered '$(whoami 1t 10.1.2.11)'"
[ -z "$(whoami 1t 10.1.3.11)" ] && ok "VPC 200 cannot reach VPC 100's 10.1.3.11" ||
	not_ok "VPC 200 reached VPC 100: $(whoami 1t 10.1.3.11)"
check_not "and ping from VPC 200 to it gets nothing" podx 1t ping -c2 -i0.2 -W1 10.1.3.11

# ---- kill -9 gatewayd during a TCP transfer -----------------------------------
mc_gw1_crash

# ---- an attacker on the WAN ---------------------------------------------------
mc_wan_attack tunnel
[ "$(delta drop_gw_bad_mac)" = 1 ] && ok "gw2 dropped the tampered copy (drop_gw_bad_mac +1)" ||
	not_ok "tampered: drop_gw_bad_mac +$(delta drop_gw_bad_mac)"
summary
