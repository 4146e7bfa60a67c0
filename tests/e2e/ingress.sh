#!/usr/bin/env bash
# End to end, session ingress on-node: a client namespace on a public
# segment -> the node's NIC (ingress, native XDP) -> the pod's veth (agent)
# -> the pod. curl to a python http.server in the pod (the pod sees the
# client's own address), a UDP echo, the host's own services on the public
# address untouched, the pod's ICMP errors translated, the session's
# counters, and a deleted session's next
# packet going to the host stack.
# Also iperf3 through a session while 1,000 other sessions are added and
# removed through libxgate (sess_churn), three times over: the stream
# carries on, and no stray entry is left.
# usage: ingress.sh PATH/TO/xgate PATH/TO/sess_churn
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XGATE=$(readlink -f "$1")
CHURN=$(readlink -f "$2")
NODE=xgt$$-node
CLI=xgt$$-cli
POD=xgt$$-pod
TMP=$(mktemp -d)
PIDS=
source "$HERE/../lib.sh"
XDP_MODE=native
POD_MTU=1500
source "$HERE/../../deploy/lib/pod.sh"
x() { "$XGATE" -N "$NODE" "$@"; }
cleanup() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	"$XGATE" -N "$NODE" reset >/dev/null 2>&1
	for n in "$NODE" "$CLI" "$POD"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }

counter() { # counter DEV REASON: packets
	x stats "$1" -o json | python3 -c '
import json,sys
d=json.load(sys.stdin); r=sys.argv[1]
print(sum(v.get(r,{}).get("packets",0) for v in (x["counters"] for x in d)))' "$2"
}

setup() {
	local n
	for n in "$NODE" "$CLI"; do ip netns add "$n" && ip -n "$n" link set lo up || return 1; done
	ip netns exec "$NODE" sysctl -qw net.ipv4.ip_forward=1
	# the public segment: the client's c0 is the far end of the node's NIC
	ip link add c0 netns "$CLI" type veth peer name nic0 netns "$NODE" || return 1
	ip -n "$CLI" addr add 10.88.0.2/24 dev c0
	ip -n "$NODE" addr add 10.88.0.1/24 dev nic0
	# a real wire carries complete checksums; a veth would leave them partial
	ip netns exec "$CLI" ethtool -K c0 tx off >/dev/null
	ip -n "$CLI" link set c0 up
	ip -n "$NODE" link set nic0 up
	pod_up "$POD" "$NODE" vp1 02:00:0a:01:01:05 10.1.1.5/24 10.1.1.1 || return 1
	x host set ip 10.88.0.1 && x vpc add 100 &&
		x subnet add 100 10.1.1.0/24 bouncers 10.88.0.1 &&
		x endpoint add 100 10.1.1.5 mac 02:00:0a:01:01:05 dev vp1 &&
		x attach vp1 agent && x attach nic0 ingress &&
		"$XGATE" -N "$CLI" attach c0 pass || return 1
	x ingress add tcp 10.88.0.1:8080 vni 100 10.1.1.5:80 &&
		x ingress add udp 10.88.0.1:5353 vni 100 10.1.1.5:5353
}
if setup; then ok "topology up (client, node with ingress, pod)"; else not_ok "topology up"; summary; exit 1; fi

# The pod: an HTTP server (its log names each client) and a UDP echo.
mkdir -p "$TMP/www"
head -c 3000000 /dev/urandom > "$TMP/www/big.bin"
echo "hello from the pod $$" > "$TMP/www/hello.txt"
# (http.server's own main looks the address up in DNS first, which in a pod
# with a default route waits for resolver timeouts: bind without it.)
httpd() { # httpd NS ADDR PORT DIR LOG
	exec ip netns exec "$1" python3 -c '
import functools, http.server, socketserver, sys
class S(http.server.ThreadingHTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[3])
S((sys.argv[1], int(sys.argv[2])), h).serve_forever()
' "$2" "$3" "$4" >"$5" 2>&1
}
httpd "$POD" 10.1.1.5 80 "$TMP/www" "$TMP/http.log" &
PIDS="$PIDS $!"
ip netns exec "$POD" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.5", 5353))
while True:
    d, a = s.recvfrom(2048)
    s.sendto(b"echo:" + d + b":" + a[0].encode(), a)
' &
PIDS="$PIDS $!"
# The node's own service on its public address, on a port with no session.
httpd "$NODE" 10.88.0.1 2222 "$TMP" /dev/null &
PIDS="$PIDS $!"
listening() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .; }
wait_for 10 listening "$POD" 80 && wait_for 10 listening "$NODE" 2222 ||
	not_ok "servers did not start"

cl() { ip netns exec "$CLI" "$@"; }
check "curl through the session (TCP 10.88.0.1:8080 -> pod :80)" \
	sh -c "ip netns exec $CLI curl -sf --max-time 5 http://10.88.0.1:8080/hello.txt | grep -qx 'hello from the pod $$'"
cl curl -sf --max-time 20 -o "$TMP/got.bin" http://10.88.0.1:8080/big.bin
check "3 MB through the session arrive intact (checksums right both ways)" \
	cmp -s "$TMP/got.bin" "$TMP/www/big.bin"
check "the pod saw the client's own address" grep -q '^10\.88\.0\.2 ' "$TMP/http.log"
udp_roundtrip() {
	cl python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect(("10.88.0.1", 5353))  # replies from another source are not received
for i in range(3):
    s.send(b"ping%d" % i)
    want = b"echo:ping%d:10.88.0.2" % i
    got = s.recv(2048)
    if got != want:
        print(got, file=sys.stderr)
        sys.exit(1)
'
}
check "UDP echo through the session, from the session's public endpoint" udp_roundtrip
# RFC 5508: the pod's port unreachable comes back about the public endpoint,
# so the client's connected socket is refused (it would ignore an error
# quoting the pod's address).
x ingress add udp 10.88.0.1:5354 vni 100 10.1.1.5:5354
udp_refused() {
	cl python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect(("10.88.0.1", 5354))
s.send(b"anyone?")
try:
    s.recv(2048)
except ConnectionRefusedError:
    sys.exit(0)
sys.exit(1)
'
}
check "the pod's port unreachable reaches the client translated (connection refused)" udp_refused
[ "$(counter vp1 ingress_icmp_snat)" -gt 0 ] && ok "counted ingress_icmp_snat on vp1" ||
	not_ok "ingress_icmp_snat $(counter vp1 ingress_icmp_snat)"
check "the host's own service on the public address (no session) still answers" \
	cl curl -sf --max-time 5 -o /dev/null http://10.88.0.1:2222/
check "ping of the public address is the host's" cl ping -c1 -W2 10.88.0.1

[ "$(counter nic0 ingress_dnat)" -gt 0 ] && [ "$(counter vp1 ingress_snat)" -gt 0 ] &&
	ok "counted: ingress_dnat on nic0, ingress_snat on vp1" ||
	not_ok "ingress_dnat $(counter nic0 ingress_dnat), ingress_snat $(counter vp1 ingress_snat)"
[ "$(counter nic0 pass_no_session)" -gt 0 ] && ok "the host's traffic counted pass_no_session" ||
	not_ok "pass_no_session $(counter nic0 pass_no_session)"
x ingress ls -o json > "$TMP/ls.json"
python3 - "$TMP/ls.json" <<'PY' && ok "ingress ls: both directions counted, idle time known" || not_ok "ingress ls counters"
import json, sys
d = {r["proto"] + " " + r["public"]: r for r in json.load(open(sys.argv[1]))}
t, u = d["tcp 10.88.0.1:8080"], d["udp 10.88.0.1:5353"]
assert t["in"]["bytes"] > 10000 and t["out"]["bytes"] > 3000000, t
assert u["in"]["packets"] == 3 and u["out"]["packets"] == 3, u
assert t["idle_ms"] is not None and t["idle_ms"] < 60000, t
PY

# iperf3 through a session while sessions churn around it.
x ingress add tcp 10.88.0.1:30201 vni 100 10.1.1.5:5201
ip netns exec "$POD" iperf3 -s -B 10.1.1.5 -p 5201 -1 >/dev/null 2>&1 &
PIDS="$PIDS $!"
wait_for 10 listening "$POD" 5201 || not_ok "iperf3 server did not start"
cl timeout 30 iperf3 -c 10.88.0.1 -p 30201 -t 4 -J >"$TMP/iperf.json" 2>/dev/null &
ipc=$!
sleep 0.5
"$CHURN" "$NODE" 10.88.0.1 100 10.1.1.5 40000 1000 3 >"$TMP/churn.txt" 2>&1 &&
	ok "1,000 sessions added and removed 3 times during the stream ($(cat "$TMP/churn.txt"))" ||
	not_ok "session churn: $(cat "$TMP/churn.txt")"
wait "$ipc"
python3 - "$TMP/iperf.json" <<'PY' && ok "iperf3 through the session: the stream carried on" || not_ok "iperf3 through the session"
import json, sys
b = json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]
print("received", b)
sys.exit(0 if b > 1000000 else 1)
PY
x ingress ls -o json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sorted((r["proto"], r["public"]) for r in d))
sys.exit(0 if len(d) == 4 else 1)' >"$TMP/left.txt" &&
	ok "no stray session after the churn" || not_ok "sessions left: $(cat "$TMP/left.txt")"
rev=$(bpftool map dump pinned "/sys/fs/bpf/xgate/$NODE/xg_sess_rev" -j | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$rev" = 4 ] && ok "no stray reverse entry after the churn" || not_ok "reverse entries: $rev"

# A deleted session: the next connection goes to the host stack, which has
# no listener there (refused), and the pod's server is not reached.
x ingress del tcp 10.88.0.1:8080
before=$(grep -c '^10\.88\.0\.2 ' "$TMP/http.log")
cl curl -s --max-time 5 -o /dev/null http://10.88.0.1:8080/hello.txt
rc=$?
[ "$rc" -eq 7 ] && ok "after del: connection refused by the host (curl exit 7)" ||
	not_ok "after del: curl exit $rc, wanted 7 (refused)"
[ "$(grep -c '^10\.88\.0\.2 ' "$TMP/http.log")" -eq "$before" ] &&
	ok "after del: the pod saw nothing" || not_ok "after del: the pod still got a request"
x ingress flush
check_not "after flush: no UDP echo" udp_roundtrip
summary
