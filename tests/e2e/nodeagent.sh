#!/usr/bin/env bash
# End to end, nodeagentd on namespaces, driven by a fake fornaxd core
# (nodeagent_core.py, python3-websockets): register with a join token,
# configuration, a standby pod frozen in its cgroup, a session opened
# (thawed, ingress entry in place, curl from a client namespace through the
# node's public endpoint reaches the pod's app and gets the session data),
# closed (entry removed, pod frozen again), kill -9 of nodeagentd with a
# session open (it keeps serving; the restart adopts it; the revision
# goes on), a command before ready refused, an app behind the session
# wrapper, unknown pods and sessions answered NotFound, a pod that crashes
# -> its session Closed and the pod Failed, a malformed command refused,
# a lost store (a new node at revision 0 that removes what the old one
# ran), over wss:// verified against a CA; the session service's ping: a
# stopped (SIGSTOP) pod and one that reads its socket but never answers
# fail (NoHeartbeat, their sessions Closed), frozen standby pods do not;
# two cores: the node links and reports to both, and obeys only the one
# leading with the highest term (a standby's and a deposed leader's
# commands are refused).
# usage: nodeagent.sh XGATE NODEAGENTD FORNAX_ECHO FORNAX_SESSIONWRAPPER NET_SCRIPT
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XGATE=$(readlink -f "$1")
NAD=$(readlink -f "$2")
ECHO=$(readlink -f "$3")
WRAPPER=$(readlink -f "$4")
NETSH=$(readlink -f "$5")
NODE=xgt$$-node
CLI=xgt$$-cli
CG=xgt$$
TMP=$(mktemp -d)
PY=/usr/bin/python3 # the distribution's: python3-websockets lives there
source "$HERE/../lib.sh"
source "$HERE/../../deploy/lib/ca.sh"
x() { "$XGATE" -N "$NODE" "$@"; }
cleanup() {
	local p d n
	for p in $(cat "$TMP/pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	# the pods: every process of their cgroups, then the groups
	# (a frozen task dies only once thawed)
	for d in /sys/fs/cgroup/{freezer,cpu,memory}/$CG/*/; do
		[ -d "$d" ] || continue
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		[ -e "$d/freezer.state" ] && echo THAWED >"$d/freezer.state"
	done
	sleep 0.5
	for d in /sys/fs/cgroup/{freezer,cpu,memory}/$CG; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	"$XGATE" -N "$NODE" reset >/dev/null 2>&1
	for n in $(ip netns list | awk '{print $1}' | grep "^xgt$$-"); do ip netns del "$n"; done
	# NAD_LOGS=DIR keeps the daemon's logs (sanitizer reports land there)
	[ -n "${NAD_LOGS:-}" ] && cp "$TMP"/nad*.log "$NAD_LOGS"/ 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }
$PY -c 'import websockets' 2>/dev/null || {
	not_ok "python3-websockets is missing: run deploy/deps.sh"
	summary
	exit 1
}
[ -d /sys/fs/cgroup/freezer ] || [ -e /sys/fs/cgroup/cgroup.controllers ] ||
	{ echo "1..0 # SKIP no cgroup freezer"; exit 0; }

setup() {
	local n
	for n in "$NODE" "$CLI"; do ip netns add "$n" && ip -n "$n" link set lo up || return 1; done
	ip netns exec "$NODE" sysctl -qw net.ipv4.ip_forward=1
	# the public segment: the client's c0 is the far end of the node's NIC
	ip link add c0 netns "$CLI" type veth peer name nic0 netns "$NODE" || return 1
	ip -n "$CLI" addr add 10.88.0.2/24 dev c0
	ip -n "$NODE" addr add 10.88.0.1/24 dev nic0
	ip netns exec "$CLI" ethtool -K c0 tx off >/dev/null
	ip -n "$CLI" link set c0 up
	ip -n "$NODE" link set nic0 up
	x host set ip 10.88.0.1 && x attach nic0 ingress && "$XGATE" -N "$CLI" attach c0 pass
}
if setup; then ok "topology up (client, node with ingress)"; else not_ok "topology up"; summary; exit 1; fi

cat > "$TMP/node.conf" <<CONF
[Node]
Name = node-a
Ip = 10.88.0.1
PublicIp = 10.88.0.1
Instance = $NODE
Netns = $NODE
[Core]
# a core that is not there first: the node goes on to the next
URL = ws://127.0.0.1:1,ws://127.0.0.1:18471
JoinToken = join-token-0123456789abcdef
ReconnectMaxSeconds = 1
[Store]
Database = $TMP/node.db
[Pods]
RunDir = $TMP/run
NetnsPrefix = xgt$$-p
VethPrefix = xv$$
CgroupParent = $CG
NetScript = $NETSH
Xgate = $XGATE
StartTimeoutSeconds = 20
SessionPingSeconds = 1
SessionPingMisses = 2
LogMaxBytes = 4096
LogFiles = 2
CONF

# the same node linking over TLS (the last part of the scenario)
test_ca "$TMP" || { not_ok "test CA"; summary; exit 1; }
sed -e 's|^URL = .*|URL = wss://127.0.0.1:18472\nCA = '"$TMP"'/ca.pem|' "$TMP/node.conf" >"$TMP/node-tls.conf"
# the same node given two cores (the last part: which one it obeys)
sed -e 's|^URL = .*|URL = ws://127.0.0.1:18471,ws://127.0.0.1:18473|' "$TMP/node.conf" >"$TMP/node-ha.conf"

# (not under `ip netns exec`: it remounts /sys, hiding bpffs and the
# cgroups; the core listens in the node's namespace, nodeagentd enters it)
env NAD="$NAD" CONF="$TMP/node.conf" CONF_TLS="$TMP/node-tls.conf" CONF_HA="$TMP/node-ha.conf" ECHO="$ECHO" WRAPPER="$WRAPPER" XGATE="$XGATE" \
	NODE="$NODE" CLI="$CLI" CG="$CG" TMP="$TMP" \
	$PY "$HERE/nodeagent_core.py" 18471
rc=$?
[ $rc = 0 ] && ok "the fake core's scenario passed" || not_ok "the fake core's scenario (exit $rc)"
# the test build has ASan/UBSan: a report in a daemon's log is a failure
if grep -l "runtime error\|Sanitizer" "$TMP"/nad*.log >/dev/null 2>&1; then
	not_ok "sanitizer reports in nodeagentd's logs"
	rc=1
else
	ok "no sanitizer report in nodeagentd's logs"
fi
for f in "$TMP"/nad*.log; do
	[ $rc = 0 ] || { echo "# ---- $f"; sed 's/^/# /' "$f" | tail -40; }
done
summary
