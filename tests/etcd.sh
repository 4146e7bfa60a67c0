#!/usr/bin/env bash
# A throwaway etcd cluster on loopback for the tests (Debian's etcd-server).
#
# Sourced:  source tests/etcd.sh; etcd_start N   (N = 1 or 3 members)
#   sets ETCD_ENDPOINTS (comma-separated client URLs), ETCD_URL[i],
#   ETCD_PID[i] and ETCD_DIR, and, unless the script has an EXIT trap of its
#   own already (which is then to call etcd_stop), installs one that stops
#   the members and removes their data (call etcd_stop yourself to do it
#   sooner).
# Sourced by a test on etcd:  etcd_test NAME N [tls]
#   its scratch directory T, its traps and the cluster in one go (see there).
# Run:      tests/etcd.sh N CMD ARGS...
#   starts the cluster, runs CMD with XGATE_ETCD_ENDPOINTS and
#   XGATE_ETCD_MEMBERS ("pid=url pid=url ...", for tests that stop members),
#   cleans up, and exits with CMD's status.
# With ETCD_TLS_DIR set (ca.pem, srv.pem, srv.key: deploy/lib/ca.sh's test_ca)
# the client URLs are https:// and members want a client certificate signed
# by that CA (peers stay plain on loopback).
#
# Members are named xgte<pid>-m<i> after the test's PID (tests/meta/leftovers.sh
# finds them if they outlive it); their data lives in ${TMPDIR:-/tmp}/xgte<pid>.
# Each member is started with a parent-death signal, so even a test killed
# with SIGKILL (a ctest timeout) does not leave one running.

# what the tests on etcd use besides: wait_for, ok (lib.sh); free_port,
# secret, test_ca (edge/lib.sh)
ETCD_HERE=$(dirname "${BASH_SOURCE[0]}")
declare -F wait_for >/dev/null || source "$ETCD_HERE/lib.sh"
declare -F test_ca >/dev/null || source "$ETCD_HERE/edge/lib.sh"

ETCD_DIR=""
ETCD_ENDPOINTS=""
ETCD_PID=()
ETCD_URL=()

# a TCP port nobody listens on now (the start retries if one is taken meanwhile)
etcd_free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# etcd_gone PID: the member has exited (it is disowned: not waited for)
etcd_gone() {
	! kill -0 "$1" 2>/dev/null || grep -q '^State:.*zombie' "/proc/$1/status" 2>/dev/null
}

etcd_stop() {
	local p
	for p in "${ETCD_PID[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	for p in "${ETCD_PID[@]}"; do wait_for 10 etcd_gone "$p"; done
	ETCD_PID=()
	[ -n "$ETCD_DIR" ] && rm -rf "$ETCD_DIR"
	ETCD_DIR=""
}

# etcd_curl ARGS...: curl with the client certificate when TLS is on
etcd_curl() {
	if [ -n "${ETCD_TLS_DIR:-}" ]; then
		curl --cacert "$ETCD_TLS_DIR/ca.pem" --cert "$ETCD_TLS_DIR/srv.pem" \
			--key "$ETCD_TLS_DIR/srv.key" "$@"
	else
		curl "$@"
	fi
}

# etcd_healthy URL: the member answers and the cluster has a leader
etcd_healthy() {
	etcd_curl -sf --max-time 2 "$1/health" | grep -q '"health":"true"'
}

etcd_try_start() {
	local n=$1 i cluster="" peer=() client=() try=$2 scheme=http tls=()
	if [ -n "${ETCD_TLS_DIR:-}" ]; then
		scheme=https
		tls=(--cert-file "$ETCD_TLS_DIR/srv.pem" --key-file "$ETCD_TLS_DIR/srv.key"
			--trusted-ca-file "$ETCD_TLS_DIR/ca.pem" --client-cert-auth)
	fi
	ETCD_DIR=${TMPDIR:-/tmp}/xgte$$
	rm -rf "$ETCD_DIR"
	mkdir -p "$ETCD_DIR"
	for ((i = 0; i < n; i++)); do
		peer[i]=http://127.0.0.1:$(etcd_free_port)
		client[i]=$scheme://127.0.0.1:$(etcd_free_port)
		cluster="$cluster${cluster:+,}xgte$$-m$i=${peer[i]}"
	done
	ETCD_URL=("${client[@]}")
	ETCD_ENDPOINTS=$(IFS=,; echo "${client[*]}")
	for ((i = 0; i < n; i++)); do
		# short heartbeats: elections (and the tests that force them) settle fast
		setpriv --pdeathsig KILL etcd --name "xgte$$-m$i" --data-dir "$ETCD_DIR/m$i" \
			--listen-peer-urls "${peer[i]}" --initial-advertise-peer-urls "${peer[i]}" \
			--listen-client-urls "${client[i]}" --advertise-client-urls "${client[i]}" \
			--initial-cluster "$cluster" --initial-cluster-state new \
			--initial-cluster-token "xgte$$-$try" --heartbeat-interval 50 \
			--election-timeout 500 --logger zap --log-outputs "$ETCD_DIR/m$i.log" \
			"${tls[@]}" >/dev/null 2>&1 &
		ETCD_PID[i]=$!
		disown # the tests kill members: no "Killed" line from bash for each
	done
	for ((i = 0; i < n; i++)); do
		wait_for 20 etcd_healthy "${client[i]}" || return 1
	done
}

etcd_start() {
	local n=${1:-1} try
	command -v etcd >/dev/null || { echo "etcd.sh: etcd not installed (deploy/deps.sh)" >&2; return 1; }
	# a script's own trap stays: replaced, a signal while the members come up
	# would leave the rest of what it made
	[ -n "$(trap -p EXIT)" ] || trap etcd_stop EXIT
	for try in 1 2 3; do
		etcd_try_start "$n" "$try" && return 0
		echo "etcd.sh: a $n-member cluster did not come up (try $try); its logs:" >&2
		tail -n 5 "$ETCD_DIR"/m*.log >&2 2>/dev/null
		etcd_stop
	done
	return 1
}

# etcd_test NAME N [tls]: what a test (or bench) on etcd begins with: T, a
# scratch directory /tmp/NAME-XXXXXX; an EXIT trap that runs the script's
# etcd_test_stop if it defines one (its daemons go before the members they
# use), waits for its children, stops the members and removes T (kept, and
# said so, with KEEP set); INT and TERM exit 130 (through that trap); N
# members, with "tls" behind TLS with client certificates (the test CA in T,
# tests/edge/lib.sh's test_ca). Returns 1, saying why, when there are none.
etcd_test() {
	T=$(mktemp -d "/tmp/$1-XXXXXX")
	trap etcd_test_cleanup EXIT
	trap "exit 130" INT TERM
	if [ "${3:-}" = tls ]; then
		test_ca "$T" || { echo "etcd.sh: openssl made no test CA" >&2; return 1; }
		export ETCD_TLS_DIR=$T
	fi
	etcd_start "$2"
}

etcd_test_cleanup() {
	declare -F etcd_test_stop >/dev/null && etcd_test_stop
	wait 2>/dev/null
	etcd_stop
	if [ -n "${KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	[ $# -ge 2 ] || { echo "usage: $0 N CMD [ARGS...]" >&2; exit 2; }
	n=$1; shift
	etcd_start "$n" || exit 1
	members=""
	for i in "${!ETCD_PID[@]}"; do members="$members${members:+ }${ETCD_PID[i]}=${ETCD_URL[i]}"; done
	XGATE_ETCD_ENDPOINTS=$ETCD_ENDPOINTS XGATE_ETCD_MEMBERS=$members "$@"
	rc=$?
	etcd_stop
	exit $rc
fi
