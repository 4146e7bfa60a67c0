#!/usr/bin/env bash
# Two fornaxd on one etcd cluster with [Store] Election = on: A leads and
# serves, B waits as standby (not healthy, but it serves reads: an
# application A creates is soon in B's view, by the watch). A is paused (SIGSTOP) past its
# lease: B takes over with A's applications and serves writes. A request
# sent to the paused A waits in its socket; A is continued (SIGCONT): it
# writes nothing (the request is not answered 201, etcd does not have it),
# and A stops with exit 3, saying it no longer leads. A third fornaxd, C,
# stands by throughout (paused with A, so that B is the one to take over):
# it names A as the leader, then B, as its watch of the election key saw.
# usage: standby.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../etcd.sh"
source "$HERE/ha_lib.sh"
APID= BPID= C3PID=
etcd_test_stop() { for p in $APID $BPID $C3PID; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done; }
etcd_test xgt-fxsb 3 || { not_ok "no etcd cluster"; summary; exit 1; }
TOK=$(secret tok)
PREFIX=/xgt-sb$$/
G=core.fornax-serverless.centaurusinfra.io
APPS=/apis/$G/v1/namespaces/default/applications
APORT=$(free_port) BPORT=$(free_port) CPORT=$(free_port)
ha_conf "$T/a.conf" "$APORT"
ha_conf "$T/b.conf" "$BPORT"
ha_conf "$T/c.conf" "$CPORT"
healthy() { ha_healthy "$1"; }
create() { # create PORT NAME [curl args]: prints the HTTP code
	local port=$1 name=$2
	shift 2
	curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' "$@" --data-binary \
		"{\"metadata\":{\"name\":\"$name\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"command\":[\"/bin/true\"],\"ports\":[{\"containerPort\":8080,\"protocol\":\"TCP\"}],\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"32Mi\"}}}],\"scalingPolicy\":{\"minimumInstance\":0,\"maximumInstance\":1,\"burst\":1,\"scalingPolicyType\":\"idle_session_number\",\"idleSessionNumThreshold\":{\"high\":1,\"low\":0}}}}" \
		"http://127.0.0.1:$port$APPS"
}
code_of() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOK" "http://127.0.0.1:$1$APPS/$2"; }
serves() { [ "$(code_of "$1" "$2")" = 200 ]; }
in_etcd() { ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" get --keys-only "${PREFIX}apps/default/$1" | grep -q .; }
state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }

"$FXD" -c "$T/a.conf" 2>> "$T/a.log" & APID=$!
wait_for 15 healthy "$APORT" && ok "A leads and serves" || not_ok "A: $(tail -3 "$T/a.log")"
"$FXD" -c "$T/b.conf" 2>> "$T/b.log" & BPID=$!
wait_for 10 grep -q "standby" "$T/b.log" && ok "B waits as standby: $(grep -m1 standby "$T/b.log")" ||
	not_ok "B: $(tail -3 "$T/b.log")"
check_not "B serves nothing meanwhile" healthy "$BPORT"
# names PORT LEADER_PORT LEADER_PID: PORT's /healthz is a standby's naming
# that process (the election id: URL and pid), as its watch of the key saw
names() { curl -s -m 2 "http://127.0.0.1:$1/healthz" | grep -qxF "standby; the leader is http://127.0.0.1:$2 (pid $3)"; }
wait_for 10 names "$BPORT" "$APORT" "$APID" && ok "B's /healthz names the leader, A" ||
	not_ok "B's healthz: $(curl -s -m 2 "http://127.0.0.1:$BPORT/healthz")"
"$FXD" -c "$T/c.conf" 2>> "$T/c.log" & C3PID=$!
wait_for 10 names "$CPORT" "$APORT" "$APID" && ok "a second standby, C, names A too" ||
	not_ok "C's healthz: $(curl -s -m 2 "http://127.0.0.1:$CPORT/healthz")"
[ "$(create "$APORT" one)" = 201 ] && ok "A creates one" || not_ok "A did not create one"
# B's view follows the etcd watch, whose socket is in B's event loop
wait_for 10 serves "$BPORT" one && ok "the standby B serves one (its view follows the watch)" ||
	not_ok "B does not serve one: $(code_of "$BPORT" one)"

kill -STOP "$APID" "$C3PID"
wait_for 5 test "$(state "$APID")" = T
wait_for 20 healthy "$BPORT" && ok "A paused past its lease: B takes over" ||
	not_ok "B did not take over: $(tail -3 "$T/b.log")"
# C's watch, continued, tells it A's key went and B's came
kill -CONT "$C3PID"
wait_for 10 names "$CPORT" "$BPORT" "$BPID" && ok "the standby C, continued, names the new leader, B" ||
	not_ok "C's healthz: $(curl -s -m 2 "http://127.0.0.1:$CPORT/healthz")"
[ "$(code_of "$BPORT" one)" = 200 ] && ok "B has A's application one (read from etcd)" ||
	not_ok "B lacks one"
[ "$(create "$BPORT" two)" = 201 ] && ok "B creates two" || not_ok "B did not create two"

# a write that waits in the paused A's socket, then A continues
create "$APORT" evil -m 15 > "$T/evil.code" & CPID=$!
sleep 0.5
kill -CONT "$APID"
wait "$CPID"
EVIL=$(cat "$T/evil.code")
[ "$EVIL" != 201 ] && ok "the deposed A does not create evil (HTTP $EVIL)" || not_ok "A answered 201 to evil"
wait_for 10 test -z "$(state "$APID")" -o "$(state "$APID")" = Z
wait "$APID"; RC=$?; APID=
[ "$RC" = 3 ] && ok "A stops with exit 3" || not_ok "A's exit: $RC: $(tail -3 "$T/a.log")"
grep -q "no longer the leader" "$T/a.log" && ok "A says: $(grep -m1 'no longer the leader' "$T/a.log")" ||
	not_ok "A's log: $(tail -3 "$T/a.log")"
check_not "etcd holds no evil" in_etcd evil
check "etcd holds one and two" in_etcd two
[ "$(code_of "$BPORT" evil)" = 404 ] && ok "B knows no evil" || not_ok "B has evil"
names "$CPORT" "$BPORT" "$BPID" && ok "C still stands by, naming B" ||
	not_ok "C's healthz: $(curl -s -m 2 "http://127.0.0.1:$CPORT/healthz")"
kill "$C3PID"
wait "$C3PID"; RC=$?; C3PID=
[ "$RC" = 0 ] && ok "C stops cleanly on SIGTERM" || not_ok "C's exit: $RC: $(tail -3 "$T/c.log")"
summary
