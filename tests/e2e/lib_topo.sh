#!/usr/bin/env bash
# What the end-to-end tests on the single-cluster topology share
# (single_cluster.sh, neigh_gc.sh). Source it with the test's argument:
#   source lib_topo.sh PATH/TO/xgate
# It sources ../lib.sh and deploy/lib/topo.sh, names the namespaces
# xgt<pid> and takes the topology down on exit.
XGATE=$(readlink -f "$1")
P=xgt$$
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=../../deploy/lib/topo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/topo.sh"
trap 'topo_down' EXIT INT TERM

# sc_up: the topology; the test ends here if it fails
sc_up() {
	if topo_up; then ok "topology up (3 hosts, 4 pods, native XDP)"; else not_ok "topology up"; summary; exit 1; fi
}

# sc_down: the topology down, and nothing of it left behind (namespaces, pins)
sc_down() {
	local left
	topo_down
	trap - EXIT
	left=$(ip netns list | grep -c "^$P" || true)
	[ "$left" -eq 0 ] && ok "cleanup removed every namespace" || not_ok "$left namespaces left"
	ls /sys/fs/bpf/xgate 2>/dev/null | grep -q "^$P" && not_ok "pins left under /sys/fs/bpf/xgate" || ok "no pins left"
}
