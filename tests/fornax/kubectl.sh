#!/usr/bin/env bash
# fornaxd driven by Debian's kubectl (package kubernetes-client, 1.20) with
# a bearer token over HTTPS (kubectl sends no token over plain HTTP), in the
# default namespace of the kubeconfig: discovery, create -f, apply -f
# (create, change by merge patch, unchanged), get (-o yaml, jsonpath, short
# names, -w), sessions created and deleted, delete of an application (its
# wait ends), a bad application's field path; get --chunk-size=2 (pages
# with limit and continue) and get -l group=x -w (an application whose
# label comes is ADDED, one whose label goes DELETED). docs/serverless.md,
# "kubectl".
# usage: kubectl.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../lib.sh"
source "$HERE/../edge/lib.sh"
source "$HERE/../../deploy/lib/ca.sh"
T=$(mktemp -d /tmp/xgt-fxkube-XXXXXX)
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

PORT=$(free_port)
TOK=$(secret tok)
G=core.fornax-serverless.centaurusinfra.io
API=https://127.0.0.1:$PORT/apis/$G/v1/namespaces/default
test_ca "$T" || { not_ok "cannot make a test CA"; summary; exit 1; }
cat > "$T/f.conf" <<CONF
[API]
Listen = 127.0.0.1:$PORT
Token = $TOK
TLSCert = $T/srv.pem
TLSKey = $T/srv.key
[Store]
Database = $T/fx.db
[Nodes]
JoinToken = $(secret join)
CONF
cat > "$T/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: fx
  cluster:
    server: https://127.0.0.1:$PORT
    certificate-authority: $T/ca.pem
users:
- name: ops
  user:
    token: $TOK
contexts:
- name: fx
  context:
    cluster: fx
    user: ops
    namespace: default
current-context: fx
KC
kw() { HOME=$T "$KUBECTL" --kubeconfig "$T/kubeconfig" --cache-dir "$T/cache" "$@"; }
k() { kw --request-timeout=60s "$@"; }
curl_api() { curl -sS --cacert "$T/ca.pem" -H "Authorization: Bearer $TOK" "$@"; }
rows() { local n; n=$(grep -c "^$2 " "$1" 2>/dev/null); echo "${n:-0}"; }

"$FXD" -c "$T/f.conf" 2> "$T/fx.log" & PID=$!
wait_for 10 curl -sf --cacert "$T/ca.pem" "https://127.0.0.1:$PORT/healthz" ||
	{ not_ok "fornaxd did not start: $(cat "$T/fx.log")"; summary; exit 1; }

# ---- discovery ----
OUT=$(k api-resources --api-group=$G --no-headers 2>&1)
echo "$OUT" | grep -Eq "^applications +app +$G/v1 +true +Application$" &&
	echo "$OUT" | grep -Eq "^applicationsessions +session,as +$G/v1 +true +ApplicationSession$" &&
	echo "$OUT" | grep -Eq "^nodes +$G/v1 +false +Node$" &&
	ok "api-resources: applications (app), applicationsessions (session, as), pods, nodes" || not_ok "api-resources: $OUT"
OUT=$(k get applications 2>&1)
case "$OUT" in "No resources found in default namespace."*) ok "get applications: none yet";; *) not_ok "get applications: $OUT";; esac

kw get applications -w -v=6 > "$T/w" 2> "$T/w.err" & WATCHERS="$WATCHERS $!"
wait_for 20 grep -q 'watch=true.* 200 OK' "$T/w.err" || not_ok "kubectl get -w did not start watching: $(cat "$T/w.err")"

app() { # app NAME MAX [LABEL-LINE]
	cat <<YAML
apiVersion: $G/v1
kind: Application
metadata:
  name: $1
  labels:
    app: $1
${3:-}
spec:
  containers:
  - name: main
    command: ["/bin/true"]
    ports:
    - containerPort: 8080
      protocol: TCP
  scalingPolicy:
    minimumInstance: 0
    maximumInstance: $2
    burst: 1
    scalingPolicyType: idle_session_number
    idleSessionNumThreshold: {high: 1, low: 0}
YAML
}

# ---- create -f, apply -f ----
app web 4 > "$T/web.yaml"
OUT=$(k create -f "$T/web.yaml" 2>&1)
[ "$OUT" = "application.$G/web created" ] && ok "create -f: $OUT" || not_ok "create -f: $OUT"
app api 2 "    tier: back" > "$T/api.yaml"
OUT=$(k apply -f "$T/api.yaml" 2>&1)
[ "$OUT" = "application.$G/api created" ] && ok "apply -f creates: $OUT" || not_ok "apply -f (create): $OUT"
app api 3 > "$T/api.yaml" # maximumInstance 3, label tier gone
OUT=$(k apply -f "$T/api.yaml" 2>&1)
[ "$OUT" = "application.$G/api configured" ] && ok "apply -f changes: $OUT" || not_ok "apply -f (change): $OUT"
GOT=$(curl_api "$API/applications/api" | jq -c '[.spec.scalingPolicy.maximumInstance, .metadata.labels]')
[ "$GOT" = '[3,{"app":"api"}]' ] && ok "stored: maximumInstance 3, the label dropped from the file is gone" ||
	not_ok "after apply: $GOT"
OUT=$(k apply -f "$T/api.yaml" 2>&1)
[ "$OUT" = "application.$G/api unchanged" ] && ok "apply -f again: $OUT" || not_ok "apply -f (same): $OUT"
sed 's|command: \["/bin/true"\]|command: ["/bin/false"]|' "$T/api.yaml" > "$T/api2.yaml"
expect_rc 1 "apply -f of a change to the containers fails" k apply -f "$T/api2.yaml"
expect_err "spec.containers" "and names the field"

# ---- get ----
OUT=$(k get app 2>&1)
[ "$(echo "$OUT" | awk '{print $1}' | tr '\n' ' ')" = "NAME api web " ] && ok "get app (short name): api, web" ||
	not_ok "get app: $OUT"
OUT=$(k get application web -o jsonpath='{.spec.scalingPolicy.maximumInstance}' 2>&1)
[ "$OUT" = 4 ] && ok "get -o jsonpath" || not_ok "jsonpath: $OUT"
OUT=$(k get application web -o yaml 2>&1)
echo "$OUT" | grep -qx "kind: Application" && echo "$OUT" | grep -qx "  namespace: default" &&
	ok "get -o yaml" || not_ok "get -o yaml: $OUT"

# ---- pages and a watch with a labelSelector ----
for n in c1 c2 c3; do
	app $n 1 "$([ $n = c3 ] || echo '    group: x')" | k create -f - > /dev/null 2>&1
done
kw get app -l group=x -w --output-watch-events -v=6 > "$T/wl" 2> "$T/wl.err" & WATCHERS="$WATCHERS $!"
wait_for 20 grep -q 'watch=true.* 200 OK' "$T/wl.err" || not_ok "get -l group=x -w did not start: $(cat "$T/wl.err")"
OUT=$(k get app --chunk-size=2 -v=6 2>"$T/chunk.err")
[ "$(echo "$OUT" | awk '{print $1}' | tr '\n' ' ')" = "NAME api c1 c2 c3 web " ] &&
	grep -q 'applications?limit=2[&a-z0-9=]* 200 OK' "$T/chunk.err" &&
	[ "$(grep -c 'applications?continue=[^&]*&limit=2[&a-z0-9=]* 200 OK' "$T/chunk.err")" = 2 ] &&
	ok "get app --chunk-size=2: 5 applications in three pages (limit, continue)" ||
	not_ok "chunk-size: $OUT $(grep GET "$T/chunk.err")"
PAGE=$(k get --raw "/apis/core.fornax-serverless.centaurusinfra.io/v1/namespaces/default/applications?limit=2" 2>&1)
[ "$(echo "$PAGE" | jq '.metadata.remainingItemCount')" = 3 ] &&
	ok "get --raw ?limit=2: remainingItemCount 3 after the first page of 5" ||
	not_ok "remainingItemCount: $(echo "$PAGE" | jq -c .metadata)"
k label app c3 group=x > /dev/null 2>&1 # comes into the selection
k label app c1 group- > /dev/null 2>&1  # leaves it
wait_for 10 grep -q DELETED "$T/wl"
EV=$(awk 'NR>1 {print $1 "/" $2}' "$T/wl" | tr '\n' ' ')
[ "$EV" = "ADDED/c1 ADDED/c2 ADDED/c3 DELETED/c1 " ] &&
	ok "get app -l group=x -w: c1, c2, then c3 as its label comes, c1 DELETED as its goes: $EV" ||
	not_ok "label watch: $EV $(cat "$T/wl.err")"
for n in c1 c2 c3; do k delete app $n --wait=false > /dev/null 2>&1; done

# ---- a single-object watch (from resourceVersion 0: it starts with ADDED) ----
kw get application web -w -v=6 > "$T/w1" 2> "$T/w1.err" & WATCHERS="$WATCHERS $!"
wait_for 20 grep -q 'watch=true.* 200 OK' "$T/w1.err" || not_ok "get application web -w did not start: $(cat "$T/w1.err")"
app web 5 > "$T/web.yaml"
k apply -f "$T/web.yaml" > /dev/null 2>&1
wait_for 10 test "$(rows "$T/w1" web)" -ge 2
[ "$(rows "$T/w1" web)" = 2 ] && [ "$(rows "$T/w1" api)" = 0 ] &&
	ok "get application web -w: the object, then its change, nothing of api" || not_ok "w1: $(cat "$T/w1" "$T/w1.err" | tail)"

# ---- sessions ----
cat > "$T/s1.yaml" <<YAML
apiVersion: $G/v1
kind: ApplicationSession
metadata:
  name: s1
spec:
  applicationName: web
  sessionData: aGVsbG8=
  openTimeoutSeconds: 30
YAML
OUT=$(k create -f "$T/s1.yaml" 2>&1)
[ "$OUT" = "applicationsession.$G/s1 created" ] && ok "create -f of a session: $OUT" || not_ok "session create: $OUT"
OUT=$(k get as s1 -o jsonpath='{.status.sessionStatus}' 2>&1)
[ "$OUT" = Pending ] && ok "get as s1: Pending (no node yet)" || not_ok "session status: $OUT"
OUT=$(k delete as s1 --wait=false 2>&1)
[ "$OUT" = "applicationsession.$G \"s1\" deleted" ] && ok "delete as s1: $OUT" || not_ok "session delete: $OUT"

# ---- delete ----
OUT=$(k delete application api --timeout=30s 2>&1)
[ "$OUT" = "application.$G \"api\" deleted" ] && ok "delete application api (its wait ends)" || not_ok "delete: $OUT"
expect_rc 1 "get after delete fails" k get application api
wait_for 10 test "$(rows "$T/w" api)" -ge 2
[ "$(rows "$T/w" web)" -ge 1 ] && [ "$(rows "$T/w" api)" -ge 2 ] && ok "get applications -w: rows for web and api as they changed" ||
	not_ok "watch: $(cat "$T/w" "$T/w.err" | tail -20)"
summary
