#!/usr/bin/env bash
# edgeclusterd: a large batch of missions is applied in turns, and the loop
# serves the API between them (docs/edgecluster.md, "The reconciler").
#  1. at start: 400 content-only missions that did not match become matching
#     (a restart with other labels); all 400 are reconciled from the start;
#  2. from the parent: a child attaches to a parent holding 400 missions and
#     receives them in one or two sync messages.
# Both times the cluster's own API is polled meanwhile. The old daemon applied
# such a batch in one loop callback, so any answer showed every matched
# mission active; here some answer must show matched missions not active
# yet (an ordering, not a time), and in the end every one is applied, its
# content file written, and (2) its state at the parent.
# usage: batch.sh PATH/TO/edgeclusterd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
T=$(mktemp -d /tmp/xgt-batch-XXXXXX)
N=400
declare -A PID PORT
POLLER=
cleanup() {
	[ -n "$POLLER" ] && kill "$POLLER" 2>/dev/null
	for n in "${!PID[@]}"; do [ -n "${PID[$n]}" ] && kill -9 "${PID[$n]}" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

TOK=$(secret tok)
JOIN=$(secret join)
for n in a p c; do PORT[$n]=$(free_port); done
url() { echo "http://127.0.0.1:${PORT[$1]}"; }
api() { curl -sf -H "Authorization: Bearer $TOK" "$(url "$1")/apis/edge.xgate.io/v1/$2"; }
conf() { # conf NAME LABELS [PARENT]
	{
		printf '[Cluster]\nName = %s\nLabels = %s\n' "$1" "$2"
		[ -n "${3:-}" ] && printf 'Parent = ws://127.0.0.1:%s\nJoinToken = %s\n' "${PORT[$3]}" "$JOIN"
		printf '[API]\nListen = 127.0.0.1:%s\nToken = %s\n' "${PORT[$1]}" "$TOK"
		printf '[Hub]\nJoinToken = %s\n[Store]\nDatabase = %s/%s.db\n' "$JOIN" "$T" "$1"
	} > "$T/$1.conf"
}
start() {
	"$ECD" -c "$T/$1.conf" 2>> "$T/$1.log" &
	PID[$1]=$!
}
up() { wait_for 20 curl -sf "$(url "$1")/healthz"; }
stop() { kill "${PID[$1]}" 2>/dev/null; wait "${PID[$1]}" 2>/dev/null; PID[$1]=; }
# create NAME-PREFIX COUNT PLACEMENT-LABEL at cluster $1: one keep-alive connection
create_many() {
	python3 - "${PORT[$1]}" "$TOK" "$2" "$3" "$4" <<'EOF'
import http.client, json, sys
port, tok, prefix, count, label = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
k, v = label.split("=")
for i in range(count):
    body = {"apiVersion": "edge.xgate.io/v1", "kind": "Mission", "metadata": {"name": "%s%04d" % (prefix, i)},
            "spec": {"content": "batch %s%04d\n" % (prefix, i), "placement": {"matchLabels": {k: v}}}}
    c.request("POST", "/apis/edge.xgate.io/v1/missions", json.dumps(body),
              {"Authorization": "Bearer " + tok, "Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    if r.status != 201:
        sys.exit("POST %d: %d" % (i, r.status))
EOF
}
# poll NAME OUT: "known matched active" of cluster NAME, one line per answer, until killed
poll() {
	while :; do
		api "$1" "edgeclusters/$1" | jq -r '.state.missions | "\(.known) \(.matched) \(.active)"' >> "$2"
	done
}
counts() { api "$1" "edgeclusters/$1" | jq -r '.state.missions | "\(.known) \(.matched) \(.active)"'; }
# seen_partial FILE: an answer with missions matched here but not all of them active yet
# ("ACTIVE of MATCHED"; the old daemon applied a whole batch before it answered anything)
seen_partial() { awk '$2 > 0 && $3 < $2 {print $3 " of " $2; exit}' "$1"; }
files_ok() { # files_ok NAME PREFIX: every content file in place, as sent
	local i f bad=0
	for ((i = 0; i < N; i++)); do
		f=$(printf '%s/%s.missions/%s%04d/content' "$T" "$1" "$2" "$i")
		[ "$(cat "$f" 2>/dev/null)" = "$(printf 'batch %s%04d' "$2" "$i")" ] || bad=$((bad + 1))
	done
	[ "$bad" = 0 ]
}

# watch_applies NAME PREFIX WHAT: poll NAME while it applies the N missions, then check that an
# answer came in the middle, that all N were applied and every content file written
watch_applies() {
	local n=$1 pfx=$2 what=$3 p
	poll "$n" "$T/$n.polls" &
	POLLER=$!
	wait_for 60 is_counts "$n" "$N $N $N"
	kill "$POLLER"
	wait "$POLLER" 2>/dev/null
	POLLER=
	p=$(seen_partial "$T/$n.polls")
	[ -n "$p" ] && ok "$what: an answer came while $p matched missions were applied" ||
		not_ok "$what: no answer while applying (answers: $(sort -u "$T/$n.polls" | paste -sd,))"
	is_counts "$n" "$N $N $N" && ok "then all $N applied at $n" || not_ok "$n: counts $(counts "$n")"
	files_ok "$n" "$pfx" && ok "every content file written at $n" || not_ok "content files missing at $n"
}

# ---- 1. at start ----
conf a "batch=no"
start a
up a || { not_ok "a did not start: $(cat "$T/a.log")"; summary; exit 1; }
create_many a s $N batch=yes && ok "$N content-only missions created at a; none matches (batch=no)" ||
	not_ok "creating the missions at a"
is_counts() { [ "$(counts "$1")" = "$2" ]; }
wait_for 30 is_counts a "$N 0 0" && ok "a: $N known, 0 matched" || not_ok "a: counts $(counts a)"
stop a
conf a "batch=yes"
start a
watch_applies a s "restarted with batch=yes"
stop a

# ---- 2. from the parent ----
conf p "role=hub"
conf c "role=leaf" p
start p
up p || { not_ok "p did not start: $(cat "$T/p.log")"; summary; exit 1; }
create_many p m $N role=leaf && ok "$N missions for role=leaf created at the parent p" ||
	not_ok "creating the missions at p"
start c
up c || { not_ok "c did not start: $(cat "$T/c.log")"; summary; exit 1; }
watch_applies c m "c received the missions from p"
at_parent() { api p missions | jq -r '[.items[] | select(.state.c == "applied")] | length'; }
parent_has() { [ "$(at_parent)" = "$N" ]; }
wait_for 30 parent_has
[ "$(at_parent)" = $N ] && ok "the parent has all $N states of c" || not_ok "the parent has $(at_parent) states of c"
grep -q "silent for" "$T/p.log" "$T/c.log" && not_ok "a link was closed for silence" || ok "no link closed for silence"

grep -q "ERROR: AddressSanitizer\|runtime error" "$T"/*.log && not_ok "sanitizer reports: $(grep -h -A5 'ERROR\|runtime error' "$T"/*.log | head -20)" || ok "no sanitizer report in the daemons' logs"
summary
