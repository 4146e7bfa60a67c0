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
XGATE=$(readlink -f "$1")
GATEWAYD=$(readlink -f "$2")
P=xgc$$
MT_MODE=auth # type 0: the attacker's tampered copy is dropped by XDP (bad_mac); encrypt: multi_cluster_encrypt.sh
source "$HERE/../lib.sh"
source "$HERE/../../deploy/lib/mtopo.sh"
trap 'mtopo_down' EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }

if mtopo_up 2>"$MT_RUN.topo.err"; then ok "three clusters up (native XDP everywhere)"; else
	not_ok "topology: $(grep -v note "$MT_RUN.topo.err" | tail -3)"; rm -f "$MT_RUN.topo.err"; summary; exit 1
fi
rm -f "$MT_RUN.topo.err"
if mesh_up; then ok "mesh up: every gateway has both peers with data-plane keys"; else
	not_ok "mesh: $(tail -n 3 "$MT_RUN"/gw*.log)"; summary; exit 1
fi

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

tcp() { # tcp CLIENT SERVER SECONDS -> JSON in $MT_RUN/iperf-CLIENT.json
	podx "$2" iperf3 -s -1 -D -B "${POD_IP[$2]}" >/dev/null 2>&1
	for _ in $(seq 50); do podx "$2" ss -Hltn "sport = :5201" | grep -q . && break; sleep 0.05; done
	podx "$1" timeout $(($3 + 20)) iperf3 -c "${POD_IP[$2]}" -t "$3" -J > "$MT_RUN/iperf-$1.json" 2>/dev/null
}
# received BYTES and the smallest one-second interval (a stall shows as 0)
iperf_sum() {
	/usr/bin/python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
iv=[i["sum"]["bytes"] for i in d["intervals"]]
print(d["end"]["sum_received"]["bytes"], min(iv) if iv else 0)' "$MT_RUN/iperf-$1.json" 2>/dev/null
}
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
tcp 1a 2b 8 & tcp_pid=$!
sleep 2
gw_kill 1
sleep 1
gw_start 1
wait "$tcp_pid"; rc=$?
read -r bytes worst <<<"$(iperf_sum 1a)"
[ "$rc" = 0 ] && [ "${bytes:-0}" -gt 1000000 ] && ok "TCP 1a -> 2b survived kill -9 and restart of gw1's gatewayd ($bytes bytes)" ||
	not_ok "TCP across the gatewayd crash: rc $rc, ${bytes:-0} bytes"
[ "${worst:-0}" -gt 0 ] && ok "no second of the transfer without data (slowest: $worst bytes)" ||
	not_ok "the transfer stalled for a second or more"
wait_for 20 mesh_ready && ok "gw1 back in the mesh (sessions up, new keys agreed)" || not_ok "mesh after restart: $(tail -n 3 "$MT_RUN/gw1.log")"
podx 1b ping -c2 -i0.2 -W1 10.1.3.12 >/dev/null 2>&1 && ok "and traffic flows under the new keys (1b -> 3b)" ||
	not_ok "1b -> 3b after restart"

# ---- an attacker on the WAN ---------------------------------------------------
GW2_MAC=$(nsm c2gw cat /sys/class/net/wan0/address)
declare -A before
for r in drop_gw_replay drop_gw_bad_mac drop_gw_unknown_peer gw_decap; do before[$r]=$(gw_counter 2 $r); done
nsm wan /usr/bin/python3 "$HERE/wan_spoof.py" capture r1 "$(pub_ip 1)" "$(pub_ip 2)" "${P}-p1a" 10.1.2.11 \
	"$MT_RUN/genuine.pcap" >/dev/null && ok "captured a genuine gw1 -> gw2 tunnel packet on the WAN" ||
	not_ok "no tunnel packet captured on the WAN"
for r in drop_gw_replay drop_gw_bad_mac drop_gw_unknown_peer gw_decap; do before[$r]=$(gw_counter 2 $r); done
nsm wan /usr/bin/python3 "$HERE/wan_spoof.py" send r2 "$GW2_MAC" "$MT_RUN/genuine.pcap" >/dev/null
sleep 0.3
delta() { echo $(($(gw_counter 2 "$1") - ${before[$1]})); }
[ "$(delta drop_gw_replay)" = 2 ] && ok "gw2 dropped the genuine packet replayed twice (drop_gw_replay +2)" ||
	not_ok "replays: drop_gw_replay +$(delta drop_gw_replay)"
[ "$(delta drop_gw_bad_mac)" = 1 ] && ok "gw2 dropped the tampered copy (drop_gw_bad_mac +1)" ||
	not_ok "tampered: drop_gw_bad_mac +$(delta drop_gw_bad_mac)"
[ "$(delta drop_gw_unknown_peer)" = 1 ] && ok "gw2 dropped the stranger's copy (drop_gw_unknown_peer +1)" ||
	not_ok "stranger: drop_gw_unknown_peer +$(delta drop_gw_unknown_peer)"
[ "$(delta gw_decap)" = 0 ] && ok "none of the four was forwarded into the cluster" ||
	not_ok "gw_decap grew by $(delta gw_decap) during the attack"
summary
