#!/usr/bin/env bash
# gatewayd's tunnel mode and cipher agreement (proto/gatewayd.md) with two
# real daemons over loopback, control plane only: agreed modes come up and
# `xgate gw peers` shows mode and cipher; a mode mismatch and a cipher set
# with nothing in common are refused by both ends, logged with the reason.
# usage: mode.sh PATH/TO/gatewayd PATH/TO/xgate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
GWD=$(readlink -f "$1")
XG=$(readlink -f "$2")
source "$HERE/../lib.sh"
T=$(mktemp -d /tmp/xgt-mode-XXXXXX)
BASE=$((20000 + ($$ % 20000)))
declare -A PID
cleanup() {
	for p in "${PID[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM

port() { case $1 in a) echo $BASE;; b) echo $((BASE + 1));; esac; }
other() { [ "$1" = a ] && echo b || echo a; }
for n in a b; do "$XG" gw genkey > "$T/$n.key"; "$XG" gw pubkey < "$T/$n.key" > "$T/$n.pub"; done
conf() { # conf NAME SUBNET [Key = value lines for the [Peer]...]
	local n=$1 m; m=$(other "$1")
	echo "[Gateway]"; echo "Name = gw-$n"; echo "Cluster = edge-$n"; echo "PrivateKey = $(cat "$T/$n.key")"
	echo "ListenAddress = 127.0.0.1:$(port "$n")"; echo "PublicAddress = 127.0.0.1:$(( $(port "$n") + 100 ))"
	echo "Database = $T/$n.db"; echo "Keepalive = 1"; echo "HoldTime = 3"
	echo "Subnet = $2"
	printf '\n[Peer]\nName = gw-%s\nPublicKey = %s\nEndpoint = 127.0.0.1:%s\n' "$m" "$(cat "$T/$m.pub")" "$(port "$m")"
	shift 2
	for kv in "$@"; do echo "$kv"; done
}
start() { : > "$T/$1.log"; "$GWD" -c "$T/$1.conf" -s "$T/$1.sock" 2>> "$T/$1.log" & PID[$1]=$!; }
stop() { [ -n "${PID[$1]:-}" ] || return 0; kill -9 "${PID[$1]}" 2>/dev/null; wait "${PID[$1]}" 2>/dev/null; unset "PID[$1]"; }
# peer FIELD of gw NAME's only peer, from `xgate gw peers -o json`
peer() { "$XG" gw peers --socket "$T/$1.sock" -o json 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$2" 2>/dev/null; }
is_up() { [ "$(peer "$1" state)" = up ]; }
run_pair() { # run_pair "a's peer lines" "b's peer lines": both daemons restarted
	stop a; stop b
	rm -f "$T"/*.db* # what an earlier pair learned must not show here
	# shellcheck disable=SC2086
	eval "conf a '100 10.1.0.0/16' $1" > "$T/a.conf"
	eval "conf b '100 10.2.0.0/16' $2" > "$T/b.conf"
	start a; start b
}
AES=0
grep -qw aes /proc/cpuinfo && grep -qw pclmulqdq /proc/cpuinfo && AES=1

# default: encrypt, the best cipher both have
run_pair "" ""
wait_for 10 is_up a && wait_for 5 is_up b && ok "no Mode: session up" || not_ok "default session not up: $(cat "$T/a.log")"
best=$([ $AES = 1 ] && echo aes-256-gcm || echo chacha20-poly1305)
[ "$(peer a mode)/$(peer a cipher)" = "encrypt/$best" ] && ok "gw peers: mode encrypt, $best by default" ||
	not_ok "default mode/cipher: $(peer a mode)/$(peer a cipher)"
# auth on both ends, SipHash tags
run_pair "'Mode = auth'" "'Mode = auth'"
wait_for 10 is_up a && [ "$(peer a mode)/$(peer a cipher)" = auth/siphash-2-4 ] && ok "Mode = auth: siphash-2-4" ||
	not_ok "auth mode/cipher: $(peer a mode)/$(peer a cipher)"
hdr=$("$XG" gw peers --socket "$T/a.sock" | head -1)
[[ "$hdr" == *MODE*CIPHER* ]] && ok "table has MODE and CIPHER columns" || not_ok "table header: $hdr"

# encrypt on both ends, one restricted to ChaCha20-Poly1305
run_pair "'Mode = encrypt'" "'Mode = encrypt' 'Cipher = chacha20-poly1305'"
wait_for 10 is_up a && wait_for 5 is_up b && ok "encrypt and encrypt: session up" || not_ok "encrypt session not up: $(cat "$T/a.log" "$T/b.log")"
[ "$(peer a mode)/$(peer a cipher)" = encrypt/chacha20-poly1305 ] &&
	[ "$(peer b cipher)" = chacha20-poly1305 ] && ok "both agreed on chacha20-poly1305" ||
	not_ok "agreed: a=$(peer a cipher) b=$(peer b cipher)"
grep -q "session up (.*mode encrypt, chacha20-poly1305)" "$T/a.log" && ok "log line names mode and cipher" ||
	not_ok "session log: $(grep 'session up' "$T/a.log")"

if [ $AES = 1 ]; then
	run_pair "'Mode = encrypt'" "'Mode = encrypt'"
	# b's side of the session may come up a moment after a's: wait for both
	wait_for 10 is_up a && wait_for 5 is_up b && [ "$(peer a cipher)" = aes-256-gcm ] &&
		[ "$(peer b cipher)" = aes-256-gcm ] &&
		ok "both with AES-NI: aes-256-gcm" || not_ok "AES agreement: a=$(peer a cipher) b=$(peer b cipher)"
else
	ok "# SKIP no AES-NI/PCLMUL here: aes-256-gcm agreement not run"
fi

# a mode mismatch: refused by both, nothing learned
run_pair "'Mode = encrypt'" "'Mode = auth'"
wait_for 10 grep -q "session refused: mode mismatch: we want encrypt, the peer wants auth" "$T/a.log" &&
	wait_for 5 grep -q "session refused: mode mismatch: we want auth, the peer wants encrypt" "$T/b.log" &&
	ok "mode mismatch refused by both ends, reason logged" || not_ok "no refusal: $(cat "$T/a.log" "$T/b.log")"
! is_up a && ! is_up b && ok "no session with a mode mismatch" || not_ok "a session came up despite the mismatch"
"$XG" gw routes --socket "$T/a.sock" -o json | grep -q 10.2.0.0 && not_ok "routes crossed a refused session" ||
	ok "no route crossed the refused session"

# encrypt with nothing in common: refused
run_pair "'Mode = encrypt' 'Cipher = aes-256-gcm'" "'Mode = encrypt' 'Cipher = chacha20-poly1305'"
wait_for 10 grep -q "session refused: no common cipher: we offer .*, the peer offers chacha20-poly1305" "$T/a.log" &&
	ok "no common cipher refused, both offers logged" || not_ok "no cipher refusal: $(cat "$T/a.log")"
! is_up a && ok "no session without a common cipher" || not_ok "session up without a common cipher"

summary
