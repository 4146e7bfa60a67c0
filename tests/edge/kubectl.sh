#!/usr/bin/env bash
# edgeclusterd driven by Debian's kubectl (package kubernetes-client, 1.20)
# with a bearer token over HTTPS (kubectl sends no token over plain HTTP):
# discovery (version, api-resources), get with and without -w (a list
# watch and a single-object watch), get -o yaml, create -f (also the 422 of
# a bad mission, printed from the Status' causes), apply -f creating, then
# changing (the merge patch computed from the last-applied annotation:
# a label dropped from the file goes), apply unchanged, delete (its wait
# ends), edgeclusters, a wrong token; get --chunk-size=2 (pages with
# limit and continue), get -l tier=front -w (a mission whose label goes
# leaves the watch as DELETED). docs/edgecluster.md, "kubectl".
# usage: kubectl.sh PATH/TO/edgeclusterd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/lib.sh"
T=$(mktemp -d /tmp/xgt-kubectl-XXXXXX)
PID=
WATCHERS=
cleanup() {
	for p in $WATCHERS $PID; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM

KUBECTL=$(debian_kubectl)
if [ -z "$KUBECTL" ]; then
	not_ok "Debian's kubectl 1.20 (package kubernetes-client) not found: run deploy/deps.sh"
	summary
	exit 1
fi
echo "# kubectl: $KUBECTL ($("$KUBECTL" version --client --short 2>/dev/null))"

PORT=$(free_port)
TOK=$(secret tok)
API=https://127.0.0.1:$PORT/apis/edge.xgate.io/v1
test_ca "$T" || { not_ok "cannot make a test CA"; summary; exit 1; }
printf '[Cluster]\nName = edge-a\nLabels = zone=east\n[API]\nListen = 127.0.0.1:%s\nToken = %s\nTLSCert = %s\nTLSKey = %s\n[Store]\nDatabase = %s/db/a.db\n' \
	"$PORT" "$TOK" "$T/srv.pem" "$T/srv.key" "$T" > "$T/a.conf"
kubeconfig() { # kubeconfig TOKEN
	cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: edge-a
  cluster:
    server: https://127.0.0.1:$PORT
    certificate-authority: $T/ca.pem
users:
- name: ops
  user:
    token: $1
contexts:
- name: edge-a
  context:
    cluster: edge-a
    user: ops
current-context: edge-a
EOF
}
kubeconfig "$TOK" > "$T/kubeconfig"
kubeconfig "$(secret wrong)" > "$T/kubeconfig.wrong"
# HOME and the cache in $T: nothing of the user's ~/.kube is read or written
kw() { HOME=$T "$KUBECTL" --kubeconfig "$T/kubeconfig" --cache-dir "$T/cache" "$@"; }
k() { kw --request-timeout=60s "$@"; } # a request that hangs fails the test, not ctest's timeout
curl_api() { curl -sS --cacert "$T/ca.pem" -H "Authorization: Bearer $TOK" "$@"; }
watch_bg() { # watch_bg OUT ARGS...: a kubectl get -w kept running, once its watch is open
	local out=$1; shift
	kw get "$@" -v=6 > "$out" 2> "$out.err" &
	WATCHERS="$WATCHERS $!"
	# -v=6 logs a request once its answer's headers are in
	wait_for 20 grep -q 'watch=true.* 200 OK' "$out.err" ||
		not_ok "kubectl get $* did not start watching: $(cat "$out.err")"
}
rows() { local n; n=$(grep -c "^$2 " "$1" 2>/dev/null); echo "${n:-0}"; } # rows FILE PREFIX

"$ECD" -c "$T/a.conf" 2> "$T/ecd.log" & PID=$!
wait_for 10 curl -sf --cacert "$T/ca.pem" "https://127.0.0.1:$PORT/healthz" ||
	{ not_ok "daemon did not start: $(cat "$T/ecd.log")"; summary; exit 1; }

# ---- discovery ----
OUT=$(k version 2>&1)
case "$OUT" in *'Server Version'*'GitVersion:"v1.20.0-xgate"'*) ok "kubectl version: the server's /version";;
	*) not_ok "kubectl version: $OUT";; esac
OUT=$(k api-resources --no-headers 2>&1)
echo "$OUT" | grep -Eq '^missions +edge\.xgate\.io/v1 +false +Mission$' &&
	echo "$OUT" | grep -Eq '^edgeclusters +edge\.xgate\.io/v1 +false +EdgeCluster$' &&
	ok "api-resources: missions and edgeclusters, cluster-scoped" || not_ok "api-resources: $OUT"
OUT=$(k get missions 2>&1)
case "$OUT" in "No resources found"*) ok "get missions: none yet";; *) not_ok "get missions: $OUT";; esac

# ---- watches open while the writes happen ----
watch_bg "$T/w-plain" missions -w
watch_bg "$T/w-events" missions -w --output-watch-events
watch_bg "$T/w-tier" missions -l tier=front -w --output-watch-events

mission() { # mission NAME CONTENT [LABELS-YAML]
	cat <<EOF
apiVersion: edge.xgate.io/v1
kind: Mission
metadata:
  name: $1
  labels:
    app: web
${3:-}
spec:
  content: "$2"
  placement:
    clusters: [elsewhere]
EOF
}

# ---- create -f ----
mission m1 one > "$T/m1.yaml"
OUT=$(k create -f "$T/m1.yaml" 2>&1)
[ "$OUT" = "mission.edge.xgate.io/m1 created" ] && ok "create -f: $OUT" || not_ok "create -f: $OUT"
expect_rc 1 "create -f again fails" k create -f "$T/m1.yaml"
expect_err 'missions "m1" already exists' "create -f again: AlreadyExists"
sed 's/^  content:/  contentx:/; s/name: m1/name: bad/' "$T/m1.yaml" > "$T/bad.yaml"
expect_rc 1 "create -f of a bad mission fails" k create -f "$T/bad.yaml"
expect_err "spec.contentx: unknown field" "create -f of a bad mission: the field path printed"

# ---- apply -f: create, change, unchanged ----
mission m2 two "    tier: front" > "$T/m2.yaml"
OUT=$(k apply -f "$T/m2.yaml" --validate=false 2>&1)
[ "$OUT" = "mission.edge.xgate.io/m2 created" ] && ok "apply -f creates: $OUT" || not_ok "apply -f (create): $OUT"
LAST=$(curl_api "$API/missions/m2" | jq -r '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]')
[ "$(echo "$LAST" | jq -r .spec.content 2>/dev/null)" = two ] &&
	ok "apply's last-applied configuration is kept" || not_ok "annotation: $LAST"
mission m2 three > "$T/m2.yaml" # content changed, label tier gone
OUT=$(k apply -f "$T/m2.yaml" --validate=false 2>&1)
[ "$OUT" = "mission.edge.xgate.io/m2 configured" ] && ok "apply -f changes: $OUT" || not_ok "apply -f (change): $OUT"
GOT=$(curl_api "$API/missions/m2" | jq -c '[.spec.content, .metadata.labels]')
[ "$GOT" = '["three",{"app":"web"}]' ] &&
	ok "the change is stored; the label dropped from the file is gone (a three-way merge patch)" ||
	not_ok "after apply: $GOT"
OUT=$(k apply -f "$T/m2.yaml" --validate=false 2>&1)
[ "$OUT" = "mission.edge.xgate.io/m2 unchanged" ] && ok "apply -f again: $OUT" || not_ok "apply -f (same): $OUT"
mission m3 four > "$T/m3.yaml"
OUT=$(k apply -f "$T/m3.yaml" 2>&1)
[ "$OUT" = "mission.edge.xgate.io/m3 created" ] && ok "apply -f with validation (/openapi/v2): $OUT" ||
	not_ok "apply -f with validation: $OUT"

# ---- get ----
OUT=$(k get missions 2>&1)
[ "$(echo "$OUT" | awk '{print $1}' | tr '\n' ' ')" = "NAME m1 m2 m3 " ] &&
	ok "get missions: a table of m1, m2, m3" || not_ok "get missions: $OUT"
OUT=$(k get missions --chunk-size=2 -v=6 2>"$T/chunk.err")
[ "$(echo "$OUT" | awk '{print $1}' | tr '\n' ' ')" = "NAME m1 m2 m3 " ] &&
	grep -q 'missions?limit=2[&a-z0-9=]* 200 OK' "$T/chunk.err" && grep -q 'missions?continue=[^&]*&limit=2[&a-z0-9=]* 200 OK' "$T/chunk.err" &&
	ok "get missions --chunk-size=2: m1, m2, m3 read in two pages (limit, continue)" ||
	not_ok "chunk-size: $OUT $(grep GET "$T/chunk.err")"
OUT=$(k get mission m2 -o yaml 2>&1)
for want in "apiVersion: edge.xgate.io/v1" "kind: Mission" "  name: m2" "  content: three"; do
	echo "$OUT" | grep -qx "$want" || { not_ok "get mission m2 -o yaml: no '$want' in: $OUT"; want=; break; }
done
[ -n "$want" ] && ok "get mission m2 -o yaml"
OUT=$(k get mission m2 -o jsonpath='{.spec.content}' 2>&1)
[ "$OUT" = three ] && ok "get -o jsonpath" || not_ok "jsonpath: $OUT"
OUT=$(k get edgeclusters 2>&1)
[ "$(echo "$OUT" | awk 'NR==2 {print $1}')" = edge-a ] && ok "get edgeclusters: this cluster" || not_ok "get edgeclusters: $OUT"
OUT=$(k get edgecluster edge-a -o jsonpath='{.metadata.labels.zone}' 2>&1)
[ "$OUT" = east ] && ok "get edgecluster edge-a" || not_ok "get edgecluster edge-a: $OUT"
expect_rc 1 "get of a missing mission fails" k get mission nosuch
expect_err 'missions "nosuch" not found' "get of a missing mission: NotFound"

# ---- a single-object watch, then delete ----
watch_bg "$T/w-one" mission m1 -w
OUT=$(k delete mission m1 --timeout=30s 2>&1)
[ "$OUT" = 'mission.edge.xgate.io "m1" deleted' ] && ok "delete mission m1 (its wait ends): $OUT" ||
	not_ok "delete: $OUT"
expect_rc 1 "get after delete fails" k get mission m1
wait_for 10 test "$(rows "$T/w-one" m1)" -ge 2
[ "$(rows "$T/w-one" m1)" = 2 ] && [ "$(rows "$T/w-one" m2)" = 0 ] &&
	ok "get mission m1 -w: the object, then its deletion, nothing of m2" || not_ok "w-one: $(cat "$T/w-one" "$T/w-one.err")"

wait_for 10 test "$(rows "$T/w-events" DELETED)" -ge 1
EV=$(awk 'NR>1 {print $1 "/" $2}' "$T/w-events" | tr '\n' ' ')
[ "$EV" = "ADDED/m1 ADDED/m2 MODIFIED/m2 ADDED/m3 DELETED/m1 " ] &&
	ok "get missions -w --output-watch-events: $EV" || not_ok "watch events: $EV $(cat "$T/w-events.err")"
EV=$(awk 'NR>1 {print $1 "/" $2}' "$T/w-tier" | tr '\n' ' ')
[ "$EV" = "ADDED/m2 DELETED/m2 " ] &&
	ok "get missions -l tier=front -w: m2 comes with its label and leaves when it goes: $EV" ||
	not_ok "label watch: $EV $(cat "$T/w-tier.err")"
wait_for 10 test "$(rows "$T/w-plain" m1)" -ge 2
[ "$(rows "$T/w-plain" m1)/$(rows "$T/w-plain" m2)/$(rows "$T/w-plain" m3)" = 2/2/1 ] &&
	ok "get missions -w: a row per event" || not_ok "plain watch: $(cat "$T/w-plain" "$T/w-plain.err")"

# ---- the token ----
ERR=$(HOME=$T "$KUBECTL" --kubeconfig "$T/kubeconfig.wrong" --cache-dir "$T/cache.wrong" get missions 2>&1)
case "$ERR" in *"logged in to the server (invalid bearer token)"*) ok "a wrong token: refused, the server's reason printed";;
	*) not_ok "wrong token: $ERR";; esac

summary
