#!/usr/bin/env bash
# edgeclusterd slice 3: missions run. One daemon with the local driver:
# apply and reverse with a marker file, content on stdin and as a file,
# placement matching and not ("not matched"), stateCheck output in state
# and its updates, replaces that must not re-run and one that must (runs
# are counted in append-only logs), a trigger, a failing and a hanging
# command (killed at its timeout), kill -9 and restart (nothing applied
# twice; a slow apply interrupted by the kill is applied once more and
# completes), a label change in the config reverses at start. Then a
# second daemon with the kubectl driver and a fake kubectl that records its
# argv and stdin.
# usage: missions.sh PATH/TO/edgeclusterd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
XG=$(readlink -f "$2")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
T=$(mktemp -d /tmp/xgt-miss-XXXXXX)
PID=
KPID=
# Every mission command carries XGATE_MISSION_DIR=$T/...: find what is left by it.
mission_procs() {
	local p
	for p in /proc/[0-9]*; do
		grep -qz "^XGATE_MISSION_DIR=$T/" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
	done
}
cleanup() {
	for p in $PID $KPID; do kill -9 "$p" 2>/dev/null; done
	for p in $(mission_procs); do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

PORT=$(free_port)
TOK=$(secret tok)
API=http://127.0.0.1:$PORT/apis/edge.xgate.io/v1
conf() { # conf LABELS: the local daemon's config
	cat > "$T/e.conf" <<EOF
[Cluster]
Name = edge-a
Labels = $1
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
[Store]
Database = $T/db/edge-a.db
[Intervals]
StateCheck = 1
CommandTimeout = 20
EOF
}
conf "zone=east, tier=edge"
start() {
	"$ECD" -c "$T/e.conf" 2>> "$T/ecd.log" & PID=$!
	wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz"
}
stop() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=; }

mission() { # mission NAME SPEC [METADATA-EXTRA]
	printf '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":"%s"%s},"spec":%s}' "$1" "${3:-}" "$2"
}
create() { # create NAME SPEC: POST, expect 201
	req POST /missions -H 'Content-Type: application/json' --data-binary "$(mission "$1" "$2")"
	[ "$CODE" = 201 ] || not_ok "create $1: $CODE $BODY"
}
replace() { # replace NAME SPEC [LABELS-JSON]: PUT with the current resourceVersion; sets RV
	local rv labels=${3:-'{}'}
	req GET "/missions/$1"
	rv=$(j .metadata.resourceVersion)
	req PUT "/missions/$1" -H 'Content-Type: application/json' \
		--data-binary "$(mission "$1" "$2" ",\"resourceVersion\":\"$rv\",\"labels\":$labels")"
	[ "$CODE" = 200 ] || not_ok "replace $1: $CODE $BODY"
	RV=$(j .metadata.resourceVersion)
}
state() { # state NAME [CLUSTER]: this cluster's key of the mission's state
	curl -s -H "Authorization: Bearer $TOK" "${BASE:-$API}/missions/$1" | jq -r --arg k "${2:-edge-a}" '.state[$k] // empty'
}
is_state() { [ "$(state "$1" "${3:-edge-a}")" = "$2" ]; }
expect_state() { # expect_state NAME VALUE SECONDS "description" [CLUSTER]
	if wait_for "$3" is_state "$1" "$2" "${5:-edge-a}"; then ok "$4 ($2)"; else not_ok "$4: state is '$(state "$1" "${5:-edge-a}")', wanted '$2'"; fi
}
count() { awk -v w="$2" '$0 == w {n++} END {print n + 0}' "$1" 2>/dev/null || echo 0; }
sh_cmd() { jq -cn --arg s "$1" '["/bin/sh", "-c", $s]'; } # argv asking for a shell

start || { not_ok "daemon did not start: $(cat "$T/ecd.log")"; summary; exit 1; }
ok "edgeclusterd with the local driver on 127.0.0.1:$PORT"

# ---- apply and reverse: a marker file ----
M1_APPLY=$(sh_cmd "echo apply >> $T/m1.log; touch $T/m1.marker; env | grep ^XGATE_ | sort > $T/m1.env; pwd >> $T/m1.env")
M1_REV=$(sh_cmd "echo reverse >> $T/m1.log; rm -f $T/m1.marker")
create m1 "{\"command\":{\"command\":$M1_APPLY,\"reverseCommand\":$M1_REV},\"placement\":{\"clusters\":[\"edge-a\"]}}"
expect_state m1 applied 10 "m1 (placement by name) is applied; no stateCheck"
[ -e "$T/m1.marker" ] && ok "its command made the marker file" || not_ok "no marker"
[ "$(count "$T/m1.log" apply)" = 1 ] && ok "it ran once" || not_ok "m1 runs: $(cat "$T/m1.log")"
grep -qx "XGATE_CLUSTER=edge-a" "$T/m1.env" && grep -qx "XGATE_MISSION=m1" "$T/m1.env" &&
	grep -qx "XGATE_MISSION_OP=apply" "$T/m1.env" && grep -qx "$T/db/edge-a.missions/m1" "$T/m1.env" &&
	grep -qx "XGATE_MISSION_UID=$(curl -s -H "Authorization: Bearer $TOK" "$API/missions/m1" | jq -r .metadata.uid)" "$T/m1.env" &&
	ok "the command sees XGATE_* and runs in the mission's work directory" || not_ok "env: $(cat "$T/m1.env")"

# ---- content: on stdin and as the local driver's file ----
printf 'kind: Pod\nmetadata: {name: x}\n' > "$T/m2.want"
M2=$(sh_cmd "cat > $T/m2.stdin; cp \"\$XGATE_MISSION_CONTENT\" $T/m2.file; echo apply >> $T/m2.log")
create m2 "{\"content\":$(jq -Rs . < "$T/m2.want"),\"command\":{\"command\":$M2}}"
expect_state m2 applied 10 "m2 (content and command, no placement) is applied"
cmp -s "$T/m2.want" "$T/m2.stdin" && ok "the content arrives on stdin" || not_ok "stdin: $(cat "$T/m2.stdin" 2>&1)"
cmp -s "$T/m2.want" "$T/m2.file" && ok "and as the file \$XGATE_MISSION_CONTENT" || not_ok "content file"
[ "$(stat -c %a "$T/db/edge-a.missions/m2/content")" = 600 ] && ok "the content file is 0600" || not_ok "content mode"

# ---- placement that does not match ----
M3=$(sh_cmd "echo apply >> $T/m3.log")
create m3 "{\"command\":{\"command\":$M3},\"placement\":{\"clusters\":[\"edge-b\"]}}"
expect_state m3 "not matched" 5 "m3 placed on edge-b only"
create m3l "{\"command\":{\"command\":$M3},\"placement\":{\"matchLabels\":{\"zone\":\"west\"}}}"
expect_state m3l "not matched" 5 "m3l needs zone=west"
sleep 0.5
[ ! -e "$T/m3.log" ] && ok "neither ran anything" || not_ok "m3 ran: $(cat "$T/m3.log")"
M3B=$(sh_cmd "echo apply >> $T/m3b.log")
create m3b "{\"command\":{\"command\":$M3B},\"placement\":{\"clusters\":[\"edge-a\",\"edge-b\"],\"matchLabels\":{\"zone\":\"east\",\"tier\":\"edge\"}}}"
expect_state m3b applied 10 "m3b: listed and carries both labels"

# ---- stateCheck: its output is the state, and follows changes ----
echo v1 > "$T/m4.status"
M4=$(sh_cmd "echo apply >> $T/m4.log")
CHECK=$(sh_cmd "cat $T/m4.status")
create m4 "{\"command\":{\"command\":$M4},\"stateCheck\":{\"command\":$CHECK,\"intervalSeconds\":1}}"
expect_state m4 v1 10 "m4: the stateCheck output is the state"
echo "  v2 running  " > "$T/m4.status"
expect_state m4 "v2 running" 5 "the state follows the check's output (trimmed)"
OUT=$(XGATE_SERVER="http://127.0.0.1:$PORT" XGATE_TOKEN=$TOK "$XG" mission state m4)
[ "$(echo "$OUT" | head -1 | awk '{print $1, $2}')" = "PATH STATE" ] && echo "$OUT" | grep -q '^edge-a  *v2 running$' &&
	ok "xgate mission state: PATH STATE table" || not_ok "xgate mission state: $OUT"
[ "$(count "$T/m4.log" apply)" = 1 ] && ok "checks do not re-apply" || not_ok "m4 runs: $(cat "$T/m4.log")"
# a check's output is made a valid state: bad UTF-8 becomes '?', at most 1 KiB on a character boundary
create m4u "{\"command\":{\"command\":[\"/bin/true\"]},\"stateCheck\":{\"command\":$(sh_cmd "printf 'a\\377\\300\\200\\355\\240\\200b \\303\\251'")}}"
expect_state m4u "a??????b é" 10 "invalid UTF-8 (lone bytes, an overlong NUL, a surrogate) becomes ?"
create m4l "{\"command\":{\"command\":[\"/bin/true\"]},\"stateCheck\":{\"command\":[\"awk\",\"BEGIN { printf \\\"x\\\"; for (i = 0; i < 3000; i++) printf \\\"é\\\" }\"]}}"
long_state() { [ "$(printf %s "$(state m4l)" | wc -c)" -gt 100 ]; }
wait_for 10 long_state
L=$(printf %s "$(state m4l)" | wc -c)
[ "$L" = 1023 ] && [ "$(state m4l | head -c 3)" = "xé" ] && ok "a 6001-byte output is cut to 1023 bytes, between characters" || not_ok "m4l state length $L: $(state m4l | head -c 40)"

# ---- replace: identical, labels only, placement only: nothing re-runs; a changed command does, once ----
SPEC1="{\"command\":{\"command\":$M1_APPLY,\"reverseCommand\":$M1_REV},\"placement\":{\"clusters\":[\"edge-a\"]}}"
replace m1 "$SPEC1"; RV0=$RV
replace m1 "$SPEC1" '{"app":"x"}'
[ "$RV" != "$RV0" ] && ok "a labels-only replace is a write (rv $RV0 -> $RV)" || not_ok "labels replace kept rv $RV"
replace m1 "{\"command\":{\"command\":$M1_APPLY,\"reverseCommand\":$M1_REV},\"placement\":{\"clusters\":[\"edge-a\",\"edge-c\"]}}" '{"app":"x"}'
sleep 1
[ "$(count "$T/m1.log" apply)" = 1 ] && is_state m1 applied && ok "identical, labels-only and placement-only replaces re-run nothing" || not_ok "m1 log: $(cat "$T/m1.log")"
M1_V2=$(sh_cmd "echo apply >> $T/m1.log; echo v2 > $T/m1.marker")
replace m1 "{\"command\":{\"command\":$M1_V2,\"reverseCommand\":$M1_REV},\"placement\":{\"clusters\":[\"edge-a\"]}}"
wait_for 10 grep -qx v2 "$T/m1.marker" && ok "a changed command is applied" || not_ok "m1 v2 not applied"
sleep 1
[ "$(count "$T/m1.log" apply)" = 2 ] && [ "$(count "$T/m1.log" reverse)" = 0 ] && ok "once, over the old one (no reverse in between)" || not_ok "m1 log: $(cat "$T/m1.log")"

# ---- delete runs the reverse ----
req DELETE /missions/m1
wait_for 10 test ! -e "$T/m1.marker" && ok "delete: the reverseCommand removed the marker" || not_ok "marker still there"
[ "$(count "$T/m1.log" reverse)" = 1 ] && ok "the reverse ran once" || not_ok "m1 log: $(cat "$T/m1.log")"
wait_for 5 test ! -e "$T/db/edge-a.missions/m1" && ok "the work directory is gone" || not_ok "work dir left"

# ---- placement changes to not matching: reverse, "not matched" ----
M9=$(sh_cmd "echo apply >> $T/m9.log; touch $T/m9.marker")
M9R=$(sh_cmd "echo reverse >> $T/m9.log; rm -f $T/m9.marker")
create m9 "{\"command\":{\"command\":$M9,\"reverseCommand\":$M9R}}"
expect_state m9 applied 10 "m9 applied"
replace m9 "{\"command\":{\"command\":$M9,\"reverseCommand\":$M9R},\"placement\":{\"matchLabels\":{\"zone\":\"west\"}}}"
expect_state m9 "not matched" 10 "m9 moved to zone=west"
[ ! -e "$T/m9.marker" ] && [ "$(count "$T/m9.log" reverse)" = 1 ] && ok "its reverse ran" || not_ok "m9 log: $(cat "$T/m9.log")"

# ---- a trigger holds the apply until it succeeds ----
M6=$(sh_cmd "echo apply >> $T/m6.log")
create m6 "{\"command\":{\"trigger\":[\"/usr/bin/test\",\"-e\",\"$T/m6.go\"],\"command\":$M6}}"
expect_state m6 "pending: waiting for trigger (exited 1)" 5 "m6 waits for its trigger"
[ ! -e "$T/m6.log" ] && ok "nothing ran" || not_ok "m6 ran"
touch "$T/m6.go"
expect_state m6 applied 10 "the trigger succeeds: applied"
create m6n "{\"command\":{\"trigger\":[\"/usr/bin/test\",\"-e\",\"$T/m6.go\"],\"runWhenTriggerSucceeds\":false,\"command\":$M6}}"
expect_state m6n "pending: waiting for trigger (exited 0)" 5 "runWhenTriggerSucceeds false waits for a failure"
[ "$(count "$T/m6.log" apply)" = 1 ] && ok "m6 applied once" || not_ok "m6 log: $(cat "$T/m6.log")"

# ---- failures: an exit code, a hang killed at its timeout ----
create m7 "{\"command\":{\"command\":$(sh_cmd "echo boom >&2; exit 3")}}"
expect_state m7 "failed: command exited 3: boom" 10 "a failing command"
create m5 "{\"command\":{\"command\":$(sh_cmd "echo \$\$ > $T/m5.pid; exec sleep 1000"),\"timeoutSeconds\":1}}"
expect_state m5 "failed: command timed out after 1s" 10 "a hanging command"
P5=$(cat "$T/m5.pid" 2>/dev/null)
[ -n "$P5" ] && ! kill -0 "$P5" 2>/dev/null && ok "it was killed at its timeout" || not_ok "m5's sleep ($P5) still runs"
create m5b "{\"command\":{\"command\":[\"/nonexistent/deploy\"]}}"
expect_state m5b "failed: command cannot run: No such file or directory" 10 "a missing binary"
req DELETE /missions/m5; req DELETE /missions/m5b; req DELETE /missions/m7

# ---- kill -9 and restart: nothing applied twice; an interrupted apply completes ----
M8=$(sh_cmd "echo start >> $T/m8.log; sleep 2; echo done >> $T/m8.log")
create m8 "{\"command\":{\"command\":$M8}}"
wait_for 5 grep -qx start "$T/m8.log" || not_ok "m8 did not start"
kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=
echo "a v3" > "$T/m4.status"
cp "$T/m2.log" "$T/m2.before"
start && ok "restarted after kill -9 in the middle of m8's apply" || not_ok "restart: $(tail -5 "$T/ecd.log")"
grep -q "mission m8: killed process group" "$T/ecd.log" && ok "the orphaned apply was stopped first" || not_ok "no orphan kill logged"
expect_state m8 applied 15 "m8 is applied again and completes"
sleep 2.5 # what the orphan would have written by now
[ "$(count "$T/m8.log" start)" = 2 ] && [ "$(count "$T/m8.log" done)" = 1 ] && ok "m8: two starts, one completion" || not_ok "m8 log: $(cat "$T/m8.log")"
expect_state m4 "a v3" 5 "state checks resume"
for m in m2 m3b m4 m6; do
	[ "$(count "$T/$m.log" apply)" = 1 ] || not_ok "$m applied again after the restart: $(cat "$T/$m.log")"
done
ok "m2, m3b, m4, m6: not applied again after the restart"
is_state m3 "not matched" && is_state m2 applied && ok "states kept" || not_ok "states: m3 $(state m3), m2 $(state m2)"

# ---- restart with other labels: what no longer matches is reversed at start ----
stop
conf "zone=west, tier=edge"
start || not_ok "restart with zone=west"
expect_state m3b "not matched" 10 "m3b (zone=east) after the cluster moved to zone=west"
expect_state m9 applied 10 "m9 (zone=west) now matches and is applied"
[ "$(count "$T/m9.log" apply)" = 2 ] && ok "m9 applied again (it was reversed when it left)" || not_ok "m9 log: $(cat "$T/m9.log")"

# ---- deletes while down are impossible; a stop keeps what is applied ----
stop
[ -z "$(mission_procs)" ] && ok "no mission process outlives the daemon's tests" || not_ok "left: $(mission_procs)"

# ---- the kubectl driver, with a fake kubectl ----
cat > "$T/kubectl" <<EOF
#!/bin/sh
# the nodes (not recorded): three, two of them edge nodes; fails while nodes.fail exists
case "\$*" in *" get nodes "*)
	[ -e "$T/nodes.fail" ] && { echo "error: the server is down" >&2; exit 1; }
	case "\$*" in *node-role.kubernetes.io/edge*) printf 'node/edge-1\\nnode/edge-2\\n';;
	*) printf 'node/cp-1\\nnode/edge-1\\nnode/edge-2\\n';; esac
	exit 0;;
esac
# records what edgeclusterd asked for; refuses a manifest saying FAIL
in=\$(cat)
{ echo "ARGS: \$*"; echo "KUBECONFIG=\$KUBECONFIG"; printf '%s\\n' "\$in"; echo "END"; } >> $T/kubectl.log
case "\$in" in *FAIL*) echo "error: the server said no" >&2; exit 1;; esac
exit 0
EOF
chmod +x "$T/kubectl"
echo "apiVersion: v1" > "$T/kc.yaml"
KPORT=$(free_port)
cat > "$T/k.conf" <<EOF
[Cluster]
Name = edge-k
Distro = k8s
Driver = kubectl
Kubectl = $T/kubectl
Kubeconfig = $T/kc.yaml
[API]
Listen = 127.0.0.1:$KPORT
Token = $TOK
[Store]
Database = $T/db/edge-k.db
[Intervals]
StateCheck = 1
EOF
"$ECD" -c "$T/k.conf" 2>> "$T/ecd-k.log" & KPID=$!
wait_for 10 curl -sf "http://127.0.0.1:$KPORT/healthz" && ok "edgeclusterd with the kubectl driver" || not_ok "kubectl daemon: $(cat "$T/ecd-k.log")"
BASE=http://127.0.0.1:$KPORT/apis/edge.xgate.io/v1
printf 'kind: ConfigMap\nmetadata: {name: k1}\n' > "$T/k1.yaml"
K1C=$(sh_cmd "echo command >> $T/kubectl.log")
K1R=$(sh_cmd "echo reverse >> $T/kubectl.log")
create k1 "{\"content\":$(jq -Rs . < "$T/k1.yaml"),\"command\":{\"command\":$K1C,\"reverseCommand\":$K1R}}"
expect_state k1 applied 10 "k1 applied through kubectl" edge-k
printf 'ARGS: --kubeconfig %s apply -f -\nKUBECONFIG=%s\nkind: ConfigMap\nmetadata: {name: k1}\nEND\ncommand\n' "$T/kc.yaml" "$T/kc.yaml" > "$T/k.want"
cmp -s "$T/k.want" "$T/kubectl.log" && ok "kubectl --kubeconfig K apply -f - got the content on stdin, then the command ran" || not_ok "kubectl log: $(cat "$T/kubectl.log")"
req DELETE /missions/k1
wait_for 10 grep -q "delete" "$T/kubectl.log"
sleep 0.3
printf 'reverse\nARGS: --kubeconfig %s delete --ignore-not-found -f -\nKUBECONFIG=%s\nkind: ConfigMap\nmetadata: {name: k1}\nEND\n' "$T/kc.yaml" "$T/kc.yaml" > "$T/k.want"
tail -n 6 "$T/kubectl.log" | cmp -s "$T/k.want" - && ok "delete: reverseCommand, then kubectl delete --ignore-not-found -f - with the content" || not_ok "kubectl log: $(cat "$T/kubectl.log")"
create k2 '{"content":"kind: FAIL\n"}'
expect_state k2 "failed: kubectl apply exited 1: error: the server said no" 10 "a manifest kubectl refuses" edge-k
k_nodes() { curl -sf -H "Authorization: Bearer $TOK" "http://127.0.0.1:$KPORT/apis/edge.xgate.io/v1/edgeclusters/edge-k" | jq -c '[.state.nodes, .state.edgeNodes]'; }
NODES='[["cp-1","edge-1","edge-2"],["edge-1","edge-2"]]'
nodes_are() { [ "$(k_nodes)" = "$NODES" ]; }
wait_for 10 nodes_are && ok "EdgeCluster nodes and edgeNodes from kubectl get nodes (-l node-role.kubernetes.io/edge)" || not_ok "nodes: $(k_nodes)"
touch "$T/nodes.fail"
wait_for 10 grep -q "nodes: kubectl get nodes exited 1: error: the server is down (the EdgeCluster keeps the last lists)" "$T/ecd-k.log" &&
	ok "kubectl get nodes failing: logged" || not_ok "no nodes log line: $(grep nodes: "$T/ecd-k.log")"
sleep 2
[ "$(grep -c 'nodes: kubectl get nodes exited 1' "$T/ecd-k.log")" = 1 ] && nodes_are &&
	ok "logged once, the last lists kept" || not_ok "nodes while failing: $(k_nodes), $(grep -c 'nodes: kubectl' "$T/ecd-k.log") lines"
rm -f "$T/nodes.fail"
wait_for 10 grep -q "nodes: kubectl answers again (3 nodes, 2 edge nodes)" "$T/ecd-k.log" &&
	ok "and when it answers again, that is logged too" || not_ok "no recovery line: $(grep nodes: "$T/ecd-k.log")"
unset BASE
kill "$KPID"; wait "$KPID" 2>/dev/null; KPID=

grep -q "ERROR: AddressSanitizer\|runtime error" "$T/ecd.log" "$T/ecd-k.log" && not_ok "sanitizer reports: $(grep -h -A5 'ERROR\|runtime error' "$T/ecd.log" "$T/ecd-k.log" | head -20)" || ok "no sanitizer report in the daemons' logs"
[ -z "$(mission_procs)" ] && ok "no mission process left" || not_ok "left: $(mission_procs)"
summary
