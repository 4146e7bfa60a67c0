#!/usr/bin/env bash
# End to end, session ingress on a host with ONE NIC: its public address
# (10.88.0.1) and its underlay address (10.200.0.1) are on the same device,
# which runs `ingress` alone (native XDP; no transit anywhere on it). One
# L2 segment (a bridge in a switch namespace) joins the ingress host, a
# client and the pod's host. Checked: curl and a UDP echo from the client
# to the session's public endpoint reach the pod on the other host, which
# sees the client's own address and whose replies leave the one NIC
# SNATed; the host's own traffic on that NIC (ping to both addresses, TCP
# to a host port on both) still works; a Geneve frame to the underlay
# address for a pod of another host is forwarded as transit's bouncer does.
# usage: ingress_1nic.sh PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XGATE=$(readlink -f "$1")
ING=xgt$$-ing
PH=xgt$$-ph
CLI=xgt$$-cli
SW=xgt$$-sw
POD=xgt$$-pod
TMP=$(mktemp -d)
PIDS=
source "$HERE/../lib.sh"
XDP_MODE=native
POD_MTU=1400 # underlay 1500 - 62 (docs/architecture.md, "MTU rule")
source "$HERE/../../deploy/lib/pod.sh"
xi() { "$XGATE" -N "$ING" "$@"; }
xp() { "$XGATE" -N "$PH" "$@"; }
cleanup() {
	local p n
	for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for n in "$ING" "$PH" "$SW" "$CLI"; do "$XGATE" -N "$n" reset >/dev/null 2>&1; done
	for n in "$ING" "$PH" "$CLI" "$SW" "$POD"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }

counter() { # counter NS DEV REASON: packets
	"$XGATE" -N "$1" stats "$2" -o json | python3 -c '
import json,sys
d=json.load(sys.stdin); r=sys.argv[1]
print(sum(v.get(r,{}).get("packets",0) for v in (x["counters"] for x in d)))' "$3"
}

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
	# the ingress host: the session's public side, and the bouncer's
	# knowledge of the pod (for the underlay check below)
	xi host set ip 10.200.0.1 && xi vpc add 100 &&
		xi endpoint add 100 10.1.1.5 mac 02:00:0a:01:01:05 host 10.200.0.2 &&
		xi attach eth0 ingress && "$XGATE" -N "$CLI" attach c0 pass >/dev/null || return 1
	# the pod's host, as in the two-NIC form
	xp host set ip 10.200.0.2 && xp vpc add 100 &&
		xp subnet add 100 10.1.1.0/24 bouncers 10.200.0.2 &&
		xp endpoint add 100 10.1.1.5 mac 02:00:0a:01:01:05 dev vp1 &&
		xp attach vp1 agent && xp attach eth0 transit || return 1
	xi ingress add tcp 10.88.0.1:8080 vni 100 10.1.1.5:80 host 10.200.0.2 &&
		xp ingress add tcp 10.88.0.1:8080 vni 100 10.1.1.5:80 via 10.200.0.1 &&
		xi ingress add udp 10.88.0.1:5353 vni 100 10.1.1.5:5353 host 10.200.0.2 &&
		xp ingress add udp 10.88.0.1:5353 vni 100 10.1.1.5:5353 via 10.200.0.1
}
if setup; then ok "topology up (one NIC on the ingress host: public and underlay address)"; else
	not_ok "topology up"
	summary
	exit 1
fi

xi status | grep -q "nic eth0 " && ok "the one NIC is the host's underlay NIC (nic eth0)" ||
	not_ok "status: $(xi status | head -2)"

echo "hello from the pod $$" >"$TMP/hello.txt"
# (server_bind without HTTPServer's getfqdn: a reverse lookup out of the pod would time out)
ip netns exec "$POD" python3 -c '
import functools, http.server, socketserver, sys
class S(http.server.ThreadingHTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
S(("10.1.1.5", 80), h).serve_forever()
' "$TMP" >"$TMP/http.log" 2>&1 &
PIDS="$PIDS $!"
# a UDP echo (the session's), and a sink that records what reaches :5354
ip netns exec "$POD" python3 -c '
import socket, sys, threading
def echo():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.1.1.5", 5353))
    while True:
        d, a = s.recvfrom(2048)
        s.sendto(b"echo " + a[0].encode() + b" " + d, a)
threading.Thread(target=echo, daemon=True).start()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.5", 5354))
while True:
    d, a = s.recvfrom(2048)
    with open(sys.argv[1], "ab") as f:
        f.write(d + b"\n")
' "$TMP/sink" &
PIDS="$PIDS $!"
# the ingress host's own TCP service on every address
ip netns exec "$ING" python3 -c '
import socket
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
listening() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .; }
wait_for 10 listening "$POD" 80 || not_ok "http server did not start: $(cat "$TMP/http.log")"
wait_for 10 listening "$ING" 2222 || not_ok "host service did not start"

check "curl through the one NIC to the pod on the other host" \
	sh -c "ip netns exec $CLI curl -sf --max-time 5 http://10.88.0.1:8080/hello.txt | grep -qx 'hello from the pod $$'"
check "the pod saw the client's own address" grep -q '^10\.88\.0\.2 ' "$TMP/http.log"
udp_echo() {
	ip netns exec "$CLI" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect(("10.88.0.1", 5353))   # a connected socket takes only the public endpoint
for _ in range(3):
    s.send(b"ping")
    try:
        d = s.recv(2048)
    except socket.timeout:
        continue
    sys.exit(0 if d == b"echo 10.88.0.2 ping" else 1)
sys.exit(1)
'
}
check "UDP echo through the one NIC: answered from the public endpoint, client address seen" udp_echo
[ "$(counter "$ING" eth0 ingress_dnat_gw)" -gt 0 ] && [ "$(counter "$ING" eth0 ingress_snat_gw)" -gt 0 ] &&
	[ "$(counter "$PH" eth0 sess_deliver_gw)" -gt 0 ] && [ "$(counter "$PH" vp1 ingress_reply_gw)" -gt 0 ] &&
	ok "counted on the one NIC: ingress_dnat_gw and ingress_snat_gw" ||
	{ not_ok "dnat_gw $(counter "$ING" eth0 ingress_dnat_gw) snat_gw $(counter "$ING" eth0 ingress_snat_gw) deliver $(counter "$PH" eth0 sess_deliver_gw) reply $(counter "$PH" vp1 ingress_reply_gw)"
	  xi stats eth0 | sed 's/^/# /'; }

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
