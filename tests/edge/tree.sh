#!/usr/bin/env bash
# The edge tree on loopback, 8 edgeclusterd and one foreign child:
#
#   a (root, https/wss with a test CA)
#   |- b -- c -- d -- py   (py: tests/edge/hubclient.py, python3-websockets)
#   |- e -- h              (e attached with `xgate cluster attach`; h later, killed mid-attach)
#   |- f
#   `- g                   (its hub issues 3 s credentials: the expiry test)
#
# Missions to all, by name, by labels (AND); state paths at the root; a cut
# (kill -9) and a block (SIGSTOP) of a parent; edits while cut; convergence;
# owed state; nothing applied twice; kill -9 in the attach state machine;
# detach; refused tokens and credentials; garbage on the hub; delete
# everywhere.
# usage: tree.sh PATH/TO/edgeclusterd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
XG=$(readlink -f "$2")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
PY=/usr/bin/python3 # the distribution's: python3-websockets lives there
HC="$PY $HERE/hubclient.py --ca"
T=$(mktemp -d /tmp/xgt-tree-XXXXXX)
HC="$HC $T/ca.pem"
declare -A PID PORT
PYPID=
BHPID=
cleanup() {
	for n in "${!PID[@]}"; do [ -n "${PID[$n]}" ] && kill -9 "${PID[$n]}" 2>/dev/null; done
	[ -n "$PYPID" ] && kill -9 "$PYPID" 2>/dev/null
	[ -n "$BHPID" ] && kill -9 "$BHPID" 2>/dev/null
	# install scripts run in their own process group (their pid)
	[ -f "$T/h.runs" ] && for p in $(awk '{print $1}' "$T/h.runs"); do kill -9 -- "-$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

if ! $PY -c 'import websockets' 2>/dev/null; then
	not_ok "python3-websockets is missing: run deploy/deps.sh"
	summary
	exit 1
fi

TOK=$(secret tok)
JOIN=$(secret join)
export XGATE_TOKEN=$TOK
for n in a b c d e f g h i k; do PORT[$n]=$(free_port); done

test_ca "$T"

url() { [ "$1" = a ] && echo "https://localhost:${PORT[a]}" || echo "http://127.0.0.1:${PORT[$1]}"; }
hub() { [ "$1" = a ] && echo "wss://localhost:${PORT[a]}" || echo "ws://127.0.0.1:${PORT[$1]}"; }
# conf NAME LABELS PARENT [Section:Line ...]: write NAME's config
conf() {
	local n=$1 labels=$2 parent=$3 l
	shift 3
	{
		echo "[Cluster]"
		echo "Name = $n"
		echo "Labels = $labels"
		[ -n "$parent" ] && printf 'Parent = %s\nJoinToken = %s\n' "$(hub "$parent")" "$JOIN"
		for l in "$@"; do [[ $l == Cluster:* ]] && echo "${l#Cluster:}"; done
		echo "[API]"
		echo "Listen = 127.0.0.1:${PORT[$n]}"
		echo "Token = $TOK"
		echo "CA = $T/ca.pem"
		[ "$n" = a ] && printf 'TLSCert = %s\nTLSKey = %s\n' "$T/srv.pem" "$T/srv.key"
		echo "[Hub]"
		echo "JoinToken = $JOIN"
		for l in "$@"; do [[ $l == Hub:* ]] && echo "${l#Hub:}"; done
		echo "[Store]"
		echo "Database = $T/$n.db"
		printf '[Intervals]\nHeartbeat = 1\nHeartbeatTimeout = 3\nReconnectMax = 2\nStateCheck = 1\n'
	} > "$T/$n.conf"
}
start() {
	"$ECD" -c "$T/$1.conf" 2>> "$T/$1.log" &
	PID[$1]=$!
	wait_for 10 curl -sf --cacert "$T/ca.pem" "$(url "$1")/healthz"
}
kill9() { kill -9 "${PID[$1]}" 2>/dev/null; wait "${PID[$1]}" 2>/dev/null; PID[$1]=; }
xg() { local n=$1; shift; "$XG" "$@" --server "$(url "$n")" --ca "$T/ca.pem"; }
# api NAME PATH: GET the API's JSON
api() { curl -sf --cacert "$T/ca.pem" -H "Authorization: Bearer $TOK" "$(url "$1")/apis/edge.xgate.io/v1/$2"; }
# the root's view: "path=health" sorted, and per cluster "name=matched"
tree_at() { api "$1" edgeclusters | jq -r '[.items[] | [.state.path, .state.health]] | sort | map(join("=")) | join(" ")'; }
matched_at() { api "$1" edgeclusters | jq -r '[.items[] | "\(.metadata.name)=\(.state.missions.matched)"] | sort | join(" ")'; }
missions_at() { api "$1" missions | jq -r '[.items[].metadata.name] | sort | join(" ")'; }
state_at() { api "$1" "missions/$2" | jq -r ".state[\"$3\"] // \"(none)\""; }
phase_at() { api "$1" attach | jq -r .state.phase; }
is() { [ "$("${@:2}")" = "$1" ]; } # is EXPECTED CMD...: CMD prints EXPECTED
# expect SECONDS "description" EXPECTED CMD...: wait until CMD prints EXPECTED
expect() {
	local s=$1 d=$2 want=$3
	shift 3
	if wait_for "$s" is "$want" "$@"; then ok "$d"; else not_ok "$d: wanted '$want', got '$("$@" 2>&1)'"; fi
}
missions_all() { for n in "$@"; do printf '%s:%s ' "$n" "$(missions_at "$n")"; done; }
# state_map NAME MISSION [KEY...]: "key=value" in key order (only the KEYs, if given)
state_map() {
	local n=$1 m=$2
	shift 2
	api "$n" "missions/$m" | jq -r --argjson only "$(printf '%s\n' "$@" | jq -R . | jq -sc 'map(select(. != ""))')" \
		'[.state | to_entries | sort_by(.key)[] | select(($only | length) == 0 or (.key as $k | $only | index($k)))
		  | "\(.key)=\(.value)"] | join(" ")'
}
# view NAME: its tree and its missions, "tree|missions"
view() { echo "$(tree_at "$1")|$(missions_at "$1")"; }
health_of() { api "$1" "edgeclusters/$2" | jq -r '"\(.state.path)=\(.state.health)"'; }
py_missions() { cut -d' ' -f1 "$T/py/missions" 2>/dev/null | paste -sd' '; }
lines_of() { sort "$1" 2>/dev/null | grep -- "$2" | paste -sd'|'; } # lines_of FILE PATTERN

conf a "tier=cloud" ""
conf b "zone=east,tier=core" a
conf c "zone=east,tier=edge" b
conf d "zone=west,tier=edge" c
conf e "zone=east,tier=edge" ""
conf f "zone=west,tier=edge" a
conf g "zone=east,tier=core" a "Hub:CredentialLifetime = 3"
cat > "$T/install.sh" <<EOF
#!/bin/sh
# the attach install step: recorded, slow enough to be killed in the middle
echo "\$\$ \$1 \$2 \$3" >> "$T/h.runs"
sleep 3
EOF
cat > "$T/uninstall.sh" <<EOF
#!/bin/sh
echo "\$\$ \$1 \$2 \$3" >> "$T/h.runs"
EOF
chmod +x "$T/install.sh" "$T/uninstall.sh"
conf h "zone=south" "" "Cluster:InstallScript = $T/install.sh" "Cluster:UninstallScript = $T/uninstall.sh"

# ---- the tree comes up ----
for n in a b c d e f g; do start $n || not_ok "$n did not start: $(tail -3 "$T/$n.log")"; done
# attach prints the phases it sees (a fast one may pass between two polls)
OUT=$(xg e cluster attach --parent "$(hub a)" --token "$JOIN" 2>&1) && [[ "$(echo $OUT)" == "registering "*active ]] &&
	ok "xgate cluster attach (e under a, over wss): $(echo $OUT)" || not_ok "attach e: $OUT"
expect 30 "the root sees the whole tree, all ok" "a=ok b=ok b/c=ok b/c/d=ok e=ok f=ok g=ok" tree_at a
expect 10 "c sees its subtree: itself and d" "c=ok d=ok" tree_at c
xg a cluster tree > "$T/tree.txt"
grep -q '^a  *ok ' "$T/tree.txt" && grep -q '^  - b  *ok ' "$T/tree.txt" && grep -q '^    - c  *ok ' "$T/tree.txt" &&
	grep -q '^      - d  *ok .*tier=edge,zone=west' "$T/tree.txt" && grep -q '^  - g  *ok ' "$T/tree.txt" &&
	ok "cluster tree: an indented table" || not_ok "cluster tree: $(cat "$T/tree.txt")"
[ "$(xg a cluster get d -o json | jq -r '.state.path')" = b/c/d ] && ok "cluster get d at the root: path b/c/d" || not_ok "cluster get d"
[ "$(api b attach | jq -r '[.state.phase, .state.link, .state.parentName, .spec.parent] | join(" ")')" = "active up a $(hub a)" ] &&
	ok "b's Attach: active, link up, parent a over wss" || not_ok "b attach: $(api b attach)"
[ "$(api a edgeclusters/b | jq -r '.state.lastHeartbeat | test("^[0-9-]+T[0-9:]+Z$")')" = true ] &&
	ok "b's lastHeartbeat at the root (the root's clock)" || not_ok "lastHeartbeat: $(api a edgeclusters/b)"
[ "$(api a edgeclusters/a | jq -r '.state.children | join(",")')" = b,e,f,g ] && [ "$(api a edgeclusters/a | jq -r '.state.edgeClusters.g')" = ok ] &&
	ok "the root's own state: children b,e,f,g and their health" || not_ok "root state: $(api a edgeclusters/a)"

mkdir -p "$T/py"
$PY "$HERE/hubclient.py" --ca "$T/ca.pem" child "$(hub d)" py "$JOIN" "$T/py" & PYPID=$!
expect 15 "a foreign child (python3-websockets) under d shows up at the root as b/c/d/py" \
	"a=ok b=ok b/c=ok b/c/d=ok b/c/d/py=ok e=ok f=ok g=ok" tree_at a

# ---- missions: to all, by name, by labels (AND) ----
mission() { # mission NAME PLACEMENT VERSION
	printf '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":"%s","annotations":{"example.com/note":"root"}},"spec":{' "$1"
	printf '"command":{"command":["/bin/sh","-c","echo \\"$XGATE_CLUSTER $XGATE_MISSION %s\\" >> %s/applied"],' "$3" "$T"
	printf '"reverseCommand":["/bin/sh","-c","echo \\"$XGATE_CLUSTER $XGATE_MISSION\\" >> %s/reversed"]},' "$T"
	printf '"stateCheck":{"command":["/bin/echo","ok"],"intervalSeconds":1}%s}}\n' "$2"
}
mission m-all "" v1 > "$T/m-all.json"
mission m-name ',"placement":{"clusters":["c","f"]}' v1 > "$T/m-name.json"
mission m-labels ',"placement":{"matchLabels":{"zone":"east","tier":"edge"}}' v1 > "$T/m-labels.json"
for m in m-all m-name m-labels; do xg a mission apply -f "$T/$m.json" > /dev/null || not_ok "apply $m"; done
ALL3="m-all m-labels m-name"
expect 15 "the three missions reach every cluster" "a:$ALL3 b:$ALL3 c:$ALL3 d:$ALL3 e:$ALL3 f:$ALL3 g:$ALL3 " missions_all a b c d e f g
expect 10 "and the foreign child (it fetched them all)" "m-all m-labels m-name" py_missions
[ "$(api a missions/m-all | jq -c .metadata.annotations)" = '{"example.com/note":"root"}' ] &&
	[ "$(api b missions/m-all | jq -c '.metadata.annotations // "none"')" = '"none"' ] &&
	ok "annotations stay where they were written, not sent down" ||
	not_ok "annotations: a $(api a missions/m-all | jq -c .metadata) b $(api b missions/m-all | jq -c .metadata)"
expect 15 "each level evaluates placement: matched counts at the root (labels AND, names)" \
	"a=1 b=1 c=3 d=1 e=2 f=2 g=1 py=0" matched_at a
echo "m-all=py-v1" > "$T/py/state"
expect 20 "state paths at the root: b/c/d/py (the foreign child's report, four levels up)" py-v1 state_at a m-all b/c/d/py
expect 20 "m-all: state ok at every cluster, seen at the root" \
	"a=ok b=ok b/c=ok b/c/d=ok e=ok f=ok g=ok" state_map a m-all a b b/c b/c/d e f g
expect 20 "m-labels (zone=east AND tier=edge): ok at b/c and e, not matched elsewhere" \
	"a=not matched b=not matched b/c=ok b/c/d=not matched e=ok f=not matched g=not matched" \
	state_map a m-labels a b b/c b/c/d e f g
expect 10 "m-name (clusters c, f): ok at b/c and f" "b/c=ok e=not matched f=ok" state_map a m-name b/c e f
[ "$(sort "$T/applied" | uniq -d)" = "" ] && [ "$(wc -l < "$T/applied")" = 11 ] &&
	ok "applied once per matching cluster: 7 + 2 + 2" || not_ok "applied: $(sort "$T/applied" | tr '\n' ';')"

# ---- cut: kill -9 b; c and d carry on; edits while cut; restore ----
RV_D=$(api d missions/m-all | jq -r .metadata.resourceVersion)
kill9 b
expect 10 "b killed: the root marks it disconnected and its subtree unreachable" \
	"a=degraded b=disconnected b/c=unreachable b/c/d=unreachable b/c/d/py=unreachable e=ok f=ok g=ok" tree_at a
expect 5 "b's subtree's mission state says unreachable at the root" \
	"a=ok b=unreachable b/c=unreachable b/c/d=unreachable b/c/d/py=unreachable e=ok" state_map a m-all a b b/c b/c/d b/c/d/py e
expect 5 "c, cut from its parent, keeps its missions and its child" "c=ok d=ok d/py=ok|$ALL3" view c
[ "$(api c attach | jq -r '.state.phase + " " + .state.link')" = "active down" ] && ok "c: attach active, link down" || not_ok "c attach: $(api c attach)"
mission m-new "" v1 > "$T/m-new.json"
mission m-name ',"placement":{"clusters":["c","f","d"]}' v2 > "$T/m-name.json"
xg a mission apply -f "$T/m-new.json" > /dev/null && xg a mission apply -f "$T/m-name.json" > /dev/null &&
	xg a mission delete m-labels > /dev/null && ok "edits at the root while b is cut: add m-new, change m-name, delete m-labels" || not_ok "edits while cut"
echo "m-all=py-v2" > "$T/py/state"
expect 10 "state reported while cut reaches c (it owes it to b)" py-v2 state_at c m-all d/py
kill9 c
start c && ok "c restarted while its parent is down" || not_ok "c restart: $(tail -3 "$T/c.log")"
expect 10 "offline, c serves from its database and d comes back to it" "c=ok d=ok d/py=ok|$ALL3" view c
[ "$(api b attach 2>/dev/null)" = "" ] && [ "$(missions_at a)" = "m-all m-name m-new" ] && ok "(the root has the edited set; b is still down)" || not_ok "root missions: $(missions_at a)"
RESYNC_C=$(grep -c 'asks for all our state' "$T/c.log")
start b && ok "b restarted" || not_ok "b restart"
NEW3="m-all m-name m-new"
expect 20 "restored: the edits converge down the whole chain" "b:$NEW3 c:$NEW3 d:$NEW3 " missions_all b c d
expect 10 "and to the foreign child" "$NEW3" py_missions
grep -q '^m-name .*"d"' "$T/py/missions" && ok "the changed m-name arrived (placement c,f,d)" || not_ok "m-name at py: $(grep m-name "$T/py/missions")"
expect 15 "the root sees the tree ok again" "a=ok b=ok b/c=ok b/c/d=ok b/c/d/py=ok e=ok f=ok g=ok" tree_at a
expect 15 "owed state arrived: b/c/d/py = py-v2 at the root" py-v2 state_at a m-all b/c/d/py
# b commits its children's reports without fsync: after its start it asks for all of it again
[ "$(grep -c 'asks for all our state' "$T/c.log")" -gt "$RESYNC_C" ] &&
	ok "b restarted asks c for all its state (resync)" || not_ok "c was not asked for a resync after b's start: $(grep 'linked to' "$T/c.log" | tail -2)"
[ "$(api d missions/m-all | jq -r .metadata.resourceVersion)" = "$RV_D" ] && ok "unchanged m-all was not rewritten at d (rv $RV_D)" || not_ok "m-all rv at d changed"
expect 20 "m-labels was reversed where it had been applied (c, e)" "c m-labels|e m-labels" lines_of "$T/reversed" m-labels
expect 20 "m-name v2 applied at c, d, f" "c m-name v2|d m-name v2|f m-name v2" lines_of "$T/applied" "m-name v2"
[ "$(sort "$T/applied" | uniq -d)" = "" ] && ok "nothing applied twice (kill -9, restarts, reconnects)" || not_ok "applied twice: $(sort "$T/applied" | uniq -d)"
grep -c '^.* list ' "$T/py/log" > "$T/lists"
[ "$(cat "$T/lists")" -le 3 ] && ok "the python child's digest matches the daemon's (full lists: $(cat "$T/lists"))" || not_ok "python child got $(cat "$T/lists") full lists"

# ---- block a parent: SIGSTOP g (its socket stays open) ----
kill -STOP "${PID[g]}"
expect 10 "g stopped: silent past the timeout, marked disconnected" "g=disconnected" health_of a g
kill -CONT "${PID[g]}"
expect 15 "g continued: it reconnects (backoff) and is ok again" "g=ok" health_of a g

# ---- the attach state machine: refused token, kill -9 in registering and in install ----
start h || not_ok "h did not start"
expect_rc 2 "attach without a token" xg h cluster attach --parent "$(hub e)"
expect_rc 1 "attach with a wrong join token" xg h cluster attach --parent "$(hub e)" --token "wrong-$JOIN" --timeout 20
expect_err "join token refused" "the refusal is printed"
kill -STOP "${PID[e]}"
[ "$(xg h cluster attach --parent "$(hub e)" --token "$JOIN" --no-wait)" = registering ] && ok "attach h under e (stopped): registering" || not_ok "attach h"
sleep 1
kill9 h
start h && [ "$(phase_at h)" = registering ] && ok "kill -9 in registering: restarted, still registering" || not_ok "h after kill -9: $(phase_at h)"
kill -CONT "${PID[e]}"
expect 20 "e continued: h registers, install_in_progress" install_in_progress phase_at h
kill9 h
for p in $(awk '{print $1}' "$T/h.runs"); do kill -9 -- "-$p" 2>/dev/null; done
start h && ok "kill -9 during install_in_progress; restarted" || not_ok "h restart"
expect 20 "the install step ran again (idempotent) and h is active" active phase_at h
[ "$(grep -c ' install ' "$T/h.runs")" = 2 ] && ok "install ran twice: once killed, once to the end" || not_ok "h.runs: $(cat "$T/h.runs")"
expect 15 "h appears at the root as e/h" "e/h=ok" health_of a h
expect 10 "h got every mission from e" "$NEW3" missions_at h
OUT=$(xg h cluster detach 2>&1) && [[ "$(echo $OUT)" == "deregistering "*inactive ]] &&
	ok "xgate cluster detach: $(echo $OUT)" || not_ok "detach: $OUT"
grep -q ' uninstall ' "$T/h.runs" && ok "the uninstall step ran" || not_ok "no uninstall in $(cat "$T/h.runs")"
expect 10 "detached: h leaves the root's tree" "" api a edgeclusters/h
[ "$(missions_at h)" = "" ] && ok "the parent's missions left h with it" || not_ok "h still has $(missions_at h)"
expect_rc 4 "detach again: not attached" xg h cluster detach

# ---- authentication and garbage, with the foreign client ----
G=$(hub g)
[ "$($HC refused "$G" x --none)" = "unauthorized 1008" ] && ok "hello without auth: refused (1008)" || not_ok "no auth"
[ "$($HC refused "$G" x --join "wrong-$JOIN")" = "unauthorized 1008" ] && ok "wrong join token: refused" || not_ok "wrong join"
[ "$($HC refused "$G" x --cred=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA)" = "unauthorized 1008" ] && ok "credential never issued: refused" || not_ok "unknown cred"
CRED=$($HC join "$G" pyx "$JOIN" | jq -r .value)
[ ${#CRED} = 43 ] && ok "join: a credential (43 characters)" || not_ok "join: '$CRED'"
# the first character changed (to A, or to B if it was A); not the last: it carried the
# same credential back 1 run in 64, and its low bits are base64 padding
[ "${CRED:0:1}" = A ] && WRONG=B${CRED:1} || WRONG=A${CRED:1}
# --cred=VALUE: a credential may begin with "-" (base64url), which argparse would take for an option
[ "$($HC refused "$G" pyx --cred="$WRONG")" = "unauthorized 1008" ] && ok "a wrong credential: refused" || not_ok "wrong cred"
sleep 4
[ "$($HC refused "$G" pyx --cred="$CRED")" = "expired 1008" ] && ok "an expired credential (CredentialLifetime 3): refused" || not_ok "expired cred"
# a child cut off past the lifetime attaches again with the JoinToken of its config
conf k "zone=north" g
start k || not_ok "k did not start: $(tail -3 "$T/k.log")"
expect 15 "k attached to g (its credential lives 3 s, renewed while linked)" active phase_at k
sleep 4
[ "$(phase_at k)" = active ] && ok "still active after the credential's lifetime: renewed while linked" || not_ok "k: $(phase_at k)"
kill9 k
sleep 4
start k || not_ok "k did not restart: $(tail -3 "$T/k.log")"
link_at() { api "$1" attach | jq -r '.state.phase + " " + .state.link'; }
expect 15 "k, down past its credential's lifetime, is active and linked again" "active up" link_at k
grep -q "the credential expired: attaching again with the configured JoinToken" "$T/k.log" &&
	ok "k's log says why: the credential expired, the configured JoinToken attached it again" ||
	not_ok "k's log: $(grep 'attach:' "$T/k.log" | tail -3)"
expect 15 "k appears at the root as g/k again" "g/k=ok" health_of a k
A=$(hub a)
$PY "$HERE/hubclient.py" refused "$A" x --none > "$T/noca.out" 2>&1 &&
	not_ok "wss without our CA was accepted: $(cat "$T/noca.out")" ||
	{ grep -q CERTIFICATE_VERIFY_FAILED "$T/noca.out" && ok "wss: a client without the CA refuses the hub's certificate" || not_ok "no CA: $(tail -1 "$T/noca.out")"; }
LN=$(wc -l < "$T/a.log")
for k in "binary protocol 1003" "badjson protocol 1002" "notobject protocol 1002" "first-not-hello protocol 1002" \
	"oversize too-big 1009" "unknown-type protocol 1002" "second-hello protocol 1002" "bad-state protocol 1002"; do
	set -- $k
	OUT=$($HC garbage "$A" "$1" --join "$JOIN")
	[ "$OUT" = "$2 $3" ] && ok "garbage on the root's hub ($1): that link closed, $2 $3" || not_ok "garbage $1: $OUT"
done
OUT=$(curl -s -m 3 -o /dev/null -w '%{http_code}' --cacert "$T/ca.pem" -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
	-H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "$(url a)/apis/edge.xgate.io/v1/hub")
[ "$OUT" != 101 ] && ok "an upgrade without the subprotocol is refused ($OUT)" || not_ok "upgrade without subprotocol: 101"
sleep 2
tail -n +$((LN + 1)) "$T/a.log" > "$T/a.garbage.log"
[ "$(grep -c 'hub: .*link closed' "$T/a.garbage.log")" -ge 8 ] && ! grep -E 'hub: (b|e|f|g) \(' "$T/a.garbage.log" &&
	ok "one log line per refused link; b, e, f, g untouched" || not_ok "links after garbage: $(cat "$T/a.garbage.log")"
expect 5 "the tree is intact after the garbage" "a=ok b=ok b/c=ok b/c/d=ok b/c/d/py=ok e=ok f=ok g=ok g/k=ok" tree_at a

# ---- delete everywhere ----
for m in m-all m-name m-new; do xg a mission delete $m > /dev/null || not_ok "delete $m"; done
expect 20 "deleted at the root: gone everywhere" "a: b: c: d: e: f: g: " missions_all a b c d e f g
expect 10 "and at the foreign child" "" py_missions

# ---- a parent that accepts the connection and never answers ----
BH=$(free_port)
$PY -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
held = []
while True:
    c, _ = s.accept(); held.append(c)
    open(sys.argv[2], "a").write("conn\n")
' "$BH" "$T/bh.conns" & BHPID=$!
conf i "zone=north" "" "Cluster:Parent = ws://127.0.0.1:$BH" "Cluster:JoinToken = $JOIN"
sed -i 's/^ReconnectMax = 2$/ReconnectMax = 1\nConnectTimeout = 1/' "$T/i.conf"
start i || not_ok "i did not start: $(tail -3 "$T/i.log")"
expect 20 "a parent that never answers the upgrade: the attempt is given up and retried" yes \
	sh -c "[ \$(wc -l < $T/bh.conns 2>/dev/null || echo 0) -ge 3 ] && echo yes"
grep -q "not linked within 1s" "$T/i.log" && ok "the log says why: $(grep -m1 'not linked within' "$T/i.log" | cut -c1-100)" ||
	not_ok "no timeout in i's log: $(tail -3 "$T/i.log")"
[ "$(phase_at i)" = registering ] && ok "i stays registering, its API serving" || not_ok "i: $(phase_at i)"

# ---- stop cleanly ----
for n in a b c d e f g h i k; do
	kill -TERM "${PID[$n]}"
	wait "${PID[$n]}" || not_ok "$n: exit $? on SIGTERM"
	PID[$n]=
done
ok "all daemons stopped on SIGTERM"
grep -l 'Sanitizer\|runtime error' "$T"/*.log > "$T/san" && not_ok "sanitizer reports: $(cat "$T/san")" || ok "no sanitizer report in any daemon's log"
summary
