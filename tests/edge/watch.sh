#!/usr/bin/env bash
# edgeclusterd: watches of the missions collection over a real socket, with
# curl -N as the client (docs/edgecluster.md, "Watch"): create, replace and
# delete a mission while a watch is open and read ADDED, MODIFIED, DELETED
# in that order with increasing resourceVersions; a watch from the revision
# of a list sees only what came after; one from resourceVersion 0 starts
# with the current missions as ADDED; a watch from before the daemon's
# start gets an ERROR event with a 410 Expired Status; the token is required.
# usage: watch.sh PATH/TO/edgeclusterd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
T=$(mktemp -d /tmp/xgt-watch-XXXXXX)
PID=
WATCHERS=
cleanup() {
	for p in $WATCHERS $PID; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

PORT=$(free_port)
TOK=$(secret tok)
API=http://127.0.0.1:$PORT/apis/edge.xgate.io/v1
printf '[Cluster]\nName = edge-a\n[API]\nListen = 127.0.0.1:%s\nToken = %s\n[Store]\nDatabase = %s/db/a.db\n' \
	"$PORT" "$TOK" "$T" > "$T/a.conf"
start() {
	"$ECD" -c "$T/a.conf" 2>> "$T/ecd.log" & PID=$!
	wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz"
}
stop() { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=; }
curl_api() { curl -sS -H "Authorization: Bearer $TOK" "$@"; }
mission() { # mission NAME CONTENT
	printf '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":"%s"},"spec":{"content":"%s","placement":{"clusters":["elsewhere"]}}}' "$1" "$2"
}
watch_bg() { # watch_bg OUT QUERY: a watch kept open in the background
	curl -sSN -H "Authorization: Bearer $TOK" "$API/missions?watch=1$2" > "$1" 2> "$1.err" &
	WATCHERS="$WATCHERS $!"
}
lines() { [ -f "$1" ] && wc -l < "$1" || echo 0; }

start || { not_ok "daemon did not start: $(cat "$T/ecd.log")"; summary; exit 1; }

# ---- an open watch sees create, replace, delete in order ----
watch_bg "$T/w1" ""
sleep 0.5 # the watch is open before the writes (from now: resourceVersion absent)
curl_api -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$(mission m1 a)" "$API/missions"
RV=$(curl_api "$API/missions/m1" | jq -r .metadata.resourceVersion)
curl_api -o /dev/null -X PUT -H 'Content-Type: application/json' \
	--data-binary "$(mission m1 b | jq -c --arg rv "$RV" '.metadata.resourceVersion=$rv')" "$API/missions/m1"
curl_api -o /dev/null -X DELETE "$API/missions/m1"
wait_for 10 test "$(lines "$T/w1")" -ge 3
TYPES=$(jq -r .type "$T/w1" 2>/dev/null | tr '\n' ' ')
[ "$TYPES" = "ADDED MODIFIED DELETED " ] && ok "ADDED, MODIFIED, DELETED in order" || not_ok "events: '$TYPES': $(cat "$T/w1" "$T/w1.err")"
RVS=($(jq -r .object.metadata.resourceVersion "$T/w1" 2>/dev/null))
[ "${#RVS[@]}" = 3 ] && [ "${RVS[0]}" -lt "${RVS[1]}" ] && [ "${RVS[1]}" -lt "${RVS[2]}" ] &&
	ok "resourceVersions increase (${RVS[*]})" || not_ok "resourceVersions '${RVS[*]}'"
[ "$(jq -r .object.spec.content "$T/w1" | tr '\n' ' ')" = "a b b " ] &&
	ok "each object as it was: the DELETED one as last written" || not_ok "contents $(jq -c .object.spec "$T/w1")"
[ "$(jq -r '.object.kind + " " + .object.metadata.name' "$T/w1" | sort -u)" = "Mission m1" ] &&
	ok "the objects are Missions" || not_ok "objects $(jq -c .object.metadata "$T/w1")"

# ---- a watch from a list's resourceVersion: only what came after ----
curl_api -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$(mission m2 a)" "$API/missions"
LRV=$(curl_api "$API/missions" | jq -r .metadata.resourceVersion)
curl_api -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$(mission m3 a)" "$API/missions"
watch_bg "$T/w2" "&resourceVersion=$LRV"
wait_for 10 test "$(lines "$T/w2")" -ge 1
sleep 0.3
[ "$(jq -r '.type + " " + .object.metadata.name' "$T/w2" | tr '\n' ' ')" = "ADDED m3 " ] &&
	ok "from the list's resourceVersion $LRV: ADDED m3 only" || not_ok "w2: $(cat "$T/w2")"
[ "$(lines "$T/w1")" = 5 ] && [ "$(tail -1 "$T/w1" | jq -r .object.metadata.name)" = m3 ] &&
	ok "the first watch is still open and saw m2, m3 too" || not_ok "w1 now: $(cat "$T/w1")"

# ---- resourceVersion=0: the current missions as ADDED, then changes ----
watch_bg "$T/w3" "&resourceVersion=0"
sleep 0.5
curl_api -o /dev/null -X DELETE "$API/missions/m2"
wait_for 10 test "$(lines "$T/w3")" -ge 3
[ "$(jq -r '.type + " " + .object.metadata.name' "$T/w3" | tr '\n' ' ')" = "ADDED m2 ADDED m3 DELETED m2 " ] &&
	ok "resourceVersion=0: ADDED for m2 and m3 (as Kubernetes), then the deletion" || not_ok "w3: $(cat "$T/w3")"
# ---- resourceVersion absent: from now ----
watch_bg "$T/w6" ""
sleep 0.5
curl_api -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$(mission m4 a)" "$API/missions"
wait_for 10 test "$(lines "$T/w6")" -ge 1
sleep 0.3
[ "$(jq -r '.type + " " + .object.metadata.name' "$T/w6" | tr '\n' ' ')" = "ADDED m4 " ] &&
	ok "resourceVersion absent: changes from now only" || not_ok "w6: $(cat "$T/w6")"

# ---- the token, and bad values ----
CODE=$(curl -s -o "$T/noauth" -w '%{http_code}' -m 5 "$API/missions?watch=1")
[ "$CODE" = 401 ] && ok "no token: 401" || not_ok "no token: $CODE $(cat "$T/noauth")"
CODE=$(curl -s -o "$T/badrv" -w '%{http_code}' -m 5 -H "Authorization: Bearer $TOK" "$API/missions?watch=1&resourceVersion=x1")
[ "$CODE" = 400 ] && grep -q "resourceVersion: 'x1'" "$T/badrv" &&
	ok "resourceVersion=x1: 400 naming it" || not_ok "bad rv: $CODE $(cat "$T/badrv")"

# ---- after a restart, a resourceVersion from before it is Expired ----
stop
gone() { for p in $WATCHERS; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }
wait_for 10 gone && ok "the open watches ended with the daemon" || not_ok "watches still open after the daemon stopped"
WATCHERS=
start || not_ok "restart: $(tail -5 "$T/ecd.log")"
curl_api -m 5 "$API/missions?watch=1&resourceVersion=1" > "$T/w4"
RC=$?
[ "$RC" = 0 ] && [ "$(lines "$T/w4")" = 1 ] && [ "$(jq -r '.type + " " + (.object.code|tostring) + " " + .object.reason' "$T/w4")" = "ERROR 410 Expired" ] &&
	ok "from before the start: one ERROR event (410 Expired), then the end" || not_ok "expired: rc $RC $(cat "$T/w4")"
CUR=$(curl_api "$API/missions" | jq -r .metadata.resourceVersion)
watch_bg "$T/w5" "&resourceVersion=$CUR"
sleep 0.3
curl_api -o /dev/null -X DELETE "$API/missions/m3"
wait_for 10 test "$(lines "$T/w5")" -ge 1
[ "$(jq -r '.type + " " + .object.metadata.name' "$T/w5")" = "DELETED m3" ] &&
	ok "from the current revision after a restart: served" || not_ok "w5: $(cat "$T/w5")"
stop
summary
