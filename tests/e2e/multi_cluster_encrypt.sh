#!/usr/bin/env bash
# End to end on the demo's topology (deploy/lib/mtopo.sh) in encrypt mode:
# three clusters, every gateway with xgate-cryptd's AF_XDP workers and the
# crypt veth, three gatewayds agreeing Mode = encrypt. Cross-cluster ping
# and TCP; a tshark capture on the WAN router holds type 1 packets and none
# of a known inner payload or the pods' addresses; kill -9 of a gatewayd in
# the middle of a TCP transfer (the workers keep the keys from the maps);
# an attacker on the WAN replaying, tampering with and spoofing type 1
# packets; the workers stopped: dropped and counted, never sent in clear,
# and back when they are; a peer configured for auth is refused.
# usage: multi_cluster_encrypt.sh PATH/TO/xgate PATH/TO/gatewayd PATH/TO/xgate-cryptd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
MT_MODE=encrypt
source "$HERE/lib_mtopo.sh" "$@"
mc_up "three clusters up, crypt veths on the gateways" \
	"mesh up in encrypt mode: every gateway has both peers with data-plane keys"
grep -q "session up (.*mode encrypt, " "$MT_RUN/gw1.log" && ok "gw1's sessions agreed encrypt" ||
	not_ok "no encrypt session in gw1's log: $(tail -n 3 "$MT_RUN/gw1.log")"

for pair in "1a 2b" "2a 3b" "3a 1b" "2b 1a"; do
	set -- $pair
	podx "$1" ping -c2 -i0.2 -W1 "${POD_IP[$2]}" >/dev/null 2>&1 && ok "ping $1 -> $2 across the encrypted tunnel" ||
		not_ok "ping $1 -> $2"
done

# ---- what the WAN sees ---------------------------------------------------------
# A known payload (ping's pattern) and a TCP transfer, captured on the router's
# side of gw1's link. Type 1 packets must be there; the pattern and the pods'
# addresses (inner headers) must not.
PATTERN=78676174652d636c6561722d74787421 # "xgate-clear-txt!"
nsm wan tshark -q -i r1 -w "$MT_RUN/wan.pcapng" -a duration:5 >/dev/null 2>&1 & cap=$!
sleep 1.5
podx 1a ping -c5 -i0.1 -W1 -s 200 -p "$PATTERN" "${POD_IP[2b]}" >/dev/null 2>&1
intervals() { # bytes/retransmits of each second
	/usr/bin/python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join("%d/%s" % (i["sum"]["bytes"], i["sum"].get("retransmits")) for i in d["intervals"]))' "$MT_RUN/iperf-$1.json" 2>/dev/null
}
tcp 1b 3a 2 || not_ok "iperf3 during the capture"
wait "$cap"
scan() { # scan PCAP: type-1 packets, pattern hits, inner-address hits
	/usr/bin/python3 - "$1" "$PATTERN" "${POD_IP[1a]}" "${POD_IP[2b]}" <<'EOF'
import socket, struct, sys
data = open(sys.argv[1], "rb").read()
pat = bytes.fromhex(sys.argv[2])
addrs = socket.inet_aton(sys.argv[3]) + socket.inet_aton(sys.argv[4])  # src, dst as in an IPv4 header
# pcapng enhanced packet blocks: type 6; the frame starts 28 bytes in
t1 = pos = 0
while pos + 12 <= len(data):
    btype, blen = struct.unpack_from("<II", data, pos)
    if blen < 12:
        break
    if btype == 6:
        caplen = struct.unpack_from("<I", data, pos + 20)[0]
        f = data[pos + 28: pos + 28 + caplen]
        if len(f) > 44 and f[23] == 17 and struct.unpack_from("!H", f, 36)[0] == 6082 and f[43] == 1:
            t1 += 1
    pos += blen
print(t1, data.count(pat[:8]), data.count(addrs))
EOF
}
read -r t1 phits ahits <<<"$(scan "$MT_RUN/wan.pcapng")"
[ "${t1:-0}" -gt 100 ] && ok "the WAN capture holds type 1 tunnel packets ($t1)" || not_ok "type 1 packets captured: ${t1:-0}"
[ "${phits:-1}" = 0 ] && ok "none holds the ping's known payload" || not_ok "known payload on the WAN: ${phits:-?} hits"
[ "${ahits:-1}" = 0 ] && ok "none holds the pods' addresses (inner headers)" || not_ok "inner addresses on the WAN: ${ahits:-?} hits"
read -r bytes _ <<<"$(iperf_sum 1b)"
[ "${bytes:-0}" -gt 1000000 ] && ok "TCP 1b -> 3a across the encrypted tunnel: $bytes bytes" || not_ok "TCP 1b -> 3a: ${bytes:-0} bytes"

# ---- kill -9 gatewayd during a TCP transfer: the workers keep forwarding -------
drops() { # drops CLUSTER: the gateway's drop counters that are not zero
	xgm "c$1gw" stats -o json | /usr/bin/python3 -c '
import json,sys
d=json.load(sys.stdin)
print(" ".join("%s:%s=%d" % (x.get("dev", "?"), k, v["packets"]) for x in d for k, v in x["counters"].items() if k.startswith("drop") and v.get("packets")))'
}
mc_stall_detail() { echo "gw1 $(drops 1); gw2 $(drops 2); $(tail -qn 1 "$MT_RUN"/cryptd[12].log); $(intervals 1a)"; }
cryptd1_alive() {
	kill -0 "$(cat "$MT_RUN/cryptd1.pid")" 2>/dev/null && ok "gw1's gatewayd killed, its xgate-cryptd still running" ||
		not_ok "cryptd1 is gone"
}
mc_gw1_crash cryptd1_alive

# ---- an attacker on the WAN: replays, a tampered copy, a stranger ----------------
# The replays are opened by gw2's worker (their tag is genuine) and refused by
# the program's replay window when they come back OPENED; the tampered copy
# fails the AEAD tag in the worker (its counters); the stranger never gets
# past the program's peer lookup.
mc_wan_attack "type 1"
wait_for 8 grep -q "drop_gw_bad_mac=1\b" "$MT_RUN/cryptd2.log" &&
	ok "gw2's worker refused the tampered copy (drop_gw_bad_mac=1 in its counters)" ||
	not_ok "cryptd2: $(tail -n 1 "$MT_RUN/cryptd2.log")"

# ---- no workers: dropped and counted, never in clear ----------------------------
pid=$(cat "$MT_RUN/cryptd1.pid")
kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
grep -q "opened [1-9][0-9]*, sealed [1-9]" "$MT_RUN/cryptd1.log" && ok "cryptd1 stopped, its counters logged: $(grep opened "$MT_RUN/cryptd1.log" | tail -1 | sed 's/.*: //')" ||
	not_ok "no counters in cryptd1's log: $(tail -n 2 "$MT_RUN/cryptd1.log")"
nw=$(gw_counter 1 drop_gw_no_worker)
check_not "1a -> 2b without gw1's workers: no answer" podx 1a ping -c2 -i0.2 -W1 "${POD_IP[2b]}"
[ "$(gw_counter 1 drop_gw_no_worker)" -gt "$nw" ] && ok "gw1 dropped them as drop_gw_no_worker" ||
	not_ok "drop_gw_no_worker on gw1: $nw -> $(gw_counter 1 drop_gw_no_worker)"
cryptd_start 1
back() { podx 1a ping -c1 -W1 "${POD_IP[2b]}" >/dev/null 2>&1; }
wait_for 10 back && ok "workers restarted: 1a -> 2b again" || not_ok "no traffic after cryptd restart: $(tail -n 2 "$MT_RUN/cryptd1.log")"

# ---- a peer configured for auth: refused, no fallback ---------------------------
gw_kill 3
sed -i 's/^Mode = encrypt/Mode = auth/' "$MT_RUN/gw3.conf"
gw_start 3
wait_for 15 grep -q "peer gw3: session refused: mode mismatch: we want encrypt, the peer wants auth" "$MT_RUN/gw1.log" &&
	ok "gw3 switched to auth: gw1 refuses the session (mode mismatch)" || not_ok "no refusal: $(tail -n 3 "$MT_RUN/gw1.log")"
summary
