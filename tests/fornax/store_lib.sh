#!/usr/bin/env bash
# What the tests of one fornaxd on etcd share (tests/fornax/etcd.sh,
# etcd_async.sh): its port, token and API, its start and the requests.
# Sourced after etcd.sh, with FXD and T set; sets
#   PORT, TOK, PREFIX (/xgt-TAG<pid>/ with $STORE_TAG), G, API, APPS
#   store_conf FILE LINE... fornaxd's configuration: its API, [Store] on
#                           the cluster under PREFIX, and the LINEs there
#   start [CONF]            fornaxd from CONF ($T/f.conf), its pid in PID,
#                           its log in $T/fxd.log; waits for /healthz
#   post PATH JSON          req POST of JSON (req, j and expect_code: tests/edge/lib.sh)
#   app NAME                an application's JSON (at most 2 instances)
# shellcheck disable=SC2034 # the variables are the sourcing test's
PORT=$(free_port)
TOK=$(secret tok)
PREFIX=/xgt-${STORE_TAG:-fx}$$/
G=core.fornax-serverless.centaurusinfra.io
API=http://127.0.0.1:$PORT/apis/$G/v1
APPS=/namespaces/default/applications

store_conf() {
	local f=$1
	shift
	printf '%s\n' "[API]" "Listen = 127.0.0.1:$PORT" "Token = $TOK" "[Store]" "Backend = etcd" \
		"Endpoints = $ETCD_ENDPOINTS" "Prefix = $PREFIX" "$@" > "$f"
}
start() {
	"$FXD" -c "${1:-$T/f.conf}" 2>> "$T/fxd.log" & PID=$!
	wait_for 15 curl -sf "http://127.0.0.1:$PORT/healthz"
}
post() { req POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
app() {
	printf '{"metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","command":["/bin/echo-server"],"ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"requests":{"cpu":"100m","memory":"32Mi"}}}],"usingNodeSessionService":false,"scalingPolicy":{"minimumInstance":0,"maximumInstance":2,"burst":1,"scalingPolicyType":"idle_session_number","idleSessionNumThreshold":{"high":1,"low":0}}}}' "$1"
}
