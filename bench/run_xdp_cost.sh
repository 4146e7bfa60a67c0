#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Build the private network namespace bench/xdp_cost measures in, run it,
# and remove everything afterwards (netns, veths, pins), also on failure.
#
#   usage: bench/run_xdp_cost.sh path/to/xdp_cost [xdp_cost options]
#   e.g.   bench/run_xdp_cost.sh build/bench/xdp_cost --repeat 2000000 --runs 7
#
# Topology (inside netns xgbench-<pid>):
#   bx0 <-> bx1   "underlay NIC". bx0 = 10.98.0.1/24, this host; permanent
#                 neighbours for 10.98.0.2-6 (sender, endpoint host, bouncer,
#                 divider, gateway) so bpf_fib_lookup resolves them.
#   bp0 <-> bp1   a pod veth; bp0 is the host side (agent ingress).
#   bg0 <-> bg1   the cluster gateway's public NIC. bg0 = 10.97.0.1/24;
#                 permanent neighbour for 10.97.0.2 (the peer gateway).
#   bx1, bp1 and bg1 get the sink XDP program (attached by xdp_cost), so
#   frames transmitted into bx0/bp0/bg0 are received by NAPI and dropped
#   cheaply.
set -eu

if [ $# -lt 1 ]; then
	sed -n '5,7p' "$0" >&2
	exit 2
fi
BIN=$1
shift
if [ "$(id -u)" != 0 ]; then
	echo "run_xdp_cost.sh: needs root (netns, XDP, BPF_PROG_RUN)" >&2
	exit 1
fi

NS=xgbench-$$
PIN=/sys/fs/bpf/xgate/bench-$$
XGDIR_EXISTED=0
[ -d /sys/fs/bpf/xgate ] && XGDIR_EXISTED=1

cleanup() {
	ip netns del "$NS" 2>/dev/null || true
	# xdp_cost removes its pins itself; this is for a crash or SIGKILL
	if [ -d "$PIN" ]; then
		find "$PIN" -mindepth 1 -maxdepth 1 -exec rm -f {} + 2>/dev/null || true
		rmdir "$PIN" 2>/dev/null || true
	fi
	if [ "$XGDIR_EXISTED" = 0 ]; then
		rmdir /sys/fs/bpf/xgate 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

ip netns add "$NS"
ipn() { ip -n "$NS" "$@"; }
# no IPv6: router/neighbour solicitations would reach the sink
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1
ipn link set lo up
ipn link add bx0 type veth peer name bx1
ipn link add bp0 type veth peer name bp1
ipn link add bg0 type veth peer name bg1
for d in bx0 bx1 bp0 bp1 bg0 bg1; do
	ipn link set "$d" up
done
ipn addr add 10.98.0.1/24 dev bx0
# bpf_fib_lookup() answers BPF_FIB_LKUP_RET_FWD_DISABLED (-> xgate's
# DROP_FIB) unless IPv4 forwarding is on for the device, even in OUTPUT mode
ip netns exec "$NS" sysctl -qw net.ipv4.conf.bx0.forwarding=1
# the session SNAT routes the pod's replies as if they came in from its veth
ip netns exec "$NS" sysctl -qw net.ipv4.conf.bp0.forwarding=1
for h in 2 3 4 5 6; do
	ipn neigh replace "10.98.0.$h" lladdr "02:98:00:00:00:0$h" dev bx0 nud permanent
done
ipn addr add 10.97.0.1/24 dev bg0
ip netns exec "$NS" sysctl -qw net.ipv4.conf.bg0.forwarding=1
ipn neigh replace 10.97.0.2 lladdr 02:97:00:00:00:02 dev bg0 nud permanent

# xdp_cost enters the netns itself (setns), so /sys/fs/bpf stays the host's
# bpffs and the pins land in $PIN, which it creates and removes.
rc=0
"$BIN" --netns "$NS" --pin-root "$PIN" "$@" || rc=$?
exit $rc
