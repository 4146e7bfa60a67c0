#!/usr/bin/env bash
# Three edge clusters joined by gateways over a WAN router, in network
# namespaces; shared by the multi-cluster demo, its end-to-end test and the
# cross-cluster bench. Source it, then call mtopo_up / mesh_up / mtopo_down.
#
#   WAN      ${P}-wan   router; link to gateway c: 198.18.c.1/24 <-> 198.18.c.2/24
#   cluster c = 1..3, underlay bridge in ${P}-c<c>u, 10.20<c>.0.0/24:
#     h1  .1    divider of both VPCs, bouncer of the cluster's subnets, pod <c>a
#     h2  .2    compute: pods <c>b (VPC 100) and <c>t (VPC 200, clusters 1-2)
#     gw  .254  gateway program on eth0 (cluster side) and wan0 (198.18.c.2);
#               MT_MODE=encrypt: also on xgc1, the crypt veth xgc0 <-> xgc1, with
#               xgate-cryptd's AF_XDP workers on eth0, wan0 and xgc0
#   VPC 100 (tenant 1): 10.1.<c>.0/24 in cluster c, pods .11 (on h1), .12 (on h2)
#   VPC 200 (tenant 2): the same CIDRs and even the same pod addresses in
#     clusters 1 and 2 (pods <c>t at 10.1.<c>.11) — isolated by VNI.
#
# Set P, XGATE, GATEWAYD (and XDP_MODE, MT_RUN, MT_MODE, CRYPTD) as shell variables before
# sourcing: `P=x source mtopo.sh` would set them for the source command only.
#
# Interface names are per namespace (eth0, wan0, h1...), so the prefix only
# has to keep namespace names apart. Every address lives inside namespaces
# made here; nothing leaves the box.

: "${P:=xgm}"                # namespace prefix
: "${XGATE:=xgate}"          # the CLI binary
: "${GATEWAYD:=gatewayd}"
: "${XDP_MODE:=native}"
: "${MT_RUN:=/tmp/$P-run}"   # gatewayd configs, keys, sockets, databases, logs
: "${MT_MODE:=encrypt}"      # the tunnel between gateways: encrypt (type 1) or auth (type 0)
: "${CRYPTD:=xgate-cryptd}"  # encrypt mode's workers
# CRYPTD_ARGS: more options for every xgate-cryptd (word-split), e.g. "--nice -10"
POD_MTU=1400                 # underlay 1500 - XG_ENCAP_LEN (62)
WAN_MTU=1512                 # underlay + 12: the tunnel header is larger than Geneve's
CLUSTERS=(1 2 3)

source "$(dirname "${BASH_SOURCE[0]}")/pod.sh"

# pod -> cluster host vni ip
declare -A POD_C=() POD_H=() POD_VNI=() POD_IP=() POD_MAC=()
MT_PODS=()
mt_pod() {
	local name=$1
	MT_PODS+=("$name")
	POD_C[$name]=$2 POD_H[$name]=$3 POD_VNI[$name]=$4 POD_IP[$name]=$5
	POD_MAC[$name]=$(printf '02:%02x:0a:01:%02x:%02x' $(($4 / 100)) "$2" "${5##*.}")
}
for c in "${CLUSTERS[@]}"; do
	mt_pod "${c}a" "$c" h1 100 "10.1.$c.11"
	mt_pod "${c}b" "$c" h2 100 "10.1.$c.12"
done
mt_pod 1t 1 h2 200 10.1.1.11
mt_pod 2t 2 h2 200 10.1.2.11
unset c
# VPC 200 exists in clusters 1 and 2 only
mt_has_vpc200() { [ "$1" != 3 ]; }

host_ip() { # host_ip CLUSTER HOST
	case $2 in h1) echo "10.20$1.0.1" ;; h2) echo "10.20$1.0.2" ;; gw) echo "10.20$1.0.254" ;; esac
}
pub_ip() { echo "198.18.$1.2"; }

# xgm HOSTNS ARGS: xgate against the instance of namespace ${P}-HOSTNS
xgm() { local n=$1; shift; "$XGATE" -N "${P}-$n" "$@"; }
nsm() { local n=$1; shift; ip netns exec "${P}-$n" "$@"; }
pod_ns() { echo "p$1"; }
# podx POD CMD...: run in the pod's namespace
podx() { local p=$1; shift; nsm "p$p" "$@"; }

mt_stub() { "$XGATE" -N "$1" attach "$2" pass --mode "$XDP_MODE"; }

mt_all_ns() {
	local c h
	echo wan
	for c in "${CLUSTERS[@]}"; do
		for h in u h1 h2 gw; do echo "c$c$h"; done
	done
	for h in "${MT_PODS[@]}"; do echo "p$h"; done
}

mesh_down() { # SIGTERM, as an operator stops them; maps and pins stay
	local f pid i
	for f in "$MT_RUN"/*.pid; do
		[ -e "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null
		for i in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$pid" 2>/dev/null
		rm -f "$f"
	done
	return 0
}

mtopo_down() {
	local n
	mesh_down
	for n in $(mt_all_ns); do
		[ -e "/run/netns/${P}-$n" ] || continue
		"$XGATE" -N "${P}-$n" reset >/dev/null 2>&1
		ip netns pids "${P}-$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "${P}-$n" 2>/dev/null
	done
	# instances whose namespace is already gone
	for n in $(mt_all_ns); do
		[ -d "/sys/fs/bpf/xgate/${P}-$n" ] && "$XGATE" -n "${P}-$n" reset >/dev/null 2>&1
	done
	rm -rf "$MT_RUN"
	return 0
}

mt_ns() { ip netns add "${P}-$1" && nsm "$1" ip link set lo up; }

# one cluster: underlay bridge, h1 h2 gw, their pods, all maps programmed
mt_cluster_up() {
	local c=$1 h p ip div
	div=$(host_ip "$c" h1)
	mt_ns "c${c}u" || return 1
	nsm "c${c}u" ip link add br0 type bridge
	nsm "c${c}u" ip link set br0 up
	for h in h1 h2 gw; do
		mt_ns "c$c$h" || return 1
		ip link add "$h" netns "${P}-c${c}u" type veth peer name eth0 netns "${P}-c$c$h"
		nsm "c${c}u" ip link set "$h" master br0 up
		mt_stub "${P}-c${c}u" "$h" || return 1
		nsm "c$c$h" ip addr add "$(host_ip "$c" "$h")/24" dev eth0
		nsm "c$c$h" ip link set eth0 up
	done
	for h in h1 h2; do
		xgm "c$c$h" attach eth0 transit --mode "$XDP_MODE" || return 1
		xgm "c$c$h" vpc add 100 dividers "$div" || return 1
		mt_has_vpc200 "$c" && { xgm "c$c$h" vpc add 200 dividers "$div" || return 1; }
	done
	# h1 divides and bounces; remote subnets (marked by gatewayd) go to the gateway
	xgm "c${c}h1" host set gateway "$(host_ip "$c" gw)" || return 1
	xgm "c${c}h1" subnet add 100 "10.1.$c.0/24" bouncers "$div" || return 1
	xgm "c${c}h2" subnet add 100 "10.1.$c.0/24" bouncers "$div" || return 1
	if mt_has_vpc200 "$c"; then
		xgm "c${c}h1" subnet add 200 "10.1.$c.0/24" bouncers "$div" || return 1
		xgm "c${c}h2" subnet add 200 "10.1.$c.0/24" bouncers "$div" || return 1
	fi
	for p in "${MT_PODS[@]}"; do
		[ "${POD_C[$p]}" = "$c" ] && { mt_pod_up "$p" || return 1; }
	done
	mt_gateway_up "$c"
}

mt_pod_up() {
	local p=$1 c=${POD_C[$1]} h=${POD_H[$1]} vni=${POD_VNI[$1]} ip=${POD_IP[$1]} mac=${POD_MAC[$1]}
	pod_up "${P}-p$p" "${P}-c$c$h" "v$p" "$mac" "$ip/24" "10.1.$c.1" || return 1
	xgm "c$c$h" endpoint add "$vni" "$ip" mac "$mac" dev "v$p" || return 1
	xgm "c$c$h" attach "v$p" agent --mode "$XDP_MODE" || return 1
	# the bouncer (h1) holds every endpoint of its subnets
	[ "$h" = h1 ] || xgm "c${c}h1" endpoint add "$vni" "$ip" mac "$mac" host "$(host_ip "$c" "$h")"
}

mt_gateway_up() {
	local c=$1 div
	div=$(host_ip "$c" h1)
	ip link add wan0 netns "${P}-c${c}gw" mtu $WAN_MTU type veth peer name "r$c" netns "${P}-wan" mtu $WAN_MTU
	nsm wan ip addr add "198.18.$c.1/24" dev "r$c"
	nsm wan ip link set "r$c" up
	mt_stub "${P}-wan" "r$c" || return 1
	nsm "c${c}gw" ip addr add "$(pub_ip "$c")/24" dev wan0
	nsm "c${c}gw" ip link set wan0 up
	nsm "c${c}gw" ip route add default via "198.18.$c.1"
	xgm "c${c}gw" attach eth0 gateway --mode "$XDP_MODE" || return 1
	xgm "c${c}gw" attach wan0 gateway --mode "$XDP_MODE" || return 1
	xgm "c${c}gw" host set ip "$(host_ip "$c" gw)" || return 1
	if [ "$MT_MODE" = encrypt ]; then
		nsm "c${c}gw" ip link add xgc0 type veth peer name xgc1
		nsm "c${c}gw" ip link set xgc0 up
		nsm "c${c}gw" ip link set xgc1 up
		xgm "c${c}gw" attach xgc1 gateway --mode "$XDP_MODE" || return 1
	fi
	# traffic from peers goes straight to the subnet's bouncer, else the divider
	xgm "c${c}gw" vpc add 100 dividers "$div" || return 1
	xgm "c${c}gw" subnet add 100 "10.1.$c.0/24" bouncers "$div" || return 1
	if mt_has_vpc200 "$c"; then
		xgm "c${c}gw" vpc add 200 dividers "$div" || return 1
		xgm "c${c}gw" subnet add 200 "10.1.$c.0/24" bouncers "$div" || return 1
	fi
}

mtopo_up() {
	local c h o
	mkdir -p "$MT_RUN"
	mt_ns wan || return 1
	nsm wan sysctl -qw net.ipv4.ip_forward=1
	for c in "${CLUSTERS[@]}"; do mt_cluster_up "$c" || return 1; done
	# resolve neighbours before the first packet (XDP cannot wait for ARP)
	for c in "${CLUSTERS[@]}"; do
		for h in h1 h2 gw; do
			for o in h1 h2 gw; do
				[ "$h" = "$o" ] || nsm "c$c$h" ping -c1 -W1 "$(host_ip "$c" "$o")" >/dev/null 2>&1
			done
		done
		nsm "c${c}gw" ping -c1 -W1 "198.18.$c.1" >/dev/null 2>&1
	done
	return 0
}

# ---- gatewayd mesh ---------------------------------------------------------

mt_conf() { # mt_conf CLUSTER: gatewayd's config file on stdout
	local c=$1 o
	printf '[Gateway]\nName = gw%s\nCluster = edge-%s\nPrivateKey = %s\n' "$c" "$c" "$(cat "$MT_RUN/gw$c.key")"
	printf 'ListenAddress = %s:7100\nPublicAddress = %s:6082\n' "$(pub_ip "$c")" "$(pub_ip "$c")"
	printf 'Instance = %s\nPublicInterface = wan0\nDivider = %s\n' "${P}-c${c}gw" "${P}-c${c}h1"
	printf 'Database = %s/gw%s.db\nKeepalive = 1\nHoldTime = 4\nGraceTime = %s\n' "$MT_RUN" "$c" "${MT_GRACE:-30}"
	printf 'RekeyInterval = %s\n' "${MT_REKEY:-120}"
	printf 'Subnet = 100 10.1.%s.0/24\n' "$c"
	mt_has_vpc200 "$c" && printf 'Subnet = 200 10.1.%s.0/24\n' "$c"
	for o in "${CLUSTERS[@]}"; do
		[ "$o" = "$c" ] && continue
		printf '\n[Peer]\nName = gw%s\nPublicKey = %s\nEndpoint = %s:7100\nMode = %s\n' "$o" "$(cat "$MT_RUN/gw$o.pub")" "$(pub_ip "$o")" "$MT_MODE"
	done
}

gw_sock() { echo "$MT_RUN/gw$1.sock"; }

# gw_start CLUSTER: (re)start that cluster's gatewayd in its gateway namespace
gw_start() {
	local c=$1
	nsenter --net="/run/netns/${P}-c${c}gw" "$GATEWAYD" -c "$MT_RUN/gw$c.conf" -s "$(gw_sock "$c")" \
		>> "$MT_RUN/gw$c.log" 2>&1 &
	echo $! > "$MT_RUN/gw$c.pid"
	disown $! # its end is ours to report, not the shell's
}

# cryptd_start CLUSTER: that gateway's crypto workers (encrypt mode); they
# wait for gatewayd to name the public NIC, so either may start first
cryptd_start() {
	local c=$1
	nsenter --net="/run/netns/${P}-c${c}gw" "$CRYPTD" -n "${P}-c${c}gw" -c xgc0 -s 5 ${CRYPTD_ARGS:-} \
		>> "$MT_RUN/cryptd$c.log" 2>&1 &
	echo $! > "$MT_RUN/cryptd$c.pid"
	disown $!
}

gw_kill() { # gw_kill CLUSTER: kill -9, as a crash would
	local f="$MT_RUN/gw$1.pid"
	[ -e "$f" ] || return 0
	kill -9 "$(cat "$f")" 2>/dev/null
	while kill -0 "$(cat "$f")" 2>/dev/null; do sleep 0.05; done
	rm -f "$f"
}

# every gateway has both peers established with a data-plane key each way
mesh_ready() {
	local c n
	for c in "${CLUSTERS[@]}"; do
		n=$("$XGATE" gw peers --socket "$(gw_sock "$c")" -o json 2>/dev/null | /usr/bin/python3 -c '
import json,sys
try: d=json.load(sys.stdin)
except Exception: print(0); sys.exit()
print(sum(1 for p in d if p.get("state")=="up" and p.get("key_age_s") is not None))') || return 1
		[ "$n" = $((${#CLUSTERS[@]} - 1)) ] || return 1
	done
	return 0
}

mesh_up() { # mesh_up: keys, configs, three gatewayds; waits up to 20 s
	local c i
	for c in "${CLUSTERS[@]}"; do
		"$XGATE" gw genkey > "$MT_RUN/gw$c.key" || return 1
		"$XGATE" gw pubkey < "$MT_RUN/gw$c.key" > "$MT_RUN/gw$c.pub" || return 1
	done
	for c in "${CLUSTERS[@]}"; do mt_conf "$c" > "$MT_RUN/gw$c.conf"; done
	if [ "$MT_MODE" = encrypt ]; then
		for c in "${CLUSTERS[@]}"; do cryptd_start "$c"; done
	fi
	for c in "${CLUSTERS[@]}"; do gw_start "$c"; done
	for i in $(seq 200); do
		mesh_ready && return 0
		sleep 0.1
	done
	return 1
}

# gw_counter CLUSTER REASON -> packets counted under REASON on the gateway
gw_counter() {
	xgm "c$1gw" stats -o json | /usr/bin/python3 -c '
import json,sys
d=json.load(sys.stdin); r=sys.argv[1]
print(sum(v.get(r,{}).get("packets",0) for v in (x["counters"] for x in d)))' "$2"
}

# ---- who answers: a tiny TCP service per pod that names the pod -------------

WHOAMI_PORT=7000
whoami_up() { # whoami_up POD...: each pod answers "<pod> vpc <vni>" on its address
	local p
	for p in "$@"; do
		podx "$p" /usr/bin/python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
while True:
    c, _ = s.accept()
    c.sendall(sys.argv[3].encode() + b"\n")
    c.close()' "${POD_IP[$p]}" $WHOAMI_PORT "$p vpc ${POD_VNI[$p]}" >/dev/null 2>&1 &
	done
	for p in "$@"; do # listening before anyone asks
		for _ in $(seq 50); do
			podx "$p" ss -Hltn "sport = :$WHOAMI_PORT" | grep -q . && break
			sleep 0.05
		done
	done
}
# whoami FROM ADDR: who answers at ADDR, as seen from pod FROM ("" if nobody)
whoami() { podx "$1" timeout 3 nc -w2 "$2" $WHOAMI_PORT 2>/dev/null; }
