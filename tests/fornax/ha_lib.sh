#!/usr/bin/env bash
# What the active/standby scripts share (tests/fornax/failover.sh, standby.sh,
# bench/fornax_failover.sh): fornaxd's configuration on the etcd cluster of
# tests/etcd.sh with Election = on, its health, and simulated nodes given
# every core's URL. Sourced after etcd.sh.
#   ha_conf FILE PORT [LINE...]: fornaxd on 127.0.0.1:PORT, token $TOK, etcd
#     $ETCD_ENDPOINTS under $PREFIX, ElectionTTL $HA_TTL (3s), Timeout
#     $HA_TIMEOUT (1s); with $JOIN set, [Nodes] JoinToken = $JOIN and the LINEs
#   ha_healthy PORT: its /healthz answers 200 (it leads)
#   ha_sims URLS DIR LOG NAME...: a simulated node per NAME (simnode.py run,
#     the options in $HA_SIM_ARGS), its stderr appended to LOG-NAME.log; their
#     pids appended to $HA_SIMS
HA_TTL=${HA_TTL:-3s}
HA_TIMEOUT=${HA_TIMEOUT:-1s}
HA_SIMS=${HA_SIMS:-}
HA_SIM_ARGS=${HA_SIM_ARGS:-}
HA_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ha_conf() {
	local file=$1 port=$2 l
	shift 2
	printf '%s\n' "[API]" "Listen = 127.0.0.1:$port" "Token = $TOK" "[Store]" "Backend = etcd" \
		"Endpoints = $ETCD_ENDPOINTS" "Prefix = $PREFIX" "Timeout = $HA_TIMEOUT" "Election = on" \
		"ElectionTTL = $HA_TTL" > "$file"
	[ -n "${JOIN:-}" ] || return 0
	printf '[Nodes]\nJoinToken = %s\n' "$JOIN" >> "$file"
	for l in "$@"; do printf '%s\n' "$l" >> "$file"; done
}

ha_healthy() { curl -sf -m 2 "http://127.0.0.1:$1/healthz" >/dev/null; }

ha_sims() {
	local urls=$1 dir=$2 log=$3 n
	shift 3
	for n in "$@"; do
		# HA_SIM_ARGS: several options, split on purpose
		/usr/bin/python3 "$HA_HERE/simnode.py" run "$urls" "$n" "$dir" --join "$JOIN" $HA_SIM_ARGS \
			2>> "$log-$n.log" &
		HA_SIMS="$HA_SIMS $!"
	done
}
