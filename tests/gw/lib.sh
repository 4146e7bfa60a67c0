#!/usr/bin/env bash
# What the two-gateway data-plane tests share (dataplane.sh, dp_encrypt.sh):
# gateway hosts a and b (netns $P-a, $P-b) joined by a WAN veth (wan0,
# 10.97.0.1 and .2), the gateway program on both NICs of each (int0:
# 10.99.1.1, 10.99.2.1), a key pair each, gatewayd's config and daemons, and
# the gateway program's maps read with bpftool. Sources ../lib.sh.
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
declare -A PID

# gw_pair_init TAG GATEWAYD XGATE: GWD, XG, P (the netns and instance
# prefix), T (a scratch directory named after TAG), the cleanup on exit;
# skips the test when not root
gw_pair_init() {
	GWD=$(readlink -f "$2")
	XG=$(readlink -f "$3")
	P="xgd$$"
	T=$(mktemp -d "/tmp/xgt-$1-XXXXXX")
	trap gw_cleanup EXIT INT TERM
	[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }
}

# on exit, also on failure; a test that makes more defines gw_cleanup_more;
# with GW_TERM_FIRST set the daemons get a SIGTERM and 0.3 s before the
# SIGKILL (xgate-cryptd then closes its AF_XDP sockets itself)
gw_cleanup() {
	if [ -n "${GW_TERM_FIRST:-}" ]; then
		for p in "${PID[@]}"; do kill "$p" 2>/dev/null; done
		sleep 0.3
	fi
	for p in "${PID[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in a b; do
		"$XG" -n "$P-$n" reset >/dev/null 2>&1
		ip netns del "$P-$n" 2>/dev/null
	done
	declare -F gw_cleanup_more >/dev/null && gw_cleanup_more
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}

# gw_pair_up [crypt]: the two hosts, attached, with their key pairs in
# $T/{a,b}.{key,pub}; crypt: a veth xgc0/xgc1 in each for a crypt interface
gw_pair_up() {
	local i=1 n
	for n in a b; do ip netns add "$P-$n"; done
	ip link add "$P-wa" netns "$P-a" type veth peer name "$P-wb" netns "$P-b"
	ip -n "$P-a" link set "$P-wa" name wan0; ip -n "$P-b" link set "$P-wb" name wan0
	for n in a b; do
		ip -n "$P-$n" link set lo up
		ip -n "$P-$n" link set wan0 up
		ip -n "$P-$n" addr add "10.97.0.$i/24" dev wan0
		ip -n "$P-$n" link add int0 type veth peer name int1
		ip -n "$P-$n" link set int0 up; ip -n "$P-$n" link set int1 up
		ip -n "$P-$n" addr add "10.99.$i.1/24" dev int0
		[ "${1:-}" = crypt ] && ip -n "$P-$n" link add xgc0 type veth peer name xgc1
		"$XG" -N "$P-$n" -n "$P-$n" attach int0 gateway >/dev/null 2>&1 &&
			"$XG" -N "$P-$n" -n "$P-$n" attach wan0 gateway >/dev/null 2>&1 ||
			{ not_ok "attach gateway in $n"; summary; exit 1; }
		"$XG" -N "$P-$n" -n "$P-$n" host set ip "10.99.$i.1" >/dev/null
		i=$((i + 1))
	done
	ok "gateway program attached on both NICs of both gateways"
	gw_keys
}

# gw_keys: a key pair for each host, in $T/{a,b}.{key,pub}
gw_keys() {
	local n
	for n in a b; do "$XG" gw genkey > "$T/$n.key"; "$XG" gw pubkey < "$T/$n.key" > "$T/$n.pub"; done
}

# gw_conf_gateway NAME INDEX SUBNET: gatewayd's [Gateway] section for host
# NAME (a or b, INDEX 1 or 2); RekeyInterval $REKEY (default 3600)
gw_conf_gateway() {
	local n=$1 i=$2
	printf '[Gateway]\nName = gw-%s\nCluster = edge-%s\nPrivateKey = %s\n' "$n" "$n" "$(cat "$T/$n.key")"
	printf 'ListenAddress = 10.97.0.%s:7100\nPublicAddress = 10.97.0.%s:6082\n' "$i" "$i"
	printf 'Instance = %s\nPublicInterface = wan0\nDatabase = %s/%s.db\n' "$P-$n" "$T" "$n"
	printf 'Keepalive = 1\nHoldTime = 3\nGraceTime = 30\nRekeyInterval = %s\nRekeyGrace = 2\nSubnet = %s\n' "${REKEY:-3600}" "$3"
}
# gw_conf_peer NAME: host NAME's [Peer] section, the other host, up to its Endpoint
gw_conf_peer() {
	local o
	o=$([ "$1" = a ] && echo b || echo a)
	printf '\n[Peer]\nName = gw-%s\nPublicKey = %s\nEndpoint = 10.97.0.%s:7100\n' "$o" "$(cat "$T/$o.pub")" "$([ "$o" = a ] && echo 1 || echo 2)"
}

# gatewayd for host NAME from $T/NAME.conf, in its netns, logging to $T/NAME.log
start() { nsenter --net="/run/netns/$P-$1" "$GWD" -c "$T/$1.conf" -s "$T/$1.sock" 2>> "$T/$1.log" & PID[$1]=$!; }
stop() { kill -9 "${PID[$1]}" 2>/dev/null; wait "${PID[$1]}" 2>/dev/null; }
pin() { echo "/sys/fs/bpf/xgate/$P-$1/$2"; }
# value of a map entry as JSON (BTF-formatted), key as bytes
lookup() { bpftool -j map lookup pinned "$(pin "$1" "$2")" key $3 2>/dev/null; }
peer1() { lookup "$1" xg_gw_peers "1 0 0 0"; }
# field EXPR: EXPR of the entry's value v (read on stdin)
field() { /usr/bin/python3 -c "import json,sys; v=json.load(sys.stdin)['formatted']['value']; print(eval(sys.argv[1]))" "$1"; }
# keys_agree FROM TO: FROM's sending key is one of TO's receive keys (the
# test's txkey and rxkeys say what a key is)
keys_agree() {
	local t r; t=$(txkey "$1"); r=$(rxkeys "$2")
	[ -n "$t" ] && [ "$t" != None ] && case "$r" in *"$t"*) return 0;; esac; return 1
}
