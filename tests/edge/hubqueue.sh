#!/usr/bin/env bash
# The hub's send queue to one child is bounded ([Hub] SendQueueMax): a child
# (hubclient.py, python3-websockets) that keeps heartbeating but reads
# nothing is dropped once it is that far behind, instead of growing the
# parent's memory for as long as it stays; when it reads again it comes
# back and catches up by digest (list, fetch).
# usage: hubqueue.sh PATH/TO/edgeclusterd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
PY=/usr/bin/python3 # the distribution's: python3-websockets lives there
T=$(mktemp -d /tmp/xgt-hubq-XXXXXX)
PID=
KID=
cleanup() {
	for p in $PID $KID; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

# missions of 48 KiB: more than the socket's send buffer can take (tcp_wmem's
# ceiling, 4 MiB here) plus 1 MiB of queue: at least 120 (~6 MiB)
WMEM=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem 2>/dev/null || echo 4194304)
N=$(((WMEM + (2 << 20)) / 49152))
[ "$N" -ge 120 ] || N=120
PORT=$(free_port)
TOK=$(secret tok)
JOIN=$(secret join)
cat > "$T/p.conf" <<EOC
[Cluster]
Name = p
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
MaxBody = 64K
MaxListBody = 64M
[Hub]
JoinToken = $JOIN
SendQueueMax = 1M
[Store]
Database = $T/p.db
EOC
"$ECD" -c "$T/p.conf" 2>> "$T/p.log" & PID=$!
wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz" && ok "parent p serves" ||
	{ not_ok "p did not start: $(cat "$T/p.log")"; summary; exit 1; }

mkdir "$T/py"
touch "$T/stall"
$PY "$HERE/hubclient.py" child "ws://127.0.0.1:$PORT" py "$JOIN" "$T/py" --stall "$T/stall" & KID=$!
wait_for 20 grep -q "hub: py .*attached" "$T/p.log" && ok "child py attached (and stopped reading)" ||
	{ not_ok "py did not attach: $(cat "$T/p.log" "$T/py/log")"; summary; exit 1; }

# one MissionList of N missions placed on py only: the hub sends them to py in ~256 KiB messages
$PY - "$PORT" "$TOK" "$N" <<'EOP' && ok "$N missions of 48 KiB created at p" || not_ok "creating the missions"
import http.client, json, sys
port, tok, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
items = [{"apiVersion": "edge.xgate.io/v1", "kind": "Mission", "metadata": {"name": "q%03d" % i},
          "spec": {"content": ("%03d" % i) * 16384, "placement": {"clusters": ["py"]}}}
         for i in range(n)]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
c.request("POST", "/apis/edge.xgate.io/v1/missions",
          json.dumps({"apiVersion": "edge.xgate.io/v1", "kind": "MissionList", "items": items}),
          {"Authorization": "Bearer " + tok, "Content-Type": "application/json"})
r = c.getresponse()
r.read()
sys.exit(0 if r.status == 201 else "POST: %d" % r.status)
EOP

wait_for 30 grep -q "hub: py .*over SendQueueMax" "$T/p.log" &&
	ok "the hub drops py once its queue is over SendQueueMax: $(grep -o 'not reading.*queued)' "$T/p.log" | head -1)" ||
	not_ok "py was not dropped: $(grep 'hub:' "$T/p.log" | tail -3)"
curl -sf -H "Authorization: Bearer $TOK" "http://127.0.0.1:$PORT/apis/edge.xgate.io/v1/edgeclusters/py" |
	jq -e '.state.health == "disconnected"' > /dev/null && ok "p shows py disconnected" ||
	not_ok "py's health at p: $(curl -s -H "Authorization: Bearer $TOK" "http://127.0.0.1:$PORT/apis/edge.xgate.io/v1/edgeclusters/py")"
kill -0 "$PID" 2>/dev/null && ok "p is still running" || not_ok "p died: $(tail -5 "$T/p.log")"

# reading again: py reconnects with its (empty) digest and gets everything by list and fetch
rm -f "$T/stall"
have() { [ "$(wc -l < "$T/py/missions" 2>/dev/null)" = "$N" ]; }
wait_for 60 have && ok "py came back and holds all $N missions" ||
	not_ok "py holds $(wc -l < "$T/py/missions" 2>/dev/null) of $N missions: $(tail -5 "$T/py/log")"
grep -q "^.* list $N fetch" "$T/py/log" && ok "it caught up by digest (a list of $N, then fetch)" ||
	not_ok "no list at py: $(grep -c missions "$T/py/log") missions messages"
wait_for 20 sh -c "curl -sf -H 'Authorization: Bearer $TOK' http://127.0.0.1:$PORT/apis/edge.xgate.io/v1/edgeclusters/py |
	jq -e '.state.health == \"ok\"'" && ok "p shows py ok again" || not_ok "py not ok at p"
summary
