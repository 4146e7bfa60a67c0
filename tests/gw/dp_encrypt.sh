#!/usr/bin/env bash
# gatewayd programming type 1 (encrypt mode) into the gateway program's maps:
# two gateway hosts (netns a and b) joined by a WAN veth, the gateway
# program on both NICs, gatewayd in each netns, Mode = encrypt with
# ChaCha20-Poly1305. Checks: without a crypt interface in xg_gw (no
# xgate-cryptd) the session is refused, logged; once one is registered the
# session comes up, the peer entry carries XG_GW_PEER_AEAD, the keys are
# 32-byte keys with a salt and the cipher, a's sending key (key and salt) is
# b's receiving key, a rekey installs a new one and the replaced key is
# zeroed whole (key, salt, cipher) after RekeyGrace; back to Mode = auth on
# both, the flag goes and the keys are SipHash keys again.
# usage: dp_encrypt.sh PATH/TO/gatewayd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
gw_pair_init gwenc "$@"
gw_pair_up crypt

conf() { # conf NAME INDEX SUBNET MODE
	gw_conf_gateway "$1" "$2" "$3"
	gw_conf_peer "$1"
	printf 'Mode = %s\nCipher = chacha20-poly1305\n' "$4"
}
conf a 1 "100 10.1.0.0/16" encrypt > "$T/a.conf"
REKEY=10 conf b 2 "100 10.2.0.0/16" encrypt > "$T/b.conf"
# a key as (id, cipher, salt, key bytes), or None
K="(lambda t: (t['id'], t['cipher'], t['salt'], t['k']) if t['valid'] else None)"
txkey() { peer1 "$1" | field "$K(v['tx'][v['tx_slot']&1])"; }
rxkeys() { peer1 "$1" | field "[$K(r) for r in v['rx'] if r['valid']]"; }
# register a crypt interface in xg_gw as xgate-cryptd does (crypt_ifindex: its last 4 bytes)
set_crypt() { # set_crypt NAME IFINDEX
	local v
	v=$(bpftool -j map lookup pinned "$(pin "$1" xg_gw)" key 0 0 0 0 |
		/usr/bin/python3 -c "import json,sys,struct; b=[int(x,16) for x in json.load(sys.stdin)['value']]; b[12:16]=struct.pack('<I',int(sys.argv[1])); print(' '.join(map(str,b)))" "$2")
	bpftool map update pinned "$(pin "$1" xg_gw)" key 0 0 0 0 value $v
}

start a; start b
wait_for 15 grep -q "session refused: Mode encrypt needs the crypto workers: no xgate-cryptd for instance $P-" "$T/a.log" &&
	ok "no crypt interface: encrypt session refused, logged" || not_ok "no refusal: $(cat "$T/a.log")"
[ "$(peer1 a | field "v['flags']")" = 1 ] && [ "$(txkey a)" = None ] &&
	ok "and nothing written for the peer: not type 1, no key" || not_ok "peer entry: $(peer1 a)"

for n in a b; do
	set_crypt "$n" "$(ip -n "$P-$n" -o link show xgc1 | cut -d: -f1)" || not_ok "could not write xg_gw in $n"
done
wait_for 20 keys_agree a b && ok "crypt interfaces registered: session up, a's sending key is b's receiving key" ||
	not_ok "keys a->b: tx $(txkey a) rx $(rxkeys b); $(tail -3 "$T/a.log")"
wait_for 5 keys_agree b a && ok "and the other direction" || not_ok "keys b->a: tx $(txkey b) rx $(rxkeys a)"
[ "$(peer1 a | field "v['flags']")" = 3 ] && [ "$(peer1 b | field "v['flags']")" = 3 ] &&
	ok "both peer entries: valid and XG_GW_PEER_AEAD" || not_ok "flags: $(peer1 a | field "v['flags']")"
shape() { txkey "$1" | /usr/bin/python3 -c '
import ast,sys; i,c,s,k=ast.literal_eval(sys.stdin.read())
print(c, any(s), any(k[16:]), len(k))'; }
[ "$(shape a)" = "1 True True 32" ] && ok "a type 1 key: ChaCha20-Poly1305, a salt, all 32 bytes" ||
	not_ok "key shape: $(shape a)"
grep -q "peer gw-b: data-plane type 1 (encrypted by the crypto workers)" "$T/a.log" &&
	ok "the type change is logged" || not_ok "no type log line"

# rekey on schedule (gw-b: 10 s): a new key, and the old one zeroed whole after RekeyGrace (2 s)
old=$(txkey b)
changed() { [ "$(txkey b)" != "$old" ]; }
wait_for 16 changed && keys_agree b a && ok "gw-b rekeyed, gw-a holds the new key" ||
	not_ok "rekey: old $old new $(txkey b) rx on a $(rxkeys a)"
txold() { peer1 b | field "(lambda t: (t['valid'], t['cipher'], sum(t['salt']), sum(t['k'])))(v['tx'][(v['tx_slot'] & 1) ^ 1])"; }
wait_for 10 eval '[ "$(txold)" = "(0, 0, 0, 0)" ]' && ok "gw-b's previous sending key zeroed: key, salt and cipher" ||
	not_ok "old tx key on gw-b: $(txold)"

# both back to auth: the flag goes, the keys are SipHash keys (cipher 0, 16 bytes)
stop a; stop b
conf a 1 "100 10.1.0.0/16" auth > "$T/a.conf"
conf b 2 "100 10.2.0.0/16" auth > "$T/b.conf"
start a; start b
auth_keys() { [ "$(peer1 a | field "v['flags']")" = 1 ] && keys_agree a b &&
	[ "$(txkey a | /usr/bin/python3 -c 'import ast,sys; i,c,s,k=ast.literal_eval(sys.stdin.read()); print(c, any(s), any(k[16:]))')" = "0 False False" ]; }
wait_for 20 auth_keys && ok "Mode = auth again: flag cleared, SipHash keys (no salt, 16 bytes)" ||
	not_ok "after auth: flags $(peer1 a | field "v['flags']") tx $(txkey a)"
[ "$(rxkeys a | /usr/bin/python3 -c 'import ast,sys; print(all(c == 0 for i,c,s,k in ast.literal_eval(sys.stdin.read())))')" = True ] &&
	ok "no type 1 receive key left over" || not_ok "rx keys on a: $(rxkeys a)"
summary
