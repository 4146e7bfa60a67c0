#!/usr/bin/env bash
# End to end, session ingress through a dedicated ingress gateway: a client
# namespace on a public segment -> the ingress host's public NIC (ingress,
# native XDP) -> Geneve over the underlay -> the pod's host (transit) ->
# the pod, on another host; the pod's replies back through the overlay to
# the ingress host's transit, SNATed out to the client. curl to an HTTP
# server in the pod (which sees the client's own address), iperf3, a
# spoofed-VNI frame from the underlay dropped and counted, ICMP errors
# about sessions translated both ways (connected UDP sockets refused on
# either side), 1,000 sessions
# added and removed on both hosts through libxgate (sess_churn) while
# iperf3 runs, leaving no stray entry and no traffic through a removed one,
# and a UDP stream to a session stopping as soon as the session is deleted.
# usage: ingress_gw.sh PATH/TO/xgate PATH/TO/sess_churn
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XGATE=$(readlink -f "$1")
CHURN=$(readlink -f "$2")
ING=xgt$$-ing
PH=xgt$$-ph
CLI=xgt$$-cli
POD=xgt$$-pod
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
	for n in "$ING" "$PH"; do "$XGATE" -N "$n" reset >/dev/null 2>&1; done
	for n in "$ING" "$PH" "$CLI" "$POD"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }


setup() {
	local n
	for n in "$ING" "$PH" "$CLI"; do ip netns add "$n" && ip -n "$n" link set lo up || return 1; done
	# public segment: client c0 <-> the ingress host's nic0
	ip link add c0 netns "$CLI" type veth peer name nic0 netns "$ING" || return 1
	ip -n "$CLI" addr add 10.88.0.2/24 dev c0
	ip -n "$ING" addr add 10.88.0.1/24 dev nic0
	ip netns exec "$CLI" ethtool -K c0 tx off >/dev/null # complete checksums, as a wire
	ip -n "$CLI" link set c0 up
	ip -n "$ING" link set nic0 up
	# underlay: the ingress host's eth0 <-> the pod's host's eth0
	ip link add eth0 netns "$ING" type veth peer name eth0 netns "$PH" || return 1
	ip -n "$ING" addr add 10.200.0.1/24 dev eth0
	ip -n "$PH" addr add 10.200.0.2/24 dev eth0
	ip -n "$ING" link set eth0 up
	ip -n "$PH" link set eth0 up
	pod_up "$POD" "$PH" vp1 02:00:0a:01:01:05 10.1.1.5/24 10.1.1.1 || return 1
	# the ingress host: no pod, only the public address and the session
	xi host set ip 10.200.0.1 && xi vpc add 100 &&
		xi attach nic0 ingress && xi attach eth0 transit &&
		"$XGATE" -N "$CLI" attach c0 pass || return 1
	# the pod's host
	xp host set ip 10.200.0.2 && xp vpc add 100 &&
		xp subnet add 100 10.1.1.0/24 bouncers 10.200.0.2 &&
		xp endpoint add 100 10.1.1.5 mac 02:00:0a:01:01:05 dev vp1 &&
		xp attach vp1 agent && xp attach eth0 transit || return 1
	xi ingress add tcp 10.88.0.1:8080 vni 100 10.1.1.5:80 host 10.200.0.2 &&
		xp ingress add tcp 10.88.0.1:8080 vni 100 10.1.1.5:80 via 10.200.0.1 &&
		xi ingress add udp 10.88.0.1:5353 vni 100 10.1.1.5:5353 host 10.200.0.2 &&
		xp ingress add udp 10.88.0.1:5353 vni 100 10.1.1.5:5353 via 10.200.0.1
}
if setup; then ok "topology up (client, ingress host, pod's host, pod)"; else
	not_ok "topology up"
	summary
	exit 1
fi

mkdir -p "$TMP/www"
head -c 2000000 /dev/urandom >"$TMP/www/big.bin"
echo "hello from the pod $$" >"$TMP/www/hello.txt"
ip netns exec "$POD" python3 -c '
import functools, http.server, socketserver, sys
class S(http.server.ThreadingHTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
S(("10.1.1.5", 80), h).serve_forever()
' "$TMP/www" >"$TMP/http.log" 2>&1 &
PIDS="$PIDS $!"
# a UDP sink that counts what it receives (the count in a file, every 50 ms)
ip netns exec "$POD" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.5", 5353))
s.settimeout(0.05)
n = 0
while True:
    try:
        s.recvfrom(2048)
        n += 1
    except socket.timeout:
        pass
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(n))
    import os; os.replace(sys.argv[1] + ".tmp", sys.argv[1])
' "$TMP/udp.count" &
PIDS="$PIDS $!"
wait_for 10 listening "$POD" 80 || not_ok "http server did not start"

cl() { ip netns exec "$CLI" "$@"; }
check "curl through the ingress host to the pod on the other host" \
	sh -c "ip netns exec $CLI curl -sf --max-time 5 http://10.88.0.1:8080/hello.txt | grep -qx 'hello from the pod $$'"
cl curl -sf --max-time 20 -o "$TMP/got.bin" http://10.88.0.1:8080/big.bin
check "2 MB through the overlay arrive intact" cmp -s "$TMP/got.bin" "$TMP/www/big.bin"
check "the pod saw the client's own address" grep -q '^10\.88\.0\.2 ' "$TMP/http.log"
[ "$(counter "$ING" nic0 ingress_dnat_gw)" -gt 0 ] && [ "$(counter "$PH" eth0 sess_deliver_gw)" -gt 0 ] &&
	[ "$(counter "$PH" vp1 ingress_reply_gw)" -gt 0 ] && [ "$(counter "$ING" eth0 ingress_snat_gw)" -gt 0 ] &&
	ok "counted: ingress_dnat_gw, sess_deliver_gw, ingress_reply_gw, ingress_snat_gw" ||
	not_ok "dnat_gw $(counter "$ING" nic0 ingress_dnat_gw) deliver $(counter "$PH" eth0 sess_deliver_gw) reply $(counter "$PH" vp1 ingress_reply_gw) snat $(counter "$ING" eth0 ingress_snat_gw)"
[ "$(counter "$PH" eth0 cache_learn)" -eq 0 ] && ok "the pod's host learned no direct path for the client" ||
	not_ok "cache_learn $(counter "$PH" eth0 cache_learn)"
xi ingress ls -o json >"$TMP/ls.json"
python3 - "$TMP/ls.json" <<'PY' && ok "ingress ls on the ingress host: both directions counted" || not_ok "ingress ls counters"
import json, sys
d = {r["proto"] + " " + r["public"]: r for r in json.load(open(sys.argv[1]))}
t = d["tcp 10.88.0.1:8080"]
assert t["form"] == "gateway" and t["host"] == "10.200.0.2", t
assert t["in"]["packets"] > 10 and t["out"]["bytes"] > 2000000, t
PY

# RFC 5508 across the overlay, both ways. Out: the pod's port unreachable
# comes back about the public endpoint, so the client's connected socket is
# refused. In: the pod sends from a session's port to a closed port of the
# client, whose kernel answers port unreachable to the public address; the
# ingress host translates it and sends it to the pod's host, so the pod's
# connected socket is refused.
xi ingress add udp 10.88.0.1:5354 vni 100 10.1.1.5:5354 host 10.200.0.2 &&
	xp ingress add udp 10.88.0.1:5354 vni 100 10.1.1.5:5354 via 10.200.0.1 &&
	xi ingress add udp 10.88.0.1:5355 vni 100 10.1.1.5:5355 host 10.200.0.2 &&
	xp ingress add udp 10.88.0.1:5355 vni 100 10.1.1.5:5355 via 10.200.0.1 ||
	not_ok "adding the ICMP sessions"
check "the pod's port unreachable reaches the client translated (connection refused)" \
	refused "$CLI" 0.0.0.0 0 10.88.0.1 5354
[ "$(counter "$PH" vp1 ingress_icmp_reply_gw)" -gt 0 ] && [ "$(counter "$ING" eth0 ingress_icmp_snat_gw)" -gt 0 ] &&
	ok "counted: ingress_icmp_reply_gw, ingress_icmp_snat_gw" ||
	not_ok "icmp_reply_gw $(counter "$PH" vp1 ingress_icmp_reply_gw) icmp_snat_gw $(counter "$ING" eth0 ingress_icmp_snat_gw)"
check "the client's port unreachable reaches the pod translated (connection refused)" \
	refused "$POD" 10.1.1.5 5355 10.88.0.2 40999
[ "$(counter "$ING" nic0 ingress_icmp_dnat_gw)" -gt 0 ] && [ "$(counter "$PH" eth0 sess_icmp_deliver_gw)" -gt 0 ] &&
	ok "counted: ingress_icmp_dnat_gw, sess_icmp_deliver_gw" ||
	not_ok "icmp_dnat_gw $(counter "$ING" nic0 ingress_icmp_dnat_gw) icmp_deliver_gw $(counter "$PH" eth0 sess_icmp_deliver_gw)"
for n in "$ING" "$PH"; do
	"$XGATE" -N "$n" ingress del udp 10.88.0.1:5354 && "$XGATE" -N "$n" ingress del udp 10.88.0.1:5355 ||
		not_ok "$n: removing the ICMP sessions"
done

# iperf3 through the session while 1,000 sessions churn around it on both
# hosts (each host's half, as the daemons will write them)
xi ingress add tcp 10.88.0.1:30201 vni 100 10.1.1.5:5201 host 10.200.0.2 &&
	xp ingress add tcp 10.88.0.1:30201 vni 100 10.1.1.5:5201 via 10.200.0.1
ip netns exec "$POD" iperf3 -s -B 10.1.1.5 -p 5201 -1 >/dev/null 2>&1 &
PIDS="$PIDS $!"
wait_for 10 listening "$POD" 5201 || not_ok "iperf3 server did not start"
cl timeout 30 iperf3 -c 10.88.0.1 -p 30201 -t 4 -J >"$TMP/iperf.json" 2>/dev/null &
ipc=$!
sleep 0.5
"$CHURN" "$ING" 10.88.0.1 100 10.1.1.5 40000 1000 3 host 10.200.0.2 >"$TMP/churn_i.txt" 2>&1 &
chi=$!
"$CHURN" "$PH" 10.88.0.1 100 10.1.1.5 40000 1000 3 via 10.200.0.1 >"$TMP/churn_p.txt" 2>&1 &&
	ok "pod's host: 1,000 sessions added and removed 3 times during the stream ($(cat "$TMP/churn_p.txt"))" ||
	not_ok "pod's host: session churn: $(cat "$TMP/churn_p.txt")"
wait "$chi" &&
	ok "ingress host: 1,000 sessions added and removed 3 times during the stream ($(cat "$TMP/churn_i.txt"))" ||
	not_ok "ingress host: session churn: $(cat "$TMP/churn_i.txt")"
wait "$ipc"
python3 - "$TMP/iperf.json" <<'PY' && ok "iperf3 through the ingress gateway: the stream carried on" || not_ok "iperf3 through the ingress gateway"
import json, sys
b = json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]
print("received", b)
sys.exit(0 if b > 1000000 else 1)
PY
for n in "$ING" "$PH"; do
	left=$("$XGATE" -N "$n" ingress ls -o json | python3 -c '
import json, sys
print(" ".join(sorted(r["proto"] + "/" + r["public"] for r in json.load(sys.stdin))))')
	[ "$left" = "tcp/10.88.0.1:30201 tcp/10.88.0.1:8080 udp/10.88.0.1:5353" ] &&
		ok "$n: no stray session after the churn" || not_ok "$n: sessions left: $left"
	rev=$(bpftool map dump pinned "/sys/fs/bpf/xgate/$n/xg_sess_rev" -j | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
	[ "$rev" = 3 ] && ok "$n: no stray reverse entry after the churn" || not_ok "$n: reverse entries: $rev"
done
# datagrams to sessions the churn removed: the host's, none to the pod's host
dnat0=$(counter "$ING" nic0 ingress_dnat_gw)
pass0=$(counter "$ING" nic0 pass_no_session)
cl python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for p in range(40000, 41000, 50):
    s.sendto(b"x" * 32, ("10.88.0.1", p))
'
for _ in $(seq 50); do
	[ "$(counter "$ING" nic0 pass_no_session)" -ge $((pass0 + 20)) ] && break
	sleep 0.1
done
dnat1=$(counter "$ING" nic0 ingress_dnat_gw)
pass1=$(counter "$ING" nic0 pass_no_session)
[ "$dnat1" -eq "$dnat0" ] && [ $((pass1 - pass0)) -ge 20 ] &&
	ok "removed sessions: 20 datagrams to the host stack (pass_no_session +$((pass1 - pass0))), none DNATed" ||
	not_ok "removed sessions: dnat_gw $dnat0 -> $dnat1, pass_no_session +$((pass1 - pass0))"

# A frame from the underlay naming the session's pod endpoint as a reply,
# in another VNI: dropped and counted on the ingress host.
spoof() { # spoof VNI
	ip netns exec "$PH" /usr/bin/python3 - "$1" <<'PY'
import socket, struct, sys
from scapy.all import Ether, IP, TCP
vni = int(sys.argv[1])
inner = bytes(Ether(src="02:00:0a:01:01:05", dst="02:00:00:00:00:01") /
              IP(src="10.1.1.5", dst="10.88.0.2") / TCP(sport=80, dport=40000, flags="A"))
gnv = struct.pack("!BBH", 3, 0, 0x6558) + struct.pack("!I", vni << 8)
opt = struct.pack("!HBB", 0xFFF8, 0x01, 2) + socket.inet_aton("10.200.0.2") + bytes([0x08, 0, 0, 0])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.200.0.2", 0))
s.sendto(gnv + opt + inner, ("10.200.0.1", 6081))
PY
}
before=$(counter "$ING" eth0 drop_sess_spoof)
spoof 101 && spoof 100000 || not_ok "sending spoofed frames"
wait_for 5 sh -c "[ \$('$XGATE' -N '$ING' stats eth0 -o json | grep -o drop_sess_spoof | wc -l) -gt 0 ]"
after=$(counter "$ING" eth0 drop_sess_spoof)
[ $((after - before)) -eq 2 ] && ok "spoofed-VNI session replies dropped as drop_sess_spoof (2)" ||
	not_ok "drop_sess_spoof went $before -> $after"

# A session deleted while a stream runs: the pod receives nothing after.
cl python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.time() + 6
while time.time() < end:
    s.sendto(b"x" * 32, ("10.88.0.1", 5353))
    time.sleep(0.002)
' &
sender=$!
PIDS="$PIDS $sender"
sleep 1.5
udp_n() { cat "$TMP/udp.count" 2>/dev/null || echo 0; }
n0=$(udp_n)
[ "$n0" -gt 100 ] && ok "UDP stream reaches the pod ($n0 datagrams)" || not_ok "UDP stream: $n0 datagrams"
pass0=$(counter "$ING" nic0 pass_no_session)
xi ingress del udp 10.88.0.1:5353
sleep 0.3
n1=$(udp_n)
sleep 1.5
n2=$(udp_n)
pass1=$(counter "$ING" nic0 pass_no_session)
[ "$n2" -eq "$n1" ] && ok "after del: the pod receives nothing more ($n1 then $n2)" ||
	not_ok "after del: the pod still receives ($n1 -> $n2)"
[ $((pass1 - pass0)) -gt 100 ] && ok "after del: the stream goes to the host stack (pass_no_session +$((pass1 - pass0)))" ||
	not_ok "pass_no_session +$((pass1 - pass0))"
wait "$sender" 2>/dev/null
xp ingress del udp 10.88.0.1:5353 || not_ok "pod-side del"

cleanup
trap - EXIT
left=$(ip netns list | grep -c "^xgt$$-" || true)
[ "$left" -eq 0 ] && ok "no namespaces left" || not_ok "$left namespaces left"
ls /sys/fs/bpf/xgate 2>/dev/null | grep -q "^xgt$$-" && not_ok "pins left" || ok "no pins left"
summary
