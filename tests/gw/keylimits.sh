#!/usr/bin/env bash
# A data-plane key's limits as gatewayd writes and follows them
# (proto/gatewayd.md, "Key limits"): two gateway hosts (netns a and b), the
# gateway program on both NICs of each, gatewayd in each, auth mode (the
# limits are the same for type 1; what the workers do with them is
# unit_cryptd_keys, the program's the gateway/key_* fixtures).
# Checks: every key installed carries its RejectAfterTime (expires_ns) and
# the sending key its RejectAfterMessages (ctr_max, above the counter
# reserved when it took over); a sending key that has carried
# RekeyAfterMessages counters is replaced at once, long before
# RekeyInterval; the receiver bounds the new key's counters from its first
# use; the limits stay in the maps across a kill -9 of gatewayd.
# usage: keylimits.sh PATH/TO/gatewayd PATH/TO/xgate
set -u
source "$(dirname "$0")/lib.sh"
gw_pair_init gwkl "$1" "$2"
gw_pair_up

REKEY_MSGS=1000
REJECT_MSGS=$((1 << 40))
conf() { # conf NAME INDEX SUBNET
	gw_conf_gateway "$1" "$2" "$3"
	# lower than WireGuard's, to be reached in a test
	printf 'RekeyAfterMessages = %s\nRejectAfterMessages = 2^40\nRejectAfterTime = 3700\n' "$REKEY_MSGS"
	gw_conf_peer "$1"
	printf 'Mode = auth\n'
}
conf a 1 "100 10.1.0.0/16" > "$T/a.conf"
conf b 2 "100 10.2.0.0/16" > "$T/b.conf"
TX="v['tx'][v['tx_slot']&1]"
txid() { peer1 "$1" | field "$TX['id'] if $TX['valid'] else None"; }
txlim() { peer1 "$1" | field "($TX['ctr_max'], $TX['expires_ns'])"; }
rxlim() { peer1 "$1" | field "[(r['id'], r['ctr_max'], r['expires_ns']) for r in v['rx'] if r['valid']]"; }
has_rx() { rxlim "$2" | grep -q "($1,"; } # has_rx ID GW
txctr() { lookup a xg_gw_txctr "1 0 0 0" | field "v['last']"; }
set_txctr() { # the counters a's CPUs would have reserved after that many packets
	bpftool map update pinned "$(pin a xg_gw_txctr)" key 1 0 0 0 value \
		$(/usr/bin/python3 -c "import sys; print(' '.join(str(b) for b in int(sys.argv[1]).to_bytes(8, 'little')))" "$1")
}
mono_ns() { /usr/bin/python3 -c "import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))"; }
up() { local t; t=$(txid a); [ -n "$t" ] && [ "$t" != None ] && has_rx "$t" b; }

start a; start b
wait_for 15 up && ok "gw-a sends with key $(txid a), gw-b holds it" || { not_ok "keys a->b: tx $(txid a) rx $(rxlim b)"; summary; exit 1; }

# RejectAfterTime and RejectAfterMessages in the entries
now=$(mono_ns)
lim=$(txlim a)
/usr/bin/python3 -c "import sys; m, e = eval(sys.argv[1]); now = int(sys.argv[2])
sys.exit(0 if $REJECT_MSGS <= m <= $REJECT_MSGS + int(sys.argv[3]) + 64 and now + 3600e9 < e <= now + 3700e9 else 1)" \
	"$lim" "$now" "$(txctr)" &&
	ok "sending key: ctr_max = counter at the switch + RejectAfterMessages, expires_ns = then + RejectAfterTime ($lim)" ||
	not_ok "sending key limits $lim (now $now, txctr $(txctr))"
/usr/bin/python3 -c "import sys; now = int(sys.argv[2])
sys.exit(0 if all(now + 3600e9 < e <= now + 3700e9 for _, _, e in eval(sys.argv[1])) else 1)" "$(rxlim b)" "$now" &&
	ok "receive keys: expires_ns = installed + RejectAfterTime" || not_ok "receive key limits $(rxlim b) (now $now)"

# RekeyAfterMessages: a's key has carried the limit (as its reserved counter says): a new key at
# once, not after RekeyInterval (an hour)
old=$(txid a)
base=$(txctr)
set_txctr $((base + REKEY_MSGS - 1))
sleep 1.5
[ "$(txid a)" = "$old" ] && ok "one counter short of RekeyAfterMessages: key $old stays" ||
	not_ok "rekeyed early: $old -> $(txid a)"
set_txctr $((base + REKEY_MSGS))
changed() { [ "$(txid a)" != "$old" ] && has_rx "$(txid a)" b; }
wait_for 5 changed && ok "RekeyAfterMessages reached: gw-a rekeyed ($old -> $(txid a)) and gw-b holds the new key" ||
	not_ok "no rekey after $REKEY_MSGS counters: tx $(txid a), rx on b $(rxlim b)"
grep -q "peer gw-b: $REKEY_MSGS packets sent with data key $old: rekeying" "$T/a.log" &&
	ok "the log says why" || not_ok "log: $(grep -i rekey "$T/a.log" | tail -2)"
m=$(txlim a | /usr/bin/python3 -c "import sys; print(eval(sys.stdin.read())[0])")
[ "$m" -ge $((base + REKEY_MSGS + REJECT_MSGS)) ] && ok "the new key may carry RejectAfterMessages from there ($m)" ||
	not_ok "new key's ctr_max $m, counter was $((base + REKEY_MSGS))"
sleep 2
[ "$(grep -c "packets sent with data key" "$T/a.log")" = 1 ] && ok "one rekey for one limit reached" ||
	not_ok "rekeys: $(grep -c "packets sent with data key" "$T/a.log")"

# the receiver bounds the new key from its first use: gw-b's window of it shows counter 5000
nid=$(txid a)
nslot=$(peer1 b | field "[i for i in (0, 1) if v['rx'][i]['valid'] and v['rx'][i]['id'] == $nid][0]")
rx_max() { peer1 b | field "v['rx'][$nslot]['ctr_max']"; }
[ "$(rx_max)" = 0 ] && ok "gw-b: the new receive key unbounded before its first use" || not_ok "rx ctr_max before use: $(rx_max)"
val="136 19 0 0 0 0 0 0$(printf ' 0%.0s' $(seq 128))" # top = 5000
bpftool map update pinned "$(pin b xg_gw_replay)" key $((2 + nslot)) 0 0 0 value $val ||
	not_ok "could not write the replay window"
bounded() { [ "$(rx_max)" = $((5000 + REJECT_MSGS)) ]; }
wait_for 5 bounded && ok "then bounded at its first counter + RejectAfterMessages" || not_ok "rx ctr_max $(rx_max)"

# kill -9: the limits stay with the keys in the maps
before=$(txlim a)
kill -9 "${PID[a]}"; wait "${PID[a]}" 2>/dev/null
[ "$(txlim a)" = "$before" ] && ok "gw-a killed: its key keeps its limits in the map" || not_ok "limits after kill: $(txlim a)"
summary
