#!/usr/bin/env bash
# The main job (make demo): three edge clusters, each with hosts, a divider,
# bouncers and a gateway whose public NIC sits on a WAN router; three
# gatewayds mesh and program the gateway XDP programs. Shows VPC 100 pods
# pinging and talking TCP across every pair of clusters, VPC 200 (same CIDRs,
# another tenant) isolated from it, mesh status and per-gateway counters;
# then the edge tree: an edgeclusterd per cluster and one for the cloud,
# attached as a tree, a mission placed by labels and its states arriving at
# the root; then serverless: fornaxd and two node agents (real pods in
# namespaces and cgroups), an application with a standby pool, sessions
# opened by a client on the public side and served through each node's
# XDP ingress, closed, the pool refilled. Tears everything down at the end
# (also on Ctrl-C).
#   usage: demo.sh [BUILD_DIR]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(readlink -f "${1:-$HERE/../build}")
XGATE=$BUILD/userspace/xgate
GATEWAYD=$BUILD/userspace/gatewayd
CRYPTD=$BUILD/userspace/xgate-cryptd
MT_MODE=${DEMO_MODE:-encrypt} # the tunnel between gateways (auth: authenticated, in clear)
ECD=$BUILD/control/edgeclusterd
FXD=$BUILD/control/fornaxd
NAD=$BUILD/control/nodeagentd
ECHO=$BUILD/control/fornax-echo
NETSH=$HERE/../control/nodeagentd/nodeagent-net.sh
P=${DEMO_PREFIX:-xgm} # namespace prefix (the demo test sets its own)
ET_RUN=/tmp/$P-tree
# the serverless bed's names (deploy/lib/fxbed.sh) end up in interface and
# namespace prefixes of at most 15 characters: a short tag of their own
FX_P=${DEMO_FX_PREFIX:-fm} FX_T=/tmp/$P-fx
source "$HERE/lib/mtopo.sh"
source "$HERE/lib/edgetree.sh"
source "$HERE/lib/ca.sh"
source "$HERE/lib/fxbed.sh"
source "$HERE/lib/demo.sh"

# (the waits keep bash from announcing each daemon it killed)
demo_down() {
	et_down
	{
		fx_bed_down
		for p in $(cat "$FX_T/pids" 2>/dev/null); do wait "$p"; done
	} 2>/dev/null
	rm -rf "$FX_T"
	mtopo_down
}
demo_start demo_down "no namespaces, pins or daemons left" "$XGATE" "$GATEWAYD" "$ECD" "$FXD" "$NAD" "$ECHO"
[ "$(id -u)" = 0 ] || { echo "demo: must run as root (network namespaces, XDP)"; exit 1; }
mtopo_down

say "building three clusters and a WAN router in network namespaces"
mtopo_up 2> >(grep -v "^xgate: note" >&2) || { echo "demo: topology failed"; exit 1; }
cat <<'TXT'
                         WAN router (198.18.0.0/16)
            198.18.1.2 /         | 198.18.2.2          \ 198.18.3.2
     cluster edge-1 gw1    cluster edge-2 gw2     cluster edge-3 gw3
       10.201.0.0/24         10.202.0.0/24          10.203.0.0/24
  each cluster: h1 (.1) divider + bouncer, pod <c>a     gw (.254) gateway XDP
                h2 (.2) compute, pods <c>b (and <c>t)   on eth0 and wan0
  VPC 100 (tenant 1): 10.1.1.0/24 in edge-1, 10.1.2.0/24 in edge-2, 10.1.3.0/24 in edge-3
      pods 1a 10.1.1.11  1b 10.1.1.12  2a 10.1.2.11  2b 10.1.2.12  3a 10.1.3.11  3b 10.1.3.12
  VPC 200 (tenant 2): the same CIDRs in edge-1 and edge-2, even the same addresses
      pods 1t 10.1.1.11  2t 10.1.2.11
TXT

say "starting gatewayd and xgate-cryptd on gw1 gw2 gw3 (X25519 keys, mesh over the WAN, $MT_MODE mode)"
mesh_up || { echo "demo: the mesh did not come up; logs:"; tail -n 5 "$MT_RUN"/gw*.log; exit 1; }
for c in "${CLUSTERS[@]}"; do "$XGATE" gw status --socket "$(gw_sock "$c")"; done
say "routes gw1 learned (VNI, prefix, origin)"
"$XGATE" gw routes --socket "$(gw_sock 1)"

pingline() { # pingline FROM TO
	local out
	out=$(podx "$1" ping -c3 -i0.2 -W1 "${POD_IP[$2]}" 2>&1)
	printf '  %-3s %-10s -> %-3s %-10s  %s  %s\n' "$1" "${POD_IP[$1]}" "$2" "${POD_IP[$2]}" \
		"$(grep -o '[0-9]* received' <<<"$out" | sed 's/received/of 3 replies/')" \
		"$(grep -o 'rtt.*' <<<"$out" | cut -d/ -f5 | sed 's/$/ ms avg/')"
}
say "VPC 100: ping across every pair of clusters (both directions)"
for pair in "1a 2b" "2b 1a" "2a 3b" "3b 2a" "3a 1b" "1b 3a"; do pingline $pair; done

say "VPC 100: TCP across every pair of clusters (iperf3, 2 s each)"
for pair in "1a 2b" "2a 3b" "3a 1b"; do
	set -- $pair
	podx "$2" iperf3 -s -1 -D -B "${POD_IP[$2]}" >/dev/null 2>&1; sleep 0.3
	printf '  %s -> %s: ' "$1" "$2"
	podx "$1" timeout 20 iperf3 -c "${POD_IP[$2]}" -t 2 -f m 2>&1 | awk '/receiver/ {print $7, $8, "received"}'
done

say "VPC 200 is another tenant: same addresses, isolated by VNI"
whoami_up 2a 2t 3a
printf '  from 1a (VPC 100) 10.1.2.11 answers: %s\n' "$(whoami 1a 10.1.2.11)"
printf '  from 1t (VPC 200) 10.1.2.11 answers: %s\n' "$(whoami 1t 10.1.2.11)"
r=$(whoami 1t 10.1.3.11)
printf '  from 1t (VPC 200) 10.1.3.11 (a VPC 100 pod in edge-3) answers: %s\n' "${r:-nobody (VPC 200 has no such subnet)}"

say "mesh status and per-gateway counters"
/usr/bin/python3 "$HERE/lib/gwtable.py" "$XGATE" "$P" "$MT_RUN" "${CLUSTERS[@]}"

say "the edge tree: an edgeclusterd per cluster, and the cloud's at the root"
cat <<'TXT'
   cloud (tier=cloud, https/wss)
   |- edge-1 (zone=east)
   `- edge-2 (zone=west)
      `- edge-3 (zone=east)
   each child registers with a join token, then holds its own credential
TXT
et_up || { echo "demo: an edgeclusterd did not start; logs:"; tail -n 3 "$ET_RUN"/*.log; exit 1; }
want="cloud=ok edge-1=ok edge-2/edge-3=ok edge-2=ok"
for i in $(seq 100); do [ "$(et_tree)" = "$want" ] && break; sleep 0.1; done
printf '  the root sees: %s\n' "$(et_tree)"
et cloud cluster get

say "a mission for zone=east, applied at the root: each cluster evaluates placement itself"
cat > "$ET_RUN/web.json" <<'EOF2'
{"apiVersion": "edge.xgate.io/v1", "kind": "Mission", "metadata": {"name": "web"},
 "spec": {"placement": {"matchLabels": {"zone": "east"}},
          "content": "kind: Pod\nmetadata: {name: web}\n",
          "command": {"command": ["/bin/sh", "-c", "date +%T > started"]},
          "stateCheck": {"command": ["/bin/sh", "-c", "echo running since $(cat started)"],
                         "intervalSeconds": 1}}}
EOF2
et cloud mission apply -f "$ET_RUN/web.json"
for i in $(seq 100); do
	et cloud -o json mission state web 2>/dev/null | jq -e '.["edge-1"] and .["edge-2/edge-3"]' > /dev/null 2>&1 && break
	sleep 0.1
done
echo "  its states, as they arrived at the root (edge-2 is zone=west: not placed there):"
et cloud mission state web | sed 's/^/  /'
printf '  edge-3 holds it too (missions go to every cluster; only matching ones apply): '
et edge-3 mission get -o json | jq -r '[.items[].metadata.name] | join(" ")'

say "serverless: fornaxd and two node agents, real pods, sessions through the XDP ingress"
cat <<'TXT'
   fornaxd 10.77.0.1 (TLS) on a cluster network with node-a (10.77.0.11) and node-b (.12);
   a client on the public side reaches node-a at 10.88.1.1 and node-b at 10.88.2.1, where the
   `ingress` XDP program maps each session's public port to its pod. Pods run fornax-echo
   (it answers HTTP with its session's data) in their own namespaces and cgroups; standby pods
   are frozen until a session takes one.
TXT
mkdir -p "$FX_T" && chmod 700 "$FX_T"
fxc() { ip netns exec "$(fx_ns lan)" "$XGATE" "$@" --server "https://$FX_CORE_IP:$FX_PORT" --token "$FX_TOKEN" --ca "$FX_T/ca.pem"; }
{ fx_bed_up && fx_node 1 node-a && fx_node 2 node-b && fx_fornaxd; } > /dev/null 2>&1 ||
	{ echo "demo: the serverless bed did not come up: $(tail -3 "$FX_T"/*.log 2>/dev/null)"; exit 1; }
fx_nad node-a
fx_nad node-b
for i in $(seq 150); do
	[ "$(fxc node get -o json 2>/dev/null | jq '[.items[] | select(.status.conditions[0].status == "True")] | length')" = 2 ] && break
	sleep 0.1
done
fxc node get
cat > "$FX_T/echo.json" <<EOF2
{"apiVersion": "core.fornax-serverless.centaurusinfra.io/v1", "kind": "Application",
 "metadata": {"name": "echo"},
 "spec": {"containers": [{"name": "echo", "command": ["$ECHO"], "args": ["--port", "8080"],
                          "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                          "resources": {"requests": {"cpu": "100m", "memory": "32Mi"},
                                        "limits": {"cpu": "500m", "memory": "64Mi"}}}],
          "usingNodeSessionService": true,
          "scalingPolicy": {"minimumInstance": 0, "maximumInstance": 10, "burst": 4,
                            "scalingPolicyType": "idle_session_number",
                            "idleSessionNumThreshold": {"high": 4, "low": 3}}}}
EOF2
fxc app apply -f "$FX_T/echo.json"
app_idle() { fxc app get echo -o json 2>/dev/null | jq -r .status.idleInstances; }
for i in $(seq 300); do [ "$(app_idle)" -ge 3 ] 2>/dev/null && break; sleep 0.1; done
echo "  the standby pool (idle: frozen pods ready to take a session):"
fxc app get | sed 's/^/  /'

say "a client opens six sessions; each is served by its pod through its node's ingress"
printf '  %-10s %-7s %-16s %-12s %s\n' SESSION NODE ENDPOINT "OPEN (ms)" "THE CLIENT'S curl GETS"
EPS=()
for i in $(seq 6); do
	out=$(fxc session open echo --name "demo-$i" --data "hello from session $i" --grace 1 --wait -o json 2>&1) ||
		{ printf '  demo-%s did not open: %s\n' "$i" "$(echo "$out" | tail -1)"; continue; }
	ep=$(echo "$out" | jq -r '.status.accessEndPoints[0] | "\(.ipAddress):\(.port)"')
	ms=$(echo "$out" | jq -r '(.status.availableTimeMicro - .status.creationTimeMicro) / 1000 | . * 100 | round / 100')
	got=$(ip netns exec "$(fx_ns cli)" curl -s --max-time 3 "http://$ep/")
	printf '  %-10s %-7s %-16s %-12s %s\n' "demo-$i" "$(echo "$out" | jq -r .status.podReference.node)" "$ep" "$ms" "$got"
	EPS+=("$ep")
done
echo "  (OPEN: from the session's creation to Available at fornaxd: a frozen pod thawed, its ingress"
echo "   entry added, the pod's own 'ready'; the first opens may find the pool still filling)"

say "the sessions close; their endpoints stop answering; the pool refills"
for i in $(seq 6); do fxc session close "demo-$i" > /dev/null; done
for i in $(seq 100); do
	[ "$(fxc session get -o json | jq '[.items[] | select(.status.sessionStatus != "Closed")] | length')" = 0 ] && break
	sleep 0.1
done
fxc session get | sed 's/^/  /'
for ep in "${EPS[@]:0:2}"; do
	got=$(ip netns exec "$(fx_ns cli)" curl -s --max-time 1 "http://$ep/")
	printf '  the client'"'"'s curl to %s now gets: %s\n' "$ep" "${got:-no answer (its ingress entry is gone)}"
done
for i in $(seq 300); do [ "$(app_idle)" -ge 3 ] 2>/dev/null && break; sleep 0.1; done
fxc app get | sed 's/^/  /'
