#!/usr/bin/env bash
# End to end, session ingress on a host with ONE NIC: its public address
# (10.88.0.1) and its underlay address (10.200.0.1) are on the same device,
# which runs `ingress` alone (native XDP; no transit anywhere on it). One
# L2 segment (a bridge in a switch namespace) joins the ingress host, a
# client and the pod's host. Both session forms at once on that host: a
# pod on another host (dedicated-gateway form) and a pod on the ingress
# host itself (on-node form, behind a veth running `agent`). Checked for
# each: curl and a UDP echo from the client to the session's public
# endpoint reach the pod, which sees the client's own address and whose
# replies leave the one NIC SNATed (a capture on the client's switch port,
# read by scapy: every frame to the client comes from the public address,
# with valid checksums); ICMP errors about sessions translated both ways
# (the pod's port unreachable refuses the client's connected socket and
# quotes the public endpoint; the client's refuses the pod's; a router's
# fragmentation needed, from the client side, sets the pod's path MTU); a
# datagram too big for the tunnel, or for either pod's veth (DF), answered
# with a fragmentation needed the client's kernel takes. And: the host's
# own traffic on that NIC (ping to both addresses, TCP to a host port on
# both) still works; a Geneve frame to the underlay address for a pod of
# another host is forwarded as transit's bouncer does.
# usage: ingress_1nic.sh PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XGATE=$(readlink -f "$1")
ING=xgt$$-ing
PH=xgt$$-ph
CLI=xgt$$-cli
SW=xgt$$-sw
POD=xgt$$-pod
POD2=xgt$$-pod2
TMP=$(mktemp -d)
PIDS=
source "$HERE/../lib.sh"
XDP_MODE=native
POD_MTU=1400 # underlay 1500 - 62 (docs/architecture.md, "MTU rule")
source "$HERE/../../deploy/lib/pod.sh"
source "$HERE/ingress_lib.sh"
xi() { "$XGATE" -N "$ING" "$@"; }
xp() { "$XGATE" -N "$PH" "$@"; }
cleanup() {
	local p n
	for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for n in "$ING" "$PH" "$SW" "$CLI"; do "$XGATE" -N "$n" reset >/dev/null 2>&1; done
	for n in "$ING" "$PH" "$CLI" "$SW" "$POD" "$POD2"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }


# wire NS DEV PORT: DEV in NS, its peer PORT on the switch's bridge. The
# switch end runs `pass`: a frame XDP_TX'd into a veth is dropped unless
# its peer has an XDP program.
wire() {
	ip link add "$2" netns "$1" type veth peer name "$3" netns "$SW" || return 1
	ip -n "$SW" link set "$3" master br0 && ip -n "$SW" link set "$3" up &&
		"$XGATE" -N "$SW" attach "$3" pass >/dev/null && ip -n "$1" link set "$2" up
}

setup() {
	local n
	for n in "$ING" "$PH" "$CLI" "$SW"; do ip netns add "$n" && ip -n "$n" link set lo up || return 1; done
	ip -n "$SW" link add br0 type bridge && ip -n "$SW" link set br0 up || return 1
	wire "$ING" eth0 s-ing && wire "$PH" eth0 s-ph && wire "$CLI" c0 s-cli || return 1
	# the ingress host's one NIC: public and underlay address
	ip -n "$ING" addr add 10.88.0.1/24 dev eth0
	ip -n "$ING" addr add 10.200.0.1/24 dev eth0
	ip -n "$CLI" addr add 10.88.0.2/24 dev c0
	ip netns exec "$CLI" ethtool -K c0 tx off >/dev/null # complete checksums, as a wire
	ip -n "$PH" addr add 10.200.0.2/24 dev eth0
	pod_up "$POD" "$PH" vp1 02:00:0a:01:01:05 10.1.1.5/24 10.1.1.1 || return 1
	# a pod of the ingress host itself (the on-node form); its replies are
	# routed out of the one NIC, which the FIB does only with forwarding on
	ip netns exec "$ING" sysctl -qw net.ipv4.ip_forward=1
	pod_up "$POD2" "$ING" vp2 02:00:0a:01:02:07 10.1.2.7/24 10.1.2.1 || return 1
	# the ingress host: the session's public side, and the bouncer's
	# knowledge of the pod (for the underlay check below)
	xi host set ip 10.200.0.1 && xi vpc add 100 &&
		xi endpoint add 100 10.1.1.5 mac 02:00:0a:01:01:05 host 10.200.0.2 &&
		xi attach eth0 ingress && "$XGATE" -N "$CLI" attach c0 pass >/dev/null || return 1
	xi subnet add 100 10.1.2.0/24 bouncers 10.200.0.1 &&
		xi endpoint add 100 10.1.2.7 mac 02:00:0a:01:02:07 dev vp2 && xi attach vp2 agent || return 1
	# the pod's host, as in the two-NIC form
	xp host set ip 10.200.0.2 && xp vpc add 100 &&
		xp subnet add 100 10.1.1.0/24 bouncers 10.200.0.2 &&
		xp endpoint add 100 10.1.1.5 mac 02:00:0a:01:01:05 dev vp1 &&
		xp attach vp1 agent && xp attach eth0 transit || return 1
	xi ingress add tcp 10.88.0.1:8080 vni 100 10.1.1.5:80 host 10.200.0.2 &&
		xp ingress add tcp 10.88.0.1:8080 vni 100 10.1.1.5:80 via 10.200.0.1 &&
		xi ingress add udp 10.88.0.1:5353 vni 100 10.1.1.5:5353 host 10.200.0.2 &&
		xp ingress add udp 10.88.0.1:5353 vni 100 10.1.1.5:5353 via 10.200.0.1 || return 1
	# the on-node form, next to it on the same NIC
	xi ingress add tcp 10.88.0.1:8081 vni 100 10.1.2.7:80 &&
		xi ingress add udp 10.88.0.1:5363 vni 100 10.1.2.7:5353
}
if setup; then ok "topology up (one NIC on the ingress host: public and underlay address)"; else
	not_ok "topology up"
	summary
	exit 1
fi

xi status | grep -q "nic eth0 " && ok "the one NIC is the host's underlay NIC (nic eth0)" ||
	not_ok "status: $(xi status | head -2)"

mkdir -p "$TMP/www" "$TMP/www2"
echo "hello from the pod $$" >"$TMP/www/hello.txt"
echo "hello from the pod on the ingress host $$" >"$TMP/www2/hello.txt"
# (server_bind without HTTPServer's getfqdn: a reverse lookup out of the pod would time out)
httpd() { # httpd NS ADDR DIR LOG
	exec ip netns exec "$1" python3 -c '
import functools, http.server, socketserver, sys
class S(http.server.ThreadingHTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[2])
S((sys.argv[1], 80), h).serve_forever()
' "$2" "$3" >"$4" 2>&1
}
httpd "$POD" 10.1.1.5 "$TMP/www" "$TMP/http.log" &
PIDS="$PIDS $!"
httpd "$POD2" 10.1.2.7 "$TMP/www2" "$TMP/http2.log" &
PIDS="$PIDS $!"
# a UDP echo on :5353 (the sessions'), and a sink that records what reaches :5354
udpd() { # udpd NS ADDR SINK
	exec ip netns exec "$1" python3 -c '
import socket, sys, threading
def echo():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], 5353))
    while True:
        d, a = s.recvfrom(2048)
        s.sendto(b"echo " + a[0].encode() + b" " + d, a)
threading.Thread(target=echo, daemon=True).start()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 5354))
while True:
    d, a = s.recvfrom(2048)
    with open(sys.argv[2], "ab") as f:
        f.write(d + b"\n")
' "$2" "$3"
}
udpd "$POD" 10.1.1.5 "$TMP/sink" &
PIDS="$PIDS $!"
udpd "$POD2" 10.1.2.7 "$TMP/sink2" &
PIDS="$PIDS $!"
# the ingress host's own TCP service on every address, and UDP sockets on
# the ports of the ICMP sessions below: a datagram the host got itself would
# be taken, not refused, so a refusal there is the pod's
ip netns exec "$ING" python3 -c '
import socket
for p in (5355, 5364):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", p))
    globals()["u%d" % p] = u
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 2222))
s.listen(8)
while True:
    c, a = s.accept()
    c.sendall(b"host here\n")
    c.close()
' &
PIDS="$PIDS $!"
# What reaches the client, seen from its switch port (read at the end).
ip netns exec "$SW" dumpcap -q -P -i s-cli -w "$TMP/cli.pcap" 2>"$TMP/dumpcap.log" &
CAP=$!
PIDS="$PIDS $CAP"
udp_listening() { ip netns exec "$1" ss -Hlun "sport = :$2" | grep -q .; }
wait_for 10 listening "$POD" 80 || not_ok "http server did not start: $(cat "$TMP/http.log")"
wait_for 10 listening "$POD2" 80 || not_ok "http server of the ingress host's pod did not start: $(cat "$TMP/http2.log")"
wait_for 10 udp_listening "$POD2" 5353 && wait_for 10 udp_listening "$POD" 5353 || not_ok "UDP echo did not start"
wait_for 10 listening "$ING" 2222 || not_ok "host service did not start"
wait_for 10 grep -q "Capturing on" "$TMP/dumpcap.log" || not_ok "dumpcap did not start: $(cat "$TMP/dumpcap.log")"

curl_hello() { # curl_hello PORT TEXT
	ip netns exec "$CLI" curl -sf --max-time 5 "http://10.88.0.1:$1/hello.txt" | grep -qx "$2"
}
check "curl through the one NIC to the pod on the other host (dedicated-gateway form)" \
	curl_hello 8080 "hello from the pod $$"
check "the pod on the other host saw the client's own address" grep -q '^10\.88\.0\.2 ' "$TMP/http.log"
check "curl through the one NIC to the pod on the ingress host (on-node form)" \
	curl_hello 8081 "hello from the pod on the ingress host $$"
check "the pod on the ingress host saw the client's own address" grep -q '^10\.88\.0\.2 ' "$TMP/http2.log"
udp_echo() { # udp_echo PORT
	ip netns exec "$CLI" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect(("10.88.0.1", int(sys.argv[1])))   # a connected socket takes only the public endpoint
for _ in range(3):
    s.send(b"ping")
    try:
        d = s.recv(2048)
    except socket.timeout:
        continue
    sys.exit(0 if d == b"echo 10.88.0.2 ping" else 1)
sys.exit(1)
' "$1"
}
check "UDP echo to the other host's pod: answered from the public endpoint, client address seen" udp_echo 5353
check "UDP echo to the ingress host's pod: answered from the public endpoint, client address seen" udp_echo 5363
check "both forms at once: the other host's pod still answers after the ingress host's" \
	curl_hello 8080 "hello from the pod $$"
[ "$(counter "$ING" eth0 ingress_dnat_gw)" -gt 0 ] && [ "$(counter "$ING" eth0 ingress_snat_gw)" -gt 0 ] &&
	[ "$(counter "$PH" eth0 sess_deliver_gw)" -gt 0 ] && [ "$(counter "$PH" vp1 ingress_reply_gw)" -gt 0 ] &&
	ok "counted on the one NIC: ingress_dnat_gw and ingress_snat_gw" ||
	{ not_ok "dnat_gw $(counter "$ING" eth0 ingress_dnat_gw) snat_gw $(counter "$ING" eth0 ingress_snat_gw) deliver $(counter "$PH" eth0 sess_deliver_gw) reply $(counter "$PH" vp1 ingress_reply_gw)"
	  xi stats eth0 | sed 's/^/# /'; }
[ "$(counter "$ING" eth0 ingress_dnat)" -gt 0 ] && [ "$(counter "$ING" vp2 ingress_snat)" -gt 0 ] &&
	ok "counted: ingress_dnat on the one NIC, ingress_snat on the ingress host's pod's veth" ||
	not_ok "ingress_dnat $(counter "$ING" eth0 ingress_dnat), ingress_snat $(counter "$ING" vp2 ingress_snat)"

# RFC 5508 on one NIC, both forms, both ways. Out: the pod's port
# unreachable comes back about the public endpoint, so the client's
# connected socket is refused. In: the pod sends from a session's port to a
# closed port of the client, whose kernel answers port unreachable to the
# public address; translated back, it refuses the pod's connected socket.
xi ingress add udp 10.88.0.1:5355 vni 100 10.1.1.5:5355 host 10.200.0.2 &&
	xp ingress add udp 10.88.0.1:5355 vni 100 10.1.1.5:5355 via 10.200.0.1 &&
	xi ingress add udp 10.88.0.1:5364 vni 100 10.1.2.7:5364 || not_ok "adding the ICMP sessions"
check "the other host's pod's port unreachable reaches the client translated (connection refused)" \
	refused "$CLI" 0.0.0.0 0 10.88.0.1 5355
[ "$(counter "$PH" vp1 ingress_icmp_reply_gw)" -gt 0 ] && [ "$(counter "$ING" eth0 ingress_icmp_snat_gw)" -gt 0 ] &&
	ok "counted: ingress_icmp_reply_gw, ingress_icmp_snat_gw on the one NIC" ||
	not_ok "icmp_reply_gw $(counter "$PH" vp1 ingress_icmp_reply_gw) icmp_snat_gw $(counter "$ING" eth0 ingress_icmp_snat_gw)"
check "the ingress host's pod's port unreachable reaches the client translated (connection refused)" \
	refused "$CLI" 0.0.0.0 0 10.88.0.1 5364
[ "$(counter "$ING" vp2 ingress_icmp_snat)" -gt 0 ] && ok "counted: ingress_icmp_snat on the ingress host's pod's veth" ||
	not_ok "ingress_icmp_snat $(counter "$ING" vp2 ingress_icmp_snat)"
check "the client's port unreachable reaches the other host's pod translated (connection refused)" \
	refused "$POD" 10.1.1.5 5355 10.88.0.2 40999
[ "$(counter "$ING" eth0 ingress_icmp_dnat_gw)" -gt 0 ] && [ "$(counter "$PH" eth0 sess_icmp_deliver_gw)" -gt 0 ] &&
	ok "counted: ingress_icmp_dnat_gw on the one NIC, sess_icmp_deliver_gw" ||
	not_ok "icmp_dnat_gw $(counter "$ING" eth0 ingress_icmp_dnat_gw) icmp_deliver_gw $(counter "$PH" eth0 sess_icmp_deliver_gw)"
check "the client's port unreachable reaches the ingress host's pod translated (connection refused)" \
	refused "$POD2" 10.1.2.7 5364 10.88.0.2 40999
[ "$(counter "$ING" eth0 ingress_icmp_dnat)" -gt 0 ] && ok "counted: ingress_icmp_dnat on the one NIC" ||
	not_ok "ingress_icmp_dnat $(counter "$ING" eth0 ingress_icmp_dnat)"

# A datagram too big for the tunnel to the other host's pod, DF set: the
# one NIC answers fragmentation needed from the public address with what
# fits (1500 - 62), and the client's kernel takes it as the path MTU.
fn0=$(counter "$ING" eth0 icmp_frag_needed)
# client_pmtu PUB_PORT BYTES: BYTES of UDP payload (DF) from the client to
# the public port; prints the client's path MTU to the public address once
# it moved from what it was before (or after 3 s, as it is)
client_pmtu() {
	ip netns exec "$CLI" python3 -c '
import socket, sys, time
IP_MTU_DISCOVER, IP_PMTUDISC_DO, IP_MTU = 10, 2, 14
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
s.connect(("10.88.0.1", int(sys.argv[1])))
before = s.getsockopt(socket.IPPROTO_IP, IP_MTU)
s.send(b"x" * int(sys.argv[2]))
end = time.time() + 3
while time.time() < end:
    m = s.getsockopt(socket.IPPROTO_IP, IP_MTU)
    if m != before:
        break
    time.sleep(0.05)
print(m)
' "$1" "$2"
}
mtu=$(client_pmtu 5353 1450) # 1478 bytes of IPv4: 1540 in Geneve
[ "$mtu" = 1438 ] && ok "a DF datagram too big for the tunnel: the client's path MTU to the public address is now 1438" ||
	not_ok "path MTU after the too-big datagram: $mtu, wanted 1438"
[ $(($(counter "$ING" eth0 icmp_frag_needed) - fn0)) -eq 1 ] && ok "counted: icmp_frag_needed on the one NIC" ||
	not_ok "icmp_frag_needed $fn0 -> $(counter "$ING" eth0 icmp_frag_needed)"

# A datagram that fits the path so far but not the ingress host's pod's veth
# (vp2 at 1400 for this check), DF set: answered as a router before a
# smaller link would, from the public address with the pod's MTU, and the
# client's kernel takes it (1420 bytes of IPv4: under the 1438 it knows).
ip -n "$ING" link set vp2 mtu 1400
mtu=$(client_pmtu 5363 1392)
ip -n "$ING" link set vp2 mtu 1500
[ "$mtu" = 1400 ] && ok "a DF datagram too big for the ingress host's pod: the client's path MTU is now its 1400" ||
	not_ok "path MTU after the datagram too big for the pod: $mtu, wanted 1400"
[ $(($(counter "$ING" eth0 icmp_frag_needed) - fn0)) -eq 2 ] && ok "counted: a second icmp_frag_needed on the one NIC" ||
	not_ok "icmp_frag_needed $fn0 -> $(counter "$ING" eth0 icmp_frag_needed)"

# The same for the other host's pod (dedicated-gateway form; vp1 at 1400
# for this check): it fits the tunnel, not the pod's veth; the pod's host
# answers as the pod's own errors about the session leave (back to the
# ingress host, which translates it to the public endpoint). The client's
# path MTU learnt above is flushed first, else it would not send 1420.
ip netns exec "$CLI" ip route flush cache
fp0=$(counter "$PH" eth0 icmp_frag_needed) sn0=$(counter "$ING" eth0 ingress_icmp_snat_gw)
ip -n "$PH" link set vp1 mtu 1400
mtu=$(client_pmtu 5353 1392)
ip -n "$PH" link set vp1 mtu 1500
[ "$mtu" = 1400 ] && ok "a DF datagram too big for the other host's pod: the client's path MTU is now its 1400" ||
	not_ok "path MTU after the datagram too big for the other host's pod: $mtu, wanted 1400"
[ $(($(counter "$PH" eth0 icmp_frag_needed) - fp0)) -eq 1 ] &&
	[ $(($(counter "$ING" eth0 ingress_icmp_snat_gw) - sn0)) -eq 1 ] &&
	ok "counted: icmp_frag_needed on the pod's host, ingress_icmp_snat_gw on the ingress host" ||
	not_ok "icmp_frag_needed $fp0 -> $(counter "$PH" eth0 icmp_frag_needed), ingress_icmp_snat_gw $sn0 -> $(counter "$ING" eth0 ingress_icmp_snat_gw)"

# A router's fragmentation needed toward the pod, both forms: the client
# side (scapy, as a router behind the client would) answers a pod's
# datagram from a session's port with "fragmentation needed, MTU 1200"
# quoting it as it left, from the public endpoint; translated in, the
# pod's kernel takes it as the path MTU of its connected socket.
pod_pmtu() { # pod_pmtu POD_NS POD_IP PUB_PORT
	rm -f "$TMP/ready"
	ip netns exec "$1" python3 -c '
import socket, sys, time
IP_MTU = 14
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
s.connect(("10.88.0.2", 40999))
open(sys.argv[3], "w").close()
end = time.time() + 5
while time.time() < end:
    if s.getsockopt(socket.IPPROTO_IP, IP_MTU) == 1200:
        sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
' "$2" "$3" "$TMP/ready" &
	local pod=$!
	wait_for 5 test -e "$TMP/ready"
	ip netns exec "$CLI" /usr/bin/python3 - "$3" <<'PY'
import sys
from scapy.all import IP, UDP, ICMP, Raw, send
port = int(sys.argv[1])
dgram = bytes(IP(src="10.88.0.1", dst="10.88.0.2", ttl=63, flags="DF") /
              UDP(sport=port, dport=40999) / Raw(b"y" * 1300))
send(IP(src="10.88.0.2", dst="10.88.0.1") / ICMP(type=3, code=4, nexthopmtu=1200) / Raw(dgram[:28]),
     verbose=False)
PY
	wait "$pod"
}
id0=$(counter "$ING" eth0 ingress_icmp_dnat)
check "a router's fragmentation needed reaches the ingress host's pod translated (path MTU 1200)" \
	pod_pmtu "$POD2" 10.1.2.7 5364
[ $(($(counter "$ING" eth0 ingress_icmp_dnat) - id0)) -eq 1 ] && ok "counted: ingress_icmp_dnat" ||
	not_ok "ingress_icmp_dnat $id0 -> $(counter "$ING" eth0 ingress_icmp_dnat)"
id0=$(counter "$ING" eth0 ingress_icmp_dnat_gw)
check "a router's fragmentation needed reaches the other host's pod translated (path MTU 1200)" \
	pod_pmtu "$POD" 10.1.1.5 5355
[ $(($(counter "$ING" eth0 ingress_icmp_dnat_gw) - id0)) -eq 1 ] && ok "counted: ingress_icmp_dnat_gw" ||
	not_ok "ingress_icmp_dnat_gw $id0 -> $(counter "$ING" eth0 ingress_icmp_dnat_gw)"

# The wire to the client: everything from the public address, checksums
# right (the translated ones incremental), the errors quoting the client's
# datagrams to the public endpoints with their checksums amended (a
# receiver's kernel does not check the quoted ones). dumpcap writes
# what it captured about once a second and drops the rest when stopped:
# read the file until it holds everything looked for, then stop it.
wire_ok() {
	/usr/bin/python3 - "$TMP/cli.pcap" >"$TMP/wire.txt" 2>&1 <<'PY'
import collections, socket, struct, sys
from scapy.all import rdpcap, Ether, IP
from scapy.utils import checksum

def l4_ok(src, dst, proto, b):
    if proto == 17 and b[6:8] == b"\0\0":
        return True  # no UDP checksum
    ph = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, proto, len(b))
    return checksum(ph + b) == 0

bad, seen = [], collections.Counter()
try:
    frames = rdpcap(sys.argv[1])
except Exception as e:  # a record still being written
    print(e)
    sys.exit(1)
for f in frames:
    if IP not in f or f[IP].dst != "10.88.0.2":
        continue
    raw = bytes(f[IP])
    hl = (raw[0] & 15) * 4
    tot = struct.unpack("!H", raw[2:4])[0]
    ip, l4 = raw[:hl], raw[hl:tot]
    src, proto = socket.inet_ntoa(raw[12:16]), raw[9]
    if src != "10.88.0.1":
        bad.append("from %s" % src)
    if checksum(ip) != 0:
        bad.append("IPv4 checksum from %s" % src)
    if proto in (6, 17):
        if not l4_ok(src, "10.88.0.2", proto, l4):
            bad.append("L4 checksum, proto %d" % proto)
        seen["%s %d" % ({6: "tcp", 17: "udp"}[proto], struct.unpack("!H", l4[:2])[0])] += 1
        continue
    if proto != 1:
        continue
    if checksum(l4) != 0:
        bad.append("ICMP checksum")
    if l4[0] != 3:
        continue
    q = l4[8:]
    qhl = (q[0] & 15) * 4
    qs, qd, qp = socket.inet_ntoa(q[12:16]), socket.inet_ntoa(q[16:20]), q[9]
    dport = struct.unpack("!H", q[qhl + 2:qhl + 4])[0]
    if (qs, qd, qp) != ("10.88.0.2", "10.88.0.1", 17):
        bad.append("quote %s -> %s proto %d" % (qs, qd, qp))
    if checksum(q[:qhl]) != 0:
        bad.append("quoted IPv4 checksum (port %d)" % dport)
    ql = q[qhl:qhl + struct.unpack("!H", q[qhl + 4:qhl + 6])[0]]
    if len(ql) >= 8 and len(q) - qhl >= struct.unpack("!H", ql[4:6])[0] and not l4_ok(qs, qd, 17, ql):
        bad.append("quoted UDP checksum (port %d)" % dport)
    seen["icmp %d/%d %d" % (l4[0], l4[1], dport)] += 1
want = ["tcp 8080", "tcp 8081", "udp 5353", "udp 5363", "udp 5355", "udp 5364",
        "icmp 3/3 5355", "icmp 3/3 5364", "icmp 3/4 5353"]
missing = [w for w in want if not seen[w]]
print(dict(seen), "bad:", bad[:5], "missing:", missing)
sys.exit(1 if bad or missing else 0)
PY
}
wait_for 10 wire_ok
wire_ok && ok "the wire to the client: all from 10.88.0.1, checksums right, errors quote the public endpoints" ||
	not_ok "the wire to the client: $(cat "$TMP/wire.txt")"
kill -INT "$CAP" 2>/dev/null
wait "$CAP" 2>/dev/null

# The host's own traffic on the one NIC.
check "ping to the public address" ip netns exec "$CLI" ping -c1 -W2 -q 10.88.0.1
check "ping to the underlay address" ip netns exec "$PH" ping -c1 -W2 -q 10.200.0.1
host_tcp() { # host_tcp NS ADDR
	ip netns exec "$1" python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 2222), timeout=3)
sys.exit(0 if c.recv(64) == b"host here\n" else 1)' "$2"
}
check "TCP to a host port on the public address" host_tcp "$CLI" 10.88.0.1
check "TCP to a host port on the underlay address" host_tcp "$PH" 10.200.0.1

# An underlay frame for a pod of another host: Geneve from the pod's host
# to the ingress host's underlay address, the pod's endpoint inside; the
# ingress host, its bouncer, forwards it back to the pod's host.
fwd0=$(counter "$ING" eth0 bouncer_fwd)
ip netns exec "$PH" /usr/bin/python3 - <<'PY' || not_ok "sending the underlay frame"
import socket, struct
from scapy.all import Ether, IP, UDP, Raw
inner = bytes(Ether(src="02:00:0a:01:01:09", dst="02:00:0a:01:01:05") /
              IP(src="10.1.1.9", dst="10.1.1.5") / UDP(sport=999, dport=5354) / Raw(b"via the bouncer"))
gnv = struct.pack("!BBH", 3, 0, 0x6558) + struct.pack("!I", 100 << 8)
opt = struct.pack("!HBB", 0xFFF8, 0x01, 2) + socket.inet_aton("10.200.0.2") + bytes(4)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.200.0.2", 0))
s.sendto(gnv + opt + inner, ("10.200.0.1", 6081))
PY
wait_for 5 grep -q "via the bouncer" "$TMP/sink" &&
	ok "an underlay frame for another host's pod: forwarded by the one NIC's bouncer, delivered" ||
	not_ok "underlay frame not delivered"
[ $(($(counter "$ING" eth0 bouncer_fwd) - fwd0)) -eq 1 ] && ok "counted: bouncer_fwd on the one NIC" ||
	not_ok "bouncer_fwd $fwd0 -> $(counter "$ING" eth0 bouncer_fwd)"

cleanup
trap - EXIT
left=$(ip netns list | grep -c "^xgt$$-" || true)
[ "$left" -eq 0 ] && ok "no namespaces left" || not_ok "$left namespaces left"
ls /sys/fs/bpf/xgate 2>/dev/null | grep -q "^xgt$$-" && not_ok "pins left" || ok "no pins left"
summary
