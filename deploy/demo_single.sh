#!/usr/bin/env bash
# Single-cluster demo (make demo-single): 3 hosts on an underlay bridge, one VPC with two
# subnets, four pods, all XDP in native mode. Shows ping and TCP within and
# across subnets, the direct path, and the per-reason counters; cleans up
# on exit and on Ctrl-C.   usage: demo.sh PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XGATE=$(readlink -f "${1:-$HERE/../build/userspace/xgate}")
P=xgd
source "$HERE/lib/topo.sh"
source "$HERE/lib/demo.sh"

demo_start topo_down "no namespaces or pins left" "$XGATE"
topo_down
say "building the cluster (hosts h1 h2 h3, pods p1a p1b in 10.1.1.0/24, p2a p2b in 10.1.2.0/24)"
topo_up 2> >(grep -v "^xgate: note" >&2) || { echo "demo: topology failed"; exit 1; }
cat <<TXT
  h1 10.200.0.1  bouncer of 10.1.1.0/24, divider of VPC $VNI   pod p1a 10.1.1.11
  h2 10.200.0.2  bouncer of 10.1.2.0/24                  pods p2a 10.1.2.21, p2b 10.1.2.22
  h3 10.200.0.3  compute                                 pod p1b 10.1.1.12
TXT
for h in "${HOSTS[@]}"; do say "xgate status on $h"; xg "$h" status; done

run() { echo "\$ $*"; "$@"; }
say "ping within a subnet, across hosts: p1a -> p1b"
run nsx p1a ping -c3 -i0.3 10.1.1.12
say "ping within a host: p2a -> p2b (agent redirects veth to veth)"
run nsx p2a ping -c3 -i0.3 10.1.2.22
say "ping across subnets: p1b -> p2a (first packet via the divider, then direct)"
run nsx p1b ping -c3 -i0.3 10.1.2.21
say "TCP across subnets: iperf3 p1b -> p2a, 3 s"
nsx p2a iperf3 -s -1 -D >/dev/null 2>&1; sleep 0.3
run nsx p1b timeout 30 iperf3 -c 10.1.2.21 -t 3 | tail -4
say "TCP within a subnet: iperf3 p1a -> p1b, 3 s"
nsx p1b iperf3 -s -1 -D >/dev/null 2>&1; sleep 0.3
run nsx p1a timeout 30 iperf3 -c 10.1.1.12 -t 3 | tail -4

say "direct-path caches (learned from the host option in each Geneve header)"
for h in "${HOSTS[@]}"; do echo "-- $h"; xg "$h" cache ls; done
for h in "${HOSTS[@]}"; do say "per-reason counters on $h"; xg "$h" stats; done
