#!/usr/bin/env bash
# End to end on the single-cluster topology (deploy/lib/topo.sh): real
# kernel, native XDP on veth, ping and TCP within and across subnets, the
# direct path taking over from the bouncer, and endpoint deletion stopping
# traffic and invalidating the senders' caches.
# usage: single_cluster.sh PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib_topo.sh" "$@"
trap 'pkill -f "iperf3 -s -p 5201" 2>/dev/null; topo_down' EXIT INT TERM
sc_up

check "ping same subnet, across hosts (p1a -> p1b)" nsx p1a ping -c3 -i0.2 -W1 10.1.1.12
check "ping same host (p2a -> p2b, agent local)" nsx p2a ping -c3 -i0.2 -W1 10.1.2.22
check "ping across subnets via the divider (p1b -> p2a)" nsx p1b ping -c3 -i0.2 -W1 10.1.2.21
check "ping across subnets (p2b -> p1a)" nsx p2b ping -c3 -i0.2 -W1 10.1.1.11

tcp() { # tcp SERVERPOD SERVERIP CLIENTPOD
	nsx "$1" iperf3 -s -p 5201 -1 -D >/dev/null 2>&1
	sleep 0.3
	nsx "$3" timeout 20 iperf3 -c "$2" -p 5201 -t 2 -J > "/tmp/$P-iperf.json" 2>/dev/null || return 1
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); b=d["end"]["sum_received"]["bytes"]; print(b); sys.exit(0 if b > 1000000 else 1)' "/tmp/$P-iperf.json"
}
check "TCP within a subnet (iperf3 p1b -> p1a)" tcp p1a 10.1.1.11 p1b
check "TCP across subnets (iperf3 p1b -> p2a)" tcp p2a 10.1.2.21 p1b
rm -f "/tmp/$P-iperf.json"

# ---- a pod's MTU: a frame larger than it is not counted as delivered (the
# veth would drop it unseen). Both ends of the pod's veth go to 1300.
pod_mtu() { nsx "${POD_HOST[$1]}" ip link set "v$1" mtu "$2" && nsx "$1" ip link set eth0 mtu "$2"; }
pod_mtu p1a 1300
xg h1 stats --clear >/dev/null
check_not "DF datagram over the pod's MTU not delivered (p2b -> p1a, 1350)" \
	nsx p2b ping -c1 -W1 -M do -s 1322 10.1.1.11
[ "$(counter h1 eth0 drop_pod_mtu)" -ge 1 ] && [ "$(counter h1 eth0 decap_local)" -eq 0 ] &&
	ok "h1 counted it as drop_pod_mtu, not decap_local" ||
	not_ok "h1: drop_pod_mtu $(counter h1 eth0 drop_pod_mtu), decap_local $(counter h1 eth0 decap_local)"
check "a datagram of the pod's MTU is delivered (p2b -> p1a, 1300)" \
	nsx p2b ping -c1 -W1 -M do -s 1272 10.1.1.11
pod_mtu p1a "$POD_MTU"
# Pod to pod on one host: the agent answers ICMP fragmentation-needed with
# the destination pod's MTU, and the sender's PMTU discovery takes it.
pod_mtu p2b 1300
xg h2 stats --clear >/dev/null
nsx p2a ping -c1 -W1 -M do -s 1322 10.1.2.22 2>&1 | grep -q "mtu = 1300" &&
	ok "p2a told 'frag needed, mtu = 1300' for p2b" || not_ok "no frag-needed with mtu 1300 for p2a"
[ "$(counter h2 vp2a icmp_frag_needed)" -ge 1 ] && ok "h2 agent counted icmp_frag_needed" ||
	not_ok "no icmp_frag_needed on h2 vp2a"
check "p2a -> p2b at the learned MTU (1300)" nsx p2a ping -c1 -W1 -M do -s 1272 10.1.2.22
pod_mtu p2b "$POD_MTU"

# ---- direct path: p2b -> p1b with h2's cache emptied. The first packet goes
# agent(h2) -> divider/bouncer h1 -> h3; the reply teaches h2 where p1b is.
for h in h1 h2 h3; do xg $h stats --clear >/dev/null; done
xg h2 cache flush
nsx p2b ping -c1 -W1 10.1.1.12 >/dev/null
first=$(( $(counter h1 eth0 bouncer_fwd) + $(counter h1 eth0 divider_fwd) ))
nsx p2b ping -c20 -i0.05 -W1 10.1.1.12 >/dev/null
after=$(( $(counter h1 eth0 bouncer_fwd) + $(counter h1 eth0 divider_fwd) ))
direct=$(counter h2 vp2b encap_direct)
[ "$first" -ge 1 ] && ok "first packet went through h1 (bouncer/divider: $first)" || not_ok "first packet did not use h1 ($first)"
[ "$after" -eq "$first" ] && ok "bouncer off the path after the first packet (h1 count stays $after)" || not_ok "h1 still on the path: $first -> $after"
[ "$direct" -ge 20 ] && ok "h2 sent $direct packets straight to h3" || not_ok "only $direct direct packets from h2"
xg h2 cache ls | grep -q "10.1.1.12 *10.200.0.3" && ok "h2 cache: 10.1.1.12 at 10.200.0.3" || not_ok "h2 cache lacks p1b"

# ---- endpoint deletion: p1b leaves (its host and its bouncer forget it).
xg h3 endpoint del $VNI 10.1.1.12
xg h1 endpoint del $VNI 10.1.1.12
check_not "traffic to a deleted endpoint stops" nsx p2b ping -c3 -i0.2 -W1 10.1.1.12
[ "$(counter h3 eth0 stale_bounce)" -ge 1 ] && ok "h3 bounced the stale direct-path packet back" || not_ok "no stale bounce on h3"
[ "$(counter h2 eth0 stale_reroute)" -ge 1 ] && ok "h2 invalidated and rerouted" || not_ok "no stale reroute on h2"
xg h2 cache ls | grep -q "10.1.1.12" && not_ok "h2 cache still holds p1b" || ok "h2 cache entry for p1b invalidated"
[ "$(counter h1 eth0 drop_no_endpoint)" -ge 1 ] && ok "bouncer h1 drops it as no_endpoint" || not_ok "no drop_no_endpoint on h1"
check "other traffic unaffected (p2b -> p1a)" nsx p2b ping -c2 -i0.2 -W1 10.1.1.11

# ---- cleanup leaves nothing behind
sc_down
summary
