#!/usr/bin/env bash
# edgeclusterd against clients that misbehave, over real sockets: requests
# curl does not make are sent byte for byte by rawhttp.py. Every request
# gets exactly one well-formed answer (JSON Status for errors), and nothing
# a client holds open keeps the API from answering others.
# usage: hardening.sh PATH/TO/edgeclusterd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
T=$(mktemp -d /tmp/xgt-hard-XXXXXX)
PID=
HOLD=
cleanup() {
	for p in $PID $HOLD; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

PORT=$(free_port)
TOK=$(secret tok)
API=http://127.0.0.1:$PORT/apis/edge.xgate.io/v1
cat > "$T/e.conf" <<EOC
[Cluster]
Name = edge-a
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
[Store]
Database = $T/db/edge-a.db
EOC
"$ECD" -c "$T/e.conf" 2>> "$T/ecd.log" & PID=$!
wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz" && ok "edgeclusterd serves on 127.0.0.1:$PORT" ||
	{ not_ok "daemon did not start: $(cat "$T/ecd.log")"; summary; exit 1; }

# raw BYTES [rawhttp.py args]: send BYTES (printf format) on one connection; OUT is the answer
raw() { local b=$1; shift; OUT=$(printf "$b" | python3 "$HERE/rawhttp.py" "$PORT" "$@"); }
# the number of status lines in OUT
answers() { printf '%s' "$OUT" | grep -c '^HTTP/1\.[01] '; }
status() { printf '%s' "$OUT" | sed -n 's/^HTTP\/1\.[01] \([0-9]*\).*/\1/p' | head -1; }
# the JSON body of the first answer in OUT
body() { printf '%s' "$OUT" | tr -d '\r' | sed -n '/^$/,$p' | sed -n 2p; }
# one_answer CODE "description": OUT holds exactly one answer, CODE with a Status body
one_answer() {
	local n s
	n=$(answers) s=$(status)
	if [ "$n" = 1 ] && [ "$s" = "$1" ] && [ "$(body | jq -r .kind 2>/dev/null)" = Status ]; then
		ok "$2 ($s, one answer)"
	else
		not_ok "$2: $n answers, status $s, wanted one $1 with a Status body: $OUT"
	fi
}
alive() { kill -0 "$PID" 2>/dev/null && curl -sf -m 5 "http://127.0.0.1:$PORT/healthz" > /dev/null; }

# ---- Content-Length: 0 ----
raw 'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n' --idle 2
one_answer 405 "POST /healthz with Content-Length: 0, no token"
raw "POST /apis/edge.xgate.io/v1/missions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $TOK\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n" --idle 2
one_answer 400 "POST of an empty mission body"
case "$(body | jq -r .message 2>/dev/null)" in *"needs a JSON body"*) ok "it says the body is missing";; *) not_ok "message: $(body)";; esac

# ---- CONNECT and unknown methods: a JSON answer, then closed ----
raw 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n' --idle 30
one_answer 405 "CONNECT, no token"
[ "${OUT##*$'\n'}" = "<EOF>" ] && ok "the CONNECT is closed after the answer" || not_ok "CONNECT left open"
raw 'BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n' --idle 30
one_answer 501 "an unknown method"
case "$(body | jq -r .message 2>/dev/null)" in *BREW*) ok "the message names the method";; *) not_ok "message: $(body)";; esac
[ "${OUT##*$'\n'}" = "<EOF>" ] && ok "closed after the answer" || not_ok "unknown method left open"

# ---- a header line without a colon: lws's parser waits for more, the deadline answers ----
raw 'GET /healthz HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n' --idle 30
one_answer 408 "a header line without a colon"
[ "${OUT##*$'\n'}" = "<EOF>" ] && ok "closed after the answer" || not_ok "left open"

# ---- more requests that never end than lws has connection slots (1024) ----
# Each is answered (CONNECT 405, unknown method 501, headers or a body too
# slow 408) and closed; /healthz answers meanwhile.
python3 "$HERE/holders.py" "$PORT" connect:900 method:50 header:100 body:150 --max 120 > "$T/holders" & HOLD=$!
wait_for 60 grep -q '^held' "$T/holders" && ok "1200 connections opened" || not_ok "holders: $(cat "$T/holders")"
curl -sf -m 30 -o /dev/null "http://127.0.0.1:$PORT/healthz" && ok "/healthz answers while they are held" ||
	not_ok "/healthz did not answer while 1200 requests were held"
wait $HOLD
while read -r kind n _ closed _ codes; do
	case $kind in connect) want=405;; method) want=501;; body | header) want=408;; esac
	[ "$closed" = "$n" ] && ok "all $n '$kind' connections were closed by the daemon" ||
		not_ok "$kind: $closed of $n closed"
	[ -z "$want" ] || [ -z "$(printf '%s' "$codes" | tr ',' '\n' | grep -vx "$want")" ] &&
		ok "'$kind': each answered $want" || not_ok "$kind answers: $(printf '%s' "$codes" | tr ',' '\n' | sort | uniq -c | tr '\n' ' ')"
done < <(grep -v '^held' "$T/holders")

# ---- text that is not UTF-8 in a path or a query (jansson refuses it in a Status) ----
# code PATH: the status code of an authenticated GET of API/PATH; the body in OUT
code() { OUT=$(curl -s -o - -w '\n%{http_code}' -H "Authorization: Bearer $TOK" "$API/$1"); CODE=${OUT##*$'\n'}; OUT=${OUT%$'\n'*}; }
code 'missions/%ff'
[ "$CODE" = 404 ] && [ "$(printf '%s' "$OUT" | jq -r .kind)" = Status ] && ok "GET missions/%ff: 404 Status" || not_ok "missions/%ff: $CODE $OUT"
code 'missions?labelSelector=%ff%fe'
[ "$CODE" = 400 ] && [ "$(printf '%s' "$OUT" | jq -r .details.field)" = labelSelector ] && ok "labelSelector=%ff%fe: 400 on labelSelector" || not_ok "labelSelector %ff: $CODE $OUT"

# ---- URIs the daemon would have to cut: 414, not a cut path or a dropped argument ----
LONG=$(head -c 1500 /dev/zero | tr '\0' a)
code "missions/$LONG"
[ "$CODE" = 414 ] && [ "$(printf '%s' "$OUT" | jq -r .reason)" = RequestURITooLong ] &&
	ok "a 1.5 KB path: 414 RequestURITooLong" || not_ok "long path: $CODE $OUT"
code "missions?x=$LONG&labelSelector=app=web"
[ "$CODE" = 414 ] && ok "a 1.5 KB query argument: 414, not dropped" || not_ok "long argument: $CODE $OUT"
code 'missions?&labelSelector=Not%20a%20selector!'
[ "$CODE" = 400 ] && ok "an argument after an empty one is read (bad labelSelector: 400)" || not_ok "?&labelSelector=bad: $CODE $OUT"

# ---- control bytes from a client do not reach the log raw ----
# (lws ends the request line at a decoded %0a itself; ESC, BEL and DEL it passes on)
raw 'GET /nope%%1b[2Jforged%%07%%7f HTTP/1.1\r\nHost: x\r\n\r\n' --idle 2
[ "$(status)" = 401 ] && ok "a path with %1b %07 %7f, no token: 401" || not_ok "control-byte path: $OUT"
raw 'GET /nope\033[2Jraw\007 HTTP/1.1\r\nHost: x\r\n\r\n' --idle 2
[ "$(status)" = 401 ] && ok "a path with raw ESC and BEL, no token: 401" || not_ok "raw control bytes: $OUT"
wait_for 5 grep -q 'nope.*raw' "$T/ecd.log" && ok "the refusals are logged" || not_ok "no log line for them"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/ecd.log"; then
	not_ok "a control byte from a request reached the log: $(grep -a nope "$T/ecd.log" | cat -v)"
else
	ok "written escaped: $(grep -a -o 'nope[^ ]*' "$T/ecd.log" | paste -sd' ')"
fi

alive && ok "the daemon still answers" || not_ok "the daemon died: $(tail -5 "$T/ecd.log")"
summary
