#!/usr/bin/env bash
# Underlay neighbours outlive the kernel's garbage collection (docs/architecture.md,
# "Underlay neighbours"). The XDP programs take next-hop MACs from the kernel
# (bpf_fib_lookup), which neither resolves nor refreshes an entry, so the GC
# reaps what only XDP uses: on a busy host (more than gc_thresh1 entries across
# namespaces) every entry the stack has not used for gc_stale_time, and
# forwarding stops with drop_no_neigh. xgate makes the next hops it is given
# kernel-managed entries, which the GC spares.
#
# On the single-cluster topology (deploy/lib/topo.sh), whose pings leave
# ordinary entries too, the test does to each host's table what the GC does to
# the entries it may take: deletes every IPv4 entry that is neither permanent
# nor managed (gc_thresh1 is one machine-wide value and cannot be lowered for
# a test; `ip neigh flush` would go further than the GC and delete managed
# entries too). Pod traffic must then still flow, with no drop_no_neigh.
# usage: neigh_gc.sh PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib_topo.sh" "$@"
sc_up

# managed HOST ADDR: HOST's entry for ADDR is managed, made by xgate (protocol 88)
managed() { nsx "$1" ip -d neigh show "$2" dev eth0 | grep -q 'managed.*proto 88\|proto 88.*managed'; }
# reap HOST: what the GC takes
reap() {
	nsx "$1" ip -4 neigh show nud all | grep -v -e managed -e PERMANENT -e NOARP |
		while read -r addr _ dev _; do nsx "$1" ip neigh del "$addr" dev "$dev"; done
}
# no_neigh_drops HOST: drop_no_neigh summed over its devices
no_neigh_drops() {
	local n=0 d
	for d in $(nsx "$1" ls /sys/class/net); do
		case $d in eth0 | v*) n=$((n + $(counter "$1" "$d" drop_no_neigh))) ;; esac
	done
	echo "$n"
}

# The next hops each host was given: h1 bounces S1 and divides (its S2
# bouncer is h2, its S1 endpoints live on h3); h2 and h3 send to h1.
for hn in "h1 10.200.0.2" "h1 10.200.0.3" "h2 10.200.0.1" "h3 10.200.0.1"; do
	set -- $hn
	check "$1: managed entry (protocol 88) for its next hop $2" wait_for 5 managed "$1" "$2"
done
# the operator's view: xgate's entries only, with the peer's MAC
h1ls=$(xg h1 neigh ls -o json)
echo "$h1ls" | jq -e 'map(.ip) | sort == ["10.200.0.2", "10.200.0.3"]' >/dev/null &&
	echo "$h1ls" | jq -e 'all(.managed and .dev == "eth0" and (.mac | length) == 17)' >/dev/null &&
	ok "h1: neigh ls lists its two managed next hops with MACs" || not_ok "h1: neigh ls: $h1ls"
expect_rc 3 "neigh keep of a local address" xg h1 neigh keep 10.200.0.1
expect_err "10.200.0.1: local or no route" "  says why"
expect_rc 2 "neigh keep of a bad address" xg h1 neigh keep 10.200.0.300
expect_err "10.200.0.300" "  quotes it"
check "ping across hosts before (p1a -> p1b)" nsx p1a ping -c2 -i0.2 -W1 10.1.1.12

nsx p2a ping -c2 -i0.2 -W1 10.1.1.12 >/dev/null # h2 learns the direct path to h3
# topo.sh's pings left ordinary entries, e.g. h2's for h3
nsx h2 ip neigh show 10.200.0.3 dev eth0 | grep -q lladdr &&
	ok "h2 holds an ordinary entry for 10.200.0.3 (the GC's to take)" ||
	not_ok "h2 has no entry for 10.200.0.3"
for h in "${HOSTS[@]}"; do reap "$h"; done
left=$(for h in "${HOSTS[@]}"; do nsx "$h" ip -4 neigh show nud all | grep -v -e managed -e PERMANENT -e NOARP; done)
[ -z "$left" ] && ok "the GC's share of the tables is gone" || not_ok "entries left: $left"
for h in "${HOSTS[@]}"; do xg "$h" stats --clear >/dev/null; done
# the programs' next-hop caches hold a MAC for at most 100 jiffies (1 s at
# HZ=100): past that, every lookup asks the kernel's table
sleep 1.2

check "p1a -> p1b after the GC (h1 -> h3 -> h1)" nsx p1a ping -c3 -i0.2 -W1 10.1.1.12
check "p1b -> p1a after the GC (h3 -> h1 -> h3)" nsx p1b ping -c3 -i0.2 -W1 10.1.1.11
check "p2b -> p1a after the GC (h2 -> h1 -> h2)" nsx p2b ping -c3 -i0.2 -W1 10.1.1.11
# h2 learned from the bouncer that p1b lives on h3: a host h2 was never
# given, whose entry nothing keeps. The agent takes the bouncer's way then.
check "p2a -> p1b after the GC (h2's direct path to h3 falls back to the bouncer)" \
	nsx p2a ping -c3 -i0.2 -W1 10.1.1.12
for h in "${HOSTS[@]}"; do
	n=$(no_neigh_drops "$h")
	[ "$n" -eq 0 ] && ok "$h: no drop_no_neigh" || not_ok "$h: $n drop_no_neigh"
done
# Still managed, and resolved: the kernel keeps probing them itself.
for hn in "h1 10.200.0.3" "h3 10.200.0.1"; do
	set -- $hn
	nsx "$1" ip neigh show "$2" dev eth0 | grep -q 'lladdr .*managed' &&
		ok "$1: $2 still managed with a MAC" || not_ok "$1: $2: $(nsx "$1" ip neigh show "$2" dev eth0)"
done

# release removes xgate's entry, keep makes it again
check "neigh release 10.200.0.3 on h1" xg h1 neigh release 10.200.0.3
check_not "  gone from h1's table" managed h1 10.200.0.3
expect_rc 3 "neigh release of an entry that is not xgate's" xg h1 neigh release 10.200.0.3
check "neigh keep 10.200.0.3 on h1" xg h1 neigh keep 10.200.0.3
check "  managed again" wait_for 5 managed h1 10.200.0.3

sc_down
summary
