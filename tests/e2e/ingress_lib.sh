# The session-ingress end-to-end tests' shared checks (sourced after
# tests/lib.sh, with XGATE set).

counter() { # counter NS DEV REASON: packets
	"$XGATE" -N "$1" stats "$2" -o json | python3 -c '
import json,sys
d=json.load(sys.stdin); r=sys.argv[1]
print(sum(v.get(r,{}).get("packets",0) for v in (x["counters"] for x in d)))' "$3"
}

listening() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .; }

refused() { # refused NS BIND_IP BIND_PORT DST_IP DST_PORT
	ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
if sys.argv[2] != "0":
    s.bind((sys.argv[1], int(sys.argv[2])))
s.connect((sys.argv[3], int(sys.argv[4])))
s.send(b"anyone?")
try:
    s.recv(2048)
except ConnectionRefusedError:
    sys.exit(0)
sys.exit(1)
' "$2" "$3" "$4" "$5"
}
