#!/usr/bin/env bash
# What the demos (deploy/demo.sh, deploy/demo_single.sh) share: section
# titles, teardown on exit and on Ctrl-C, the check for their binaries.

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# demo_start DOWN LEFT BINARY...: from now on the demo ends by running DOWN
# and saying "done: LEFT" (also on Ctrl-C, exit 130); then each BINARY must
# be there.
demo_start() {
	DEMO_DOWN=$1 DEMO_LEFT=$2
	shift 2
	trap 'say "tearing down"; $DEMO_DOWN; echo "done: $DEMO_LEFT"' EXIT
	trap 'exit 130' INT TERM
	local b
	for b in "$@"; do
		[ -x "$b" ] || { echo "demo: $b not found (run make build)"; exit 1; }
	done
}
