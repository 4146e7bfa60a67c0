#!/usr/bin/env bash
# fornaxd on etcd keeps serving while an application write waits for etcd.
# One etcd member, paused with SIGSTOP: a POST of an application is then in
# flight (its txn sits unread in the member's socket). Meanwhile /healthz
# and a list of the applications on the same fornaxd answer, and the POST
# is still waiting when they have: order, not time (with the write made
# synchronous again the loop would answer them only after it). The list
# does not show the application yet (the core changes only when the write
# is durable). A second POST whose client gives up before etcd answers
# crashes nothing; two creates of one name queued behind them get one 201
# and one 409. Continued, etcd commits them: the first POST gets its 201,
# the applications are there, and after a kill -9 and restart they come
# back from etcd.
# usage: etcd_async.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../etcd.sh"
PID=
POSTPID=
etcd_test_stop() { kill "$POSTPID" 2>/dev/null; kill -9 "$PID" 2>/dev/null; }
etcd_test xgt-fxasync 1 || { not_ok "no etcd"; summary; exit 1; }
ok "one etcd member on loopback: $ETCD_ENDPOINTS"
EPORT=${ETCD_URL[0]##*:}

STORE_TAG=fxa
source "$HERE/store_lib.sh"
# a deadline long enough that the paused member is continued within it
store_conf "$T/f.conf" "Timeout = 20s" "Election = off"

# bytes sent to the member that it has not read (it is paused)
unread() {
	ss -Htn state established "sport = :$EPORT" | awk '$1 > 0 { n++ } END { exit !n }'
}

start && ok "fornaxd on etcd serves on 127.0.0.1:$PORT" ||
	{ not_ok "no start: $(tail -3 "$T/fxd.log")"; summary; exit 1; }
req POST $APPS -H 'Content-Type: application/json' --data-binary "$(app first)"
expect_code 201 "create first (etcd running)"

# ---- etcd paused: a write in flight, the loop serving ----
kill -STOP "${ETCD_PID[0]}"
curl -sS -o "$T/post.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' --data-binary "$(app slow)" "$API$APPS" \
	> "$T/post.code" 2>&1 & POSTPID=$!
wait_for 10 unread && ok "the txn of the POST waits, unread, at the paused member" ||
	not_ok "no unread bytes at the member: $(ss -Htn "sport = :$EPORT")"
H=$(curl -sS --max-time 60 "http://127.0.0.1:$PORT/healthz" 2>&1)
kill -0 "$POSTPID" 2>/dev/null && POST_WAITING=1 || POST_WAITING=0
[ "$H" = ok ] && ok "/healthz answers while the write waits for etcd" || not_ok "/healthz: $H"
[ "$POST_WAITING" = 1 ] && ok "and the POST was still waiting when it had (the loop did not stall)" ||
	not_ok "the POST was answered before /healthz: the loop waited for etcd ($(cat "$T/post.code"))"
req GET $APPS --max-time 60
[ "$CODE" = 200 ] && [ "$(printf '%s' "$BODY" | jq -r '[.items[].metadata.name] | join(",")')" = first ] &&
	ok "a list answers meanwhile, without the application not yet durable" ||
	not_ok "list while the write waits: $CODE $BODY"
kill -0 "$POSTPID" 2>/dev/null && ok "the POST still waits after the list" || not_ok "the POST ended before etcd was continued"

# a client that gives up while its write is queued behind the first
curl -sS -o /dev/null --max-time 1 -X POST -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' --data-binary "$(app left)" "$API$APPS" 2>/dev/null
[ $? = 28 ] && ok "a client gave up on its POST while etcd was paused" || not_ok "the second POST did not time out"

# two creates of one name, both queued: taken in order, the second a 409
for i in 1 2; do
	curl -sS -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary "$(app twice)" "$API$APPS" \
		> "$T/twice.$i" 2>&1 &
	eval "TW$i=\$!"
done
# fornaxd has read them (the POST of slow's connection and these two, nothing unread)
queued() { [ "$(ss -Htn state established "sport = :$PORT" | awk '$1 == 0' | wc -l)" -ge 3 ]; }
wait_for 10 queued && ok "both are read by fornaxd while etcd is paused" ||
	not_ok "the two creates were not read: $(ss -Htn "sport = :$PORT")"

# ---- etcd continued: the writes commit ----
kill -CONT "${ETCD_PID[0]}"
wait "$POSTPID"
POSTPID=
[ "$(cat "$T/post.code")" = 201 ] && [ "$(jq -r .metadata.name "$T/post.out")" = slow ] &&
	ok "the POST is answered 201 once etcd has committed it" ||
	not_ok "the POST: $(cat "$T/post.code") $(cat "$T/post.out")"
req GET $APPS/slow; expect_code 200 "slow is there"
got_left() { req GET $APPS/left; [ "$CODE" = 200 ]; }
wait_for 30 got_left && ok "the write of the client that left was made too" || not_ok "left: $CODE $BODY"
wait "$TW1" "$TW2"
[ "$(sort "$T/twice.1" "$T/twice.2" | tr '\n' ' ')" = "201 409 " ] &&
	ok "two creates of one name sent while etcd was paused: one 201, one 409" ||
	not_ok "two creates of one name: $(cat "$T/twice.1" "$T/twice.2" | tr '\n' ' ')"
kill -0 "$PID" && ok "fornaxd is still running" || not_ok "fornaxd died: $(tail -5 "$T/fxd.log")"

kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=
start && ok "restarted after kill -9" || not_ok "restart: $(tail -3 "$T/fxd.log")"
req GET $APPS
N=$(printf '%s' "$BODY" | jq -r '[.items[].metadata.name] | sort | join(",")')
[ "$N" = first,left,slow,twice ] && ok "every acknowledged write is durable: $N" || not_ok "after restart: $N"
kill "$PID"; wait "$PID"; RC=$?; PID=
[ "$RC" = 0 ] && ok "fornaxd stops cleanly (no leak reported)" || not_ok "fornaxd exit $RC: $(grep -m3 -A3 'Sanitizer' "$T/fxd.log")"
summary
