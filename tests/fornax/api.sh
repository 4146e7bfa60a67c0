#!/usr/bin/env bash
# fornaxd's HTTP/JSON API over real sockets, with curl as the independent
# client: applications created, read, listed (labelSelector), updated
# (scaling policy and labels only; optimistic concurrency), deleted; bad
# input -> 4xx Status with the field path; tokens; sessions against a
# missing application; pages (limit, continue; a bad token 400, one from
# before a restart 410); watches with a labelSelector; the per-client cap on sessions (a token's sessions
# not Closed; 403 Forbidden naming the limit); a watch; kill -9 and restart keeps the
# applications; TLS; config errors naming the line.
# usage: api.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/../edge/lib.sh"
T=$(mktemp -d /tmp/xgt-fornax-XXXXXX)
PID=
WPID=
cleanup() {
	for p in $PID $WPID; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

PORT=$(free_port)
TOK=$(secret tok)
TOK2=$(secret tok2)
G=core.fornax-serverless.centaurusinfra.io
API=http://127.0.0.1:$PORT/apis/$G/v1
cat > "$T/f.conf" <<EOF
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
Token = $TOK2
MaxBody = 64K
MaxSessionsPerClient = 2
[Store]
Database = $T/db/fornaxd.db
[Nodes]
JoinToken = $(secret join)
EOF

start() {
	"$FXD" -c "$1" 2>> "$T/fxd.log" & PID=$!
	wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz"
}
post() { req POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
put() { req PUT "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
expect_field() { # expect_field CODE FIELD "description": a Status naming the field
	if [ "$CODE" = "$1" ] && [ "$(j .kind)" = Status ] && [ "$(j '.details.field // ""')" = "$2" ]; then
		ok "$3 ($CODE at $2: $(j .message))"
	else
		not_ok "$3: got $CODE $BODY, wanted $1 at $2"
	fi
}
# app NAME [MAX] [EXTRA-SPEC]
app() {
	printf '{"apiVersion":"%s/v1","kind":"Application","metadata":{"name":"%s","labels":{"tier":"web"}},"spec":{"containers":[{"name":"c","command":["/bin/echo-server"],"ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"requests":{"cpu":"100m","memory":"32Mi"},"limits":{"cpu":"0.5","memory":"64Mi"}}}],"usingNodeSessionService":false,"configData":{"k":"v"},"scalingPolicy":{"minimumInstance":0,"maximumInstance":%s,"burst":2,"scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":3,"low":1}}%s}}' \
		"$G" "$1" "${2:-10}" "${3:-}"
}
APPS=/namespaces/default/applications

start "$T/f.conf" && ok "fornaxd serves on 127.0.0.1:$PORT" || { not_ok "no start: $(cat "$T/fxd.log")"; summary; exit 1; }

# ---- tokens ----
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$API$APPS"); expect_code 401 "no token"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${TOK}x" "$API$APPS"); expect_code 401 "wrong token"
CODE=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz"); expect_code 200 "/healthz without a token"

# ---- create, get, list, update, delete ----
post $APPS "$(app echo)"; expect_code 201 "create echo"
RV1=$(j .metadata.resourceVersion)
[ "$(j .metadata.namespace)" = default ] && [[ "$RV1" =~ ^[0-9]+$ ]] && [ -n "$(j .metadata.uid)" ] && ok "namespace, resourceVersion $RV1, uid" || not_ok "metadata: $BODY"
[ "$(j .status.desiredInstances)" = 0 ] && ok "status counts present" || not_ok "status: $(j .status)"
post $APPS "$(app echo)"; expect_field 409 metadata.name "create echo again"
post $APPS "$(app other 4)"; expect_code 201 "create other"
req GET $APPS/echo; expect_code 200 "get echo"
[ "$(j .spec.containers[0].resources.limits.memory)" = 64Mi ] && [ "$(j .spec.configData.k)" = v ] && ok "spec as created" || not_ok "spec: $(j .spec)"
req GET $APPS; expect_code 200 "list"
[ "$(j .kind)" = ApplicationList ] && [ "$(j '.items|length')" = 2 ] && ok "ApplicationList of 2" || not_ok "list: $BODY"
req GET "/applications"; [ "$(j '.items|length')" = 2 ] && ok "list across namespaces" || not_ok "all: $BODY"
req GET "/namespaces/other/applications"; [ "$(j '.items|length')" = 0 ] && ok "another namespace is empty" || not_ok "ns: $BODY"
req GET "$APPS?labelSelector=tier%3Dweb"; [ "$(j '.items|length')" = 2 ] && ok "labelSelector tier=web: 2" || not_ok "sel: $BODY"
req GET "$APPS?labelSelector=tier%3Ddb"; [ "$(j '.items|length')" = 0 ] && ok "labelSelector tier=db: 0" || not_ok "sel: $BODY"
req GET $APPS/nope; expect_code 404 "get a missing application"
# ---- pages: limit and continue ----
req GET "$APPS?limit=1"; P1=$(j '.items[0].metadata.name'); CONT=$(j '.metadata.continue // ""')
[ "$CODE" = 200 ] && [ "$(j '.items|length')" = 1 ] && [ -n "$CONT" ] && [ "$(j .metadata.remainingItemCount)" = 1 ] &&
	ok "limit=1: one item ($P1), metadata.continue and remainingItemCount 1" || not_ok "limit=1: $CODE $BODY"
req GET "$APPS?limit=1&continue=$CONT"
[ "$CODE" = 200 ] && [ "$(j '.items|length')" = 1 ] && [ "$(j '.items[0].metadata.name')" != "$P1" ] && [ "$(j '.metadata.continue // ""')" = "" ] &&
	[ "$(j '.metadata|has("remainingItemCount")')" = false ] &&
	ok "the next page: the other application, no continue, no remainingItemCount" || not_ok "page 2: $CODE $BODY"
OLDCONT=$CONT
req GET "$APPS?limit=x"; expect_field 400 limit "limit=x"
req GET "$APPS?limit=1&continue=bogus"; expect_field 400 continue "a continue token this server did not give"

# a watch from the list's resourceVersion sees the update
req GET $APPS; LRV=$(j .metadata.resourceVersion)
curl -sN -H "Authorization: Bearer $TOK" "$API$APPS?watch=1&resourceVersion=$LRV" > "$T/watch.out" & WPID=$!
# and watches of tier=web and tier=api: the update moves echo from one to the other
curl -sN -H "Authorization: Bearer $TOK" "$API$APPS?watch=1&resourceVersion=$LRV&labelSelector=tier%3Dweb" > "$T/watch.web" & WPID="$WPID $!"
curl -sN -H "Authorization: Bearer $TOK" "$API$APPS?watch=1&resourceVersion=$LRV&labelSelector=tier%3Dapi" > "$T/watch.api" & WPID="$WPID $!"
sleep 0.3
U=$(app echo 10 | jq -c '.spec.scalingPolicy.maximumInstance=5 | .metadata.labels={"tier":"api"}')
put $APPS/echo "$U"; expect_code 200 "update the scaling policy and labels"
[ "$(j .spec.scalingPolicy.maximumInstance)" = 5 ] && [ "$(j .metadata.labels.tier)" = api ] && ok "maximumInstance 5, label tier=api" || not_ok "update: $BODY"
RV2=$(j .metadata.resourceVersion)
[ "$RV2" -gt "$RV1" ] && ok "resourceVersion grew ($RV2)" || not_ok "rv $RV1 -> $RV2"
wait_for 5 grep -q MODIFIED "$T/watch.out" && [ "$(grep MODIFIED "$T/watch.out" | jq -r .object.spec.scalingPolicy.maximumInstance)" = 5 ] && ok "the watch streamed MODIFIED" || not_ok "watch: $(cat "$T/watch.out")"
wait_for 5 grep -q . "$T/watch.api"
[ "$(jq -r '.type + "/" + .object.metadata.name' "$T/watch.web" | tr '\n' ' ')" = "DELETED/echo " ] &&
	[ "$(jq -r '.type + "/" + .object.metadata.name' "$T/watch.api" | tr '\n' ' ')" = "ADDED/echo " ] &&
	ok "labelSelector watches: echo DELETED from tier=web's, ADDED to tier=api's" ||
	not_ok "label watches: web: $(cat "$T/watch.web") api: $(cat "$T/watch.api")"
req GET "$APPS?watch=1&labelSelector=a%20b"; expect_field 400 labelSelector "a watch with a bad labelSelector"
kill $WPID 2>/dev/null; wait $WPID 2>/dev/null; WPID=
put $APPS/echo "$U"
[ "$CODE" = 200 ] && [ "$(j .metadata.resourceVersion)" = "$RV2" ] && ok "the same update again changes nothing (resourceVersion stays $RV2)" ||
	not_ok "a no-op update: $CODE rv $(j .metadata.resourceVersion), wanted $RV2"
put $APPS/echo "$(echo "$U" | jq -c '.spec.containers[0].command=["/bin/other"]')"
expect_field 422 spec.containers "changing the containers is refused"
put $APPS/echo "$(echo "$U" | jq -c --arg rv "$RV1" '.metadata.resourceVersion=$rv')"
expect_field 409 metadata.resourceVersion "an update from a stale resourceVersion"
put $APPS/echo "$(echo "$U" | jq -c '.metadata.name="other"')"
expect_field 400 metadata.name "an update naming another object"
put $APPS/nope "$(app nope)"; expect_code 404 "update a missing application"
req DELETE $APPS/other; expect_code 200 "delete other"
req GET $APPS/other; expect_code 404 "other is gone"
# ---- PATCH: an RFC 7386 merge patch (what kubectl apply sends) ----
req PATCH $APPS/echo -H 'Content-Type: application/merge-patch+json' \
	--data-binary '{"metadata":{"labels":{"tier":null,"team":"edge"},"annotations":{"note":"x"}},"spec":{"scalingPolicy":{"maximumInstance":6}}}'
expect_code 200 "a merge patch of the policy, the labels and the annotations"
[ "$(j .spec.scalingPolicy.maximumInstance)" = 6 ] && [ "$(j .spec.scalingPolicy.burst)" = 2 ] &&
	[ "$(j '.metadata.labels | keys | join(",")')" = team ] && [ "$(j .metadata.annotations.note)" = x ] &&
	ok "merged: maximumInstance 6 (burst kept), label tier removed by null, team added, annotation kept" ||
	not_ok "merge patch result: $BODY"
RV2=$(j .metadata.resourceVersion)
req PATCH $APPS/echo -H 'Content-Type: application/merge-patch+json' --data-binary '{"spec":{"containers":[]}}'
expect_field 422 spec.containers "a merge patch of what may not change"
req PATCH $APPS/echo -H 'Content-Type: application/strategic-merge-patch+json' --data-binary '{}'
expect_code 415 "a strategic merge patch is refused"
req PATCH $APPS/echo -H 'Content-Type: application/merge-patch+json' --data-binary '[1]'
expect_field 400 "" "a merge patch that is not an object"
req PATCH $APPS/nope -H 'Content-Type: application/merge-patch+json' --data-binary '{}'
expect_code 404 "a merge patch of a missing application"
req PATCH /namespaces/default/applicationsessions/s1 -H 'Content-Type: application/merge-patch+json' --data-binary '{}'
expect_code 405 "sessions are not patched"
# ---- fieldSelector (kubectl delete waits on it), discovery ----
req GET "$APPS?fieldSelector=metadata.name%3Decho"
[ "$CODE" = 200 ] && [ "$(j '[.items[].metadata.name] | join(",")')" = echo ] && ok "fieldSelector=metadata.name=echo lists echo alone" ||
	not_ok "fieldSelector: $CODE $BODY"
req GET "$APPS?fieldSelector=spec.x%3Dy"; expect_field 400 fieldSelector "a fieldSelector on another field"
OUT=$(curl -s -H "Authorization: Bearer $TOK" "http://127.0.0.1:$PORT/apis/core.fornax-serverless.centaurusinfra.io/v1")
[ "$(echo "$OUT" | jq -r '[.resources[] | "\(.name):\(.namespaced)"] | join(" ")')" = "applications:true applicationsessions:true pods:true nodes:false" ] &&
	echo "$OUT" | jq -e '.resources[0].verbs | index("patch")' > /dev/null &&
	ok "discovery: the four resources, their scope, applications patchable" || not_ok "discovery: $OUT"

# ---- bad input: 4xx with the field path, the daemon stays up ----
post $APPS '{"metadata":'; expect_field 400 "" "not JSON"
post $APPS '[1,2]'; expect_field 400 "" "not an object"
post $APPS '{"metadata":{"name":"Bad_Name"}}'; expect_field 422 metadata.name "a bad name"
post $APPS "$(app x | jq -c '.metadata.namespace="other"')"; expect_field 400 metadata.namespace "a namespace not the path's"
post $APPS "$(app x | jq -c '.spec.containers[0].ports[0].containerPort=70000')"; expect_field 422 'spec.containers[0].ports[0].containerPort' "port 70000"
post $APPS "$(app x | jq -c '.spec.containers[0].resources.requests.cpu="lots"')"; expect_field 422 'spec.containers[0].resources.requests.cpu' "cpu 'lots'"
post $APPS "$(app x | jq -c '.spec.scalingPolicy.minimumInstance=20')"; expect_field 422 spec.scalingPolicy.maximumInstance "min above max"
post $APPS "$(app x | jq -c '.spec.scalingPolicy.idleSessionNumThreshold.low=9')"; expect_field 422 spec.scalingPolicy.idleSessionNumThreshold.high "high below low"
post $APPS "$(app x | jq -c '.spec.scalingPolicy.scalingPolicyType="idle_session_percent" | .spec.scalingPolicy.idleSessionPercentThreshold={"high":150,"low":1}')"; expect_field 422 spec.scalingPolicy.idleSessionPercentThreshold.high "percent above 100"
post $APPS "$(app x | jq -c 'del(.spec.containers[0].command)')"; expect_field 422 'spec.containers[0].command' "no command"
post $APPS "$(app x | jq -c '.spec.containers += [.spec.containers[0]]')"; expect_field 422 'spec.containers[1].name' "two containers of one name"
post $APPS "$(app x | jq -c '.spec.containers += [.spec.containers[0] | .name="side"]')"; expect_field 422 'spec.containers[1].ports[0].containerPort' "a port twice in the pod"
post $APPS "$(app x | jq -c '.spec.containers += [{"name":"side","ports":[]}]')"; expect_field 422 'spec.containers[1].command' "the second container without a command"
post "/namespaces/Bad_NS/applications" "$(app x)"; expect_field 400 metadata.namespace "a bad namespace in the path"
post "/applications" "$(app x)"; expect_code 404 "create without a namespace"
req GET "/frobs"; expect_code 404 "an unknown resource"
req DELETE $APPS; expect_code 405 "DELETE on the collection"
BIG=$(head -c 70000 /dev/zero | tr '\0' a)
post $APPS "{\"x\":\"$BIG\"}"; expect_code 413 "a body over MaxBody"
SESS=/namespaces/default/applicationsessions
post $SESS '{"metadata":{"name":"s1"},"spec":{"applicationName":"ghost","sessionData":"aGk="}}'
expect_field 422 spec.applicationName "a session of a missing application"
post $SESS '{"metadata":{"name":"s1"},"spec":{"applicationName":"echo"}}'
expect_field 422 spec.sessionData "a session without sessionData"
post $SESS '{"metadata":{"name":"s1"},"spec":{"applicationName":"echo","sessionData":"aGk=","closeGracePeriodSeconds":-1}}'
expect_field 422 spec.closeGracePeriodSeconds "closeGracePeriodSeconds -1"
post $SESS '{"metadata":{"name":"s1"},"spec":{"applicationName":"echo","sessionData":"aGk="}}'
expect_code 201 "a good session"
[ "$(j .status.sessionStatus)" = Pending ] && ok "Pending without a node" || not_ok "session: $BODY"
put $SESS/s1 '{}'; expect_code 405 "sessions are not updated"
req DELETE $SESS/s1; expect_code 200 "delete a pending session"
[ "$(j .status.sessionStatus)" = Closed ] && ok "a pending session closes at once" || not_ok "deleted: $BODY"
# ---- MaxSessionsPerClient = 2: per token, sessions not Closed ----
sess() { printf '{"metadata":{"name":"%s"},"spec":{"applicationName":"echo","sessionData":"aGk="}}' "$1"; }
post $SESS "$(sess c1)"; expect_code 201 "cap: the token's first session"
post $SESS "$(sess c2)"; expect_code 201 "cap: its second"
post $SESS "$(sess c3)"
if [ "$CODE" = 403 ] && [ "$(j .kind)" = Status ] && [ "$(j .reason)" = Forbidden ] &&
	[[ "$(j .message)" == *"limit of 2 "*"(MaxSessionsPerClient)"* ]]; then
	ok "cap: the third is refused, 403 Forbidden naming the limit ($(j .message))"
else
	not_ok "cap: the third got $CODE $BODY"
fi
req GET $SESS/c3; expect_code 404 "cap: the refused session does not exist"
TOK1=$TOK TOK=$TOK2
post $SESS "$(sess c3)"; expect_code 201 "cap: another token has its own count"
TOK=$TOK1
req DELETE $SESS/c1; [ "$(j .status.sessionStatus)" = Closed ] && ok "cap: c1 Closed" || not_ok "cap: delete c1: $BODY"
post $SESS "$(sess c4)"; expect_code 201 "cap: a Closed session no longer counts"
for s in c2 c3 c4; do req DELETE $SESS/$s; done
req GET /nodes; [ "$(j .kind)" = NodeList ] && ok "nodes: an empty NodeList" || not_ok "nodes: $BODY"
req GET /namespaces/default/pods; [ "$(j .kind)" = PodList ] && ok "pods: a PodList" || not_ok "pods: $BODY"
req DELETE /nodes/ghost; expect_code 404 "delete a missing node"
req GET ""; [ "$(j .kind)" = APIResourceList ] && [ "$(j '.resources|length')" = 4 ] && ok "the APIResourceList names 4 resources" || not_ok "resources: $BODY"
kill -0 "$PID" && ok "still running after the bad input" || not_ok "the daemon died: $(tail -5 "$T/fxd.log")"

# ---- kill -9 and restart: the applications are still there ----
kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=
start "$T/f.conf" && ok "restarted after kill -9" || not_ok "restart: $(tail -3 "$T/fxd.log")"
req GET $APPS/echo; expect_code 200 "echo survived"
[ "$(j .spec.scalingPolicy.maximumInstance)" = 6 ] && [ "$(j .metadata.resourceVersion)" = "$RV2" ] &&
	[ "$(j .metadata.annotations.note)" = x ] && ok "with its patch, annotations and resourceVersion" || not_ok "after restart: $BODY"
req GET $APPS/other; expect_code 404 "other stays deleted"
req GET "$APPS?limit=1&continue=$OLDCONT"
[ "$CODE" = 410 ] && [ "$(j .reason)" = Expired ] && [ "$(j .details.field)" = continue ] &&
	ok "a continue token from before the restart: 410 Expired ($(j .message))" || not_ok "old token: $CODE $BODY"
post $APPS "$(app third)"; [ "$(j .metadata.resourceVersion)" -gt "$RV2" ] && ok "revisions continue upwards" || not_ok "rv after restart: $BODY"
kill -TERM "$PID"; wait "$PID"; RC=$?; PID=
[ "$RC" = 0 ] && grep -q stopped "$T/fxd.log" && ok "SIGTERM: exit 0" || not_ok "SIGTERM rc $RC"

# ---- TLS ----
test_ca "$T"
sed "s|^MaxBody = .*|&\nTLSCert = $T/srv.pem\nTLSKey = $T/srv.key|" "$T/f.conf" > "$T/tls.conf"
"$FXD" -c "$T/tls.conf" 2>> "$T/fxd.log" & PID=$!
if wait_for 10 curl -sf --cacert "$T/ca.pem" "https://localhost:$PORT/healthz"; then
	CODE=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.pem" -H "Authorization: Bearer $TOK" "https://localhost:$PORT/apis/$G/v1$APPS")
	expect_code 200 "https with our CA"
	if /usr/bin/python3 -c 'import websockets' 2>/dev/null; then
		JOIN=$(awk '/^JoinToken/ {print $3}' "$T/f.conf")
		R=$(/usr/bin/python3 "$HERE/simnode.py" --ca "$T/ca.pem" once "wss://localhost:$PORT" node-tls --join "$JOIN")
		[ ${#R} = 43 ] && ok "a node registers over wss:// on the same port" || not_ok "wss: $R"
		R=$(/usr/bin/python3 "$HERE/simnode.py" once "wss://localhost:$PORT" node-tls2 --join "$JOIN" 2>&1)
		[ ${#R} != 43 ] && ok "wss:// without our CA is refused" || not_ok "wss without CA: $R"
	fi
else
	not_ok "https: $(tail -3 "$T/fxd.log")"
fi
kill "$PID"; wait "$PID" 2>/dev/null; PID=

# ---- config errors ----
cfgerr() {
	cat > "$T/bad.conf"
	ERR=$("$FXD" -c "$T/bad.conf" 2>&1 >/dev/null); local rc=$?
	if [ "$rc" = 2 ] && [[ "$ERR" == *"$2"* ]]; then ok "$1: $ERR"; else not_ok "$1: rc $rc: $ERR"; fi
}
cfgerr "unknown key" "bad.conf:2: unknown key 'Lisen' in [API]" <<EOF
[API]
Lisen = 127.0.0.1:1
EOF
cfgerr "no token" "[API] needs a Token or TokenFile" <<EOF
[API]
Listen = 127.0.0.1:$PORT
EOF
cfgerr "0.0.0.0 without TLS" "bad.conf:3: Listen 0.0.0.0 is not a loopback address" <<EOF
[API]
Token = $TOK
Listen = 0.0.0.0:$PORT
EOF
cfgerr "bad PodCIDR" "bad.conf:4: PodCIDR '10.0.0.0/99'" <<EOF
[API]
Token = $TOK
[Nodes]
PodCIDR = 10.0.0.0/99
EOF
cfgerr "NodePrefix not inside PodCIDR" "NodePrefix /16 must be longer than PodCIDR's /16" <<EOF
[API]
Token = $TOK
[Nodes]
NodePrefix = 16
EOF
cfgerr "MaxSessionsPerClient not a number" "bad.conf:3: MaxSessionsPerClient '-1'" <<EOF
[API]
Token = $TOK
MaxSessionsPerClient = -1
EOF
expect_rc 0 "--help" "$FXD" --help
expect_rc 2 "an unknown option" "$FXD" --frob
summary
