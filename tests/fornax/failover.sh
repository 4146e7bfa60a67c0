#!/usr/bin/env bash
# Failover of fornaxd on a three-member etcd cluster ([Store] Election = on):
# two fornaxd (A, B), two simulated nodes linked to both cores (they report
# to every core and obey the leader only). The standby B's view of the pods
# and sessions is A's, and B commands no node. Sessions are opened in a loop
# against whichever core leads; A, the leader, is killed with -9: B takes
# over with the links it already has (no node registers again), every
# session that was Available before the kill is listed Available by B, and
# opens resume (the time from the kill to the first open B acknowledges is
# printed, not asserted). A restarts as the
# standby and names B as the leader. One etcd member stopped: creates and
# opens go on, and A names B in every /healthz. Two stopped (no
# quorum): an application write fails with a clear status and nothing is
# made of it; the quorum returns: a core leads again with every application
# and every session.
# usage: failover.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../etcd.sh"
source "$HERE/ha_lib.sh"
PY=/usr/bin/python3
APID= BPID= SIMS= LPID=
etcd_test_stop() { for p in $APID $BPID $SIMS $LPID; do kill -9 "$p" 2>/dev/null; done; }

$PY -c 'import websockets' 2>/dev/null || { not_ok "python3-websockets is missing: run deploy/deps.sh"; summary; exit 1; }
etcd_test xgt-fxfo 3 || { not_ok "no etcd cluster"; summary; exit 1; }
TOK=$(secret tok)
JOIN=$(secret join)
PREFIX=/xgt-fo$$/
G=core.fornax-serverless.centaurusinfra.io
V1=/apis/$G/v1
APPS=/namespaces/default/applications
SESS=/namespaces/default/applicationsessions
TTL=3
HA_TTL=${TTL}s HA_TIMEOUT=1s
APORT=$(free_port) BPORT=$(free_port)
ha_conf "$T/a.conf" "$APORT" "PortRange = 31000-31999"
ha_conf "$T/b.conf" "$BPORT" "PortRange = 31000-31999"
start_a() { "$FXD" -c "$T/a.conf" 2>> "$T/a.log" & APID=$!; }
start_b() { "$FXD" -c "$T/b.conf" 2>> "$T/b.log" & BPID=$!; }
healthy() { ha_healthy "$1"; }
get() { curl -sf -m 3 -H "Authorization: Bearer $TOK" "http://127.0.0.1:$1$V1$2"; }
post() { # post PORT PATH BODY: prints the HTTP code, the body in $T/post.out
	curl -s -m "${POST_MAX:-5}" -o "$T/post.out" -w '%{http_code}' -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary "$3" "http://127.0.0.1:$1$V1$2"
}
q() { get "$1" "$2" | jq -r "$3" 2>/dev/null; }
is() { [ "$(q "$1" "$2" "$3")" = "$4" ]; }
app() { # app NAME
	printf '{"metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","command":["/bin/srv"],"ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"50m","memory":"16Mi"}}}],"scalingPolicy":{"minimumInstance":0,"maximumInstance":400,"burst":4,"scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":4,"low":2}}}}' "$1"
}
session() { printf '{"metadata":{"name":"%s"},"spec":{"applicationName":"echo","sessionData":"aGk=","openTimeoutSeconds":20,"killInstanceWhenSessionClosed":false}}' "$1"; }
nready() { [ "$(q "$1" /nodes '[.items[]|select(.status.conditions[0].status=="True")]|length')" = "$2" ]; }
leader_port() { # the port of the core that answers: only the leader serves
	if healthy "$APORT"; then echo "$APORT"; elif healthy "$BPORT"; then echo "$BPORT"; fi
}
avail_on() { # avail_on PORT: every session listed Available there, sorted
	q "$1" "$SESS" '[.items[]|select(.status.sessionStatus=="Available")|.metadata.name]|sort|.[]'
}
state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
gone() { [ -z "$(state "$1")" ] || [ "$(state "$1")" = Z ]; }

start_a
wait_for 15 healthy "$APORT" && ok "A leads and serves" || { not_ok "A: $(tail -3 "$T/a.log")"; summary; exit 1; }
start_b
wait_for 10 grep -q standby "$T/b.log" && ok "B campaigns and waits as the standby" || not_ok "B: $(tail -3 "$T/b.log")"
wait_for 10 curl -s -m 2 "http://127.0.0.1:$BPORT/healthz" -o /dev/null
H=$(curl -s -m 2 -w ' %{http_code}' "http://127.0.0.1:$BPORT/healthz")
[ "${H##* }" = 503 ] && grep -q "127.0.0.1:$APORT" <<< "$H" && ok "B's /healthz: 503, $(head -1 <<< "$H")" || not_ok "B's healthz: $H"
HA_SIM_ARGS="--pods 200"
ha_sims "ws://127.0.0.1:$BPORT,ws://127.0.0.1:$APORT" "$T/sim" "$T/sim" node-a node-b
SIMS=$HA_SIMS
wait_for 15 nready "$APORT" 2 && ok "two nodes linked to A" || not_ok "nodes: $(get "$APORT" /nodes)"
[ "$(post "$APORT" $APPS "$(app echo)")" = 201 ] && ok "A creates echo" || not_ok "create echo: $(cat "$T/post.out")"
wait_for 15 is "$APORT" $APPS/echo .status.idleInstances 2 && ok "echo's pool fills" || not_ok "pool: $(q "$APORT" $APPS/echo .status)"
# ---- the standby answers reads from its view (the watch), refuses writes ----
wait_for 10 is "$BPORT" $APPS/echo .metadata.name echo && ok "standby B reads echo (the watch brought it)" ||
	not_ok "B reads: $(get "$BPORT" $APPS/echo)"
[ "$(q "$BPORT" $APPS/echo .metadata.resourceVersion)" = "$(q "$APORT" $APPS/echo .metadata.resourceVersion)" ] &&
	ok "at A's resourceVersion" || not_ok "B's echo differs from A's"
CODE=$(post "$BPORT" $APPS "$(app on-standby)")
[ "$CODE" = 503 ] && jq -e --arg u "http://127.0.0.1:$APORT" '.code == 503 and (.message | contains($u))' "$T/post.out" >/dev/null &&
	ok "a write to B: 503, $(jq -r .message "$T/post.out")" || not_ok "write to B: $CODE $(cat "$T/post.out")"
[ "$(q "$APORT" $APPS/on-standby .metadata.name)" = "" ] && ok "and nothing was made of it" || not_ok "on-standby exists"
wait_for 15 nready "$BPORT" 2 && ok "the nodes link to standby B too (they report to every core)" ||
	not_ok "B's nodes: $(get "$BPORT" /nodes | jq -c '[.items[]|{n:.metadata.name,r:.status.conditions}]')"

# ---- the standby's view of pods and sessions is the leader's ----
for i in 1 2 3 4 5; do post "$APORT" $SESS "$(session pre$i)" >/dev/null; done
pre_avail() { [ "$(q "$APORT" $SESS '[.items[]|select(.status.sessionStatus=="Available")]|length')" = 5 ]; }
wait_for 15 pre_avail && ok "five sessions Available on A" || not_ok "A's sessions: $(get "$APORT" $SESS | jq -c '[.items[].status.sessionStatus]')"
view() { # view PORT: the pods and sessions, as a client reads them
	{
		q "$1" /namespaces/default/pods '.items[]|"pod \(.metadata.name) \(.spec.nodeName) \(.status.fornaxState)"'
		q "$1" $SESS '.items[]|"session \(.metadata.name) \(.status.sessionStatus) \(.status.podReference.name) \(.status.accessEndPoints|tostring)"'
	} | sort
}
same_view() { view "$APORT" > "$T/view.a"; view "$BPORT" > "$T/view.b"; [ -s "$T/view.a" ] && cmp -s "$T/view.a" "$T/view.b"; }
wait_for 10 same_view && ok "standby B's pods and sessions are A's: $(grep -c ^pod "$T/view.b") pods, $(grep -c ^session "$T/view.b") sessions" ||
	not_ok "B's view differs from A's: $(diff "$T/view.a" "$T/view.b" | head -5 | tr '\n' ' ')"
commands_from() { cat "$T"/sim-node-*.log | grep -c -e " from ws://127.0.0.1:$1\$" -e " from ws://127.0.0.1:$1:" -e " from ws://127.0.0.1:$1 "; }
[ "$(commands_from "$APORT")" -gt 0 ] && ok "the nodes obey A: $(commands_from "$APORT") commands" || not_ok "no command from A reached a node"

# ---- sessions opened in a loop against whichever core leads ----
# acked: 201 answered; avail: seen Available (the client has its endpoint)
opener() {
	local i=0 p code
	while :; do
		p=$(leader_port)
		[ -n "$p" ] || { sleep 0.05; continue; }
		code=$(post "$p" $SESS "$(session "s$i")")
		if [ "$code" = 201 ]; then
			echo "s$i $(date +%s%N) $p" >> "$T/acked"
			for _ in $(seq 1 40); do
				is "$p" "$SESS/s$i" .status.sessionStatus Available && { echo "s$i" >> "$T/avail"; break; }
				sleep 0.05
			done
			i=$((i + 1))
		fi
	done
}
: > "$T/acked"
: > "$T/avail"
opener & LPID=$!
navail() { [ "$(wc -l < "$T/avail")" -ge "$1" ]; }
wait_for 20 navail 10 && ok "sessions open on A: $(wc -l < "$T/avail")" ||
	not_ok "opens on A: $(wc -l < "$T/avail") Available, $(tail -3 "$T/sim-node-a.log")"
[ "$(commands_from "$BPORT")" = 0 ] && ok "standby B commands no node (none obeyed, none refused)" ||
	not_ok "B commanded: $(grep -h "from ws://127.0.0.1:$BPORT" "$T"/sim-node-*.log | head -3)"
REGS=$(grep -c registered "$T/b.log")
KILLED=$(date +%s%N)
kill -9 "$APID"
wait_for 5 gone "$APID"
wait "$APID" 2>/dev/null
APID=
cp "$T/avail" "$T/avail.before"
cp "$T/acked" "$T/acked.before"
wait_for 30 healthy "$BPORT" && ok "A killed with -9: B takes over" || not_ok "B did not take over: $(tail -3 "$T/b.log")"
wait_for 20 nready "$BPORT" 2 && ok "both nodes ready on B" || not_ok "nodes on B: $(get "$BPORT" /nodes)"
wait_for 30 awk -v k="$KILLED" -v p="$BPORT" '$2 > k && $3 == p {f=1} END {exit !f}' "$T/acked" &&
	ok "opens resume on B: the first $(awk -v k="$KILLED" -v p="$BPORT" '$2 > k && $3 == p {printf "%.2f", ($2 - k) / 1e9; exit}' "$T/acked") s after the kill (lease TTL ${TTL}s)" ||
	not_ok "no open acknowledged by B: $(tail -3 "$T/b.log")"
kill -9 "$LPID"; wait "$LPID" 2>/dev/null; LPID=
[ "$(grep -c registered "$T/b.log")" = "$REGS" ] && ok "B served them on the links it had: no node registered again" ||
	not_ok "nodes registered again on B: $(grep registered "$T/b.log" | tail -2)"
[ "$(commands_from "$BPORT")" -gt 0 ] && ! grep -q "refused .* from ws://127.0.0.1:$BPORT" "$T"/sim-node-*.log &&
	ok "the nodes obey B now: $(commands_from "$BPORT") commands" || not_ok "B's commands: $(grep -h "from ws://127.0.0.1:$BPORT" "$T"/sim-node-*.log | head -3)"
sort -u "$T/avail.before" > "$T/want"
all_there() { avail_on "$BPORT" > "$T/have"; [ -z "$(comm -23 "$T/want" "$T/have")" ]; }
wait_for 10 all_there && ok "all $(wc -l < "$T/want") sessions Available before the kill are Available on B" ||
	not_ok "lost on B: $(comm -23 "$T/want" "$T/have" | tr '\n' ' ')"
# a session answered 201 but not yet held by a node when A died lived only in A's memory
PEND=$(cut -d' ' -f1 "$T/acked.before" | sort | comm -23 - "$T/want" | tr '\n' ' ')
ok "acknowledged but not yet Available at the kill: ${PEND:-none}"
[ "$(q "$BPORT" $APPS/echo .metadata.name)" = echo ] && ok "B has echo" || not_ok "B lacks echo"
start_a
wait_for 10 grep -q standby "$T/a.log" && ok "A restarts as the standby" || not_ok "A: $(tail -3 "$T/a.log")"
# names PORT LEADER_PORT LEADER_PID: PORT's /healthz is a standby's naming
# that process (the election id: URL and pid)
names() { curl -s -m 2 "http://127.0.0.1:$1/healthz" | grep -qxF "standby; the leader is http://127.0.0.1:$2 (pid $3)"; }
wait_for 10 names "$APORT" "$BPORT" "$BPID" && ok "A's /healthz names the new leader, B" ||
	not_ok "A's healthz: $(curl -s -m 2 "http://127.0.0.1:$APORT/healthz")"

# ---- one etcd member stopped: nothing changes ----
# a follower: stopping etcd's own leader makes it elect another first, and
# writes in that moment may time out (docs/serverless.md: sizing)
is_etcd_leader() { ETCDCTL_API=3 etcdctl --endpoints="${ETCD_URL[$1]}" endpoint status -w json |
	jq -e '.[0].Status.leader == .[0].Status.header.member_id' >/dev/null; }
F=0
is_etcd_leader 0 && F=1
kill -STOP "${ETCD_PID[F]}"
[ "$(post "$BPORT" $APPS "$(app one-down)")" = 201 ] && ok "one etcd member stopped: B creates an application" ||
	not_ok "create with one member down: $(cat "$T/post.out")"
[ "$(post "$BPORT" $SESS "$(session x1)")" = 201 ] && wait_for 10 is "$BPORT" $SESS/x1 .status.sessionStatus Available &&
	ok "and opens a session" || not_ok "open with one member down: $(cat "$T/post.out")"
healthy "$BPORT" && ! healthy "$APORT" && ok "B still leads, A still waits" || not_ok "the lead moved with one member down"
# who leads is what A's watch of the election key saw last, not a read: the
# paused member holds no answer of A's (counted, not timed)
named=0
for i in 1 2 3 4 5 6 7 8 9 10; do names "$APORT" "$BPORT" "$BPID" && named=$((named + 1)); sleep 0.2; done
[ "$named" = 10 ] && ok "one etcd member paused: A's /healthz names B ten times in a row" ||
	not_ok "A named B $named times of ten: $(curl -s -m 2 "http://127.0.0.1:$APORT/healthz")"
kill -CONT "${ETCD_PID[F]}"

# ---- two stopped: no quorum ----
kill -STOP "${ETCD_PID[0]}" "${ETCD_PID[1]}"
# the answer may wait while the leader's lease renewal (a synchronous request,
# up to Timeout per member) blocks the loop: docs/serverless.md "What waits for etcd"
CODE=$(POST_MAX=15 post "$BPORT" $APPS "$(app no-quorum)")
# 500: refused; 504: a paused member took it and may apply it once it runs again
[ "$CODE" = 500 ] || [ "$CODE" = 504 ] && ok "no quorum: creating an application fails (HTTP $CODE: $(jq -r .message "$T/post.out" 2>/dev/null))" ||
	not_ok "creating without a quorum: $CODE $(cat "$T/post.out")"
# a standby's campaign that etcd cannot answer holds its loop for up to Timeout
# per member (once a second at most): a read may have to wait for the next turn
wait_for 10 is "$APORT" $APPS/echo .metadata.name echo && ok "standby A still reads echo without a quorum" ||
	not_ok "A's read without a quorum: $(get "$APORT" $APPS/echo)"
kill -CONT "${ETCD_PID[0]}" "${ETCD_PID[1]}"
# B may have lost the lead meanwhile (its lease could not be renewed): then A leads
lead_ok() { p=$(leader_port); [ -n "$p" ] && nready "$p" 2; }
wait_for 30 lead_ok && ok "quorum back: a core leads (port $p) with both nodes" || not_ok "nobody leads: $(tail -2 "$T/b.log") $(tail -2 "$T/a.log")"
P=$(leader_port)
in_etcd() { ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" get --keys-only --prefix "${PREFIX}apps/default/" | sed -n "s|^${PREFIX}apps/default/||p" | sort | paste -sd, -; }
listed() { q "$1" $APPS '[.items[].metadata.name]|sort|join(",")'; }
same() { [ "$(listed "$P")" = "$(in_etcd)" ]; }
wait_for 10 same && ok "the leader lists what etcd holds: $(in_etcd)" || not_ok "leader: $(listed "$P"), etcd: $(in_etcd)"
case ,$(in_etcd), in *,echo,*one-down,* | *,echo,one-down,*) ok "echo and one-down are there" ;; *) not_ok "etcd: $(in_etcd)" ;; esac
[ "$P" = "$APORT" ] && O=$BPORT || O=$APORT
if [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$O/healthz")" = 503 ]; then
	same_o() { [ "$(listed "$O")" = "$(in_etcd)" ]; }
	wait_for 10 same_o && ok "the standby's view too" || not_ok "standby: $(listed "$O"), etcd: $(in_etcd)"
else
	ok "the former leader lost the lead without a quorum and stopped (exit 3): $(grep -m1 'no longer the leader' "$T"/[ab].log | cut -c1-120)"
fi
echo x1 >> "$T/want"
sort -o "$T/want" "$T/want"
all_there2() { avail_on "$P" > "$T/have"; [ -z "$(comm -23 "$T/want" "$T/have")" ]; }
wait_for 10 all_there2 && ok "every session is still Available" || not_ok "lost: $(comm -23 "$T/want" "$T/have" | tr '\n' ' ')"
[ "$(post "$P" $SESS "$(session y1)")" = 201 ] && ok "and opens go on" || not_ok "open after quorum: $(cat "$T/post.out")"
summary
