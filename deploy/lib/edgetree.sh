#!/usr/bin/env bash
# The demo's edge tree: four edgeclusterds on loopback, one per cluster plus
# the cloud at the root (https/wss with a throw-away CA), attached as
#
#   cloud (tier=cloud)
#   |- edge-1 (zone=east)
#   `- edge-2 (zone=west)
#      `- edge-3 (zone=east)
#
# Set XGATE, ECD (the binaries) and ET_RUN (configs, databases, logs) before
# sourcing; then et_up, et_down. Each daemon's token is in ET_TOK.

source "$(dirname "${BASH_SOURCE[0]}")/ca.sh"
source "$(dirname "${BASH_SOURCE[0]}")/port.sh"

: "${ET_RUN:=/tmp/xgate-demo-tree}"
ET_NAMES=(cloud edge-1 edge-2 edge-3)
declare -A ET_PORT=() ET_PID=() ET_PARENT=([edge-1]=cloud [edge-2]=cloud [edge-3]=edge-2)
declare -A ET_LABELS=([cloud]=tier=cloud [edge-1]=zone=east [edge-2]=zone=west [edge-3]=zone=east)

et_url() { [ "$1" = cloud ] && echo "https://localhost:${ET_PORT[$1]}" || echo "http://127.0.0.1:${ET_PORT[$1]}"; }
et_hub() { [ "$1" = cloud ] && echo "wss://localhost:${ET_PORT[$1]}" || echo "ws://127.0.0.1:${ET_PORT[$1]}"; }
# et NAME ARGS: xgate against NAME's edgeclusterd
et() { local n=$1; shift; XGATE_TOKEN=$ET_TOK "$XGATE" "$@" --server "$(et_url "$n")" --ca "$ET_RUN/ca.pem"; }

et_conf() {
	local n=$1 p=${ET_PARENT[$1]:-}
	{
		printf '[Cluster]\nName = %s\nLabels = %s\n' "$n" "${ET_LABELS[$n]}"
		[ -n "$p" ] && printf 'Parent = %s\nJoinToken = %s\n' "$(et_hub "$p")" "$ET_JOIN"
		printf '[API]\nListen = 127.0.0.1:%s\nToken = %s\nCA = %s\n' "${ET_PORT[$n]}" "$ET_TOK" "$ET_RUN/ca.pem"
		[ "$n" = cloud ] && printf 'TLSCert = %s\nTLSKey = %s\n' "$ET_RUN/srv.pem" "$ET_RUN/srv.key"
		printf '[Hub]\nJoinToken = %s\n' "$ET_JOIN"
		printf '[Store]\nDatabase = %s/%s.db\n' "$ET_RUN" "$n"
		printf '[Intervals]\nHeartbeat = 1\nHeartbeatTimeout = 3\nStateCheck = 1\n'
	} > "$ET_RUN/$n.conf"
}

# Start the four daemons, parents first; each child registers with the
# join token, then holds its own credential. 0 once every one answers.
et_up() {
	local n i
	mkdir -p "$ET_RUN" && chmod 700 "$ET_RUN" || return 1
	ET_TOK=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
	ET_JOIN=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
	test_ca "$ET_RUN" "xgate demo CA" || return 1
	for n in "${ET_NAMES[@]}"; do ET_PORT[$n]=$(free_port); done
	for n in "${ET_NAMES[@]}"; do
		et_conf "$n"
		"$ECD" -c "$ET_RUN/$n.conf" 2>> "$ET_RUN/$n.log" &
		ET_PID[$n]=$!
		for i in $(seq 50); do
			curl -sf --cacert "$ET_RUN/ca.pem" "$(et_url "$n")/healthz" > /dev/null && break
			sleep 0.1
		done
	done
}

# The paths the root sees, "path=health ...", until all four are there.
et_tree() {
	XGATE_TOKEN=$ET_TOK curl -sf --cacert "$ET_RUN/ca.pem" -H "Authorization: Bearer $ET_TOK" \
		"$(et_url cloud)/apis/edge.xgate.io/v1/edgeclusters" |
		jq -r '[.items[] | "\(.state.path)=\(.state.health)"] | sort | join(" ")'
}

et_down() {
	local n
	for n in "${!ET_PID[@]}"; do kill "${ET_PID[$n]}" 2>/dev/null; done
	for n in "${!ET_PID[@]}"; do wait "${ET_PID[$n]}" 2>/dev/null; done
	ET_PID=()
	rm -rf "$ET_RUN"
}
