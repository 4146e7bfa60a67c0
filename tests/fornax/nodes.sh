#!/usr/bin/env bash
# fornaxd with simulated node agents (simnode.py, python3-websockets) on the
# node link: nodes register with a join token and come back with their
# credential; the pool fills to its policy; a warm session opens on a
# standby pod, a cold one goes Pending -> Starting -> Available with the
# node's endpoint; close -> Closed and the pool refills; a node cannot
# claim another's name; bad messages are refused naming the field; kill -9
# fornaxd and restart: the applications are still there, pods and sessions
# rebuilt from the nodes' full syncs, still their token's (MaxSessionsPerClient
# 2: the token holding 2 is refused 403, another creates); a node that never
# opens -> Timeout.
# usage: nodes.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/../edge/lib.sh"
PY=/usr/bin/python3 # the distribution's: python3-websockets lives there
SIM="$HERE/simnode.py"
T=$(mktemp -d /tmp/xgt-fornax-XXXXXX)
PID=
SIMS=
WPID=
cleanup() {
	for p in $PID $SIMS $WPID; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

if ! $PY -c 'import websockets' 2>/dev/null; then
	not_ok "python3-websockets is missing: run deploy/deps.sh"
	summary
	exit 1
fi

PORT=$(free_port)
TOK=$(secret tok)
TOK2=$(secret tok2)
JOIN=$(secret join)
G=core.fornax-serverless.centaurusinfra.io
API=http://127.0.0.1:$PORT/apis/$G/v1
WS=ws://127.0.0.1:$PORT
cat > "$T/f.conf" <<EOF
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
Token = $TOK2
MaxSessionsPerClient = 2
[Store]
Database = $T/db/fornaxd.db
[Nodes]
JoinToken = $JOIN
PortRange = 31000-31999
EOF

start() {
	"$FXD" -c "$T/f.conf" 2>> "$T/fxd.log" & PID=$!
	wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz"
}
sim() { # sim NAME [args]: a simulated node in the background
	local n=$1
	shift
	$PY "$SIM" run "$WS" "$n" "$T/sim" --join "$JOIN" "$@" 2>> "$T/sim-$n.log" &
	SIMS="$SIMS $!"
	eval "SIM_${n//-/_}=$!"
}
get() { curl -sf -H "Authorization: Bearer $TOK" "$API$1"; }
post() { curl -s -H "Authorization: Bearer ${AS:-$TOK}" -H 'Content-Type: application/json' --data-binary "$2" "$API$1"; }
del() { curl -s -X DELETE -H "Authorization: Bearer $TOK" "$API$1"; }
q() { get "$1" | jq -r "$2" 2>/dev/null; }
is() { [ "$(q "$1" "$2")" = "$3" ]; }
APPS=/namespaces/default/applications
SESS=/namespaces/default/applicationsessions
app() { # app NAME LOW HIGH MAX
	printf '{"metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","command":["/bin/srv"],"ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],"scalingPolicy":{"minimumInstance":0,"maximumInstance":%s,"burst":2,"scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":%s,"low":%s}}}}' \
		"$1" "$4" "$3" "$2"
}
session() { # session NAME APP [TIMEOUT] [KILL]
	printf '{"metadata":{"name":"%s"},"spec":{"applicationName":"%s","sessionData":"aGVsbG8=","openTimeoutSeconds":%s,"closeGracePeriodSeconds":1,"killInstanceWhenSessionClosed":%s}}' \
		"$1" "$2" "${3:-10}" "${4:-true}"
}
ready_nodes() { q /nodes '[.items[]|select(.status.conditions[0].status=="True")]|length'; }
nready() { [ "$(ready_nodes)" = "$1" ]; } # for wait_for: evaluated on every try
pod_names() { q /namespaces/default/pods '[.items[].metadata.name]|sort|join(",")'; }
pods_are() { [ "$(pod_names)" = "$1" ]; }

start && ok "fornaxd up" || { not_ok "no start: $(cat "$T/fxd.log")"; summary; exit 1; }
sim node-a
sim node-b
wait_for 15 nready 2 && ok "two simulated nodes registered and ready" || not_ok "nodes: $(get /nodes)"
[ -n "$(jq -r .credential "$T/sim/node-a.json")" ] && [ "$(jq -r .credential "$T/sim/node-a.json" | tr -d '\n' | wc -c)" = 43 ] && ok "node-a holds a 43-character credential" || not_ok "credential: $(cat "$T/sim/node-a.json")"
[ "$(q /nodes/node-a .spec.podCIDR)" != "$(q /nodes/node-b .spec.podCIDR)" ] && ok "each node its own podCIDR ($(q /nodes/node-a .spec.podCIDR), $(q /nodes/node-b .spec.podCIDR))" || not_ok "podCIDRs"

# ---- the pool fills to its policy ----
post $APPS "$(app echo 2 2 6)" > /dev/null
wait_for 10 is $APPS/echo .status.idleInstances 2 && ok "echo's pool fills to 2 idle standby pods" || not_ok "pool: $(q $APPS/echo .status)"
sleep 0.5
[ "$(q $APPS/echo .status.totalInstances)" = 2 ] && ok "and stays at 2" || not_ok "pool grew: $(q $APPS/echo .status)"
[ "$(q /namespaces/default/pods '[.items[]|select(.status.fornaxState=="Standby")]|length')" = 2 ] && ok "2 pods Standby" || not_ok "pods: $(get /namespaces/default/pods)"

# ---- a warm session ----
R=$(post $SESS "$(session s1 echo)")
[ "$(echo "$R" | jq -r .status.sessionStatus)" = Starting ] && ok "s1 is sent to a standby pod at once (Starting)" || not_ok "s1: $R"
[[ "$(echo "$R" | jq -r .metadata.uid)" =~ ^[0-9a-f-]{36}$ ]] && ok "s1 has a uid" || not_ok "uid: $R"
wait_for 5 is $SESS/s1 .status.sessionStatus Available && ok "s1 Available" || not_ok "s1: $(get $SESS/s1)"
EP=$(q $SESS/s1 '.status.accessEndPoints[0]|"\(.ipAddress):\(.port)"')
[[ "$EP" =~ ^198\.51\.100\.10:31[0-9]{3}$ ]] && ok "s1's endpoint $EP (publicIp, a port from PortRange)" || not_ok "endpoint '$EP'"
wait_for 5 is $APPS/echo .status.idleInstances 2 && [ "$(q $APPS/echo .status.allocatedInstances)" = 1 ] && ok "the pool refills: 2 idle, 1 allocated" || not_ok "pool: $(q $APPS/echo .status)"

# ---- a cold session: Pending -> Starting -> Available, seen by a watch ----
post $APPS "$(app cold 0 0 2)" > /dev/null
RV=$(q $SESS .metadata.resourceVersion)
curl -sN -H "Authorization: Bearer $TOK" "$API$SESS?watch=1&resourceVersion=$RV" > "$T/watch.out" & WPID=$!
sleep 0.3
R=$(post $SESS "$(session c1 cold)")
[ "$(echo "$R" | jq -r .status.sessionStatus)" = Pending ] && ok "c1 Pending (no standby pod)" || not_ok "c1: $R"
wait_for 5 is $SESS/c1 .status.sessionStatus Available && ok "c1 Available after a cold start" || not_ok "c1: $(get $SESS/c1)"
sleep 0.3
STATES=$(jq -r 'select(.object.metadata.name=="c1")|.object.status.sessionStatus' "$T/watch.out" | uniq | tr '\n' ' ')
[ "$STATES" = "Pending Starting Available " ] && ok "the watch saw c1 go $STATES" || not_ok "c1 states: '$STATES'"
kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null; WPID=

# ---- close ----
R=$(del $SESS/s1)
[ "$(echo "$R" | jq -r .status.sessionStatus)" = Closing ] && ok "delete s1: Closing" || not_ok "delete: $R"
wait_for 5 is $SESS/s1 .status.sessionStatus Closed && ok "s1 Closed" || not_ok "s1: $(get $SESS/s1)"
wait_for 5 is $APPS/echo .status.allocatedInstances 0 && wait_for 5 is $APPS/echo .status.totalInstances 2 && ok "its pod killed, the pool back to 2" || not_ok "pool: $(q $APPS/echo .status)"
post $SESS "$(session s2 echo)" > /dev/null
wait_for 5 is $SESS/s2 .status.sessionStatus Available && ok "s2 Available" || not_ok "s2: $(get $SESS/s2)"
EP2=$(q $SESS/s2 '.status.accessEndPoints[0].port')

# ---- a node cannot take another's name; bad credentials and messages ----
R=$($PY "$SIM" once "$WS" node-a --join "$JOIN")
[[ "$R" == "refused conflict:"* ]] && ok "a join as node-a is refused: $R" || not_ok "claim: $R"
R=$($PY "$SIM" once "$WS" node-a --cred AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA)
[[ "$R" == "refused unauthorized:"* ]] && ok "a wrong credential for node-a: $R" || not_ok "cred: $R"
R=$($PY "$SIM" once "$WS" node-z --join wrong-join-token-1234)
[[ "$R" == "refused unauthorized:"* ]] && ok "a wrong join token: $R" || not_ok "join: $R"
[ "$(ready_nodes)" = 2 ] && ok "node-a still linked and ready" || not_ok "nodes: $(get /nodes)"
R=$($PY "$SIM" raw "$WS" 'not json')
[[ "$R" == "refused bad-message:"* ]] && ok "not JSON: $R" || not_ok "garbage: $R"
R=$($PY "$SIM" raw "$WS" '{"type":"NodeReady","nodeRevision":0}')
[[ "$R" == "refused protocol:"* ]] && ok "no NodeRegister first: $R" || not_ok "order: $R"
R=$($PY "$SIM" raw "$WS" --name raw-node --join "$JOIN" '{"type":"PodState","nodeRevision":1,"pod":{"podIdentifier":"default/x","application":"default/echo","state":"Frozen"}}')
[[ "$R" == *"refused bad-message: pod.state 'Frozen'"* ]] && ok "a bad PodState names pod.state: $R" || not_ok "bad pod: $R"
R=$($PY "$SIM" raw "$WS" --name raw-node2 --join "$JOIN" '{"type":"NodeState","nodeRevision":"x"}')
[[ "$R" == *"refused bad-message: nodeRevision"* ]] && ok "a bad nodeRevision: $R" || not_ok "bad rev: $R"
R=$($PY "$SIM" raw "$WS" '{"type":"NodeRegister","v":1,"auth":{"join":"'"$JOIN"'"},"nodeRevision":0,"node":{"name":"node-q","capacity":{"cpu":"lots"}}}')
[[ "$R" == *"refused bad-message: node.capacity.cpu"* ]] && ok "a NodeRegister with a bad capacity: $R" || not_ok "bad register: $R"
R=$($PY "$SIM" raw "$WS" '{"type":"NodeRegister","v":1,"auth":{"join":"'"$JOIN"'"},"nodeRevision":0,"node":{"name":"node-r","role":"gateway","capacity":{"cpu":1,"memory":1,"pods":1}}}')
[[ "$R" == *"refused bad-message: node.role 'gateway'"* ]] && ok "a NodeRegister with an unknown role: $R" || not_ok "bad role: $R"
R=$($PY "$SIM" raw "$WS" --name raw-node3 --join "$JOIN" '{"type":"IngressState","nodeRevision":1,"ingress":{"sessionIdentifier":"default/s1","podIdentifier":"default/x","state":"Half"}}')
[[ "$R" == *"refused bad-message: ingress.state 'Half'"* ]] && ok "a bad IngressState names ingress.state: $R" || not_ok "bad ingress: $R"
R=$($PY "$SIM" once "$WS" node-q --join "$JOIN")
[ ${#R} = 43 ] && ok "the refused register left no credential behind: node-q joins" || not_ok "node-q: $R"
R=$($PY "$SIM" idle "$WS")
[ "$R" != open ] && [ "$R" -ge 9 ] && ok "a link that never registers is closed (after ${R}s; 10 s allowed)" || not_ok "silent link: $R"
kill -0 "$PID" && ok "fornaxd still up" || not_ok "fornaxd died"

# ---- kill -9 fornaxd: applications from the store, the rest from the nodes ----
PODS_BEFORE=$(pod_names)
kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=
start && ok "fornaxd restarted after kill -9" || not_ok "restart: $(tail -3 "$T/fxd.log")"
wait_for 15 nready 2 && ok "both nodes back with their credentials" || not_ok "nodes: $(get /nodes)"
[ "$(q $APPS '[.items[].metadata.name]|sort|join(",")')" = "cold,echo" ] && ok "applications still there" || not_ok "apps: $(get $APPS)"
wait_for 5 pods_are "$PODS_BEFORE" && ok "the same pods ($PODS_BEFORE), rebuilt from the full syncs" || not_ok "pods: $PODS_BEFORE vs $(pod_names)"
is $SESS/s2 .status.sessionStatus Available && [ "$(q $SESS/s2 '.status.accessEndPoints[0].port')" = "$EP2" ] && ok "s2 Available again, same endpoint port $EP2" || not_ok "s2: $(get $SESS/s2)"
[ "$(q $APPS/echo .status.idleInstances)" = 2 ] && [ "$(q $APPS/echo .status.allocatedInstances)" = 1 ] && ok "echo's pool: 2 idle, 1 allocated" || not_ok "pool: $(q $APPS/echo .status)"
# c1 and s2 are the token's, as the nodes kept them: its limit is reached
R=$(post $SESS "$(session s3 echo)")
[ "$(echo "$R" | jq -r .code)" = 403 ] && [[ "$(echo "$R" | jq -r .message)" == *"this token holds 2"* ]] &&
	ok "the token's third session after the restart: 403 ($(echo "$R" | jq -r .message))" || not_ok "s3: $R"
R=$(AS=$TOK2 post $SESS "$(session o1 echo)")
[ "$(echo "$R" | jq -r .metadata.name)" = o1 ] && ok "another token still creates (o1)" || not_ok "o1: $R"
R=$(del $SESS/s2)
wait_for 5 is $SESS/s2 .status.sessionStatus Closed && ok "a rebuilt session closes" || not_ok "s2: $(get $SESS/s2)"

# ---- a node that never opens: Timeout ----
for p in $SIMS; do kill "$p" 2>/dev/null; done
wait $SIMS 2>/dev/null
SIMS=
wait_for 5 nready 0 && ok "node-a and node-b gone: not ready" || not_ok "nodes: $(get /nodes)"
sim node-c --hold-sessions
wait_for 10 nready 1 && ok "node-c (never opens a session) ready" || not_ok "node-c: $(get /nodes)"
post $SESS "$(session t1 cold 2)" > /dev/null
wait_for 5 is $SESS/t1 .status.sessionStatus Starting && ok "t1 Starting on node-c" || not_ok "t1: $(get $SESS/t1)"
wait_for 6 is $SESS/t1 .status.sessionStatus Timeout && ok "t1 Timeout after openTimeoutSeconds" || not_ok "t1: $(get $SESS/t1)"
[ "$(q $SESS/t1 .status.reason)" = OpenTimeout ] && ok "reason OpenTimeout" || not_ok "reason: $(q $SESS/t1 .status)"

# ---- a deleted node forgets its credential ----
R=$(del /nodes/node-c)
[ "$(echo "$R" | jq -r .metadata.name)" = node-c ] && ok "delete node-c" || not_ok "delete: $R"
kill $SIMS 2>/dev/null; wait $SIMS 2>/dev/null; SIMS=
R=$($PY "$SIM" once "$WS" node-c --join "$JOIN")
[ ${#R} = 43 ] && ok "node-c registers again with a join token" || not_ok "rejoin: $R"
grep -q "AddressSanitizer\|runtime error" "$T/fxd.log" && not_ok "sanitizer: $(grep -m3 'Sanitizer\|runtime error' "$T/fxd.log")" || ok "no sanitizer report"
summary
