#!/usr/bin/env bash
# What the edgeclusterd shell tests share (sourced after ../lib.sh).

# free_port (deploy/lib/port.sh)
# shellcheck source=../../deploy/lib/port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/port.sh"
# secret PREFIX: PREFIX-<32 random hex digits>, for API tokens and join tokens
secret() { echo "$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
# test_ca DIR: a throw-away CA and a certificate for localhost (deploy/lib/ca.sh)
# shellcheck source=../../deploy/lib/ca.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/ca.sh"

# The daemons' HTTP APIs with curl, token $TOK, at ${BASE:-$API}:
# req METHOD PATH [curl args...] sets CODE and BODY; j FILTER is jq -r of
# BODY; expect_code CODE WHAT is ok when the last req answered CODE.
req() {
	local m=$1 p=$2 out
	shift 2
	out=$(curl -sS -X "$m" -H "Authorization: Bearer $TOK" -w '\n%{http_code}' "$@" "${BASE:-$API}$p" 2>&1)
	CODE=${out##*$'\n'}
	BODY=${out%$'\n'*}
}
j() { printf '%s' "$BODY" | jq -r "$1" 2>/dev/null; }
expect_code() {
	if [ "$CODE" = "$1" ]; then ok "$2 ($CODE)"; else not_ok "$2: got $CODE, wanted $1: $BODY"; fi
}
