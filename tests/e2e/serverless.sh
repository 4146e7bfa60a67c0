#!/usr/bin/env bash
# End to end, the serverless part as a user runs it: the real fornaxd (in a
# namespace of its own, TLS) and two real nodeagentds on namespaces joined
# by a cluster network (deploy/lib/fxbed.sh), driven with the xgate CLI
# (`app apply`, `session open --wait`, `session get|close`, `node get`):
# a pool of fornax-echo pods spread over both nodes; sessions opened and
# served through each node's ingress (curl from the client namespace gets
# each session's data); closed; the pool refills to its policy; an open
# that never becomes ready -> Timeout; a pod killed -> its session Closed;
# kill -9 of a nodeagentd with open sessions (they keep serving, it comes
# back, its revision goes on); kill -9 of fornaxd (the application is still
# there, pods and sessions rebuilt from the nodes, the sessions serve, and
# count for their token: restarted with MaxSessionsPerClient at what the
# token holds, its next open is refused 403 while another token opens);
# form 2: an ingress host (Role = ingress) joins, sessions open with its
# public endpoints and serve through it, close (their entries gone on both
# hosts), kill -9 of its nodeagentd (still serving, the restart adopts),
# kill -9 of fornaxd (the sessions and their entries matched again);
# a third node claiming node-a's name -> refused; bad input -> 4xx naming
# the field, with the CLI's exit codes.
# usage: serverless.sh XGATE FORNAXD NODEAGENTD FORNAX_ECHO NET_SCRIPT
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XGATE=$(readlink -f "$1")
FXD=$(readlink -f "$2")
NAD=$(readlink -f "$3")
ECHO=$(readlink -f "$4")
NETSH=$(readlink -f "$5")
FX_P=$$
FX_T=$(mktemp -d)
source "$HERE/../lib.sh"
source "$HERE/../../deploy/lib/ca.sh"
source "$HERE/../../deploy/lib/fxbed.sh"
cleanup() {
	fx_bed_down
	# FX_LOGS=DIR keeps the daemons' logs (sanitizer reports land there)
	[ -n "${FX_LOGS:-}" ] && cp "$FX_T"/*.log "$FX_LOGS"/ 2>/dev/null
	rm -rf "$FX_T"
}
trap cleanup EXIT
trap "exit 130" INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }
[ -d /sys/fs/cgroup/freezer ] || [ -e /sys/fs/cgroup/cgroup.controllers ] ||
	{ echo "1..0 # SKIP no cgroup freezer"; exit 0; }

# the CLI as an operator on the cluster network runs it
xc() { # xc OBJECT VERB ARGS...
	local o=$1 v=$2
	shift 2
	ip netns exec "$(fx_ns lan)" "$XGATE" "$o" "$v" --server "https://$FX_CORE_IP:$FX_PORT" \
		--token "$FX_TOKEN" --ca "$FX_T/ca.pem" "$@"
}
api() { fx_curl "$FX_API$1"; }
q() { api "$1" | jq -r "$2" 2>/dev/null; }
is() { [ "$(q "$1" "$2")" = "$3" ]; }
ge() { [ "$(q "$1" "$2")" -ge "$3" ] 2>/dev/null; }
CLIENT=$(fx_ns cli)
hit() { # hit IP:PORT: what the pod behind that endpoint answers
	ip netns exec "$CLIENT" curl -s --max-time 3 "http://$1/"
}
serves() { [ "$(hit "$1")" = "$2" ]; } # serves IP:PORT DATA
endpoint() { # endpoint SESSION: ip:port of its first endpoint
	q "/namespaces/default/applicationsessions/$1" \
		'.status.accessEndPoints[0] | "\(.ipAddress):\(.port)"'
}
sstate() { q "/namespaces/default/applicationsessions/$1" .status.sessionStatus; }
sess_is() { [ "$(sstate "$1")" = "$2" ]; }
node_rev() { xc node get "$1" -o json | jq -r .status.nodeRevision; }
node_ready() { xc node get "$1" -o json | jq -e '.status.conditions[0].status == "True"'; }
both_ready() { node_ready node-a && node_ready node-b; }
idle() { q /namespaces/default/applications/echo .status.idleInstances; }
pool_ok() { # the echo pool within its policy: 2..3 idle, no pending
	local n
	n=$(idle)
	[ "${n:-0}" -ge 2 ] && [ "$n" -le 3 ] &&
		is /namespaces/default/applications/echo .status.pendingInstances 0
}
pod_pid() { # pod_pid POD: the pid of its app (its environment names it)
	grep -lz "^FORNAX_POD_IDENTIFIER=default/$1\$" /proc/[0-9]*/environ 2>/dev/null |
		head -1 | cut -d/ -f3
}

if fx_bed_up && fx_node 1 node-a && fx_node 2 node-b; then
	ok "topology up (lan, core, two nodes with ingress, client)"
else
	not_ok "topology up"
	summary
	exit 1
fi
fx_fornaxd_conf "StateSeconds = 10"
check "fornaxd serves TLS on the cluster network" fx_fornaxd
fx_nad node-a
fx_nad node-b
check "both nodes register over wss:// and are Ready (xgate node get)" wait_for 30 both_ready
xc node get

# ---- the application: fornax-echo, a standby pool over both nodes ----
cat >"$FX_T/echo.json" <<EOF
{"apiVersion":"$FX_G/v1","kind":"Application","metadata":{"name":"echo"},
 "spec":{"containers":[{"name":"echo","command":["$ECHO"],"args":["--port","8080"],
   "ports":[{"containerPort":8080,"protocol":"TCP"}],
   "resources":{"requests":{"cpu":"100m","memory":"32Mi"},"limits":{"cpu":"500m","memory":"64Mi"}}}],
  "usingNodeSessionService":true,"configData":{"greeting":"hello"},
  "scalingPolicy":{"minimumInstance":0,"maximumInstance":8,"burst":2,
   "scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":3,"low":2}}}}
EOF
expect_rc 0 "xgate app apply -f echo.json" xc app apply -f "$FX_T/echo.json"
check "the pool fills to its policy (2..3 standby pods)" wait_for 60 pool_ok
check "the standby pods are spread over both nodes" wait_for 10 is /namespaces/default/pods \
	'[.items[].spec.nodeName]|unique|length' 2
xc app get

# ---- N sessions, each served through its node's public endpoint ----
N=4
declare -A EP
for i in $(seq 1 $N); do
	if out=$(xc session open echo --name "s$i" --data "hello-s$i" --grace 1 --wait -o json); then
		EP[s$i]=$(echo "$out" | jq -r '.status.accessEndPoints[0] | "\(.ipAddress):\(.port)"')
		ok "session open echo --wait: s$i Available at ${EP[s$i]}"
		[ $i = 1 ] && { [ "$(echo "$out" | jq -r '.status.accessEndPoints[0].podPort')" = 8080 ] &&
			ok "  its endpoint says which container port it reaches (podPort 8080)" ||
			not_ok "  podPort of s1's endpoint: $(echo "$out" | jq -c .status.accessEndPoints)"; }
	else
		not_ok "session open echo --wait (s$i): $out"
		EP[s$i]=none
	fi
done
for i in $(seq 1 $N); do
	got=$(hit "${EP[s$i]}")
	[ "$got" = "hello-s$i" ] && ok "curl ${EP[s$i]} from the client gets s$i's data" ||
		not_ok "curl ${EP[s$i]}: '$got', wanted hello-s$i"
done
nodes=$(api /namespaces/default/applicationsessions | jq -r '[.items[].status.podReference.node]|unique|join(" ")')
[ "$nodes" = "node-a node-b" ] && ok "the sessions are served by both nodes" ||
	not_ok "the sessions are on: '$nodes'"
xc session get
for i in $(seq 1 $N); do xc session close "s$i" >/dev/null || not_ok "session close s$i"; done
for i in $(seq 1 $N); do
	check "s$i Closed after close (grace 1 s)" wait_for 20 sess_is "s$i" Closed
done
check_not "a closed session's endpoint no longer serves its data" serves "${EP[s1]}" hello-s1
check "the pool refills to its policy" wait_for 60 pool_ok

# ---- an open that never becomes ready -> Timeout ----
cat >"$FX_T/never.json" <<EOF
{"metadata":{"name":"never"},"spec":{"containers":[{"name":"c","command":["/bin/sleep"],"args":["600"],
 "ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"10m","memory":"8Mi"}}}],
 "scalingPolicy":{"minimumInstance":0,"maximumInstance":2,"burst":1,
  "scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":0,"low":0}}}}
EOF
expect_rc 0 "app apply never.json (a pod that never listens)" xc app apply -f "$FX_T/never.json"
expect_rc 1 "session open never --timeout 2 --wait: times out" \
	xc session open never --name t1 --timeout 2 --wait
expect_err "Timeout" "  and says Timeout"
check "t1 is Timeout" sess_is t1 Timeout
expect_rc 0 "app delete never" xc app delete never

# ---- a pod killed: its session Closed ----
xc session open echo --name k1 --data hello-k1 --grace 1 --wait >/dev/null
pod=$(q /namespaces/default/applicationsessions/k1 .status.podReference.name)
pid=$(pod_pid "$pod")
if [ -n "$pid" ]; then
	kill -9 "$pid"
	check "k1's pod $pod killed (-9): k1 Closed" wait_for 20 sess_is k1 Closed
else
	not_ok "no process of k1's pod '$pod' found"
fi

# ---- kill -9 a nodeagentd with open sessions ----
# three sessions, more until one is on node-a (the pool is over both nodes)
ASESS="" n=0 got_a=0
for s in a1 a2 a3 a4 a5 a6; do
	xc session open echo --name "$s" --data "hello-$s" --grace 1 --wait >/dev/null ||
		not_ok "session open $s"
	ASESS="$ASESS $s" n=$((n + 1))
	[ "$(q "/namespaces/default/applicationsessions/$s" .status.podReference.node)" = node-a ] &&
		got_a=1
	[ $n -ge 3 ] && [ $got_a = 1 ] && break
done
declare -A AEP
for s in $ASESS; do AEP[$s]=$(endpoint "$s"); done
rev0=$(node_rev node-a)
kill -9 "$FX_NAD_node_a"
sleep 1
bad=0
for s in $ASESS; do serves "${AEP[$s]}" "hello-$s" || bad=1; done
[ $bad = 0 ] && ok "nodeagentd of node-a killed (-9): every session still serves" ||
	not_ok "a session stopped serving with node-a's agent down"
fx_nad node-a
check "node-a's agent restarted: Ready again" wait_for 30 node_ready node-a
rev1=$(node_rev node-a)
[ "$rev1" -ge "$rev0" ] 2>/dev/null && ok "node-a's revision continues ($rev0 -> $rev1)" ||
	not_ok "node-a's revision went from $rev0 to $rev1"
bad=0
for s in $ASESS; do
	sess_is "$s" Available || sess_is "$s" InUse || bad=1
	serves "${AEP[$s]}" "hello-$s" || bad=1
done
[ $bad = 0 ] && ok "after the restart every session is open and serves" ||
	not_ok "a session lost over node-a's restart"
# a change on node-a after its restart takes the next revisions
on_a=$(api /namespaces/default/applicationsessions | jq -r '[.items[]|select(.status.podReference.node=="node-a" and (.status.sessionStatus=="Available" or .status.sessionStatus=="InUse"))|.metadata.name][0] // empty')
if [ -n "$on_a" ]; then
	xc session close "$on_a" >/dev/null
	check "$on_a (on node-a) closes after the restart" wait_for 20 sess_is "$on_a" Closed
	r=$(node_rev node-a)
	[ "$r" -gt "$rev1" ] 2>/dev/null && ok "and node-a's revision goes on ($rev1 -> $r)" ||
		not_ok "node-a's revision after a close: $r (was $rev1)"
else
	not_ok "no open session on node-a to close"
fi

# ---- kill -9 fornaxd ----
open_list() {
	api /namespaces/default/applicationsessions | jq -r '[.items[]|select(.status.sessionStatus=="Available" or .status.sessionStatus=="InUse")|.metadata.name]|sort|join(" ")'
}
# three open at least: the restart below limits the token to what it holds,
# and form 2 opens three at once under that limit
for s in a7 a8 a9; do
	[ "$(open_list | wc -w)" -ge 3 ] && break
	xc session open echo --name "$s" --data "hello-$s" --grace 1 --wait >/dev/null ||
		not_ok "session open $s"
	AEP[$s]=$(endpoint "$s")
done
open_before=$(open_list)
LIM=$(echo "$open_before" | wc -w)
# restarted with the limit at what the token holds, and a second token: the
# sessions it rebuilds from the nodes must count for their token at once
TOK2=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
sed -i "s/^Token = .*/&\nToken = $TOK2\nMaxSessionsPerClient = $LIM/" "$FX_T/fxd.conf"
pods_before=$(q /namespaces/default/pods '[.items[]|select(.status.fornaxState!="Terminated")]|length')
kill -9 "$FX_FXD_PID"
wait "$FX_FXD_PID" 2>/dev/null
bad=0
for s in $open_before; do serves "${AEP[$s]}" "hello-$s" || bad=1; done
[ $bad = 0 ] && ok "fornaxd killed (-9): the sessions keep serving ($open_before)" ||
	not_ok "a session stopped serving with fornaxd down"
check "fornaxd restarts" fx_fornaxd
expect_rc 0 "xgate app get echo after the restart" xc app get echo
check "both nodes link again and are Ready" wait_for 30 both_ready
open_now() {
	[ "$(api /namespaces/default/applicationsessions | jq -r '[.items[]|select(.status.sessionStatus=="Available" or .status.sessionStatus=="InUse")|.metadata.name]|sort|join(" ")')" = "$open_before" ]
}
check "the open sessions are listed again from the nodes' full syncs ($open_before)" \
	wait_for 20 open_now
check "the pods are rebuilt ($pods_before)" wait_for 20 ge /namespaces/default/pods \
	'[.items[]|select(.status.fornaxState!="Terminated")]|length' "$pods_before"
bad=0
for s in $open_before; do
	[ "$(endpoint "$s")" = "${AEP[$s]}" ] || bad=1
	serves "${AEP[$s]}" "hello-$s" || bad=1
done
[ $bad = 0 ] && ok "each keeps its endpoint and serves" || not_ok "a session changed or stopped"
expect_rc 5 "the token holds $LIM sessions, rebuilt from the nodes: its next open is refused" \
	xc session open echo --name over1 --data x
expect_err "exceeded the per-client limit of $LIM sessions" "  403, the per-client limit ($LIM)"
xc session close over1 >/dev/null 2>&1 # (opened only if that failed: the rest goes on)
tok2() { # tok2 CURL-ARGS...: as the second token
	ip netns exec "$(fx_ns lan)" curl -s --max-time 10 --cacert "$FX_T/ca.pem" \
		-H "Authorization: Bearer $TOK2" "$@"
}
code=$(tok2 -o "$FX_T/o1.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '{"metadata":{"name":"o1"},"spec":{"applicationName":"echo","sessionData":"aGk=","closeGracePeriodSeconds":1}}' \
	"$FX_API/namespaces/default/applicationsessions")
[ "$code" = 201 ] && ok "another token still opens a session (o1: $code)" ||
	not_ok "o1 by another token: $code $(cat "$FX_T/o1.json")"
tok2 -X DELETE "$FX_API/namespaces/default/applicationsessions/o1" >/dev/null
check "o1 closes" wait_for 20 sess_is o1 Closed
xc session get
for s in $open_before; do xc session close "$s" >/dev/null; done
for s in $open_before; do check "$s closes after fornaxd's restart" wait_for 20 sess_is "$s" Closed; done
check "the pool is within its policy after all that" wait_for 60 pool_ok

# ---- form 2: sessions through a dedicated ingress host ----
ING=$(fx_ns n9)
ing_entries() { # ing_entries NS FORM: "proto/public" of that form's entries, sorted
	"$XGATE" -N "$1" ingress ls -o json | jq -r --arg f "$2" \
		'[.[]|select(.form==$f)|"\(.proto)/\(.public)"]|sort|join(" ")'
}
has_entry() { ing_entries "$1" "$2" | grep -qw "tcp/$3"; } # has_entry NS FORM IP:PORT
pod_node_ns() { # pod_node_ns SESSION: the namespace of its pod's node
	case $(q "/namespaces/default/applicationsessions/$1" .status.podReference.node) in
	node-a) fx_ns n1 ;; node-b) fx_ns n2 ;; *) echo none ;; esac
}
fx_node 9 ing-a "Role = ingress" || not_ok "the ingress host's namespace"
# No pings for the underlay neighbours: the session entries' hosts get
# kernel-managed entries on both sides (xg_sess_add, docs/architecture.md).
fx_nad ing-a
check "an ingress host (Role = ingress) registers and is Ready" wait_for 30 node_ready ing-a
ing_role() {
	xc node get ing-a -o json |
		jq -e '.metadata.labels["node-role.kubernetes.io/ingress"] == "" and .status.capacity.pods == 0' >/dev/null
}
check "  with the ingress role's label and no pod capacity" ing_role
jq '.metadata.annotations={"fornax.xgate.io/endpoint-form":"2"}' "$FX_T/echo.json" >"$FX_T/echo-f2.json"
expect_rc 0 "app apply: echo's sessions get form 2 endpoints (annotation)" \
	xc app apply -f "$FX_T/echo-f2.json"
declare -A FEP
for s in f1 f2 f3; do
	if out=$(xc session open echo --name "$s" --data "hello-$s" --grace 1 --wait -o json); then
		FEP[$s]=$(echo "$out" | jq -r '.status.accessEndPoints[0] | "\(.ipAddress):\(.port)"')
	else
		FEP[$s]=none
	fi
	case ${FEP[$s]} in 10.88.9.1:*) ok "session $s Available at the ingress host's ${FEP[$s]}" ;;
	*) not_ok "session $s: endpoint '${FEP[$s]}' ($out)" ;; esac
done
for s in f1 f2 f3; do
	got=$(hit "${FEP[$s]}")
	[ "$got" = "hello-$s" ] && ok "curl ${FEP[$s]} through the ingress host gets $s's data" ||
		not_ok "curl ${FEP[$s]}: '$got', wanted hello-$s"
done
bad=0
for s in f1 f2 f3; do
	has_entry "$ING" gateway "${FEP[$s]}" && has_entry "$(pod_node_ns "$s")" pod-side "${FEP[$s]}" ||
		bad=1
done
[ $bad = 0 ] && ok "each: the public entry on the ingress host, the pod side on its pod's node" ||
	not_ok "entries: ingress host '$(ing_entries "$ING" gateway)'"
f1ns=$(pod_node_ns f1)
xc session close f1 >/dev/null || not_ok "session close f1"
check "f1 Closed" wait_for 20 sess_is f1 Closed
check_not "  its endpoint no longer serves" serves "${FEP[f1]}" hello-f1
check_not "  its entry is gone from the ingress host" has_entry "$ING" gateway "${FEP[f1]}"
check_not "  and its pod side from its node" has_entry "$f1ns" pod-side "${FEP[f1]}"
kill -9 "$FX_NAD_ing_a"
sleep 1
serves "${FEP[f2]}" hello-f2 && serves "${FEP[f3]}" hello-f3 &&
	ok "the ingress host's nodeagentd killed (-9): f2 and f3 still serve" ||
	not_ok "a form 2 session stopped serving with the ingress agent down"
fx_nad ing-a
check "the ingress host's agent restarted: Ready again" wait_for 30 node_ready ing-a
bad=0
for s in f2 f3; do
	sess_is "$s" Available || sess_is "$s" InUse || bad=1
	serves "${FEP[$s]}" "hello-$s" || bad=1
done
[ $bad = 0 ] && ok "after the restart f2 and f3 are open and serve" ||
	not_ok "a form 2 session lost over the ingress host's restart"
# fornaxd restarted: the sessions from the pods' nodes, their entries from the ingress host
kill -9 "$FX_FXD_PID"
wait "$FX_FXD_PID" 2>/dev/null
serves "${FEP[f2]}" hello-f2 && serves "${FEP[f3]}" hello-f3 &&
	ok "fornaxd killed (-9): f2 and f3 still serve through the ingress host" ||
	not_ok "a form 2 session stopped serving with fornaxd down"
check "fornaxd restarts" fx_fornaxd
all_ready() { both_ready && node_ready ing-a; }
check "the nodes and the ingress host link again" wait_for 30 all_ready
f_back() {
	local s
	for s in f2 f3; do
		{ sess_is "$s" Available || sess_is "$s" InUse; } && [ "$(endpoint "$s")" = "${FEP[$s]}" ] ||
			return 1
	done
}
check "f2 and f3 open again after fornaxd's restart, with their endpoints" wait_for 20 f_back
for s in f2 f3; do xc session close "$s" >/dev/null; done
for s in f2 f3; do check "$s closes after the restarts" wait_for 20 sess_is "$s" Closed; done
check "  their entries (adopted by the restarted agent and fornaxd) are gone" wait_for 20 \
	sh -c "[ -z \"\$('$XGATE' -N '$ING' ingress ls -o json | jq -r '.[]|.public')\" ]"
check_not "  f2's endpoint no longer serves" serves "${FEP[f2]}" hello-f2
expect_rc 0 "app apply: echo back to the cluster's form 1" xc app apply -f "$FX_T/echo.json"

# ---- a third node claiming node-a's name ----
fx_node 3 node-c || not_ok "third node's namespace"
sed -e 's/^Name = node-c/Name = node-a/' -e "s|node-node-c.db|node-c.db|" \
	"$FX_T/node-node-c.conf" >"$FX_T/node-impostor.conf"
rev_a=$(node_rev node-a)
"$NAD" -c "$FX_T/node-impostor.conf" >>"$FX_T/nad-impostor.log" 2>&1 &
imp=$!
echo $imp >>"$FX_T/pids"
check "a node joining as node-a with the join token is refused (conflict)" \
	wait_for 20 grep -qi conflict "$FX_T/nad-impostor.log"
kill -9 $imp 2>/dev/null
check "node-a is still Ready" node_ready node-a
addr=$(xc node get node-a -o json | jq -r '.status.addresses[0].address')
[ "$addr" = 10.77.0.11 ] && ok "node-a is still the first node ($addr)" ||
	not_ok "node-a's address is now $addr"

# ---- bad input: 4xx naming the field, the CLI's exit codes ----
jq '.metadata.name="bad" | .spec.scalingPolicy.maximumInstance=0' "$FX_T/echo.json" >"$FX_T/bad.json"
expect_rc 2 "app apply with maximumInstance 0: refused" xc app apply -f "$FX_T/bad.json"
expect_err "spec.scalingPolicy.maximumInstance" "  naming spec.scalingPolicy.maximumInstance"
expect_rc 2 "session open of an unknown application: refused" xc session open nosuch --data x
expect_err "spec.applicationName" "  naming spec.applicationName"
expect_rc 3 "session get of an unknown session: not found" xc session get nosuch
expect_rc 5 "a wrong token: refused" ip netns exec "$(fx_ns lan)" "$XGATE" app get \
	--server "https://$FX_CORE_IP:$FX_PORT" --token wrong --ca "$FX_T/ca.pem"
code=$(fx_curl -o "$FX_T/err.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '{"metadata":{"name":"s9"},"spec":{"applicationName":"echo","sessionData":"aGk=","openTimeoutSeconds":0}}' \
	"$FX_API/namespaces/default/applicationsessions")
field=$(jq -r .details.field "$FX_T/err.json" 2>/dev/null)
case "$code:$field" in 4*:spec.openTimeoutSeconds) ok "a session with openTimeoutSeconds 0: $code on $field" ;;
*) not_ok "a session with openTimeoutSeconds 0: $code $(cat "$FX_T/err.json")" ;; esac

# app apply of an existing application: the scaling policy changes (PUT at
# its resourceVersion), anything else of spec is refused
jq '.spec.scalingPolicy.maximumInstance=6' "$FX_T/echo.json" >"$FX_T/echo6.json"
out=$(xc app apply -f "$FX_T/echo6.json")
[ "$out" = "application default/echo configured" ] && ok "app apply of a new policy: $out" ||
	not_ok "app apply of a new policy: '$out'"
check "app get shows the new maximum" is /namespaces/default/applications/echo \
	.spec.scalingPolicy.maximumInstance 6
jq '.spec.containers[0].args=["--port","9090"]' "$FX_T/echo.json" >"$FX_T/echo-args.json"
expect_rc 2 "app apply changing the container: refused" xc app apply -f "$FX_T/echo-args.json"
expect_err "spec.containers" "  naming spec.containers"

expect_rc 0 "app delete echo" xc app delete echo
check "its pods go" wait_for 30 is /namespaces/default/pods '.items|length' 0

# the test build has ASan/UBSan: a report in a daemon's log is a failure
if grep -l "runtime error\|Sanitizer" "$FX_T"/*.log >/dev/null 2>&1; then
	not_ok "sanitizer reports in the daemons' logs"
else
	ok "no sanitizer report in the daemons' logs"
fi
if [ "$FAILED" != 0 ]; then
	for f in "$FX_T"/*.log; do
		echo "# ---- $f"
		tail -30 "$f" | sed 's/^/# /'
	done
fi
summary
