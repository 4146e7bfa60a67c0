#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A serverless cluster on network namespaces, for tests/e2e/serverless.sh
# and bench/session_open.sh --real: fornaxd in a namespace of its own on a
# cluster network (a bridge in a "lan" namespace, 10.77.0.0/24, fornaxd at
# .1 serving TLS from a test CA), nodes on that network (a real nodeagentd
# each, its xgate instance named after its namespace, ingress on its public
# NIC), and a client namespace reaching every node's public address
# (node i: 10.88.i.1, the client 10.88.i.2).
#
# fornaxd cannot sit in the root namespace on loopback: nodeagentd enters its
# node's namespace, where 127.0.0.1 is the node's own; off loopback fornaxd
# needs TLS, so the nodes dial wss:// verified against the CA.
#
# The caller sets FX_P (names: xgt$FX_P-...; tests/meta/leftovers.sh),
# FX_T (a temporary directory), XGATE, FXD, NAD, NETSH (FX_KEY=ec: fornaxd
# gets a P-256 key rather than RSA-2048; FX_PODS: pods per node), and sources
# deploy/lib/ca.sh; then fx_bed_up, fx_fornaxd, fx_node I NAME..., and
# fx_bed_down from its EXIT trap.
FX_PORT=8470
FX_CORE_IP=10.77.0.1
FX_G=core.fornax-serverless.centaurusinfra.io

fx_ns() { echo "xgt$FX_P-$1"; }

# fx_bed_up: the lan, fornaxd's namespace, the client, the CA and tokens.
fx_bed_up() {
	local lan core cli
	lan=$(fx_ns lan) core=$(fx_ns core) cli=$(fx_ns cli)
	for n in "$lan" "$core" "$cli"; do
		ip netns add "$n" && ip -n "$n" link set lo up || return 1
	done
	ip -n "$lan" link add br0 type bridge &&
		ip -n "$lan" addr add 10.77.0.254/24 dev br0 &&
		ip -n "$lan" link set br0 up || return 1
	fx_lan_port "$core" core0 "$FX_CORE_IP" || return 1
	test_ca "$FX_T" "xgate fx CA" "IP:$FX_CORE_IP" "${FX_KEY:-}" || return 1
	FX_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	FX_JOIN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	FX_API=https://$FX_CORE_IP:$FX_PORT/apis/$FX_G/v1
	echo "$FX_TOKEN" >"$FX_T/token"
}

# fx_lan_port NS DEV ADDR: NS on the cluster network as ADDR/24. The bridge's
# side gets the pass stub: form 2 frames are redirected into DEV by XDP.
fx_lan_port() {
	local lan p=l$FX_P${1##*-}
	lan=$(fx_ns lan)
	ip link add "$2" netns "$1" type veth peer name "${p:0:15}" netns "$lan" || return 1
	ip -n "$lan" link set "${p:0:15}" master br0 up &&
		ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up &&
		"$XGATE" -N "$lan" attach "${p:0:15}" pass >/dev/null
}

# fx_fornaxd_conf [EXTRA [Nodes] LINES]
fx_fornaxd_conf() {
	cat >"$FX_T/fxd.conf" <<EOF
[API]
Listen = $FX_CORE_IP:$FX_PORT
Token = $FX_TOKEN
TLSCert = $FX_T/srv.pem
TLSKey = $FX_T/srv.key
[Store]
Database = $FX_T/fxd.db
[Nodes]
JoinToken = $FX_JOIN
PodCIDR = 10.244.0.0/16
VNI = 100
PortRange = 30000-30999
${1:-}
EOF
}

# fx_fornaxd: start it (log appended to fxd.log), wait for /healthz.
fx_fornaxd() {
	[ -e "$FX_T/fxd.conf" ] || fx_fornaxd_conf
	# fornaxd needs neither bpffs nor the cgroups: `ip netns exec` is fine
	ip netns exec "$(fx_ns core)" "$FXD" -c "$FX_T/fxd.conf" >>"$FX_T/fxd.log" 2>&1 &
	FX_FXD_PID=$!
	echo "$FX_FXD_PID" >>"$FX_T/pids"
	local end=$((SECONDS + 15))
	until fx_curl -f "https://$FX_CORE_IP:$FX_PORT/healthz" >/dev/null; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# fx_node I NAME [CONF LINES]: node namespace xgt$FX_P-nI, cluster address
# 10.77.0.(10+I) (transit on cl0: form 2 frames arrive and leave there),
# public 10.88.I.1 (ingress on nic0), the client's cI at 10.88.I.2; writes
# node-NAME.conf (extra lines go under [Node]: "Role = ingress" makes it an
# ingress host).
fx_node() {
	local i=$1 name=$2 ns cli
	ns=$(fx_ns "n$i") cli=$(fx_ns cli)
	ip netns add "$ns" && ip -n "$ns" link set lo up || return 1
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
	fx_lan_port "$ns" cl0 "10.77.0.$((10 + i))" || return 1
	ip link add "c$i" netns "$cli" type veth peer name nic0 netns "$ns" || return 1
	ip -n "$cli" addr add "10.88.$i.2/24" dev "c$i"
	ip -n "$ns" addr add "10.88.$i.1/24" dev nic0
	ip netns exec "$cli" ethtool -K "c$i" tx off >/dev/null
	ip -n "$cli" link set "c$i" up
	ip -n "$ns" link set nic0 up
	"$XGATE" -N "$ns" host set ip "10.77.0.$((10 + i))" >/dev/null &&
		"$XGATE" -N "$ns" attach nic0 ingress >/dev/null &&
		"$XGATE" -N "$ns" attach cl0 transit >/dev/null &&
		"$XGATE" -N "$cli" attach "c$i" pass >/dev/null || return 1
	cat >"$FX_T/node-$name.conf" <<EOF
[Node]
Name = $name
Ip = 10.77.0.$((10 + i))
PublicIp = 10.88.$i.1
Instance = $ns
Netns = $ns
Cpu = 4
Memory = 2Gi
Pods = ${FX_PODS:-30}
${3:-}
[Core]
URL = wss://$FX_CORE_IP:$FX_PORT
CA = $FX_T/ca.pem
JoinToken = $FX_JOIN
ReconnectMaxSeconds = 1
[Store]
Database = $FX_T/node-$name.db
[Pods]
RunDir = $FX_T/run-$name
NetnsPrefix = xgt$FX_P-p$i-
VethPrefix = x$i$FX_P
CgroupParent = xgt$FX_P/$name
NetScript = $NETSH
Xgate = $XGATE
StartTimeoutSeconds = 20
EOF
}

# fx_nad NAME: start (or restart) that node's nodeagentd; its pid in
# FX_NAD_<NAME with - as _>. Not under `ip netns exec` (it remounts /sys,
# hiding bpffs and the cgroups): nodeagentd enters its Netns itself.
fx_nad() {
	"$NAD" -c "$FX_T/node-$1.conf" >>"$FX_T/nad-$1.log" 2>&1 &
	echo $! >>"$FX_T/pids"
	eval "FX_NAD_${1//-/_}=$!"
}

# fx_curl ARGS...: curl from the lan namespace with the CA and the token.
fx_curl() {
	ip netns exec "$(fx_ns lan)" curl -s --max-time 10 --cacert "$FX_T/ca.pem" \
		-H "Authorization: Bearer $FX_TOKEN" "$@"
}

# fx_bed_down: processes, pods (their cgroups), namespaces, instances.
fx_bed_down() {
	local p d n
	for p in $(cat "$FX_T/pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	# the pods: every process of their cgroups (a frozen task dies only
	# once thawed), then the groups, deepest first
	for d in /sys/fs/cgroup/freezer/xgt$FX_P /sys/fs/cgroup/xgt$FX_P; do
		[ -d "$d" ] || continue
		find "$d" -name freezer.state -exec sh -c 'echo THAWED > "$1"' _ {} \; 2>/dev/null
		find "$d" -name cgroup.freeze -exec sh -c 'echo 0 > "$1"' _ {} \; 2>/dev/null
	done
	for d in /sys/fs/cgroup/{freezer,cpu,memory}/xgt$FX_P /sys/fs/cgroup/xgt$FX_P; do
		[ -d "$d" ] || continue
		for p in $(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
	done
	sleep 0.5
	for d in /sys/fs/cgroup/{freezer,cpu,memory}/xgt$FX_P /sys/fs/cgroup/xgt$FX_P; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	for n in $(ip netns list | awk '{print $1}' | grep "^xgt$FX_P-n[0-9]*$"); do
		"$XGATE" -N "$n" reset >/dev/null 2>&1
	done
	for n in $(ls /sys/fs/bpf/xgate 2>/dev/null | grep "^xgt$FX_P-"); do
		"$XGATE" -n "$n" reset >/dev/null 2>&1
	done
	for n in $(ip netns list | awk '{print $1}' | grep "^xgt$FX_P-"); do ip netns del "$n"; done
}
