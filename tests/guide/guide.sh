#!/usr/bin/env bash
# Runs docs/user-guide.md's examples as they are written, so the guide and
# the programs cannot drift apart. A shell block preceded by
#   <!-- test: HOST -->
# is run (bash -e, in the guide's order) on HOST, a machine made here: its
# own network namespace (eth0 -- int0 on the gateway host, which also has a
# wan0 -- on a shared underlay, 10.200.0.0/24, addresses from the HOSTS
# table below) and its own mount namespace with a private
# bpffs on /sys/fs/bpf, /run/netns and /run/xgate, so the guide's literal
# names (eth0, pod1, instance "default") touch nothing outside. A block
# marked <!-- test: HOST file=NAME --> is written to NAME in HOST's working
# directory instead. Blocks marked <!-- test: HOST fails --> must fail.
#
# usage: guide.sh PATH/TO/user-guide.md BINDIR...   (directories holding
# xgate, gatewayd: they go first on the blocks' PATH)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../lib.sh"
GUIDE=$(readlink -f "$1"); shift
BINPATH=""
for d in "$@"; do BINPATH="$BINPATH$(readlink -f "$d"):"; done
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }

declare -A HOSTS=([h1]=10.200.0.1 [h2]=10.200.0.3 [gw]=10.200.0.9)
declare -A NIC=([h1]=eth0 [h2]=eth0 [gw]=int0) # the gateway host also has wan0
declare -A HPID=()
TMP=$(mktemp -d)
U=xgt$$-guide   # the underlay: a bridge in a namespace of its own

cleanup() {
	local h
	for h in "${!HPID[@]}"; do
		# every process in the host's namespaces, then the holder: the
		# mount namespace (bpffs, pods' netns mounts) dies with the last
		{ kill -9 "${HPID[$h]}"; wait "${HPID[$h]}"; } 2>/dev/null
	done
	PATH="$BINPATH$PATH" xgate -N "$U" reset >/dev/null 2>&1
	ip netns del "$U" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# host_up NAME: a process holding fresh net and mount namespaces; it ends
# by itself when this script is gone, even after a kill -9.
host_up() {
	local h=$1 dir=$TMP/$1
	mkdir -p "$dir"
	unshare --net --mount --propagation private bash -c '
		mount -t bpf bpf /sys/fs/bpf && mount -t tmpfs tmpfs /run/netns -o mode=0755 &&
		mkdir -p /run/xgate && mount -t tmpfs tmpfs /run/xgate -o mode=0755 &&
		ip link set lo up && touch "$2/ready" || exit 1
		while kill -0 "$1" 2>/dev/null; do sleep 1; done' holder "$$" "$dir" &
	HPID[$h]=$!
	wait_for 10 test -e "$dir/ready" || { not_ok "host $h did not come up"; return 1; }
	ip link add "$h" netns "$U" type veth peer name "${NIC[$h]}" netns "/proc/${HPID[$h]}/ns/net" || return 1
	ip -n "$U" link set "$h" master br0 up
	# the bridge port is the far end of a veth the transit program sends into
	PATH="$BINPATH$PATH" xgate -N "$U" attach "$h" pass || return 1
	on "$h" ip addr add "${HOSTS[$h]}/24" dev "${NIC[$h]}" && on "$h" ip link set "${NIC[$h]}" up || return 1
	if [ "$h" = gw ]; then
		on gw ip link add wan0 type veth peer name wanpeer && on gw ip addr add 192.0.2.1/24 dev wan0 &&
			on gw ip link set wan0 up && on gw ip link set wanpeer up
	fi
}

# on HOST CMD...: run in HOST's namespaces, in its working directory
on() {
	local h=$1; shift
	PATH="$BINPATH$PATH" nsenter -t "${HPID[$h]}" -m -n --wd="$TMP/$h" "$@"
}

ip netns add "$U" && ip -n "$U" link set lo up && ip -n "$U" link add br0 type bridge &&
	ip -n "$U" link set br0 up || { not_ok "underlay"; summary; exit 1; }
for h in "${!HOSTS[@]}"; do host_up "$h" || { not_ok "host $h"; summary; exit 1; }; done

# The marked blocks, in order: "HOST<TAB>MODE<TAB>ARG" then the block's
# lines, then a line holding only ``` .
python3 - "$GUIDE" > "$TMP/blocks" <<'PY'
import re, sys
text = open(sys.argv[1]).read().split("\n")
i = 0
while i < len(text):
    m = re.match(r"<!-- test: (\w+)(?: (file)=(\S+)| (fails))? -->$", text[i].strip())
    if m:
        host, mode, arg = m.group(1), "file" if m.group(2) else ("fails" if m.group(4) else "run"), m.group(3) or "-"
        j = i + 1
        while not text[j].startswith("```"):
            j += 1
        k = j + 1
        while not text[k].startswith("```"):
            k += 1
        print(f"{host}\t{mode}\t{arg}\t{j + 2}")
        print("\n".join(text[j + 1:k]))
        print("```")
        i = k
    i += 1
PY
n=0
while IFS=$'\t' read -r host mode arg line; do
	body=""
	while IFS= read -r l && [ "$l" != '```' ]; do body+="$l"$'\n'; done
	n=$((n + 1))
	[ -n "${HPID[$host]:-}" ] || { not_ok "block at line $line: unknown host '$host'"; continue; }
	case $mode in
	file)
		printf '%s' "$body" > "$TMP/$host/$arg" && ok "user-guide.md:$line: $arg written on $host" ;;
	run|fails)
		on "$host" bash -e -o pipefail -c "$body" > "$TMP/out" 2>&1; rc=$?
		if [ "$mode" = run ] && [ $rc -eq 0 ] || { [ "$mode" = fails ] && [ $rc -ne 0 ]; }; then
			ok "user-guide.md:$line: block on $host ($(echo "$body" | grep -v '^#' | head -1 | cut -c1-50)...)"
		else
			not_ok "user-guide.md:$line: block on $host exited $rc:"$'\n'"$(sed 's/^/    /' "$TMP/out" | tail -30)"
		fi ;;
	esac
done < "$TMP/blocks"
[ $n -ge 5 ] && ok "$n marked blocks ran" || not_ok "only $n marked blocks in the guide"
# what the blocks leave behind that a user would check by hand
if [ -e "$TMP/gw/gw.key" ]; then
	[ "$(stat -c %a "$TMP/gw/gw.key")" = 600 ] && ok "the guide's gw.key is private (0600)" ||
		not_ok "gw.key has mode $(stat -c %a "$TMP/gw/gw.key")"
	st=$(on gw xgate -n gw status -o json)
	echo "$st" | python3 -c 'import json,sys; d=json.load(sys.stdin); r={x["dev"]: x["role"] for x in d["devices"]}; assert r.get("int0")=="gateway" and r.get("wan0")=="gateway" and d["host"]["nic"]=="int0", d' &&
		ok "the gateway host runs the gateway program on int0 and wan0 (int0 its NIC)" || not_ok "gateway host status: $st"
fi
summary
