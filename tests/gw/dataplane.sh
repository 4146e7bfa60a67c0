#!/usr/bin/env bash
# gatewayd programming the gateway program's maps: two gateway hosts (netns
# a and b) joined by a WAN veth, the gateway program on both NICs of each,
# gatewayd in each netns. Checks: routes and peer addresses in the maps, the
# two sides derive the same data-plane keys (a's sending key = b's receiving
# key), remote subnets marked in a local divider instance, a kill -9 leaves
# every map in place, a restart installs fresh keys, rekeying on schedule.
# usage: dataplane.sh PATH/TO/gatewayd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
gw_cleanup_more() {
	"$XG" -n "$P-adiv" reset >/dev/null 2>&1
	rm -rf "/sys/fs/bpf/xgate/$P-old"
}
gw_pair_init gwdp "$@"
gw_pair_up
# a divider instance next to gw-a (as on the same machine): VPC 100 exists there
"$XG" -n "$P-adiv" vpc add 100 dividers 10.99.1.9 >/dev/null || not_ok "divider instance"
# and a remote subnet the operator added there by hand, before gatewayd starts
"$XG" -n "$P-adiv" subnet add 100 10.55.0.0/16 remote >/dev/null || not_ok "operator's remote subnet"
operators() { "$XG" -n "$P-adiv" subnet ls -o json | grep -q '"10.55.0.0/16"'; }

conf() { # conf NAME INDEX SUBNET
	gw_conf_gateway "$@"
	[ "$1" = a ] && printf 'Divider = %s\n' "$P-adiv"
	gw_conf_peer "$1"
	printf 'Mode = auth\n' # SipHash keys here; type 1 keys: dp_encrypt.sh
}
conf a 1 "100 10.1.0.0/16" > "$T/a.conf"
REKEY=10 conf b 2 "100 10.2.0.0/16" > "$T/b.conf"
field_id() { /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['id'])"; }
# the sending key of $1 toward its peer, and the receive key of $2 with that id
txkey() { peer1 "$1" | field "(lambda t: (t['id'], t['k']))(v['tx'][v['tx_slot']&1]) if v['tx'][v['tx_slot']&1]['valid'] else None"; }
rxkeys() { peer1 "$1" | field "[(r['id'], r['k']) for r in v['rx'] if r['valid']]"; }

start a; start b
wait_for 15 keys_agree a b && ok "gw-a's sending key is gw-b's receiving key" || not_ok "keys a->b: tx $(txkey a) rx $(rxkeys b)"
wait_for 5 keys_agree b a && ok "and the other direction" || not_ok "keys b->a: tx $(txkey b) rx $(rxkeys a)"
route_peer() { lookup "$1" xg_gw_route "$2" | field "v['peer']"; }
# LPM key: prefixlen u32 = 48 (32 + /16), vni_be 100, ip 10.2.0.0
[ "$(route_peer a "48 0 0 0 0 0 0 100 10 2 0 0")" = 1 ] && ok "gw-a: (100, 10.2.0.0/16) -> peer 1 in xg_gw_route" ||
	not_ok "gw-a route map: $(lookup a xg_gw_route "48 0 0 0 0 0 0 100 10 2 0 0")"
[ "$(route_peer b "48 0 0 0 0 0 0 100 10 1 0 0")" = 1 ] && ok "gw-b: (100, 10.1.0.0/16) -> peer 1" || not_ok "gw-b route map"
[ "$(lookup a xg_gw_paddr "10 97 0 2" | field "v")" = 1 ] && ok "gw-b's public address 10.97.0.2 -> peer 1" ||
	not_ok "paddr on gw-a: $(bpftool -j map dump pinned "$(pin a xg_gw_paddr)")"
[ "$(lookup a xg_gw "0 0 0 0" | field "v['pub_ifindex'] > 0 and v['port_be'] == 0xc217")" = True ] &&
	ok "xg_gw: public NIC and tunnel port set" || not_ok "xg_gw: $(lookup a xg_gw "0 0 0 0")"
"$XG" -n "$P-adiv" subnet ls -o json | grep -q '"10.2.0.0/16"' && "$XG" -n "$P-adiv" subnet ls -o json | grep -q remote &&
	ok "divider instance: 10.2.0.0/16 marked remote" || not_ok "divider marks: $("$XG" -n "$P-adiv" subnet ls 2>&1)"
operators && ok "divider instance: the operator's remote 10.55.0.0/16 left alone" ||
	not_ok "gatewayd removed the operator's remote subnet: $("$XG" -n "$P-adiv" subnet ls 2>&1)"
grep -q "divider $P-adiv: 1 remote subnet entry not written by this gatewayd" "$T/a.log" &&
	ok "and the log says so" || not_ok "no log line about the operator's entry"
"$XG" gw peers --socket "$T/a.sock" -o json | grep -q '"key_age_s": [0-9]' && ok "xgate gw peers shows the key in use" ||
	not_ok "gw peers: $("$XG" gw peers --socket "$T/a.sock" -o json)"

# rekey on schedule (gw-b: RekeyInterval 10 s): new id, still agreed
old=$(txkey b)
changed() { [ "$(txkey b)" != "$old" ]; }
wait_for 16 changed
new=$(txkey b)
[ "$new" != "$old" ] && keys_agree b a && ok "gw-b rekeyed ($old -> $new) and gw-a holds the new key" ||
	not_ok "rekey: old $old new $new rx on a $(rxkeys a)"
[ "$(rxkeys a | /usr/bin/python3 -c 'import sys,ast; print(len(ast.literal_eval(sys.stdin.read())))')" = 2 ] &&
	ok "gw-a keeps the previous key too (in-flight packets)" || not_ok "gw-a rx keys: $(rxkeys a)"

# replaced keys leave the maps after RekeyGrace (2 s): gw-b's previous sending key at once,
# gw-a's older receive key once gw-b is seen using the newer one (its window moves)
txold() { peer1 "$1" | field "(lambda t: (t['valid'], sum(t['k'])))(v['tx'][(v['tx_slot'] & 1) ^ 1])"; }
tx_wiped() { [ "$(txold b)" = "(0, 0)" ]; }
wait_for 10 tx_wiped && ok "gw-b's previous sending key zeroed in the map" || not_ok "old tx key on gw-b: $(txold b)"
nid=$(txkey b | /usr/bin/python3 -c 'import sys,ast; print(ast.literal_eval(sys.stdin.read())[0])')
nslot=$(peer1 a | field "[i for i in (0, 1) if v['rx'][i]['valid'] and v['rx'][i]['id'] == $nid][0]")
rxslot() { peer1 a | field "(lambda r: (r['valid'], sum(r['k'])))(v['rx'][$1])"; }
sleep 3
[ "$(rxslot $((nslot ^ 1)) | cut -c2)" = 1 ] && ok "gw-a's older receive key stays while the newer one is unused" ||
	not_ok "older rx key on gw-a went early: $(rxslot $((nslot ^ 1)))"
# the data path's replay window of the newer key: top = 5, as after gw-b's first packets with it
val="5 0 0 0 0 0 0 0$(printf ' 0%.0s' $(seq 128))"
bpftool map update pinned "$(pin a xg_gw_replay)" key $((2 + nslot)) 0 0 0 value $val ||
	not_ok "could not write the replay window"
rx_wiped() { [ "$(rxslot $((nslot ^ 1)))" = "(0, 0)" ]; }
wait_for 10 rx_wiped && [ "$(rxslot "$nslot" | cut -c2)" = 1 ] &&
	ok "gw-a's older receive key zeroed once the newer one was used; the newer stays" ||
	not_ok "rx keys on gw-a: older $(rxslot $((nslot ^ 1))) newer $(rxslot "$nslot")"

# kill -9: nothing is withdrawn from the maps; a restart installs a new key
before=$(txkey a)
kill -9 "${PID[a]}"; wait "${PID[a]}" 2>/dev/null
sleep 1
[ "$(route_peer a "48 0 0 0 0 0 0 100 10 2 0 0")" = 1 ] && [ "$(txkey a)" = "$before" ] &&
	ok "gw-a killed: its route and keys stay in the maps" || not_ok "maps changed after kill -9"
start a
fresh_key() { local t; t=$(txkey a); [ -n "$t" ] && [ "$t" != "$before" ] && keys_agree a b; }
wait_for 15 fresh_key && ok "restarted gw-a: new session key, agreed with gw-b" ||
	not_ok "after restart: tx $(txkey a) (before $before) rx on b $(rxkeys b)"
grep -q "data-plane entry 1 initialised" "$T/a.log" && [ "$(grep -c 'initialised' "$T/a.log")" = 1 ] &&
	ok "restart kept the peer entry (initialised once)" || not_ok "peer entry re-initialised on restart"

# the subnet leaves gw-b: gone from gw-a's map and from the divider
"$XG" gw subnet del 100 10.2.0.0/16 --socket "$T/b.sock" >/dev/null
gone() { ! bpftool map lookup pinned "$(pin a xg_gw_route)" key 48 0 0 0 0 0 0 100 10 2 0 0 >/dev/null 2>&1; }
wait_for 5 gone &&
	ok "withdrawn: removed from gw-a's xg_gw_route" || not_ok "route still in the map"
! "$XG" -n "$P-adiv" subnet ls -o json | grep -q '"10.2.0.0/16"' && ok "and unmarked on the divider" || not_ok "divider mark left"
operators && ok "the operator's remote subnet still there after a restart and a withdrawal" ||
	not_ok "operator's remote subnet gone"

# a bad Instance is a clear error
sed "s/^Instance = .*/Instance = $P-nope/" "$T/a.conf" > "$T/bad.conf"
expect_rc 1 "gatewayd refuses an instance without the gateway program" nsenter --net="/run/netns/$P-a" "$GWD" -c "$T/bad.conf" -s "$T/bad.sock"
expect_err "attach the gateway program first" "the error says what to do"
# maps of another layout (an older xgate): refused, not written with the wrong size
mkdir -p "/sys/fs/bpf/xgate/$P-old"
for m in /sys/fs/bpf/xgate/"$P-a"/xg_*; do # maps only (the instance also holds a netns mark)
	n=$(basename "$m")
	if [ "$n" = xg_gw_replay ]; then
		bpftool map create "/sys/fs/bpf/xgate/$P-old/$n" type array key 4 value 48 entries 512 name "$n"
	else
		bpftool map pin id "$(bpftool -j map show pinned "$m" | field_id)" "/sys/fs/bpf/xgate/$P-old/$n"
	fi
done
sed "s/^Instance = .*/Instance = $P-old/" "$T/a.conf" > "$T/old.conf"
expect_rc 1 "gatewayd refuses maps of another layout" nsenter --net="/run/netns/$P-a" "$GWD" -c "$T/old.conf" -s "$T/old.sock"
expect_err "from another xgate version" "and says why"
rm -rf "/sys/fs/bpf/xgate/$P-old"
summary
