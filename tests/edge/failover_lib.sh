# Two roots of the edge tree on a three-member etcd cluster behind TLS with
# client certificates ([Store] Backend = etcd), children whose Parent lists
# both roots (the standby first): the setup of tests/edge/failover.sh and
# bench/edge_failover.sh. Sourced after tests/etcd.sh (which brings
# tests/lib.sh and tests/edge/lib.sh), with ECD (edgeclusterd) set;
# etcd_test NAME 3 tls makes T (a scratch directory), the certificates and
# the cluster.
#   edfo_confs TIMEOUT TTL CHILD... r1.conf, r2.conf and one per child
#   edfo_stop                       kills every cluster started and the
#                                   etcdctl watch $WPID, and waits for them
# then start NAME, code NAME (/healthz), create ROOT NAME [CMD_JSON], ...
declare -A PID PORT
WPID=

edfo_stop() {
	local n
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null
	WPID=
	for n in "${!PID[@]}"; do
		# continued first: a test pauses a leader
		[ -n "${PID[$n]}" ] && kill -CONT "${PID[$n]}" 2>/dev/null && kill -9 "${PID[$n]}" 2>/dev/null
		PID[$n]=
	done
	wait 2>/dev/null
}

edfo_confs() { # edfo_confs TIMEOUT ELECTION_TTL CHILD...
	local to=$1 ttl=$2 n
	shift 2
	TOK=$(secret tok)
	JOIN=$(secret join)
	PREFIX=${EDFO_PREFIX:-/xgt-edfo$$/}
	EDFO_CHILDREN="$*"
	for n in r1 r2 "$@"; do PORT[$n]=$(free_port); done
	for n in r1 r2; do
		cat > "$T/$n.conf" <<EOF
[Cluster]
Name = root
Labels = tier=cloud
[API]
Listen = 127.0.0.1:${PORT[$n]}
Token = $TOK
[Hub]
JoinToken = $JOIN
[Store]
Database = $T/$n.db
Backend = etcd
Endpoints = $ETCD_ENDPOINTS
Prefix = $PREFIX
TLSCA = $T/ca.pem
TLSCert = $T/srv.pem
TLSKey = $T/srv.key
Timeout = $to
ElectionTTL = $ttl
[Intervals]
Heartbeat = 1
HeartbeatTimeout = 3
ReconnectMax = 1
StateCheck = 1
EOF
	done
	for n in "$@"; do
		cat > "$T/$n.conf" <<EOF
[Cluster]
Name = $n
Labels = tier=edge
Parent = $(hub r2),$(hub r1)
JoinToken = $JOIN
[API]
Listen = 127.0.0.1:${PORT[$n]}
Token = $TOK
[Store]
Database = $T/$n.db
[Intervals]
Heartbeat = 1
HeartbeatTimeout = 3
ReconnectMax = 1
ConnectTimeout = 2
StateCheck = 1
EOF
	done
}

url() { echo "http://127.0.0.1:${PORT[$1]}"; }
hub() { echo "ws://127.0.0.1:${PORT[$1]}"; }
code() { curl -s -m 3 -o /dev/null -w '%{http_code}' "$(url "$1")/healthz"; }
start() {
	"$ECD" -c "$T/$1.conf" 2>> "$T/$1.log" &
	PID[$1]=$!
	wait_for 15 curl -s -o /dev/null "$(url "$1")/healthz"
}
api() { curl -sf -m 5 -H "Authorization: Bearer $TOK" "$(url "$1")/apis/edge.xgate.io/v1/$2"; }
missions_at() { api "$1" missions | jq -r '[.items[].metadata.name] | sort | join(" ")'; }
rvs_at() { api "$1" missions | jq -r '[.items[] | "\(.metadata.name)=\(.metadata.resourceVersion)"] | sort | join(" ")'; }
tree_at() { api "$1" edgeclusters | jq -r '[.items[] | [.state.path, .state.health]] | sort | map(join("=")) | join(" ")'; }
state_at() { api "$1" "missions/$2" | jq -r ".state[\"$3\"] // \"(none)\""; }
is() { [ "$("${@:2}")" = "$1" ]; }
expect() { # expect SECONDS "description" EXPECTED CMD...
	local s=$1 d=$2 want=$3
	shift 3
	if wait_for "$s" is "$want" "$@"; then ok "$d"; else not_ok "$d: wanted '$want', got '$("$@" 2>&1)'"; fi
}
mission() { # mission NAME [COMMAND_JSON [CONTENT]]: to every cluster, applied and checked
	printf '{"apiVersion":"edge.xgate.io/v1","kind":"Mission","metadata":{"name":"%s"},"spec":{' "$1"
	[ -n "${3:-}" ] && printf '"content":"%s",' "$3"
	printf '"command":{"command":%s},"stateCheck":{"command":["/bin/echo","ok"],"intervalSeconds":1}}}' \
		"${2:-[\"/bin/true\"]}"
}
create() { # create ROOT NAME [COMMAND_JSON [CONTENT]]: the HTTP code; the body in $T/last
	curl -s -m 10 -o "$T/last" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary "$(mission "$2" "${3:-}" "${4:-}")" \
		"$(url "$1")/apis/edge.xgate.io/v1/missions"
}
in_etcd() { ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" --cacert "$T/ca.pem" --cert "$T/srv.pem" --key "$T/srv.key" get --keys-only "${PREFIX}rows/missions/[\"$1\"]" | grep -q .; }
dead() { ! kill -0 "$1" 2>/dev/null; }
