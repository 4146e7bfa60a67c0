#!/usr/bin/env bash
# gatewayd against misbehaving clients on its peer port, real sockets on
# loopback: a handshake trickled one byte at a time is cut at its deadline;
# a flood of silent connections is capped (threads stay bounded, 8 from one
# address); out of file descriptors, the acceptor pauses instead of
# spinning; a HELLO naming
# a peer's public key (no private key behind it) does not keep the mesh from
# re-forming.
# usage: harden.sh PATH/TO/gatewayd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
GWD=$(readlink -f "$1")
XG=$(readlink -f "$2")
PROBE="$HERE/probe.py"
source "$HERE/../lib.sh"
T=$(mktemp -d /tmp/xgt-harden-XXXXXX)
# below the ephemeral range (32768-): the floods below use many local ports
BASE=$((10000 + ($$ % 10000) * 2))
declare -A PID
BG=()
cleanup() {
	for p in "${PID[@]}" "${BG[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM

port() { case $1 in a) echo $BASE;; b) echo $((BASE + 1));; z) echo $((BASE + 2));; esac; }
for n in a b z; do "$XG" gw genkey > "$T/$n.key"; "$XG" gw pubkey < "$T/$n.key" > "$T/$n.pub"; done
conf() { # conf NAME SUBNET PEERS...
	local n=$1 s=$2; shift 2
	printf '[Gateway]\nName = gw-%s\nCluster = edge-%s\nPrivateKey = %s\n' "$n" "$n" "$(cat "$T/$n.key")"
	printf 'ListenAddress = 127.0.0.1:%s\nPublicAddress = 127.0.0.1:%s\n' "$(port "$n")" "$(( $(port "$n") + 100 ))"
	printf 'Database = %s/%s.db\nKeepalive = 1\nHoldTime = 3\nGraceTime = 30\nSubnet = %s\n' "$T" "$n" "$s"
	for m in "$@"; do
		printf '\n[Peer]\nName = gw-%s\nPublicKey = %s\nEndpoint = 127.0.0.1:%s\n' "$m" "$(cat "$T/$m.pub")" "$(port "$m")"
	done
}
conf a "100 10.1.0.0/16" b > "$T/a.conf"
conf b "100 10.2.0.0/16" a > "$T/b.conf"
conf z "100 10.9.0.0/16" > "$T/z.conf"
start() { "$GWD" -c "$T/$1.conf" -s "$T/$1.sock" 2>> "$T/$1.log" & PID[$1]=$!; }
q() { "$XG" gw "$2" --socket "$T/$1.sock" -o json 2>/dev/null; }
up() { # up GW: its one peer's session is up
	q "$1" peers | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)[0]["state"]=="up" else 1)'
}

start a; start b
wait_for 15 up a && wait_for 5 up b && ok "gw-a and gw-b mesh" || not_ok "no session between gw-a and gw-b"

# 1. one byte every second: the per-read timeout (5 s) never fires, the
#    handshake's deadline does
if python3 "$PROBE" trickle "$(port a)" 20 1 > "$T/trickle.out"; then
	ok "a handshake trickled a byte a second is cut ($(cat "$T/trickle.out"))"
else
	not_ok "trickled handshake: $(cat "$T/trickle.out")"
fi
grep -q "handshake failed: not done within 5000ms" "$T/a.log" &&
	ok "the log says the deadline cut it" || not_ok "no deadline line in the log"
grep -q "connection closed during the handshake" "$T/a.log" &&
	not_ok "a deadline logged as a closed connection" || ok "not logged as 'connection closed'"

# 2. 150 silent connections at once from 30 addresses: at most 64 handshakes
#    (threads) at a time, the others closed at once; from one address, 8
python3 "$PROBE" flood "$(port a)" 150 "${PID[a]}" 30 > "$T/flood.out"
read -r thr clo < <(sed 's/threads=\([0-9-]*\) closed=\([0-9]*\).*/\1 \2/' "$T/flood.out")
[ "${thr:-999}" -le 80 ] && ok "threads stay bounded under a flood ($(cat "$T/flood.out"))" ||
	not_ok "threads under a flood: $(cat "$T/flood.out")"
[ "${clo:-0}" -ge 80 ] && ok "connections past the cap closed at once" || not_ok "cap: $(cat "$T/flood.out")"
grep -q "handshakes under way already" "$T/a.log" && ok "the cap is logged" || not_ok "cap not logged"
sleep 5.5 # the flood's handshakes are cut
python3 "$PROBE" flood "$(port a)" 30 "${PID[a]}" 1 > "$T/flood1.out"
read -r thr clo < <(sed 's/threads=\([0-9-]*\) closed=\([0-9]*\).*/\1 \2/' "$T/flood1.out")
[ "${clo:-0}" -ge 22 ] && ok "one address gets 8 handshakes at most ($(cat "$T/flood1.out"))" ||
	not_ok "per-address cap: $(cat "$T/flood1.out")"
wait_for 10 up a && ok "gw-a's session with gw-b survived the flood" || not_ok "session lost in the flood"

# 3. out of file descriptors: accept fails with EMFILE; the acceptor must
#    pause, not spin on a connection it cannot take
(ulimit -n 40; exec "$GWD" -c "$T/z.conf" -s "$T/z.sock" 2>> "$T/z.log") & PID[z]=$!
wait_for 10 q z status || not_ok "gw-z did not start"
python3 "$PROBE" hold "$(port z)" 80 6 & BG+=($!)
wait_for 5 grep -q "accepting paused: Too many open files" "$T/z.log" &&
	ok "EMFILE logged: accepting paused" || not_ok "no EMFILE line: $(tail -3 "$T/z.log")"
cpu() { awk '{print $14 + $15}' "/proc/${PID[z]}/stat"; }
c0=$(cpu); sleep 2; c1=$(cpu)
hz=$(getconf CLK_TCK)
# a spinning acceptor takes a whole core (2 s = 2*hz ticks); paused, next to nothing
[ $((c1 - c0)) -lt $((hz / 4)) ] && ok "no busy loop at the file limit ($((c1 - c0)) ticks of CPU in 2 s)" ||
	not_ok "acceptor spins at the file limit: $((c1 - c0)) ticks of CPU in 2 s (hz $hz)"
kill -0 "${PID[z]}" && q z status >/dev/null && ok "gw-z still answers" || not_ok "gw-z stalled or died"

# 4. HELLOs naming gw-b's key (anyone can send them; nobody without gw-b's
#    private key can finish them) while gw-b restarts: gw-a's own dial to
#    gw-b must not wait for them. Only the deadline ends them (5 s after
#    each), so a dial held back by them comes after the first is cut.
n0=$(grep -c "handshake failed: not done within" "$T/a.log")
python3 "$PROBE" hellos "$(port a)" "$(cat "$T/b.pub")" 0.4 12 > "$T/hellos.out" & BG+=($!)
sleep 0.5
kill -9 "${PID[b]}"; wait "${PID[b]}" 2>/dev/null
start b
wait_for 20 up a && ok "gw-b restarted: session up again during the HELLOs" || not_ok "gw-a never met gw-b again"
# the session came from gw-a's dial, before any of the HELLOs was cut
line_up=$(grep -n "peer gw-b: session up (dialled" "$T/a.log" | tail -1 | cut -d: -f1)
line_cut=$(grep -n "handshake failed: not done within" "$T/a.log" | sed -n "$((n0 + 1))p" | cut -d: -f1)
[ -n "$line_up" ] && { [ -z "$line_cut" ] || [ "$line_up" -lt "$line_cut" ]; } &&
	ok "gw-a dialled gw-b without waiting for the unauthenticated HELLOs" ||
	not_ok "gw-a's dial waited for the HELLOs (session line ${line_up:-none}, first cut line ${line_cut:-none})"
wait "${BG[-1]}" 2>/dev/null
grep -q "[1-9][0-9]* hellos answered" "$T/hellos.out" && ok "the HELLOs reached gw-a ($(cat "$T/hellos.out"))" ||
	not_ok "HELLOs: $(cat "$T/hellos.out")"
# 5. the control socket: silent clients do not stall the main loop or the
#    other clients; a request is read whole, not cut at 255 bytes
python3 "$PROBE" ctlhold "$T/a.sock" 12 8 & BG+=($!)
sleep 0.5
timeout 4 "$XG" gw status --socket "$T/a.sock" -o json > /dev/null &&
	ok "control requests answered while 12 silent clients hold the socket" ||
	not_ok "12 silent control clients stalled gatewayd"
long="subnet$(printf '%300s' '')add 300 10.77.0.0/24"
reply=$(python3 "$PROBE" ctl "$T/a.sock" "$long")
[ "$reply" = '{"ok":true}' ] && q a routes | grep -q 10.77.0.0 &&
	ok "a ${#long}-byte request is read whole" || not_ok "long request: $reply"
reply=$(python3 "$PROBE" ctl "$T/a.sock" "status$(printf '%5000s' '')")
case $reply in *"request longer than 4096 bytes"*) ok "an over-long request is refused: $reply";;
	*) not_ok "over-long request: $reply";; esac
reply=$(python3 "$PROBE" ctl "$T/a.sock" $'peers\nignored')
case $reply in *'"peers"'*) ok "a request ends at its newline";; *) not_ok "newline: $reply";; esac
wait_for 10 grep -q "control: client closed, no request within 5000ms" "$T/a.log" &&
	ok "silent clients closed after 5 s, logged" || not_ok "silent control clients not closed"
summary
