#!/usr/bin/env bash
# A gateway whose public and internal NIC are one device, in encrypt mode:
# netns a is the gateway (eth0 carries its public address 10.97.0.1 and its
# cluster address 10.99.1.1; the gateway program on eth0 and on the crypt
# veth xgc1; xgate-cryptd on eth0 and xgc0; gatewayd), netns b the other
# end of eth0: its peer gateway's control plane (gatewayd without a data
# plane, 10.97.0.2) and, on the same link, its cluster's bouncer 10.99.1.9.
# Frames are sent and read in b by tests/gw/one_nic.py. Checks: the workers
# start on one NIC (one socket per queue, in both halves of xg_gw_xsk); a
# divider's frame for the peer leaves sealed with the key gatewayd agreed;
# a peer's frame is opened and handed to the cluster; both counted by the
# workers, which run SCHED_FIFO by default. Then the key limits with gatewayd gone (proto/gatewayd.md, "Key
# limits"): restarted with RejectAfterTime 11 s and killed again, its keys
# stop 11 s later: neither way carries a frame any more, each counted as
# drop_gw_key_expired. (The workers check too: with the program's check
# removed, nothing leaves either, but the count is theirs.)
# With more arguments, they are xgate-cryptd's options (ctest gw_one_nic_busy:
# preferred busy polling, a nice value, CPU 0): the same checks pass, the
# workers run on the normal scheduler at that nice value, and the NIC's NAPI
# knobs are set while the workers run and restored when they stop.
# usage: one_nic.sh PATH/TO/gatewayd PATH/TO/xgate PATH/TO/xgate-cryptd [CRYPTD OPTION...]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CRYPTD=$(readlink -f "$3")
source "$HERE/lib.sh"
GW_TERM_FIRST=1
gw_pair_init gw1nic "$1" "$2"
shift 3
CRYPTD_OPTS=("$@")
refused() { # refused MESSAGE OPTION...: exit status 2 and a message quoting the bad value
	local out rc
	out=$("$CRYPTD" -n "$P-a" -c xgc0 "${@:2}" 2>&1); rc=$?
	[ $rc = 2 ] && grep -qF -- "$1" <<<"$out" && ok "xgate-cryptd ${*:2}: refused ($1)" ||
		not_ok "xgate-cryptd ${*:2}: exit $rc, $(head -1 <<<"$out")"
}
refused "--rt-priority '100': expected a priority from 0 to 99" --rt-priority 100
refused "--nice -5 with --rt-priority 3: a nice value is for the normal scheduler" --rt-priority 3 --nice -5
for n in a b; do ip netns add "$P-$n"; ip -n "$P-$n" link set lo up; done
ip link add "$P-ea" netns "$P-a" type veth peer name "$P-eb" netns "$P-b"
ip -n "$P-a" link set "$P-ea" name eth0; ip -n "$P-b" link set "$P-eb" name eth0
for n in a b; do ip -n "$P-$n" link set eth0 up; done
ip -n "$P-a" addr add 10.97.0.1/24 dev eth0; ip -n "$P-a" addr add 10.99.1.1/24 dev eth0
ip -n "$P-b" addr add 10.97.0.2/24 dev eth0; ip -n "$P-b" addr add 10.99.1.9/24 dev eth0
mac() { ip -n "$P-$1" -j link show eth0 | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[0]['address'])"; }
AMAC=$(mac a); BMAC=$(mac b)
for ip in 10.97.0.2 10.99.1.9; do ip -n "$P-a" neigh replace "$ip" lladdr "$BMAC" dev eth0 nud permanent; done
ip -n "$P-a" link add xgc0 type veth peer name xgc1
ip -n "$P-a" link set xgc0 up; ip -n "$P-a" link set xgc1 up
xga() { "$XG" -N "$P-a" -n "$P-a" "$@"; }
xga attach eth0 gateway >/dev/null && xga attach xgc1 gateway >/dev/null &&
	xga host set ip 10.99.1.1 >/dev/null && xga vpc add 100 dividers 10.99.1.9 >/dev/null &&
	xga subnet add 100 10.1.0.0/16 bouncers 10.99.1.9 >/dev/null ||
	{ not_ok "gateway instance on one NIC"; summary; exit 1; }
# frames the gateway redirects out of eth0 reach b only if b's end runs XDP too (veth)
"$XG" -N "$P-b" -n "$P-b" attach eth0 pass >/dev/null || { not_ok "pass program in b"; summary; exit 1; }
# gw-b's gatewayd needs a data plane to derive and announce keys: a gateway program on a
# veth of its own, off the path (b's frames are python's), with a crypt interface
# registered as xgate-cryptd would (crypt_ifindex: xg_gw's last 4 bytes)
ip -n "$P-b" link add dp0 type veth peer name dp1
ip -n "$P-b" link set dp0 up; ip -n "$P-b" link set dp1 up
"$XG" -N "$P-b" -n "$P-b" attach dp0 gateway >/dev/null 2>&1 || { not_ok "gw-b's data plane"; summary; exit 1; }
v=$(bpftool -j map lookup pinned "/sys/fs/bpf/xgate/$P-b/xg_gw" key 0 0 0 0 |
	/usr/bin/python3 -c "import json,sys,struct; b=[int(x,16) for x in json.load(sys.stdin)['value']]; b[12:16]=struct.pack('<I',int(sys.argv[1])); print(' '.join(map(str,b)))" \
		"$(ip -n "$P-b" -j link show dp1 | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[0]['ifindex'])")")
bpftool map update pinned "/sys/fs/bpf/xgate/$P-b/xg_gw" key 0 0 0 0 value $v

gw_keys
conf() { # conf NAME INDEX SUBNET [DATAPLANE LINES]
	local n=$1 i=$2
	printf '[Gateway]\nName = gw-%s\nCluster = edge-%s\nPrivateKey = %s\n' "$n" "$n" "$(cat "$T/$n.key")"
	printf 'ListenAddress = 10.97.0.%s:7100\nPublicAddress = 10.97.0.%s:6082\n' "$i" "$i"
	printf 'Database = %s/%s.db\nKeepalive = 1\nHoldTime = 3\nSubnet = %s\n%s' "$T" "$n" "$3" "${4:-}"
	gw_conf_peer "$n"
	printf 'Mode = encrypt\nCipher = chacha20-poly1305\n'
}
conf a 1 "100 10.1.0.0/16" "$(printf 'Instance = %s\nPublicInterface = eth0\n' "$P-a")" > "$T/a.conf"
conf b 2 "100 10.2.0.0/16" "$(printf 'Instance = %s\nPublicInterface = dp0\n' "$P-b")" > "$T/b.conf"
knobs() { ip netns exec "$P-a" cat /sys/class/net/eth0/napi_defer_hard_irqs /sys/class/net/eth0/gro_flush_timeout | tr '\n' ' '; }
knobs0=$(knobs)
nsenter --net="/run/netns/$P-a" "$CRYPTD" -n "$P-a" -c xgc0 -s 1 "${CRYPTD_OPTS[@]}" 2> "$T/cryptd.log" & PID[c]=$!
for n in a b; do
	nsenter --net="/run/netns/$P-$n" "$GWD" -c "$T/$n.conf" -s "$T/$n.sock" 2>> "$T/$n.log" & PID[$n]=$!
done

wait_for 10 grep -q "workers on eth0 (1 queues, copy mode), the public and the internal NIC" "$T/cryptd.log" &&
	ok "xgate-cryptd runs on one NIC" || { not_ok "cryptd: $(cat "$T/cryptd.log")"; summary; exit 1; }
sched() { awk '{print $41, $40}' "/proc/${PID[c]}/stat"; } # policy, real-time priority
if [ ${#CRYPTD_OPTS[@]} -gt 0 ]; then
	wait_for 5 grep -q "preferred busy polling: 20 us, budget 64, napi_defer_hard_irqs 2, gro_flush_timeout 500000 ns on eth0$" "$T/cryptd.log" &&
		ok "busy polling on (${CRYPTD_OPTS[*]})" || not_ok "no busy polling line: $(cat "$T/cryptd.log")"
	[ "$(knobs)" = "2 500000 " ] && ok "eth0's napi_defer_hard_irqs and gro_flush_timeout set (were $knobs0)" ||
		not_ok "eth0's knobs: $(knobs)"
	[ "$(awk '{print $19}' "/proc/${PID[c]}/stat")" = -5 ] && ok "the workers run at nice -5" ||
		not_ok "nice: $(awk '{print $19}' "/proc/${PID[c]}/stat")"
	[ "$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/${PID[c]}/status")" = 0 ] && ok "and on CPU 0 only" ||
		not_ok "CPUs: $(grep Cpus_allowed_list "/proc/${PID[c]}/status")"
	# a nice value is for the normal scheduler (policy 0)
	[ "$(sched)" = "0 0" ] && ok "--nice leaves them on the normal scheduler" || not_ok "policy, priority: $(sched)"
else
	[ "$(sched)" = "1 1" ] && ok "by default the workers run SCHED_FIFO, priority 1" || not_ok "policy, priority: $(sched)"
fi
peer1() { bpftool -j map lookup pinned "/sys/fs/bpf/xgate/$P-a/xg_gw_peers" key 1 0 0 0 2>/dev/null; }
K="import json,sys; v=json.load(sys.stdin)['formatted']['value']"
key() { # key tx|rx [expiry]: id key_hex salt_hex of a's sending key, or of the receive key
	# that stops first; with expiry, when it stops (expires_ns)
	peer1 | /usr/bin/python3 -c "$K
ks = [v['tx'][v['tx_slot'] & 1]] if sys.argv[1] == 'tx' else v['rx']
k = sorted((k for k in ks if k['valid'] and k['cipher'] == 1), key=lambda k: k['expires_ns'])
if k and sys.argv[2:]:
    print(k[0]['expires_ns'])
elif k:
    print(k[0]['id'], bytes(k[0]['k']).hex(), bytes(k[0]['salt']).hex())" "$@"
}
keyed() { [ -n "$(key tx)" ] && [ -n "$(key rx)" ]; }
wait_for 15 keyed && ok "encrypt session up: type 1 keys both ways in gw-a's maps" ||
	{ not_ok "keys: tx $(key tx 2>&1), rx $(key rx 2>&1); $(tail -3 "$T/a.log")"; summary; exit 1; }
route() { bpftool map lookup pinned "/sys/fs/bpf/xgate/$P-a/xg_gw_route" key 48 0 0 0 0 0 0 100 10 2 0 0 >/dev/null 2>&1; }
wait_for 5 route || not_ok "gw-b's subnet not in gw-a's xg_gw_route"

b_py() { ip netns exec "$P-b" /usr/bin/python3 "$HERE/one_nic.py" "$@"; }
# shellcheck disable=SC2046
out=$(b_py seal eth0 "$AMAC" $(key tx) 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ $rc = 0 ] && ok "sealed: a divider's frame for gw-b left the one NIC as type 1, opened with the agreed key" ||
	not_ok "seal path"
# shellcheck disable=SC2046
out=$(b_py open eth0 "$AMAC" $(key rx) 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ $rc = 0 ] && ok "opened: gw-b's frame went to the cluster as Geneve, in clear only there" ||
	not_ok "open path: $(xga stats 2>&1 | grep -i 'gw\|drop' | head -8)"
counted() { grep -Eq "opened [1-9][0-9]*, sealed [1-9]" "$T/cryptd.log"; }
wait_for 4 counted && ok "the workers counted both ways ($(grep -Eo 'opened [0-9]+, sealed [0-9]+' "$T/cryptd.log" | tail -1))" ||
	not_ok "cryptd counters: $(tail -2 "$T/cryptd.log")"

# gatewayd gone for longer than RejectAfterTime (here 11 s): its last keys stop, both ways,
# dropped and counted, and nothing leaves in clear
kill -9 "${PID[a]}"; wait "${PID[a]}" 2>/dev/null
sed -i 's/^Keepalive = 1$/Keepalive = 1\nRekeyInterval = 10\nRejectAfterTime = 11/' "$T/a.conf"
before_tx=$(key tx)
nsenter --net="/run/netns/$P-a" "$GWD" -c "$T/a.conf" -s "$T/a.sock" 2>> "$T/a.log" & PID[a]=$!
rekeyed() { local t; t=$(key tx); [ -n "$t" ] && [ "$t" != "$before_tx" ]; }
wait_for 15 rekeyed || not_ok "gw-a restarted with RejectAfterTime 11 s: no new key"
kill -9 "${PID[a]}" "${PID[b]}"; wait "${PID[a]}" "${PID[b]}" 2>/dev/null
tx=$(key tx); rx=$(key rx)
expired=$(( $(key tx expiry) > $(key rx expiry) ? $(key tx expiry) : $(key rx expiry) ))
[ "$expired" -gt 0 ] || not_ok "no expiry in the keys"
until [ "$(/usr/bin/python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')" -gt $((expired + 100000000)) ]; do
	sleep 0.5
done
counter() { xga stats -o json | /usr/bin/python3 -c '
import json,sys
print(sum(v.get(sys.argv[1],{}).get("packets",0) for v in (x["counters"] for x in json.load(sys.stdin))))' "$1"; }
c0=$(counter drop_gw_key_expired)
# shellcheck disable=SC2086
out=$(b_py seal eth0 "$AMAC" $tx none 2>&1) && ok "keys past RejectAfterTime, gatewayd gone: nothing sealed leaves" ||
	not_ok "seal with an expired key: $out"
# shellcheck disable=SC2086
out=$(b_py open eth0 "$AMAC" $rx none 2>&1) && ok "and nothing from the peer is opened into the cluster" ||
	not_ok "open with an expired key: $out"
c1=$(counter drop_gw_key_expired)
[ "$c1" -ge $((c0 + 2)) ] && ok "both frames counted as drop_gw_key_expired ($c0 -> $c1)" ||
	not_ok "drop_gw_key_expired $c0 -> $c1: $(xga stats 2>&1 | grep -i drop | head -5)"
if [ ${#CRYPTD_OPTS[@]} -gt 0 ]; then
	kill "${PID[c]}"; wait "${PID[c]}" 2>/dev/null
	[ "$(knobs)" = "$knobs0" ] && ok "the workers stopped: eth0's knobs restored ($knobs0)" ||
		not_ok "eth0's knobs after the workers: $(knobs), were $knobs0"
fi
summary
