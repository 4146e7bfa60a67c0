#!/usr/bin/env bash
# What the end-to-end tests on the demo's three clusters share
# (multi_cluster.sh in auth mode, multi_cluster_encrypt.sh in encrypt mode).
# Source it with the test's arguments, MT_MODE set:
#   source lib_mtopo.sh PATH/TO/xgate PATH/TO/gatewayd [PATH/TO/xgate-cryptd]
# It sources ../lib.sh and deploy/lib/mtopo.sh, names the namespaces xgc<pid>,
# takes the topology down on exit and skips the test when not root.
XGATE=$(readlink -f "$1")
GATEWAYD=$(readlink -f "$2")
[ -n "${3:-}" ] && CRYPTD=$(readlink -f "$3")
P=xgc$$
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=../../deploy/lib/mtopo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/mtopo.sh"
trap 'mtopo_down' EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }

# mc_up TOPOLOGY-OK MESH-OK: the topology, then the mesh; the test ends here if either fails
mc_up() {
	if mtopo_up 2>"$MT_RUN.topo.err"; then ok "$1"; else
		not_ok "topology: $(grep -v note "$MT_RUN.topo.err" | tail -3)"; rm -f "$MT_RUN.topo.err"; summary; exit 1
	fi
	rm -f "$MT_RUN.topo.err"
	if mesh_up; then ok "$2"; else
		not_ok "mesh: $(tail -n 3 "$MT_RUN"/gw*.log "$MT_RUN"/cryptd*.log 2>/dev/null)"; summary; exit 1
	fi
}

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

# mc_gw1_crash [CMD...]: kill -9 of gw1's gatewayd 2 s into an 8 s TCP
# transfer 1a -> 2b, CMD, its restart: the transfer goes on without a second
# of no data (mc_stall_detail, if the test defines it, says more when it
# stalls), gw1 is back in the mesh and traffic flows under the new keys
mc_gw1_crash() {
	local tcp_pid rc bytes worst
	tcp 1a 2b 8 & tcp_pid=$!
	sleep 2
	gw_kill 1
	sleep 1
	[ $# -gt 0 ] && "$@"
	gw_start 1
	wait "$tcp_pid"; rc=$?
	read -r bytes worst <<<"$(iperf_sum 1a)"
	[ "$rc" = 0 ] && [ "${bytes:-0}" -gt 1000000 ] && ok "TCP 1a -> 2b survived kill -9 and restart of gw1's gatewayd ($bytes bytes)" ||
		not_ok "TCP across the gatewayd crash: rc $rc, ${bytes:-0} bytes"
	[ "${worst:-0}" -gt 0 ] && ok "no second of the transfer without data (slowest: $worst bytes)" ||
		not_ok "the transfer stalled for a second or more$(declare -F mc_stall_detail >/dev/null && echo ": $(mc_stall_detail)")"
	wait_for 20 mesh_ready && ok "gw1 back in the mesh (sessions up, new keys agreed)" || not_ok "mesh after restart: $(tail -n 3 "$MT_RUN/gw1.log")"
	podx 1b ping -c2 -i0.2 -W1 "${POD_IP[3b]}" >/dev/null 2>&1 && ok "and traffic flows under the new keys (1b -> 3b)" ||
		not_ok "1b -> 3b after restart"
}

# mc_wan_attack KIND: an attacker on the WAN (wan_spoof.py) captures a genuine
# gw1 -> gw2 tunnel packet (KIND: what it is) and sends it to gw2 replayed
# twice, tampered with and from a stranger. gw2 drops the replays and the
# stranger's copy, counted, and forwards none of the four. delta COUNTER:
# how much one of gw2's counters grew since (the tampered copy is the test's
# to check: its drop is counted where the packet's type is checked)
declare -A before
delta() { echo $(($(gw_counter 2 "$1") - ${before[$1]})); }
mc_wan_attack() {
	local r mac
	mac=$(nsm c2gw cat /sys/class/net/wan0/address)
	nsm wan /usr/bin/python3 "$HERE/wan_spoof.py" capture r1 "$(pub_ip 1)" "$(pub_ip 2)" "${P}-p1a" 10.1.2.11 \
		"$MT_RUN/genuine.pcap" >/dev/null && ok "captured a genuine gw1 -> gw2 $1 packet on the WAN" ||
		not_ok "no tunnel packet captured on the WAN"
	for r in drop_gw_replay drop_gw_bad_mac drop_gw_unknown_peer gw_decap; do before[$r]=$(gw_counter 2 $r); done
	nsm wan /usr/bin/python3 "$HERE/wan_spoof.py" send r2 "$mac" "$MT_RUN/genuine.pcap" >/dev/null
	sleep 0.3
	[ "$(delta drop_gw_replay)" = 2 ] && ok "gw2 dropped the genuine packet replayed twice (drop_gw_replay +2)" ||
		not_ok "replays: drop_gw_replay +$(delta drop_gw_replay)"
	[ "$(delta drop_gw_unknown_peer)" = 1 ] && ok "gw2 dropped the stranger's copy (drop_gw_unknown_peer +1)" ||
		not_ok "stranger: drop_gw_unknown_peer +$(delta drop_gw_unknown_peer)"
	[ "$(delta gw_decap)" = 0 ] && ok "none of the four was forwarded into the cluster" ||
		not_ok "gw_decap grew by $(delta gw_decap) during the attack"
}
