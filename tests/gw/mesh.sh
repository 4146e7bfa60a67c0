#!/usr/bin/env bash
# gatewayd mesh over loopback with three real daemons: convergence,
# announce/withdraw, conflicts, restart with stale routes then resync,
# grace-time expiry, strangers and garbage refused, config errors.
# usage: mesh.sh PATH/TO/gatewayd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
GWD=$(readlink -f "$1")
XG=$(readlink -f "$2")
source "$HERE/../lib.sh"
T=$(mktemp -d /tmp/xgt-mesh-XXXXXX)
BASE=$((20000 + ($$ % 20000)))
declare -A PID
cleanup() {
	for p in "${PID[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM

port() { case $1 in a) echo $BASE;; b) echo $((BASE + 1));; c) echo $((BASE + 2));; x) echo $((BASE + 3));; esac; }
for n in a b c x; do "$XG" gw genkey > "$T/$n.key"; "$XG" gw pubkey < "$T/$n.key" > "$T/$n.pub"; done
conf() { # conf NAME SUBNET [KEYFILE]
	local n=$1 key=${3:-$T/$1.key}
	echo "[Gateway]"; echo "Name = gw-$n"; echo "Cluster = edge-$n"; echo "PrivateKey = $(cat "$key")"
	echo "ListenAddress = 127.0.0.1:$(port "$n")"; echo "PublicAddress = 127.0.0.1:$(( $(port "$n") + 100 ))"
	echo "Database = $T/$n.db"; echo "Keepalive = 1"; echo "HoldTime = 3"; echo "GraceTime = 4"
	echo "Subnet = $2"
	for m in a b c; do
		[ "$m" = "$n" ] && continue
		printf '\n[Peer]\nName = gw-%s\nPublicKey = %s\nEndpoint = 127.0.0.1:%s\n' "$m" "$(cat "$T/$m.pub")" "$(port "$m")"
	done
}
conf a "100 10.1.0.0/16" > "$T/a.conf"
conf b "100 10.2.0.0/16" > "$T/b.conf"
conf c "100 10.3.0.0/16" > "$T/c.conf"
start() { "$GWD" -c "$T/$1.conf" -s "$T/$1.sock" 2>> "$T/$1.log" & PID[$1]=$!; }
q() { "$XG" gw "$2" --socket "$T/$1.sock" -o json 2>/dev/null; }
nroutes() { # nroutes GW [STATE] -> routes learned from peers
	q "$1" routes | python3 -c 'import json,sys
st=sys.argv[1] if len(sys.argv)>1 else None
print(sum(1 for r in json.load(sys.stdin) if r["origin"]!="local" and (st is None or r["state"]==st)))' ${2:+"$2"}
}
has() { [ "$(nroutes "$1" "${3:-}")" = "$2" ]; }

start a; start b; start c
wait_for 10 has a 2 && wait_for 5 has b 2 && wait_for 5 has c 2 &&
	ok "three gateways converge (each learns the other two subnets)" || not_ok "no convergence: a=$(nroutes a) b=$(nroutes b) c=$(nroutes c)"
[ "$(q a peers | python3 -c 'import json,sys; print(sum(p["state"]=="up" for p in json.load(sys.stdin)))')" = 2 ] &&
	ok "gw-a has both sessions up" || not_ok "gw-a sessions"

expect_rc 0 "runtime announce" "$XG" gw subnet add 200 10.20.0.0/24 --socket "$T/b.sock"
wait_for 5 has a 3 && wait_for 5 has c 3 && ok "announcement reached every peer" || not_ok "announce not propagated"
expect_rc 2 "overlapping local subnet refused" "$XG" gw subnet add 100 10.1.5.0/24 --socket "$T/b.sock"
expect_err "overlaps a subnet of peer gw-a" "refusal names the owner"
expect_rc 0 "runtime withdraw" "$XG" gw subnet del 200 10.20.0.0/24 --socket "$T/b.sock"
wait_for 5 has a 2 && wait_for 5 has c 2 && ok "withdrawal reached every peer" || not_ok "withdraw not propagated"

# a peer restarts (kill -9): its routes stay, stale, then resync
kill -9 "${PID[b]}"; wait "${PID[b]}" 2>/dev/null
wait_for 6 has a 1 stale && ok "gw-b's route kept as stale on gw-a" || not_ok "no stale route on gw-a"
has a 2 && ok "traffic keeps its routes while gw-b is away" || not_ok "routes lost"
start b
wait_for 10 has a 0 stale && has a 2 && ok "gw-b back: resynced, nothing stale" || not_ok "resync after restart failed"
grep -q "routes from the database" "$T/b.log" && ok "restarted gw-b loaded its database" || not_ok "no database load"
has b 2 "" && ok "gw-b has its peers' routes again" || not_ok "gw-b routes after restart"

# a peer gone for good: removed once the grace time ends
kill -9 "${PID[c]}"; wait "${PID[c]}" 2>/dev/null
wait_for 6 has a 1 stale && ok "gw-c stale first" || not_ok "gw-c not stale"
wait_for 8 has a 1 && ! q a routes | grep -q 10.3.0.0 && ok "gw-c's route removed after the grace time" || not_ok "gw-c route not removed"
grep -q "grace time over" "$T/a.log" && ok "log says why" || not_ok "no grace log line"

# a stranger claiming to be gw-c, with the wrong key, is refused
conf c "100 10.66.0.0/16" "$T/x.key" > "$T/x.conf"
sed -i "s/^Database = .*/Database = $(echo "$T" | sed 's/\//\\\//g')\/x.db/" "$T/x.conf"
"$GWD" -c "$T/x.conf" -s "$T/x.sock" 2> "$T/x.log" & PID[x]=$!
# gw-a redials gw-c's address with backoff (up to 1 s while refused): wait for its attempt
wait_for 12 grep -q "handshake failed" "$T/x.log" "$T/a.log" &&
	ok "impostor's handshake failed (logged)" || not_ok "no handshake failure logged"
! q a routes | grep -q 10.66.0.0 && ok "impostor's subnet not learned" || not_ok "impostor accepted"
kill -9 "${PID[x]}"; wait "${PID[x]}" 2>/dev/null; unset 'PID[x]'

# garbage on the peer port: no crash, no stall
head -c 5000 /dev/urandom > "$T/junk"
for i in 1 2 3; do timeout 2 nc -q1 127.0.0.1 "$(port a)" < "$T/junk" >/dev/null 2>&1; done
printf 'GET / HTTP/1.0\r\n\r\n' | timeout 2 nc -q1 127.0.0.1 "$(port a)" >/dev/null 2>&1
kill -0 "${PID[a]}" && ok "gw-a survives garbage on its port" || not_ok "gw-a died"
q a status >/dev/null && has a 1 && ok "gw-a still answers and keeps its routes" || not_ok "gw-a stalled"
grep -q "bad magic" "$T/a.log" && ok "garbage logged as such" || not_ok "garbage not logged"

# configuration errors name the line
printf '[Gateway]\nName = gw-z\nCluster = z\nPrivateKey = nope\n' > "$T/bad.conf"
expect_rc 2 "bad config refused" "$GWD" -c "$T/bad.conf"
expect_err "bad.conf:4: PrivateKey is not a base64 32-byte key" "error names the line and the problem"

summary
