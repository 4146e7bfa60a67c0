#!/usr/bin/env bash
# The CLI's error paths and exit codes, and attach/detach cycles that leave
# nothing behind.
# usage: cli.sh PATH/TO/xgate BPF_OBJ_DIR [PATH/TO/gatewayd [PATH/TO/edgeclusterd]]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
XG=$(readlink -f "$1")
OBJDIR=$(readlink -f "$2")
GWD=${3:+$(readlink -f "$3")}
ECD=${4:+$(readlink -f "$4")}
GWPID=
ECPIDS=
NS=xgtc$$
TMP=$(mktemp -d)
source "$HERE/../lib.sh"
x() { "$XG" -N "$NS" "$@"; }
cleanup() {
	[ -n "$GWPID" ] && kill "$GWPID" 2>/dev/null && wait "$GWPID" 2>/dev/null
	for p in $ECPIDS; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	"$XG" -N "$NS" reset >/dev/null 2>&1
	"$XG" -N "$NS" -n "${NS}-sz" reset >/dev/null 2>&1
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add n0 type veth peer name n1
ip -n "$NS" addr add 10.77.0.1/24 dev n0
ip -n "$NS" link set n0 up
ip -n "$NS" link set n1 up

# ---- usage and value errors (exit 2) ----
expect_rc 2 "no arguments" "$XG"
expect_rc 0 "help" "$XG" help
expect_rc 2 "unknown object" "$XG" frobnicate
expect_err "unknown object 'frobnicate'" "message names the unknown object"
expect_rc 2 "bad output format" "$XG" -o yaml status
expect_rc 2 "VNI zero" x vpc add 0
expect_err "invalid VNI '0'" "message names the bad VNI"
expect_rc 2 "VNI too large" x vpc add 16777216
expect_rc 2 "VNI not a number" x vpc add 12abc
expect_rc 2 "VNI with a leading zero (strtoul read 010 as 8)" x vpc add 010
expect_err "invalid VNI '010'" "leading-zero VNI message"
expect_rc 2 "CIDR without length" x subnet add 1 10.1.1.0 bouncers 10.77.0.2
expect_err "expected A.B.C.D/LEN" "CIDR message says the expected form"
expect_rc 2 "CIDR with host bits" x subnet add 1 10.1.1.5/24 bouncers 10.77.0.2
expect_err "did you mean 10.1.1.0/24" "CIDR message suggests the network"
expect_rc 2 "CIDR prefix 33" x subnet add 1 10.1.1.0/33 bouncers 10.77.0.2
expect_rc 2 "CIDR prefix in octal (strtoul read 010 as 8)" x subnet add 1 10.0.0.0/010 bouncers 10.77.0.2
expect_err "invalid prefix length '010'" "octal prefix message"
expect_rc 2 "bad IP in bouncers" x subnet add 1 10.1.1.0/24 bouncers 10.77.0.300
expect_rc 2 "too many bouncers" x subnet add 1 10.1.1.0/24 bouncers 1.1.1.1,1.1.1.2,1.1.1.3,1.1.1.4,1.1.1.5,1.1.1.6,1.1.1.7,1.1.1.8,1.1.1.9
expect_rc 2 "duplicate bouncer" x subnet add 1 10.1.1.0/24 bouncers 1.1.1.1,1.1.1.1
expect_rc 2 "bad MAC" x endpoint add 1 10.1.1.5 mac 02:00:00:00:01 host 10.77.0.3
expect_err "invalid MAC address" "MAC message"
expect_rc 2 "multicast MAC" x endpoint add 1 10.1.1.5 mac 01:00:5e:00:00:01 host 10.77.0.3
expect_rc 2 "MAC byte with a sign (%2x took -2 as fe)" x endpoint add 1 10.1.1.5 mac -2:00:00:00:00:00 host 10.77.0.3
expect_err "invalid MAC address '-2:00:00:00:00:00'" "signed MAC byte message"
expect_rc 2 "unknown keyword" x vpc add 1 routers 10.0.0.1
expect_rc 2 "unknown program" x attach n0 router
expect_rc 2 "unknown mode" x attach n0 transit --mode turbo
expect_rc 2 "endpoint needs mac" x endpoint add 1 10.1.1.5 host 10.77.0.3
expect_rc 2 "host and dev both" x endpoint add 1 10.1.1.5 mac 02:00:00:00:00:05 host 10.77.0.3 dev n1
expect_rc 2 "TTL out of range" x host set ttl 300

# ---- not found (exit 3) ----
expect_rc 3 "status with no instance" x status
expect_err "has no maps" "message says the instance is empty"
expect_rc 3 "unknown device" x attach nosuchdev transit
expect_err "unknown device 'nosuchdev'" "message names the device"
expect_rc 3 "unknown netns" "$XG" -N no-such-ns-$$ status
expect_rc 3 "subnet of a missing VPC" x subnet add 9 10.9.0.0/24 bouncers 10.77.0.2
expect_err "VPC 9 does not exist" "message names the VPC"
expect_rc 3 "delete missing VPC" x vpc del 42
expect_rc 3 "delete missing subnet" x subnet del 9 10.9.0.0/24
expect_rc 3 "delete missing endpoint" x endpoint del 9 10.9.0.5
expect_rc 3 "detach with nothing attached" x detach n0
expect_rc 3 "stats of a non-xgate device" x stats n1

# ---- already exists (exit 4) ----
expect_rc 0 "vpc add" x vpc add 1 dividers 10.77.0.2
expect_rc 4 "vpc add twice" x vpc add 1
expect_err "already exists" "duplicate message"
expect_rc 0 "vpc replace" x vpc replace 1 dividers 10.77.0.3
expect_rc 0 "subnet add" x subnet add 1 10.1.1.0/24 bouncers 10.77.0.2
expect_rc 4 "subnet add twice" x subnet add 1 10.1.1.0/24 bouncers 10.77.0.2
expect_rc 0 "a longer prefix is not a duplicate" x subnet add 1 10.1.1.128/25 bouncers 10.77.0.2
expect_rc 2 "gateway outside the subnet" x subnet add 1 10.1.2.0/24 bouncers 10.77.0.2 gw 10.1.1.1
expect_rc 0 "endpoint add" x endpoint add 1 10.1.1.5 mac 02:00:00:00:01:05 host 10.77.0.3
expect_rc 4 "endpoint add twice" x endpoint add 1 10.1.1.5 mac 02:00:00:00:01:05 host 10.77.0.3
# the data plane relies on every subnet and endpoint having its VPC
expect_rc 4 "vpc del while in use" x vpc del 1
expect_err "VPC 1 is in use: 2 subnet(s) and 1 endpoint(s)" "in-use message counts what is left"
x vpc add 2 && x subnet add 2 10.2.0.0/24 bouncers 10.77.0.2 || not_ok "vpc 2 setup"
expect_rc 4 "vpc del with a subnet left" x vpc del 2
expect_rc 0 "subnet del" x subnet del 2 10.2.0.0/24
expect_rc 0 "vpc del once empty" x vpc del 2

# ---- session ingress: exit codes, no half sessions ----
sess_count() { bpftool map dump pinned "/sys/fs/bpf/xgate/$NS/$1" -j 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
expect_rc 2 "ingress: bad protocol" x ingress add sctp 10.77.0.1:80 vni 1 10.1.1.5:80
expect_err "invalid protocol 'sctp'" "message names the protocol"
expect_rc 2 "ingress: endpoint without port" x ingress add tcp 10.77.0.1 vni 1 10.1.1.5:80
expect_err "invalid public endpoint '10.77.0.1'" "message names the endpoint"
expect_rc 2 "ingress: port 0" x ingress add tcp 10.77.0.1:0 vni 1 10.1.1.5:80
expect_rc 2 "ingress: port 65536" x ingress add tcp 10.77.0.1:65536 vni 1 10.1.1.5:80
expect_rc 2 "ingress: bad pod address" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.300:80
expect_err "invalid pod endpoint '10.1.1.300:80'" "message names the pod endpoint"
expect_rc 2 "ingress: no vni keyword" x ingress add tcp 10.77.0.1:8080 10.1.1.5:80
expect_rc 2 "ingress: bad VNI" x ingress add tcp 10.77.0.1:8080 vni 0 10.1.1.5:80
expect_rc 2 "ingress: trailing argument" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.5:80 port 9
expect_err "expected \`host POD_HOST\` or \`via INGRESS_HOST\` after the pod endpoint, got 'port'" "message names the word"
expect_rc 2 "ingress: host without an address" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.5:80 host
expect_rc 2 "ingress: bad host" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.5:80 host 10.77.0.300
expect_err "invalid IPv4 address '10.77.0.300'" "message names the host"
expect_rc 2 "ingress: host 0.0.0.0" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.5:80 via 0.0.0.0
expect_rc 2 "ingress: host and then more" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.5:80 host 10.77.0.3 x
# UDP 6081 of the host (underlay) address is the underlay's (one NIC)
x host set ip 10.77.0.1 || not_ok "host set ip"
expect_rc 2 "ingress: UDP 6081 of the host address" x ingress add udp 10.77.0.1:6081 vni 1 10.1.1.5:80
expect_err "session udp 10.77.0.1:6081: UDP port 6081 of the host address is the underlay's (Geneve)" "message names the endpoint"
[ "$(sess_count xg_sess)" = 0 ] && [ "$(sess_count xg_sess_rev)" = 0 ] && ok "refused: no half session" ||
	not_ok "entries after the refused add: $(sess_count xg_sess)/$(sess_count xg_sess_rev)"
expect_rc 0 "ingress: TCP 6081 of the host address is a session's" x ingress add tcp 10.77.0.1:6081 vni 1 10.1.1.5:80
expect_rc 0 "ingress: UDP 6081 of another address is a session's" x ingress add udp 10.77.0.9:6081 vni 1 10.1.1.6:80
x ingress del tcp 10.77.0.1:6081 && x ingress del udp 10.77.0.9:6081 || not_ok "removing the 6081 sessions"
expect_rc 0 "ingress add, dedicated gateway" x ingress add tcp 10.77.0.1:7000 vni 1 10.1.1.7:80 host 10.77.0.3
expect_rc 0 "ingress add, pod side" x ingress add tcp 10.77.0.1:7001 vni 1 10.1.1.8:80 via 10.77.0.2
x ingress ls -o json > "$TMP/gw.json"
python3 - "$TMP/gw.json" <<'PY' && ok "ingress ls -o json: form and host" || not_ok "ingress ls form/host"
import json, sys
d = {r["public"]: r for r in json.load(open(sys.argv[1]))}
assert d["10.77.0.1:7000"]["form"] == "gateway" and d["10.77.0.1:7000"]["host"] == "10.77.0.3", d
assert d["10.77.0.1:7001"]["form"] == "pod-side" and d["10.77.0.1:7001"]["host"] == "10.77.0.2", d
PY
bpftool map dump pinned "/sys/fs/bpf/xgate/$NS/xg_sess_rev" -j > "$TMP/rev.json"
python3 - "$TMP/rev.json" <<'PY' && ok "reverse entries carry the form and the host" || not_ok "reverse entry flags/host"
import json, sys
f = {}
for e in json.load(open(sys.argv[1])):
    v = e.get("formatted", {}).get("value") or {}
    f[v.get("flags")] = v.get("host_be")
assert f.get(1) == 0x03004d0a and f.get(2) == 0x02004d0a, f
PY
x ingress del tcp 10.77.0.1:7000 && x ingress del tcp 10.77.0.1:7001 || not_ok "form-2 sessions del"
expect_rc 3 "ingress: unknown VNI" x ingress add tcp 10.77.0.1:8080 vni 9 10.1.1.5:80
expect_err "VPC 9 does not exist" "message names the VPC"
expect_rc 0 "ingress add tcp" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.5:80
expect_rc 0 "ingress add of the same session again" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.5:80
expect_rc 4 "ingress: public port taken" x ingress add tcp 10.77.0.1:8080 vni 1 10.1.1.6:80
expect_err "tcp 10.77.0.1:8080 is taken by another session" "message names the taken endpoint"
expect_rc 4 "ingress: pod endpoint serves another session" x ingress add tcp 10.77.0.1:8081 vni 1 10.1.1.5:80
expect_err "already serves session tcp 10.77.0.1:8080" "message names the other session"
expect_rc 0 "ingress add udp on the same port" x ingress add udp 10.77.0.1:8080 vni 1 10.1.1.5:80
x vpc add 3 >/dev/null && x ingress add tcp 10.77.0.1:3000 vni 3 10.3.0.5:80 || not_ok "vpc 3 setup"
expect_rc 4 "vpc del while a session leads to it" x vpc del 3
expect_err "VPC 3 is in use: 1 session(s)" "in-use message counts the sessions"
x ingress del tcp 10.77.0.1:3000 && expect_rc 0 "vpc del once its session is gone" x vpc del 3
check "refused adds left no half session" test "$(sess_count xg_sess)/$(sess_count xg_sess_rev)" = 2/2
x ingress ls -o json > "$TMP/sess.json"
python3 - "$TMP/sess.json" <<'PY' && ok "ingress ls -o json: sessions, counters, idle" || not_ok "ingress ls json content"
import json, sys
d = sorted(json.load(open(sys.argv[1])), key=lambda r: r["proto"])
assert [r["proto"] for r in d] == ["tcp", "udp"], d
assert all(r["public"] == "10.77.0.1:8080" and r["pod"] == "10.1.1.5:80" and r["vni"] == 1 for r in d)
assert all(r["in"] == {"packets": 0, "bytes": 0} and r["out"]["packets"] == 0 for r in d)
assert all(r["idle_ms"] is None for r in d)
PY
check "ingress ls table has a header" sh -c "'$XG' -N '$NS' ingress ls | grep -q '^PROTO *PUBLIC *VNI *POD'"
expect_rc 0 "ingress del" x ingress del tcp 10.77.0.1:8080
expect_rc 3 "ingress del of a missing session" x ingress del tcp 10.77.0.1:8080
expect_err "no session at tcp 10.77.0.1:8080" "message names the session"
check "del removed both entries" test "$(sess_count xg_sess)/$(sess_count xg_sess_rev)" = 1/1
expect_rc 0 "pod endpoint free again after del" x ingress add tcp 10.77.0.1:8081 vni 1 10.1.1.5:80
expect_rc 0 "ingress flush" x ingress flush
check "flush emptied both maps" test "$(sess_count xg_sess)/$(sess_count xg_sess_rev)" = 0/0
# sized by configuration when the instance is made
xs() { XGATE_MAX_SESSIONS=2 "$XG" -N "$NS" -n "${NS}-sz" "$@"; }
expect_rc 0 "small instance" xs vpc add 1
expect_rc 0 "small instance: session 1" xs ingress add udp 10.77.0.1:1 vni 1 10.1.1.5:1
expect_rc 0 "small instance: session 2" xs ingress add udp 10.77.0.1:2 vni 1 10.1.1.5:2
expect_rc 1 "small instance: a third session does not fit" xs ingress add udp 10.77.0.1:3 vni 1 10.1.1.5:3
expect_err "full" "message says the map is full"
check "the full map left no half session" test "$(bpftool map dump pinned "/sys/fs/bpf/xgate/${NS}-sz/xg_sess_rev" -j | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2
expect_rc 0 "small instance reset" xs reset
expect_rc 0 "attach ingress" x attach n1 ingress
check "status shows the ingress role" sh -c "'$XG' -N '$NS' status -o json | grep -q '\"role\": \"ingress\"'"
expect_rc 0 "detach ingress" x detach n1
expect_rc 0 "attach transit" x attach n0 transit
expect_rc 4 "attach twice" x attach n0 transit
expect_err "already has an XDP program" "message says detach first"
expect_rc 0 "attach --force replaces" x attach n0 transit --force
x status -o json > "$TMP/st.json"
python3 - "$TMP/st.json" <<'PY' && ok "status -o json: device, mode, prog id, pins" || not_ok "status json content"
import json, sys
d = json.load(open(sys.argv[1]))
dev = [x for x in d["devices"] if x["dev"] == "n0"][0]
assert dev["role"] == "transit" and dev["mode"] == "native" and dev["prog_id"] > 0
assert d["host"]["ip"] == "10.77.0.1" and d["host"]["nic"] == "n0"
assert d["maps"]["xg_endpoint"].startswith("/sys/fs/bpf/xgate/")
PY

# ---- permission (exit 5) ----
if command -v setpriv >/dev/null; then
	expect_rc 5 "non-root gets permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$XG" -n "$NS" status
	expect_err "permission denied" "permission message"
fi

# ---- verifier rejection (exit 6) prints the log tail ----
mkdir -p "$TMP/bad"
cat > "$TMP/bad/bad.c" <<'C'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
char LICENSE[] SEC("license") = "GPL";
SEC("xdp") int xg_agent(struct xdp_md *ctx)
{
	unsigned char *p = (void *)(long)ctx->data;
	return p[100] ? XDP_PASS : XDP_DROP; /* no bounds check: rejected */
}
C
clang -target bpf -O2 -g -c "$TMP/bad/bad.c" -o "$TMP/bad/agent.bpf.o" -I/usr/include/$(uname -m)-linux-gnu
XGATE_BPF_DIR="$TMP/bad" expect_rc 6 "verifier rejection" x attach n1 agent
expect_err "invalid access to packet" "verifier log tail is printed"
expect_err "rejected the agent program" "rejection message"

# ---- attach/detach/re-attach cycles leave nothing behind ----
# The programs this test attached (by id) must be gone from the kernel: a
# count of every xg_ program on the machine would see other tests' too.
ids=""
progs_of() { x status -o json | python3 -c 'import json,sys; print(" ".join(str(d["prog_id"]) for d in json.load(sys.stdin)["devices"] if d["prog_id"]))'; }
alive() { local n=0 id; for id in $ids; do bpftool prog show id "$id" >/dev/null 2>&1 && n=$((n + 1)); done; echo $n; }
x detach n0 >/dev/null
for i in 1 2 3 4 5; do
	x attach n0 transit >/dev/null && x attach n1 agent >/dev/null && ids="$ids $(progs_of)" &&
		x detach n0 >/dev/null && x detach n1 >/dev/null || not_ok "cycle $i failed"
done
# each role's program is loaded once per instance and reused by the next
# attach (pinned under the instance: a pod's veth needs no verifier run);
# detached, it stays with the instance until reset
n_ids=$(echo $ids | wc -w)
ids=$(echo $ids | tr ' ' '\n' | sort -u | tr '\n' ' ')
uniq=$(echo $ids | wc -w)
[ "$n_ids" -eq 10 ] && [ "$uniq" -eq 2 ] && [ "$(alive)" -eq 2 ] &&
	ok "5 attach/detach cycles: each role's program loaded once and reused (2 programs, kept until reset)" ||
	not_ok "programs after the cycles: $uniq distinct, $(alive) alive, of: $ids"
ls /sys/fs/bpf/xgate/$NS | grep -q '^prog_agent_' && ok "the agent program is pinned in the instance" ||
	not_ok "no pinned agent program: $(ls /sys/fs/bpf/xgate/$NS)"
# the pin is named after the object's SHA-256 as the build made it (the
# object built into xgate is $OBJDIR/agent.bpf.o): what keeps another
# build's program from being taken for this one's
pin=prog_agent_$(sha256sum "$OBJDIR/agent.bpf.o" | cut -c1-16)
[ -e "/sys/fs/bpf/xgate/$NS/$pin" ] && ok "the agent pin carries the object's hash ($pin)" ||
	not_ok "no $pin: $(ls /sys/fs/bpf/xgate/$NS)"
# another build's program (the same pin under another hash) is not reused:
# the next attach loads this build's and pins it under its own name
mv "/sys/fs/bpf/xgate/$NS/$pin" "/sys/fs/bpf/xgate/$NS/prog_agent_0123456789abcdef"
x attach n1 agent >/dev/null
other=$(bpftool -j prog show pinned "/sys/fs/bpf/xgate/$NS/prog_agent_0123456789abcdef" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
now=$(progs_of)
[ -e "/sys/fs/bpf/xgate/$NS/$pin" ] && [ -n "$now" ] && [ "$now" != "$other" ] &&
	ok "a program pinned under another build's hash is not reused (loaded $now, not $other)" ||
	not_ok "attach after another build's pin: attached '$now', other build's '$other', pins: $(ls /sys/fs/bpf/xgate/$NS)"
ids="$ids $now"
rm -f "/sys/fs/bpf/xgate/$NS/prog_agent_0123456789abcdef"
x detach n1 >/dev/null
# the first load runs in a child process: its failure is the attach's, with
# its message and code (here a map of the instance that the agent object
# cannot reuse, as an older build's would be)
rm -f "/sys/fs/bpf/xgate/$NS/$pin" "/sys/fs/bpf/xgate/$NS/xg_agcache"
bpftool map create "/sys/fs/bpf/xgate/$NS/xg_agcache" type array key 4 value 4 entries 1 name xg_agcache
expect_rc 1 "attach with a map the object cannot reuse (loaded in a child)" x attach n1 agent
expect_err "do not match this xgate build" "the child's message reaches the caller"
[ ! -e "/sys/fs/bpf/xgate/$NS/$pin" ] && ok "nothing pinned after a failed load" || not_ok "$pin after a failed load"
rm -f "/sys/fs/bpf/xgate/$NS/xg_agcache"
x attach n0 transit >/dev/null
x attach n1 agent --mode generic >/dev/null
ids="$ids $(progs_of)"
expect_rc 0 "reset" x reset
[ ! -e "/sys/fs/bpf/xgate/$NS" ] && ok "reset removed the pins" || not_ok "pins remain after reset"
[ "$(alive)" -eq 0 ] && ok "reset detached and unloaded every program (the pinned ones too)" || not_ok "programs remain after reset: $ids"
ip -n "$NS" link show n0 | grep -q "xdp" && not_ok "n0 still has XDP" || ok "n0 has no XDP after reset"

# ---- apply -f: one code path with the commands, errors name the JSON path ----
cat > "$TMP/good.json" <<'J'
{ "host": {"ttl": 32},
  "attach": [{"dev": "n0", "program": "transit"}],
  "vpcs": [{"vni": 7, "dividers": ["10.77.0.2"]}],
  "subnets": [{"vni": 7, "cidr": "10.7.1.0/24", "bouncers": ["10.77.0.2", "10.77.0.3"]},
              {"vni": 7, "cidr": "10.7.9.0/24", "remote": true}],
  "endpoints": [{"vni": 7, "ip": "10.7.1.5", "mac": "02:00:00:07:01:05", "host": "10.77.0.3"},
                {"vni": 7, "ip": "10.7.1.6", "mac": "02:00:00:07:01:06", "dev": "n1"}] }
J
expect_rc 0 "apply a cluster file" x apply -f "$TMP/good.json"
expect_rc 0 "apply is idempotent" x apply -f "$TMP/good.json"
[ "$(x endpoint ls 7 -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2 ] && ok "apply created the endpoints" || not_ok "apply endpoints"
x subnet ls 7 | grep -q "10.7.9.0/24 *remote" && ok "apply created the remote subnet" || not_ok "apply remote subnet"
echo '{"vpcs": [{"vni": 7}], "subnets": [{"vni": 7, "cidr": "10.7.2.0/33"}]}' > "$TMP/bad1.json"
expect_rc 2 "apply rejects a bad CIDR" x apply -f "$TMP/bad1.json"
expect_err "subnets[0].cidr" "apply error names the JSON path"
echo '{"vpcs": [{"vni": "seven"}]}' > "$TMP/bad2.json"
expect_rc 2 "apply rejects a string VNI" x apply -f "$TMP/bad2.json"
expect_err "vpcs[0].vni" "apply error names vpcs[0].vni"
echo '{"vpcs": [' > "$TMP/bad3.json"
expect_rc 2 "apply rejects malformed JSON" x apply -f "$TMP/bad3.json"
expect_err "bad3.json:" "malformed JSON error names file and position"
echo '{"routers": []}' > "$TMP/bad4.json"
expect_rc 2 "apply rejects unknown fields" x apply -f "$TMP/bad4.json"
expect_err "unknown field 'routers'" "unknown field is named"
# sessions in a cluster file
cat > "$TMP/sess.json" <<'J'
{ "vpcs": [{"vni": 8}],
  "sessions": [{"proto": "tcp", "public": "10.77.0.1:9080", "vni": 8, "pod": "10.8.0.5:80"},
               {"proto": "udp", "public": "10.77.0.1:9053", "vni": 8, "pod": "10.8.0.5:53"}] }
J
expect_rc 0 "apply sessions" x apply -f "$TMP/sess.json"
expect_rc 0 "apply sessions again: kept" x apply -f "$TMP/sess.json"
[ "$(x ingress ls -o json | python3 -c 'import json,sys; print(len([r for r in json.load(sys.stdin) if r["vni"] == 8]))')" = 2 ] &&
	ok "apply created the sessions" || not_ok "apply sessions"
echo '{"sessions": [{"proto": "tcp", "public": "10.77.0.1", "vni": 8, "pod": "10.8.0.5:80"}]}' > "$TMP/sbad1.json"
expect_rc 2 "apply: a session's malformed endpoint" x apply -f "$TMP/sbad1.json"
expect_err "sessions[0].public" "apply error names sessions[0].public"
echo '{"sessions": [{"proto": "tcp", "public": "10.77.0.1:9090", "vni": 8, "pod": "10.8.0.5:90"}, {"proto": "tcp", "public": "10.77.0.1:9090", "vni": 8, "pod": "10.8.0.5:91"}]}' > "$TMP/sbad2.json"
expect_rc 2 "apply: two sessions on one public endpoint" x apply -f "$TMP/sbad2.json"
expect_err "sessions[1]: the same public endpoint" "apply error names the duplicate"
echo '{"sessions": [{"proto": "udp", "public": "10.77.0.1:9091", "vni": 99, "pod": "10.8.0.5:91"}]}' > "$TMP/sbad3.json"
expect_rc 3 "apply: a session of a VPC that does not exist" x apply -f "$TMP/sbad3.json"
expect_err "sessions[0].vni" "apply error names sessions[0].vni"
echo '{"vpcs": [{"vni": 9}], "sessions": [{"proto": "tcp", "public": "10.77.0.1:9080", "vni": 8, "pod": "10.8.0.6:80"}]}' > "$TMP/sbad4.json"
expect_rc 4 "apply: a public port another session holds" x apply -f "$TMP/sbad4.json"
expect_err "sessions[0]: public endpoint 10.77.0.1:9080 is taken" "apply error names the taken port"
expect_rc 3 "the refused file wrote nothing (no VPC 9)" x vpc del 9
# sessions of the dedicated-gateway form: host (on the ingress host), via (on the pod's host)
cat > "$TMP/sgw.json" <<'J'
{ "sessions": [{"proto": "tcp", "public": "10.77.0.1:9180", "vni": 8, "pod": "10.8.0.7:80", "host": "10.77.0.3"},
               {"proto": "udp", "public": "10.77.0.1:9153", "vni": 8, "pod": "10.8.0.7:53", "via": "10.77.0.2"}] }
J
expect_rc 0 "apply form-2 sessions" x apply -f "$TMP/sgw.json"
expect_rc 0 "apply form-2 sessions again: kept" x apply -f "$TMP/sgw.json"
forms=$(x ingress ls -o json | python3 -c 'import json,sys; print(" ".join(sorted("%s/%s/%s" % (r["public"], r["form"], r["host"]) for r in json.load(sys.stdin) if r["vni"] == 8 and r["pod"].startswith("10.8.0.7"))))')
[ "$forms" = "10.77.0.1:9153/pod-side/10.77.0.2 10.77.0.1:9180/gateway/10.77.0.3" ] &&
	ok "apply wrote the form and the other host" || not_ok "apply form-2 sessions: $forms"
echo '{"sessions": [{"proto": "tcp", "public": "10.77.0.1:9181", "vni": 8, "pod": "10.8.0.7:81", "host": "10.77.0.3", "via": "10.77.0.2"}]}' > "$TMP/sgbad1.json"
expect_rc 2 "apply: a session with both host and via" x apply -f "$TMP/sgbad1.json"
expect_err "sessions[0]: \"host\" (on the ingress host) and \"via\"" "apply error names the session with both"
echo '{"sessions": [{"proto": "tcp", "public": "10.77.0.1:9181", "vni": 8, "pod": "10.8.0.7:81", "via": "10.77.0.300"}]}' > "$TMP/sgbad2.json"
expect_rc 2 "apply: a session's malformed via" x apply -f "$TMP/sgbad2.json"
expect_err "sessions[0].via" "apply error names sessions[0].via"
echo '{"sessions": [{"proto": "tcp", "public": "10.77.0.1:9181", "vni": 8, "pod": "10.8.0.7:81", "host": "0.0.0.0"}]}' > "$TMP/sgbad3.json"
expect_rc 2 "apply: a session's host 0.0.0.0" x apply -f "$TMP/sgbad3.json"
expect_err "sessions[0].host: 0.0.0.0 is no host" "apply error names sessions[0].host"
echo '{"sessions": [{"proto": "tcp", "public": "10.77.0.1:9181", "vni": 8, "pod": "10.8.0.7:81", "host": 3}]}' > "$TMP/sgbad4.json"
expect_rc 2 "apply: a session's host not a string" x apply -f "$TMP/sgbad4.json"
expect_err "sessions[0].host: must be a string" "apply error names the non-string host"
# the same session on another pod's host: refused before the first write
echo '{"vpcs": [{"vni": 9}], "sessions": [{"proto": "tcp", "public": "10.77.0.1:9180", "vni": 8, "pod": "10.8.0.7:80", "host": "10.77.0.4"}]}' > "$TMP/sgbad5.json"
expect_rc 4 "apply: a session moved to another host is refused" x apply -f "$TMP/sgbad5.json"
expect_err "sessions[0]: public endpoint 10.77.0.1:9180 is taken" "apply error names the session"
expect_rc 3 "the refused form-2 file wrote nothing (no VPC 9)" x vpc del 9
x ingress ls -o json | python3 -c 'import json,sys; sys.exit(0 if any(r["public"] == "10.77.0.1:9180" and r["host"] == "10.77.0.3" for r in json.load(sys.stdin)) else 1)' &&
	ok "the refused file left the session's host alone" || not_ok "session host changed by a refused file"
expect_rc 0 "reset after apply" x reset

# ---- gateway keys: X25519, base64, compatible with WireGuard's tools ----
key=$("$XG" gw genkey)
[ ${#key} -eq 44 ] && ok "gw genkey prints a 44-character base64 key" || not_ok "genkey output '$key'"
[ "$("$XG" gw genkey)" != "$key" ] && ok "two genkeys differ" || not_ok "genkey repeats"
pub=$(echo "$key" | "$XG" gw pubkey)
[ ${#pub} -eq 44 ] && ok "gw pubkey derives a public key" || not_ok "pubkey output '$pub'"
# RFC 7748 / WireGuard documentation vector
[ "$(echo yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk= | "$XG" gw pubkey)" = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=" ] &&
	ok "pubkey matches the known X25519 vector" || not_ok "pubkey vector mismatch"
if command -v wg >/dev/null; then
	[ "$(echo "$key" | wg pubkey)" = "$pub" ] && ok "wg pubkey agrees with xgate gw pubkey" || not_ok "wg disagrees"
fi
expect_rc 2 "pubkey rejects garbage" sh -c "echo not-a-key | '$XG' gw pubkey"
expect_err "not a base64 32-byte private key" "pubkey error message"

# ---- help comes from the command tables: an object's help is its own lines ----
out=$("$XG" gw help)
case "$out" in *bouncers*) not_ok "gw help prints subnet lines: $out";; *"gw subnet add|del"*) ok "gw help: only gw's lines";; *) not_ok "gw help lacks its subnet verb: $out";; esac
out=$("$XG" subnet help)
case "$out" in *endpoint*|*apply*) not_ok "subnet help prints other objects' lines: $out";; *"subnet del VNI CIDR"*) ok "subnet help: only subnet's lines";; *) not_ok "subnet help: $out";; esac
expect_rc 2 "unknown verb" "$XG" vpc frob
expect_err "add, replace, del or ls" "unknown verb lists the object's verbs"
# docs/cli.md holds `xgate help` as it is (the reference cannot drift)
awk '/^<!-- xgate help -->/{f=1; next} f && /^```$/ {if (n++) exit; next} f' "$HERE/../../docs/cli.md" > "$TMP/cli.md.help"
"$XG" help > "$TMP/help.txt"
diff -u "$TMP/cli.md.help" "$TMP/help.txt" > "$TMP/help.diff" && ok "docs/cli.md holds \`xgate help\` as it is" || not_ok "docs/cli.md differs from \`xgate help\`: $(head -20 "$TMP/help.diff")"

# ---- host show is a table unless -o json ----
x host set ip 10.77.0.9 >/dev/null
out=$(x host show)
case "$out" in IP*10.77.0.9*) ok "host show prints a table";; *) not_ok "host show: $out";; esac
[ "$(x host show -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ip"])')" = 10.77.0.9 ] && ok "host show -o json" || not_ok "host show -o json"

# ---- -n without -N: the instance's own namespace, not the caller's ----
x attach n0 transit >/dev/null
dev=$("$XG" -n "$NS" status -o json | python3 -c 'import json,sys; print(",".join(d["dev"] for d in json.load(sys.stdin)["devices"]))')
[ "$dev" = n0 ] && ok "-n alone shows the instance's device names (n0)" || not_ok "-n alone shows devices '$dev'"
x reset >/dev/null

# ---- pass stubs: in status, and gone after reset ----
x attach n1 pass >/dev/null
x status -o json > "$TMP/st2.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [x for x in d["devices"] if x["dev"]=="n1" and x["role"]=="pass" and x["prog_id"]>0]' "$TMP/st2.json" &&
	ok "status lists the pass stub" || not_ok "status misses the pass stub: $(cat "$TMP/st2.json")"
x status | grep -q "^n1 *pass" && ok "status table shows the pass stub" || not_ok "status table: $(x status)"
expect_rc 0 "reset with a pass stub" x reset
ip -n "$NS" link show n1 | grep -q "xdp" && not_ok "the pass stub survives reset" || ok "reset detached the pass stub"

# ---- apply -f refuses bad references before writing anything ----
echo '{"vpcs": [{"vni": 31}], "endpoints": [{"vni": 31, "ip": "10.31.0.5", "mac": "02:00:00:00:31:05", "dev": "nosuchdev"}]}' > "$TMP/ref1.json"
expect_rc 3 "apply: unknown endpoint device" x apply -f "$TMP/ref1.json"
expect_err "endpoints[0].dev: unknown device 'nosuchdev'" "the error names the JSON path and the device"
echo '{"vpcs": [{"vni": 32}], "subnets": [{"vni": 33, "cidr": "10.33.0.0/24", "remote": true}]}' > "$TMP/ref2.json"
expect_rc 3 "apply: a subnet of a VPC that does not exist" x apply -f "$TMP/ref2.json"
expect_err "subnets[0].vni: VPC 33" "the error names the JSON path and the VNI"
x vpc ls -o json 2>/dev/null | grep -q '"vni": 3[12]' && not_ok "a refused file wrote its VPCs" || ok "a refused file wrote nothing"
# the same on an instance that exists: its host entry stays as it was
x vpc add 1 >/dev/null && x host set ttl 40 >/dev/null
echo '{"host": {"ttl": 17}, "subnets": [{"vni": 44, "cidr": "10.44.0.0/24", "remote": true}]}' > "$TMP/ref3.json"
expect_rc 3 "apply: a VPC missing from file and maps" x apply -f "$TMP/ref3.json"
[ "$(x host show -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ttl"])')" = 40 ] &&
	ok "a refused file left the host entry alone" || not_ok "a refused file changed the host TTL"
x reset >/dev/null
expect_rc 3 "apply: no such file" x apply -f "$TMP/nosuch.json"
expect_err "nosuch.json: No such file" "missing file: says so"
case "$ERR" in *-1:-1*) not_ok "missing file message has -1:-1: $ERR";; *) ok "missing file message has no bogus position";; esac
x reset >/dev/null

# ---- key files are private ----
(umask 022; "$XG" gw genkey > "$TMP/gw.key")
[ "$(stat -c %a "$TMP/gw.key")" = 600 ] && ok "gw genkey > FILE: the file is 0600" || not_ok "key file mode $(stat -c %a "$TMP/gw.key")"
echo "$key" | "$XG" gw pubkey >/dev/null && ok "pubkey still reads the key"  || not_ok "pubkey"

# ---- gw subnet: exit codes of the table (4 exists, 3 not found) ----
if [ -n "$GWD" ]; then
	port=$((20000 + $$ % 20000))
	{ echo "[Gateway]"; echo "Name = xgtc$$"; echo "Cluster = c$$"; echo "PrivateKey = $key"
	  echo "ListenAddress = 127.0.0.1:$port"; echo "PublicAddress = 127.0.0.1:$((port + 1))"
	  echo "Database = $TMP/gw.db"; echo "Subnet = 100 10.1.0.0/16"; } > "$TMP/gw.conf"
	"$GWD" -c "$TMP/gw.conf" -s "$TMP/gw.sock" 2> "$TMP/gw.log" & GWPID=$!
	wait_for 10 test -S "$TMP/gw.sock" || not_ok "gatewayd did not start: $(cat "$TMP/gw.log")"
	expect_rc 0 "gw subnet add" "$XG" gw subnet add 200 10.20.0.0/24 --socket "$TMP/gw.sock"
	expect_rc 4 "gw subnet add of a duplicate" "$XG" gw subnet add 200 10.20.0.0/24 --socket "$TMP/gw.sock"
	expect_rc 0 "gw subnet del" "$XG" gw subnet del 200 10.20.0.0/24 --socket "$TMP/gw.sock"
	expect_rc 3 "gw subnet del of a missing one" "$XG" gw subnet del 200 10.20.0.0/24 --socket "$TMP/gw.sock"
	kill "$GWPID"; wait "$GWPID" 2>/dev/null; GWPID=
fi

# ---- cluster attach/detach print every phase, as the guide shows them ----
if [ -n "$ECD" ]; then
	source "$HERE/../../deploy/lib/port.sh" # free_port
	tok=tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	join=join-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	for n in p k; do
		port=$(free_port)
		eval "port_$n=$port"
		printf '[Cluster]\nName = %s\n[API]\nListen = 127.0.0.1:%s\nToken = %s\n[Hub]\nJoinToken = %s\n[Store]\nDatabase = %s\n[Intervals]\nHeartbeat = 1\n' \
			"xgtc$$-$n" "$port" "$tok" "$join" "$TMP/$n.db" > "$TMP/$n.conf"
		"$ECD" -c "$TMP/$n.conf" 2>> "$TMP/$n.log" & ECPIDS="$ECPIDS $!"
		wait_for 10 curl -sf "http://127.0.0.1:$port/healthz" || not_ok "edgeclusterd $n did not start: $(tail -3 "$TMP/$n.log")"
	done
	out=$(XGATE_TOKEN=$tok "$XG" cluster attach --parent "ws://127.0.0.1:$port_p" --token "$join" --server "http://127.0.0.1:$port_k" 2>&1)
	[ "$(echo $out)" = "registering install_in_progress active" ] && ok "cluster attach prints every phase: $(echo $out)" || not_ok "cluster attach printed: $out"
	# -n of an instance made in another namespace: a daemon's object stays here (loopback)
	x host set ttl 9 >/dev/null
	expect_rc 0 "-n does not take cluster commands to the instance's namespace" env XGATE_TOKEN=$tok "$XG" -n "$NS" cluster get --server "http://127.0.0.1:$port_k"
	x reset >/dev/null
	out=$(XGATE_TOKEN=$tok "$XG" cluster detach --server "http://127.0.0.1:$port_k" 2>&1)
	[ "$(echo $out)" = "deregistering uninstall_in_progress inactive" ] && ok "cluster detach prints every phase: $(echo $out)" || not_ok "cluster detach printed: $out"
fi

summary
