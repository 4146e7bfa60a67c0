#!/usr/bin/env bash
# edgeclusterd's HTTP/JSON API over real sockets, with curl as the
# independent client: CRUD and optimistic concurrency, auth, body limits,
# field-path validation errors, garbage on the socket, kill -9 and restart,
# config errors, TLS, and the xgate verbs against the same daemon.
# usage: api.sh PATH/TO/edgeclusterd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
XG=$(readlink -f "$2")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
T=$(mktemp -d /tmp/xgt-edge-XXXXXX)
PID=
BUSY=
cleanup() {
	for p in $PID $BUSY; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

PORT=$(free_port)
TOK=$(secret tok)
API=http://127.0.0.1:$PORT/apis/edge.xgate.io/v1
cat > "$T/e.conf" <<EOF
[Cluster]
Name = edge-a
Labels = zone=east, tier=edge
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
MaxBody = 64K
MaxListBody = 1M
[Store]
Database = $T/db/edge-a.db
EOF

start() { # start CONF: run the daemon, wait until /healthz answers
	"$ECD" -c "$1" 2>> "$T/ecd.log" & PID=$!
	wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz"
}
stop() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=; }
alive() { [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; }
post() { req POST /missions -H 'Content-Type: application/json' --data-binary "$1"; }
put() { req PUT "/missions/$1" -H 'Content-Type: application/json' --data-binary "$2"; }
mission() { # mission NAME [SPEC] [METADATA-EXTRA]
	local spec=${2:-}
	[ -n "$spec" ] || spec='{"command":{"command":["/bin/true"]}}'
	printf '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":"%s"%s},"spec":%s}' \
		"$1" "${3:-}" "$spec"
}

start "$T/e.conf" && ok "edgeclusterd serves on 127.0.0.1:$PORT" || { not_ok "daemon did not start: $(cat "$T/ecd.log")"; summary; exit 1; }
ss -Hltn "sport = :$PORT" | grep -q "127.0.0.1:$PORT" && ok "listens on loopback only" || not_ok "listen address: $(ss -Hltn "sport = :$PORT")"

# ---- create, get, list, replace, delete ----
post "$(mission web '{"content":"kind: Pod","placement":{"clusters":["edge-a"],"matchLabels":{"zone":"east"}}}' ',"labels":{"app":"web"}')"
expect_code 201 "create mission web"
UID1=$(j .metadata.uid); RV1=$(j .metadata.resourceVersion)
[[ "$UID1" =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] && ok "uid is a UUIDv4 ($UID1)" || not_ok "uid '$UID1'"
[[ "$RV1" =~ ^[0-9]+$ ]] && [ "$(j '.metadata.resourceVersion|type')" = string ] && ok "resourceVersion is a decimal string ($RV1)" || not_ok "resourceVersion '$RV1'"
[[ "$(j .metadata.creationTimestamp)" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] && ok "creationTimestamp is RFC 3339" || not_ok "creationTimestamp $(j .metadata.creationTimestamp)"
[ "$(j .state)" = "{}" ] && ok "state starts empty" || not_ok "state $(j .state)"
post "$(mission web)"; expect_code 409 "create the same name again"
[ "$(j .reason)" = AlreadyExists ] && ok "reason AlreadyExists" || not_ok "reason $(j .reason)"
req GET /missions/web; expect_code 200 "get web"
[ "$(j .metadata.uid)" = "$UID1" ] && [ "$(j .spec.content)" = "kind: Pod" ] && [ "$(j .metadata.labels.app)" = web ] && ok "get returns what was created" || not_ok "get: $BODY"
post "$(mission db '{"content":"x"}' ',"labels":{"app":"db"}')"; expect_code 201 "create mission db"
req GET /missions; expect_code 200 "list"
[ "$(j '.kind')" = MissionList ] && [ "$(j '.items|length')" = 2 ] && [ "$(j '[.items[].metadata.name]|join(",")')" = db,web ] && ok "list has db and web, in name order" || not_ok "list: $BODY"
[ "$(j .metadata.resourceVersion)" -ge "$RV1" ] 2>/dev/null && ok "list carries the current revision" || not_ok "list rv $(j .metadata.resourceVersion)"
req GET '/missions?labelSelector=app%3Dweb'; [ "$(j '[.items[].metadata.name]|join(",")')" = web ] && ok "labelSelector app=web" || not_ok "selector: $BODY"
req GET '/missions?labelSelector=app!%3Dweb,app'; [ "$(j '[.items[].metadata.name]|join(",")')" = db ] && ok "labelSelector app!=web,app" || not_ok "selector: $BODY"
req GET '/missions?labelSelector=bad%20key'; expect_code 400 "bad labelSelector"

put web "$(mission web '{"content":"kind: Pod v2"}' ",\"resourceVersion\":\"$RV1\",\"labels\":{\"app\":\"web\"}")"
expect_code 200 "replace web with its resourceVersion"
RV2=$(j .metadata.resourceVersion)
[ "$RV2" -gt "$RV1" ] && [ "$(j .metadata.uid)" = "$UID1" ] && [ "$(j .spec.content)" = "kind: Pod v2" ] && ok "replace: new resourceVersion $RV2, same uid, new spec" || not_ok "replace: $BODY"
put web "$(mission web '{"content":"kind: Pod v3"}' ",\"resourceVersion\":\"$RV1\"")"
expect_code 409 "replace with the stale resourceVersion $RV1"
[ "$(j .reason)" = Conflict ] && [ "$(j .details.field)" = metadata.resourceVersion ] && ok "409 Conflict names metadata.resourceVersion" || not_ok "conflict body: $BODY"
put web "$(mission web '{"content":"kind: Pod v2"}' ",\"resourceVersion\":\"$RV2\",\"labels\":{\"app\":\"web\"}")"
expect_code 200 "replace with nothing changed"
[ "$(j .metadata.resourceVersion)" = "$RV2" ] && ok "a no-op replace keeps the resourceVersion" || not_ok "no-op replace bumped to $(j .metadata.resourceVersion)"
put web "$(mission other '{"content":"x"}' ",\"resourceVersion\":\"$RV2\"")"
expect_code 400 "replace with another name in the body"
put nosuch "$(mission nosuch '{"content":"x"}' ',"resourceVersion":"1"')"; expect_code 404 "replace a missing mission"
req DELETE "/missions/web?resourceVersion=$RV1"; expect_code 409 "delete with a stale resourceVersion"
req DELETE "/missions/web?resourceVersion=$RV2"; expect_code 200 "delete with the current resourceVersion"
[ "$(j .metadata.uid)" = "$UID1" ] && ok "delete answers with the deleted mission" || not_ok "delete body: $BODY"
req GET /missions/web; expect_code 404 "get after delete"
[ "$(j .kind)/$(j .reason)" = Status/NotFound ] && ok "404 is a Status NotFound" || not_ok "404 body: $BODY"
req DELETE /missions/web; expect_code 404 "delete again"
req GET /nothing/here; expect_code 404 "unknown path"
req POST /missions/db; expect_code 405 "POST on a mission"
curl -s -o /dev/null -D "$T/h" -X POST -H "Authorization: Bearer $TOK" "$API/missions/db"
grep -qi '^allow: GET, PUT, PATCH, DELETE' "$T/h" && ok "405 lists the allowed methods" || not_ok "no Allow header: $(cat "$T/h")"
req POST /edgeclusters; expect_code 405 "edgeclusters are read-only"
OUT=$(curl -s -I -H "Authorization: Bearer $TOK" -o /dev/null -o /dev/null -w '%{http_code} %{num_connects} ' "$API/missions" "$API/missions")
[ "$OUT" = "405 1 405 0 " ] && ok "HEAD: 405 without a body, the connection stays usable" || not_ok "HEAD twice on one connection: $OUT"

# ---- edge clusters: this one ----
req GET /edgeclusters; expect_code 200 "list edgeclusters"
[ "$(j '.items|length')" = 1 ] && [ "$(j .items[0].metadata.name)" = edge-a ] && [ "$(j .items[0].state.health)" = ok ] &&
	[ "$(j '.items[0].state.children|length')" = 0 ] && [ "$(j .items[0].metadata.labels.zone)" = east ] &&
	ok "edgeclusters: edge-a itself, health ok, labels, no children" || not_ok "edgeclusters: $BODY"
CUID=$(j .items[0].metadata.uid)
req GET /edgeclusters/edge-a; expect_code 200 "get edgecluster edge-a"
req GET /edgeclusters/edge-b; expect_code 404 "get an unknown cluster"

# ---- auth ----
CODE=$(curl -s -o "$T/b" -w '%{http_code}' "$API/missions"); BODY=$(cat "$T/b")
expect_code 401 "no token"
[ "$(j .reason)" = Unauthorized ] && ok "401 is a Status Unauthorized" || not_ok "401 body: $BODY"
CODE=$(curl -s -o "$T/b" -w '%{http_code}' -H "Authorization: Bearer wrong-token-0123456789" "$API/missions"); BODY=$(cat "$T/b")
expect_code 401 "wrong token"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${TOK}x" "$API/missions"); expect_code 401 "token with a suffix"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Basic $TOK" "$API/missions"); expect_code 401 "Basic instead of Bearer"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$(mission sneaky)" "$API/missions"); expect_code 401 "create without a token"
req GET /missions/sneaky; expect_code 404 "the refused create wrote nothing"
CODE=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz"); expect_code 200 "/healthz needs no token"

# ---- bad bodies: 400, 411, 413, 415 ----
post '{"apiVersion": "edge.xgate.io/v1", "kind": '; expect_code 400 "malformed JSON"
[[ "$(j .message)" == *"invalid JSON at line 1 column"* ]] && ok "400 says where: $(j .message)" || not_ok "400 message: $BODY"
post '[]'; expect_code 400 "a JSON array"
post '{"kind":"Mission","kind":"Mission"}'; expect_code 400 "duplicate keys"
req POST /missions -H 'Content-Type: text/yaml' --data-binary "$(mission m415)"; expect_code 415 "Content-Type text/yaml"
head -c 70000 /dev/zero | tr '\0' ' ' > "$T/big"
req POST /missions -H 'Content-Type: application/json' --data-binary @"$T/big"; expect_code 413 "a body over MaxBody (64K)"
[ "$(j .reason)" = RequestEntityTooLarge ] && ok "413 is a Status RequestEntityTooLarge" || not_ok "413 body: $BODY"
head -c 3000000 /dev/zero | tr '\0' ' ' > "$T/huge"
req POST /missions -H 'Content-Type: application/json' --data-binary @"$T/huge"; expect_code 413 "a 3 MB body (curl waits for 100-continue)"
req POST /missions -H 'Content-Type: application/json' -H 'Expect:' --data-binary @"$T/huge"; expect_code 413 "a 3 MB body sent at once"
req POST /missions -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "$(mission chunky)"; expect_code 411 "a chunked body"
python3 - "$PORT" "$TOK" > "$T/py413" 2>&1 <<'EOF'
# Content-Length far over the limit, body streamed until the server answers
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"POST /apis/edge.xgate.io/v1/missions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
          + sys.argv[2].encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
try:
    for _ in range(50):
        s.sendall(b"x" * 65536)
except OSError:
    pass
print(s.recv(200).split(b"\r\n")[0].decode())
EOF
grep -q '^HTTP/1.1 413' "$T/py413" && ok "Content-Length: 1 GB is answered 413 while the body streams" || not_ok "streamed 413: $(cat "$T/py413")"

# ---- 422 with the exact field path ----
bad() { # bad FIELD BODY [description]
	post "$2"
	if [ "$CODE" = 422 ] && [ "$(j .details.field)" = "$1" ] && [ "$(j .reason)" = Invalid ] && [[ "$(j .message)" == "$1: "* ]]; then
		ok "422 ${3:-$1}: $(j .message)"
	else
		not_ok "wanted 422 at $1: $CODE $BODY"
	fi
}
bad apiVersion '{"apiVersion":"v1","kind":"Mission","metadata":{"name":"x"},"spec":{"content":"x"}}' "wrong apiVersion"
bad kind '{"apiVersion":"edge.xgate.io/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"content":"x"}}' "unknown kind"
bad kind '{"apiVersion":"edge.xgate.io/v1","metadata":{"name":"x"},"spec":{"content":"x"}}' "missing kind"
bad status "$(mission x '{"content":"x"}' | sed 's/}$/,"status":{}}/')" "unknown top-level field"
bad metadata.name "$(mission Bad_Name)" "invalid name"
bad metadata.name '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":42},"spec":{"content":"x"}}' "name of the wrong type"
bad metadata.name '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{},"spec":{"content":"x"}}' "missing name"
bad 'metadata.labels.bad key' "$(mission x '{"content":"x"}' ',"labels":{"bad key":"v"}')" "bad label key"
bad metadata.labels.app "$(mission x '{"content":"x"}' ',"labels":{"app":"-v-"}')" "bad label value"
bad spec "$(mission x '{}')" "spec without content or command"
bad spec.content "$(mission x '{"content":42}')" "content of the wrong type"
bad spec.command.command "$(mission x '{"command":{"command":"ls -l"}}')" "command as a string, not argv"
bad 'spec.command.command[1]' "$(mission x '{"command":{"command":["ls",true]}}')" "argv with a boolean"
bad spec.command.timeoutSeconds "$(mission x '{"command":{"command":["ls"],"timeoutSeconds":0}}')" "timeout 0"
bad 'spec.placement.clusters[1]' "$(mission x '{"content":"x","placement":{"clusters":["b","B"]}}')" "cluster name upper case"
bad spec.placement.matchLabels.zone "$(mission x '{"content":"x","placement":{"matchLabels":{"zone":1}}}')" "matchLabels value of the wrong type"
bad spec.stateCheck.command "$(mission x '{"content":"x","stateCheck":{}}')" "stateCheck without command"
bad spec.placment "$(mission x '{"content":"x","placment":{}}')" "misspelt spec field"
bad metadata.resourceVersion "$(mission x '{"content":"x"}' ',"resourceVersion":"5"')" "resourceVersion on create"
req GET /missions/x; expect_code 404 "no refused body was stored"

# ---- MissionList: a bulk create, all or nothing ----
mlist() { # mlist PREFIX N [CONTENT-BYTES]: a MissionList of N missions PREFIX-0000, ...
	python3 - "$@" <<'PY'
import json, sys
p, n = sys.argv[1], int(sys.argv[2])
size = int(sys.argv[3]) if len(sys.argv) > 3 else 10
print(json.dumps({"apiVersion": "edge.xgate.io/v1", "kind": "MissionList", "items": [
    {"apiVersion": "edge.xgate.io/v1", "kind": "Mission",
     "metadata": {"name": "%s-%04d" % (p, i), "labels": {"bulk": p}},
     "spec": {"content": "x" * size}} for i in range(n)]}))
PY
}
postf() { req POST /missions -H 'Content-Type: application/json' --data-binary @"$1"; }
req GET /missions; REV0=$(j .metadata.resourceVersion)
mlist bulk 3 > "$T/l3.json"
postf "$T/l3.json"; expect_code 201 "MissionList of 3"
[ "$(j .kind)" = MissionList ] && [ "$(j '[.items[].metadata.name]|join(",")')" = bulk-0000,bulk-0001,bulk-0002 ] &&
	[ "$(j '[.items[].metadata.uid|select(test("^[0-9a-f-]{36}$"))]|length')" = 3 ] &&
	[ "$(j "[.items[].metadata.resourceVersion|tonumber] == [range($((REV0 + 1)); $((REV0 + 4)))]")" = true ] &&
	[ "$(j '[.items[].metadata.creationTimestamp|select(test("^[0-9-]{10}T[0-9:]{8}Z$"))]|length')" = 3 ] &&
	[ "$(j .metadata.resourceVersion)" = $((REV0 + 3)) ] &&
	ok "201: the missions in order, each with a uid, its own resourceVersion, a creationTimestamp" || not_ok "MissionList answer: $BODY"
req GET /missions/bulk-0001; expect_code 200 "an item of the list is stored"
grep -q "mission bulk-0002 created (rv $((REV0 + 3))) by 127.0.0.1 (MissionList item 3 of 3)" "$T/ecd.log" && ok "one log line per created mission" || not_ok "log: $(grep bulk- "$T/ecd.log")"

req GET /missions; REV1=$(j .metadata.resourceVersion); N1=$(j '.items|length')
mlist inv 4 | jq -c '.items[2].spec.placement = {"clusters": ["ok", "Bad_Name"]}' > "$T/inv.json"
postf "$T/inv.json"; expect_code 422 "a list with an invalid item"
[ "$(j .details.field)" = 'items[2].spec.placement.clusters[1]' ] && [[ "$(j .message)" == 'items[2].spec.placement.clusters[1]: '* ]] && ok "422 names the item: $(j .message)" || not_ok "422 body: $BODY"
mlist dup 3 | jq -c '.items += [.items[1]]' > "$T/dup.json"
postf "$T/dup.json"; expect_code 409 "a list with a name twice"
[ "$(j .details.field)" = 'items[3].metadata.name' ] && [ "$(j .reason)" = Conflict ] && ok "409 names both: $(j .message)" || not_ok "409 body: $BODY"
mlist new 3 | jq -c '.items += [.items[0] | .metadata.name = "bulk-0001"]' > "$T/new.json"
postf "$T/new.json"; expect_code 409 "a list with an existing name"
[ "$(j .details.field)" = 'items[3].metadata.name' ] && [ "$(j .reason)" = AlreadyExists ] && [[ "$(j .message)" == *'"bulk-0001" already exists'* ]] && ok "409 AlreadyExists names it: $(j .message)" || not_ok "409 body: $BODY"
mlist cap 5001 > "$T/cap.json"
postf "$T/cap.json"; expect_code 413 "a list of 5001 missions"
[ "$(j .details.field)" = items ] && ok "413 names items: $(j .message)" || not_ok "413 body: $BODY"
mlist big 2 70000 > "$T/bigitem.json"
postf "$T/bigitem.json"; expect_code 413 "a list with a mission over MaxBody (64K)"
[ "$(j .details.field)" = 'items[0]' ] && ok "413 names the item: $(j .message)" || not_ok "413 body: $BODY"
mlist huge 5 300000 > "$T/huge.json"
postf "$T/huge.json"; expect_code 413 "a 1.5 MB list, over MaxListBody (1M)"
[[ "$(j .message)" == *MaxListBody* ]] && ok "413 names MaxListBody: $(j .message)" || not_ok "413 body: $BODY"
req GET /missions
[ "$(j .metadata.resourceVersion)" = "$REV1" ] && [ "$(j '.items|length')" = "$N1" ] &&
	[ "$(j '[.items[].metadata.name|select(test("^(inv|dup|new|cap|big|huge)-"))]|length')" = 0 ] &&
	ok "no refused list wrote anything (revision $REV1, $N1 missions)" || not_ok "refused lists wrote: $(j '[.items[].metadata.name]')"

# ---- a large list: created in one POST, listed whole (streamed, chunked) ----
mlist many 300 300 > "$T/l300.json"
[ "$(stat -c %s "$T/l300.json")" -gt 65536 ] || not_ok "the 300-mission list is not over MaxBody"
postf "$T/l300.json"; expect_code 201 "300 missions in one MissionList ($(stat -c %s "$T/l300.json") bytes, over MaxBody)"
[ "$(j '.items|length')" = 300 ] && [ "$(j .metadata.resourceVersion)" = $((REV1 + 300)) ] && ok "201 with 300 items, revision +300" || not_ok "300: $(j '.items|length') $(j .metadata.resourceVersion)"
CODE=$(curl -s -D "$T/lh" -o "$T/list" -w '%{http_code}' -H "Authorization: Bearer $TOK" "$API/missions"); BODY=
expect_code 200 "list of $((N1 + 300)) missions"
grep -qi '^transfer-encoding: chunked' "$T/lh" && ! grep -qi '^content-length' "$T/lh" && ok "the list is streamed (chunked, no Content-Length)" || not_ok "list headers: $(cat "$T/lh")"
jq -e --argjson n $((N1 + 300)) --arg rv $((REV1 + 300)) '.kind == "MissionList" and .apiVersion == "edge.xgate.io/v1" and
	.metadata.resourceVersion == $rv and (.items|length) == $n and
	([.items[].metadata.name] as $m | $m == ($m|sort) and ($m|unique|length) == $n) and
	([.items[]|select(.metadata.name|startswith("many-"))|select(.spec.content|length == 300)]|length) == 300' "$T/list" > /dev/null &&
	ok "valid JSON, complete: $((N1 + 300)) missions in name order, once each, the current revision" || not_ok "list: $(head -c 300 "$T/list")"
req GET '/missions?labelSelector=bulk%3Dmany'; [ "$(j '.items|length')" = 300 ] && ok "labelSelector bulk=many: 300" || not_ok "selector: $(j '.items|length')"
req GET '/missions?labelSelector=bulk%3Dnone'; [ "$(j .kind)/$(j '.items|length')" = MissionList/0 ] && ok "a selector matching nothing: an empty MissionList" || not_ok "empty selector: $BODY"
# pages of 100 of the 300 (limit with a labelSelector), each after the last
PAGES= CONT= NAMES=
while :; do
	req GET "/missions?labelSelector=bulk%3Dmany&limit=100${CONT:+&continue=$CONT}"
	[ "$CODE" = 200 ] || break
	PAGES="$PAGES $(j '.items|length')"; NAMES="$NAMES $(j '[.items[].metadata.name]|join(" ")')"
	CONT=$(j '.metadata.continue // ""'); [ -n "$CONT" ] || break
done
[ "$PAGES" = " 100 100 100" ] && [ "$(echo $NAMES | tr ' ' '\n' | sort -u | wc -l)" = 300 ] &&
	ok "limit=100, continue: three pages of 100, every mission once" || not_ok "pages:$PAGES ($CODE $(j .message))"
req GET '/missions?limit=100&continue=eyJ2IjoxfQ'; expect_code 400 "a continue token this server did not give"
[ "$(j .details.field)" = continue ] && ok "its Status names continue: $(j .message)" || not_ok "bad token: $BODY"
req GET '/missions?limit=-5'; expect_code 400 "limit=-5"

# ---- garbage on the socket, then it still serves ----
python3 - "$PORT" <<'EOF'
import os, socket, sys, time
port = int(sys.argv[1])
payloads = [os.urandom(4096), b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(600),
            b"GET / HTTP/1.1\r\n" + b"X-Long: " + b"a" * 100000 + b"\r\n\r\n",
            b"GET /apis/edge.xgate.io/v1/missions HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
            b"POST /apis/edge.xgate.io/v1/missions HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            b"\r\n" * 5000, b"GET /\x00\xff HTTP/9.9\r\n\r\n", b"G"]
for p in payloads:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=3)
        s.sendall(p)
        s.shutdown(socket.SHUT_WR)
        while s.recv(4096):
            pass
    except OSError:
        pass
    finally:
        s.close()
# and connections that go away mid-request
for _ in range(50):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.sendall(b"PUT /apis/edge.xgate.io/v1/missions/x HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
    s.close()
EOF
alive && ok "garbage on the socket: the daemon is still running" || not_ok "the daemon died on garbage"
req GET /missions/db; expect_code 200 "and still serves"

# ---- concurrent writers ----
CURLS=()
for i in $(seq 1 20); do
	curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
		--data-binary "$(mission "par-$i" '{"content":"x"}')" "$API/missions" >> "$T/par" &
	CURLS+=($!)
done
wait "${CURLS[@]}"
[ "$(grep -c '^201$' "$T/par")" = 20 ] && ok "20 parallel creates: 20 x 201" || not_ok "parallel creates: $(sort "$T/par" | uniq -c | tr '\n' ' ')"
req GET /missions
[ "$(j '[.items[].metadata.resourceVersion]|unique|length')" = "$(j '.items|length')" ] && ok "every write got its own resourceVersion" || not_ok "duplicate resourceVersions"

# ---- kill -9 and restart: every committed write is still there ----
req GET /missions; BEFORE=$(j '[.items[]|{n:.metadata.name,u:.metadata.uid,r:.metadata.resourceVersion,c:.metadata.creationTimestamp,s:.spec,l:.metadata.labels}]')
REV=$(j .metadata.resourceVersion)
kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=
sed 's/^MaxBody = .*/MaxBody = 4M/' "$T/e.conf" > "$T/e4m.conf"
start "$T/e4m.conf" && ok "restart after kill -9 (now with MaxBody 4M)" || not_ok "no restart after kill -9"
req GET /missions; AFTER=$(j '[.items[]|{n:.metadata.name,u:.metadata.uid,r:.metadata.resourceVersion,c:.metadata.creationTimestamp,s:.spec,l:.metadata.labels}]')
[ -n "$BEFORE" ] && [ "$BEFORE" = "$AFTER" ] && ok "all $(j '.items|length') missions back with the same uid, resourceVersion, spec" || not_ok "missions differ after kill -9"
[ "$(j .metadata.resourceVersion)" = "$REV" ] && ok "revision $REV kept" || not_ok "revision $(j .metadata.resourceVersion) != $REV"
post "$(mission after-restart)"; [ "$CODE" = 201 ] && [ "$(j .metadata.resourceVersion)" -gt "$REV" ] && ok "the next write continues the revision" || not_ok "write after restart: $CODE $BODY"
req GET /edgeclusters/edge-a; [ "$(j .metadata.uid)" = "$CUID" ] && ok "the cluster keeps its uid across restarts" || not_ok "cluster uid changed"
python3 -c 'import json; print(json.dumps({"apiVersion": "edge.xgate.io/v1", "kind": "Mission",
	"metadata": {"name": "big"}, "spec": {"content": "x" * 2000000}}))' > "$T/big.json"
curl -sv -o /dev/null -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
	--data-binary @"$T/big.json" "$API/missions" 2> "$T/cont"
grep -q '< HTTP/1.1 100 Continue' "$T/cont" && grep -q '< HTTP/1.1 201' "$T/cont" && ok "a 2 MB body: 100 Continue, then 201" || not_ok "100-continue: $(grep '^<' "$T/cont" | head -3)"
req GET /missions/big; [ "$(j '.spec.content|length')" = 2000000 ] && ok "the 2 MB content arrived whole" || not_ok "big content: $(j '.spec.content|length')"

# ---- the xgate verbs against the same daemon ----
export XGATE_SERVER=http://127.0.0.1:$PORT
unset XGATE_TOKEN XGATE_TOKEN_FILE
cat > "$T/m.json" <<'EOF'
{"apiVersion": "edge.xgate.io/v1", "kind": "Mission",
 "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
 "spec": {"content": "apiVersion: apps/v1\nkind: Deployment\n",
          "placement": {"clusters": ["edge-a", "edge-b"], "matchLabels": {"zone": "east"}}}}
EOF
expect_rc 5 "xgate without a token" "$XG" mission get
expect_err "missing bearer token" "401 printed"
expect_rc 5 "xgate with a wrong token" "$XG" mission get --token wrong-token-0123456789
expect_err "invalid bearer token" "wrong token printed"
export XGATE_TOKEN=$TOK
OUT=$("$XG" mission apply -f "$T/m.json" 2>&1) && [ "$OUT" = "mission nginx created" ] && ok "apply: created" || not_ok "apply: $OUT"
OUT=$("$XG" mission apply -f "$T/m.json" 2>&1) && [ "$OUT" = "mission nginx unchanged" ] && ok "apply again: unchanged" || not_ok "apply again: $OUT"
RVX=$("$XG" mission get nginx -o json | jq -r .metadata.resourceVersion)
sed -i 's/"app": "nginx"/"app": "nginx2"/' "$T/m.json"
OUT=$("$XG" mission apply -f "$T/m.json" 2>&1) && [ "$OUT" = "mission nginx configured" ] && ok "apply a change: configured (replace)" || not_ok "apply change: $OUT"
mlist cli 3 > "$T/cl.json"
OUT=$("$XG" mission apply -f "$T/cl.json" 2>&1) && [ "$OUT" = "$(printf 'mission cli-000%s created\n' 0 1 2 | head -c -1)" ] && ok "apply a MissionList: one line per mission" || not_ok "apply list: $OUT"
[ "$(grep -c 'mission cli-.*(MissionList item' "$T/ecd.log")" = 3 ] && ok "in one MissionList POST" || not_ok "list apply log: $(grep 'cli-' "$T/ecd.log")"
OUT=$("$XG" mission apply -f "$T/cl.json" 2>&1) && [ "$OUT" = "$(printf 'mission cli-000%s unchanged\n' 0 1 2 | head -c -1)" ] && ok "apply it again: one by one, unchanged" || not_ok "apply list again: $OUT"
jq -c '.items[1].spec.content = "changed"' "$T/cl.json" > "$T/cl2.json"
OUT=$("$XG" mission apply -f "$T/cl2.json" 2>&1) && [ "$OUT" = "$(printf 'mission cli-0000 unchanged\nmission cli-0001 configured\nmission cli-0002 unchanged')" ] && ok "apply a list with one change: configured" || not_ok "apply changed list: $OUT"
# a directory of files (one Mission each; a MissionList among them) and repeated -f: one request
mkdir -p "$T/md"
for i in 0 1 2; do mlist dir 3 | jq -c ".items[$i]" > "$T/md/m$i.json"; done
mlist dirl 2 > "$T/md/z-list.json"
echo "not json, not read" > "$T/md/README"
OUT=$("$XG" mission apply -f "$T/md" 2>&1) &&
	[ "$OUT" = "$(printf 'mission dir-000%s created\n' 0 1 2; printf 'mission dirl-000%s created\n' 0 1 | head -c -1)" ] &&
	ok "apply -f DIR: its *.json files in name order, a list's items among them" || not_ok "apply dir: $OUT"
[ "$(grep -c 'mission dirl\?-.*(MissionList item [0-9] of 5)' "$T/ecd.log")" = 5 ] && ok "all 5 in one MissionList POST" || not_ok "dir apply log: $(grep 'dir' "$T/ecd.log")"
jq -c '.spec.content = "changed"' "$T/md/m1.json" > "$T/m1x.json"
OUT=$("$XG" mission apply -f "$T/md/m0.json" -f "$T/m1x.json" 2>&1) &&
	[ "$OUT" = "$(printf 'mission dir-0000 unchanged\nmission dir-0001 configured')" ] &&
	ok "apply -f A -f B: existing ones one by one (unchanged, configured)" || not_ok "apply -f -f: $OUT"
printf '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":"Bad_Name"},"spec":{}}' > "$T/md/m3.json"
mlist dirn 1 | jq -c '.items[0]' > "$T/md/a-new.json"
OUT=$("$XG" mission apply -f "$T/md" 2>&1); RC=$?
[ "$RC" = 2 ] && echo "$OUT" | grep -q "items\[4\]" && echo "$OUT" | grep -q "(items\[4\] is $T/md/m3.json)" &&
	ok "a bad file in a directory: 422 for all, and the file named" || not_ok "bad file in dir: rc $RC: $OUT"
req GET /missions/dirn-0000; expect_code 404 "nothing of that request was created"
mkdir -p "$T/empty"
expect_rc 3 "apply -f an empty directory" "$XG" mission apply -f "$T/empty"
expect_err "no *.json files" "the directory named"
req GET /missions/nginx
[ "$(j .metadata.labels.app)" = nginx2 ] && [ "$(j .metadata.resourceVersion)" -gt "$RVX" ] && ok "curl sees the replace" || not_ok "replace not visible: $BODY"
"$XG" mission get > "$T/table" 2>&1
head -1 "$T/table" | grep -q '^NAME  *RV  *PLACEMENT  *STATES  *CREATED' && ok "get: table header" || not_ok "table: $(head -2 "$T/table")"
grep -q '^nginx  *[0-9][0-9]*  *clusters=edge-a,edge-b zone=east  *[01] ' "$T/table" && ok "get: nginx row with placement" || not_ok "table row: $(grep nginx "$T/table")"
[ "$("$XG" mission get -o json | jq -r '.items|length')" = "$(curl -s -H "Authorization: Bearer $TOK" "$API/missions" | jq '.items|length')" ] && ok "get -o json: the same list curl gets" || not_ok "get -o json"
[ "$("$XG" mission get nginx -o json | jq -r .spec.content)" = "$(printf 'apiVersion: apps/v1\nkind: Deployment')" ] && ok "get NAME -o json: the object" || not_ok "get NAME -o json"
[ "$("$XG" mission get -l app=nginx2 | tail -n +2 | awk '{print $1}')" = nginx ] && ok "get -l app=nginx2" || not_ok "get -l"
# slice 3: edge-a matches, so its local driver applies the content (no command, no check)
wait_for 10 sh -c "'$XG' mission state nginx -o json | jq -e '.[\"edge-a\"] == \"applied\"'" && ok "state: edge-a applied it" || not_ok "state: $("$XG" mission state nginx -o json)"
"$XG" mission state nginx | head -1 | grep -q '^PATH  *STATE' && ok "state: table" || not_ok "state table"
printf '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":"bad"},"spec":{"command":{"command":["ok",7]}}}' > "$T/bad.json"
expect_rc 2 "apply an invalid mission" "$XG" mission apply -f "$T/bad.json"
expect_err "spec.command.command[1]: must be a string, not an integer" "the server's field path printed verbatim"
printf '{"apiVersion": "edge.xgate.io/v1",\n "kind": }' > "$T/syntax.json"
expect_rc 2 "apply a file with a syntax error" "$XG" mission apply -f "$T/syntax.json"
expect_err "syntax.json:2:" "syntax error names the line"
expect_rc 3 "apply a missing file" "$XG" mission apply -f "$T/none.json"
expect_rc 3 "get a missing mission" "$XG" mission get nope
expect_err 'missions "nope" not found' "404 printed"
expect_rc 3 "delete a missing mission" "$XG" mission delete nope
expect_rc 2 "delete without a name" "$XG" mission delete
OUT=$("$XG" mission delete nginx 2>&1) && [ "$OUT" = "mission nginx deleted" ] && ok "delete" || not_ok "delete: $OUT"
req GET /missions/nginx; expect_code 404 "curl sees the delete"
echo "$TOK" > "$T/token"
OUT=$(env -u XGATE_TOKEN "$XG" cluster get --token-file "$T/token" 2>&1)
echo "$OUT" | grep -q '^edge-a  *edge-a  *ok  *none  *local  *0 ' && ok "cluster get with --token-file" || not_ok "cluster get: $OUT"
[ "$("$XG" cluster get edge-a -o json | jq -r .metadata.uid)" = "$CUID" ] && ok "cluster get NAME -o json" || not_ok "cluster get -o json"
"$XG" cluster tree | grep -q '^edge-a  *ok  *[0-9]*/[0-9]*  *none/local  *[0-9TZ:-]*  *zone=east,tier=edge *$' && ok "cluster tree: this cluster" || not_ok "tree: $("$XG" cluster tree 2>&1)"
[ "$("$XG" cluster tree -o json | jq -c '[.name,.children]')" = '["edge-a",[]]' ] && ok "cluster tree -o json" || not_ok "tree json"
expect_rc 1 "nothing listening" "$XG" mission get --server "http://127.0.0.1:$(free_port)"
expect_err "cannot reach edgeclusterd" "unreachable server explained"
expect_rc 2 "a server URL that is not http(s)" "$XG" mission get --server ftp://x
expect_rc 2 "unknown verb" "$XG" mission frobnicate

# ---- SIGTERM: a clean stop ----
kill -TERM "$PID"; wait "$PID"; RC=$?; PID=
[ "$RC" = 0 ] && grep -q "stopped" "$T/ecd.log" && ok "SIGTERM: exit 0, logged" || not_ok "SIGTERM: rc $RC"

# ---- TLS: https with our own CA, curl and xgate verify it ----
test_ca "$T"
sed "s|^Token = .*|Token = $TOK\nTLSCert = $T/srv.pem\nTLSKey = $T/srv.key|" "$T/e.conf" > "$T/tls.conf"
"$ECD" -c "$T/tls.conf" 2>> "$T/ecd.log" & PID=$!
if wait_for 10 curl -sf --cacert "$T/ca.pem" "https://localhost:$PORT/healthz"; then
	ok "https with our CA"
	CODE=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.pem" -H "Authorization: Bearer $TOK" "https://localhost:$PORT/apis/edge.xgate.io/v1/missions")
	expect_code 200 "https API request"
	curl -s -o /dev/null "https://localhost:$PORT/healthz" && not_ok "curl without our CA was accepted" || ok "curl without our CA refuses the certificate"
	[ "$("$XG" mission get --server "https://localhost:$PORT" --ca "$T/ca.pem" -o json | jq -r .kind)" = MissionList ] && ok "xgate over https with --ca" || not_ok "xgate https"
	expect_rc 1 "xgate over https without the CA" "$XG" mission get --server "https://localhost:$PORT"
	curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && not_ok "plain http on the TLS port answered" || ok "plain http on the TLS port refused"
else
	not_ok "https daemon: $(tail -3 "$T/ecd.log")"
fi
stop

# ---- config errors name the line; no listening without TLS off loopback ----
cfgerr() { # cfgerr "description" "expected stderr" <<< CONFIG
	cat > "$T/bad.conf"
	ERR=$("$ECD" -c "$T/bad.conf" 2>&1 >/dev/null); local rc=$?
	if [ "$rc" = 2 ] && [[ "$ERR" == *"$2"* ]]; then ok "$1: $ERR"; else not_ok "$1: rc $rc: $ERR"; fi
}
cfgerr "unknown key" "bad.conf:3: unknown key 'Nmae' in [Cluster]" <<EOF
# comment
[Cluster]
Nmae = x
EOF
cfgerr "bad cluster name" "bad.conf:2: Name 'Edge A'" <<EOF
[Cluster]
Name = Edge A
EOF
cfgerr "no token" "bad.conf:3: [API] needs a Token or TokenFile" <<EOF
[Cluster]
Name = a
[API]
Listen = 127.0.0.1:$PORT
EOF
cfgerr "0.0.0.0 without TLS" "bad.conf:5: Listen 0.0.0.0 is not a loopback address: it needs TLSCert and TLSKey" <<EOF
[Cluster]
Name = a
[API]
Token = $TOK
Listen = 0.0.0.0:$PORT
EOF
ss -Hltn "sport = :$PORT" | grep -q . && not_ok "something listens on $PORT after the refusal" || ok "nothing listens after the refusal"
cfgerr "short token" "bad.conf:4: Token must be 16-256 characters" <<EOF
[Cluster]
Name = a
[API]
Token = abc
EOF
cfgerr "bad MaxBody" "bad.conf:5: MaxBody 'lots'" <<EOF
[Cluster]
Name = a
[API]
Token = $TOK
MaxBody = lots
EOF
cfgerr "bad interval" "bad.conf:6: Heartbeat '-1'" <<EOF
[Cluster]
Name = a
[API]
Token = $TOK
[Intervals]
Heartbeat = -1
EOF
ERR=$("$ECD" -c "$T/nonexistent.conf" 2>&1); [ $? = 2 ] && [[ "$ERR" == *"nonexistent.conf: No such file"* ]] && ok "missing config file" || not_ok "missing config: $ERR"
ERR=$("$ECD" 2>&1); [ $? = 2 ] && [[ "$ERR" == *"usage: edgeclusterd -c FILE"* ]] && ok "no arguments: usage" || not_ok "usage: $ERR"
"$ECD" --help | grep -q 'usage: edgeclusterd' && ok "--help" || not_ok "--help"
python3 -c 'import socket,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(20)' > "$T/busy.port" & BUSY=$!
wait_for 5 test -s "$T/busy.port"
PORT2=$(cat "$T/busy.port")
sed "s|^Listen = .*|Listen = 127.0.0.1:$PORT2|" "$T/e.conf" > "$T/busy.conf"
timeout 10 "$ECD" -c "$T/busy.conf" 2> "$T/busy.log"; RC=$?
kill "$BUSY" 2>/dev/null; wait "$BUSY" 2>/dev/null; BUSY=
[ "$RC" = 1 ] && grep -q "cannot serve on 127.0.0.1:$PORT2" "$T/busy.log" && ok "port in use: exits 1 and says so" || not_ok "port in use: rc $RC $(cat "$T/busy.log")"

grep -q "mission web created" "$T/ecd.log" && grep -q -e "-> 401 from 127.0.0.1" "$T/ecd.log" && ok "the log has one line per write and per refusal" || not_ok "log lines"
grep -q 'Sanitizer' "$T/ecd.log" && not_ok "sanitizer reports in the daemon log: $(grep -m3 Sanitizer "$T/ecd.log")" || ok "no sanitizer report from the daemon"
summary
