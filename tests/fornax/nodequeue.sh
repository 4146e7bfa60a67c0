#!/usr/bin/env bash
# What fornaxd queues for one node is bounded ([Nodes] SendQueueMax): a
# simulated node that registers, says it is ready and then reads nothing
# is closed once its queue is over the bound, instead of growing fornaxd's
# memory; the node is then not ready (nothing more is placed on it) and
# fornaxd keeps serving.
# usage: nodequeue.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/../edge/lib.sh"
PY=/usr/bin/python3 # the distribution's: python3-websockets lives there
T=$(mktemp -d /tmp/xgt-fornaxq-XXXXXX)
PID=
KID=
cleanup() {
	for p in $PID $KID; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

# PodCreates of ~48 KiB (the configData goes with each): more than the
# socket's send buffer can take (tcp_wmem's ceiling) plus the 1 MiB queue
WMEM=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem 2>/dev/null || echo 4194304)
N=$(((WMEM + (2 << 20)) / 49152))
[ "$N" -ge 120 ] || N=120
PORT=$(free_port)
TOK=$(secret tok)
JOIN=$(secret join)
API=http://127.0.0.1:$PORT/apis/core.fornax-serverless.centaurusinfra.io/v1
cat > "$T/f.conf" <<EOC
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
[Store]
Database = $T/fornaxd.db
[Nodes]
JoinToken = $JOIN
SendQueueMax = 1M
EOC
"$FXD" -c "$T/f.conf" 2> "$T/fxd.log" & PID=$!
wait_for 10 curl -sf "http://127.0.0.1:$PORT/healthz" && ok "fornaxd up" || { not_ok "start: $(cat "$T/fxd.log")"; summary; exit 1; }
$PY "$HERE/simnode.py" run "ws://127.0.0.1:$PORT" slow "$T/sim" --join "$JOIN" --stall --pods 100000 2> "$T/sim.log" & KID=$!
get() { curl -sf -H "Authorization: Bearer $TOK" "$API$1"; }
ready() { [ "$(get /nodes/slow | jq -r '.status.conditions[0].status')" = True ]; }
wait_for 10 ready && ok "the node is ready, then reads nothing" || not_ok "node: $(get /nodes/slow)"
BIG=$(head -c 49000 /dev/zero | tr '\0' a)
printf '{"metadata":{"name":"big"},"spec":{"containers":[{"name":"c","command":["/x"],"ports":[{"containerPort":80}]}],"configData":{"blob":"%s"},"scalingPolicy":{"minimumInstance":%d,"maximumInstance":%d,"burst":%d,"scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":0,"low":0}}}}' \
	"$BIG" "$N" "$N" "$N" > "$T/app.json"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOK" --data-binary @"$T/app.json" "$API/namespaces/default/applications")
[ "$CODE" = 201 ] && ok "an application of $N pods with 48 KiB of configData" || not_ok "create: $CODE"
wait_for 30 grep -q "nodes: slow .*over SendQueueMax" "$T/fxd.log" &&
	ok "fornaxd closes the node over SendQueueMax: $(grep -o 'not reading.*queued)' "$T/fxd.log" | head -1)" ||
	not_ok "no close: $(tail -5 "$T/fxd.log")"
notready() { ! ready; }
wait_for 10 notready && ok "the node is not ready any more" || not_ok "node: $(get /nodes/slow)"
RSS=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
[ "$RSS" -lt 200000 ] && ok "fornaxd's RSS stays bounded (${RSS} kB)" || not_ok "RSS ${RSS} kB"
get /namespaces/default/applications/big > /dev/null && ok "fornaxd keeps serving" || not_ok "API after the close"
summary
