#!/usr/bin/env bash
# Tiny TAP-like helpers for the shell tests: every check prints one line,
# the run ends with "N passed, N failed" and fails if anything failed.
PASSED=0
FAILED=0

ok() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok - $*"; }
check() { # check "description" command...
	local d=$1; shift
	if "$@" >/dev/null 2>&1; then ok "$d"; else not_ok "$d"; fi
}
check_not() {
	local d=$1; shift
	if "$@" >/dev/null 2>&1; then not_ok "$d"; else ok "$d"; fi
}
# expect_rc CODE "description" command...  (also captures stderr in $ERR)
expect_rc() {
	local want=$1 d=$2 rc; shift 2
	ERR=$("$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$d (exit $rc)"; else not_ok "$d: exit $rc, wanted $want: $ERR"; fi
}
# expect_err "substring" "description": the last expect_rc's stderr holds it
expect_err() {
	case "$ERR" in *"$1"*) ok "$2";; *) not_ok "$2: stderr was: $ERR";; esac
}
# wait_for SECONDS CMD...: poll until CMD succeeds (1 if it never does)
wait_for() {
	local end=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done
}
summary() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}

# debian_kubectl: the path of Debian's kubectl 1.20 (package kubernetes-client):
# $XGATE_KUBECTL, /usr/bin/kubectl, or where deploy/deps.sh diverted it when
# another package (the Google Cloud SDK's kubectl) owns that path; "" if none.
debian_kubectl() {
	local k
	for k in ${XGATE_KUBECTL:-} /usr/bin/kubectl.kubernetes-client \
		"$(dpkg-divert --truename /usr/bin/kubectl 2>/dev/null)" /usr/bin/kubectl; do
		[ -x "$k" ] && "$k" version --client --short 2>/dev/null | grep -q 'v1\.20\.' && { echo "$k"; return; }
	done
}
