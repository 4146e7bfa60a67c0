#!/usr/bin/env bash
# fornaxd with its store on etcd: three members of Debian's etcd on loopback
# behind TLS with client certificates (tests/etcd.sh), fornaxd's [Store]
# Backend = etcd. Applications are written under the Prefix and survive a
# kill -9; a fornaxd without the client certificate is refused, saying so;
# with two members stopped (no quorum) an application write fails with a
# 500 and "no quorum" in the log, while the applications still read, a
# session is still opened (the open path writes nothing), and a fornaxd
# restarted then starts on what the member knows.
# usage: etcd.sh PATH/TO/fornaxd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FXD=$(readlink -f "$1")
source "$HERE/../etcd.sh"
PID=
etcd_test_stop() { [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; }
etcd_test xgt-fxetcd 3 tls || { not_ok "no etcd cluster"; summary; exit 1; }
ok "three etcd members on loopback with TLS: $ETCD_ENDPOINTS"

source "$HERE/store_lib.sh"
store_conf "$T/f.conf" "TLSCA = $T/ca.pem" "Timeout = 2s" "TLSCert = $T/srv.pem" "TLSKey = $T/srv.key"
store_conf "$T/nocert.conf" "TLSCA = $T/ca.pem" "Timeout = 2s"

stop9() { kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=; }
ectl() { # etcdctl over TLS against the members given (default: all)
	ETCDCTL_API=3 etcdctl --endpoints="${EP:-$ETCD_ENDPOINTS}" --cacert "$T/ca.pem" \
		--cert "$T/srv.pem" --key "$T/srv.key" --command-timeout=3s "$@"
}

# ---- TLS: without the client certificate etcd refuses, and fornaxd says where ----
expect_rc 1 "fornaxd without a client certificate does not start" "$FXD" -c "$T/nocert.conf"
expect_err "etcd store $PREFIX" "its error names the store and the endpoint: $ERR"
expect_err "client certificate" "and says a client certificate is likely wanted"

start "$T/f.conf" && ok "fornaxd on etcd serves on 127.0.0.1:$PORT" ||
	{ not_ok "no start: $(tail -3 "$T/fxd.log")"; summary; exit 1; }

# ---- applications are written to etcd, under the prefix ----
post $APPS "$(app echo)"; expect_code 201 "create echo"
RV=$(j .metadata.resourceVersion)
post $APPS "$(app gone)"; expect_code 201 "create gone"
req DELETE $APPS/gone; expect_code 200 "delete gone"
V=$(ectl get --print-value-only "${PREFIX}apps/default/echo")
[ "$(head -1 <<< "$V")" = "$RV" ] && [ "$(tail -n +2 <<< "$V" | jq -r .metadata.name)" = echo ] &&
	ok "etcd holds ${PREFIX}apps/default/echo: its resourceVersion, then its JSON" ||
	not_ok "etcd value of echo: $V"
[ -z "$(ectl get --keys-only "${PREFIX}apps/default/gone")" ] && ok "a deleted application is gone from etcd" ||
	not_ok "gone is still in etcd"
[ "$(ectl get --print-value-only "${PREFIX}revision" | sed 's/^0*//')" -gt "$RV" ] &&
	ok "the revision key moved past echo's version (the delete counts)" ||
	not_ok "revision key: $(ectl get "${PREFIX}revision")"

# ---- kill -9 and restart: the applications come back from etcd ----
stop9
start "$T/f.conf" && ok "restarted after kill -9" || not_ok "restart: $(tail -3 "$T/fxd.log")"
req GET $APPS/echo
[ "$CODE" = 200 ] && [ "$(j .metadata.resourceVersion)" = "$RV" ] &&
	ok "echo is back, same resourceVersion" || not_ok "after restart: $CODE $BODY"
req GET $APPS/gone; expect_code 404 "gone stays gone"

# ---- two members stopped: no quorum ----
kill -9 "${ETCD_PID[0]}" "${ETCD_PID[1]}"
wait_for 10 etcd_gone "${ETCD_PID[0]}"
wait_for 10 etcd_gone "${ETCD_PID[1]}"
post $APPS "$(app late)"; expect_code 500 "creating an application without a quorum fails"
grep -q "no quorum" "$T/fxd.log" && ok "the log says why: $(grep -m1 'no quorum' "$T/fxd.log" | cut -c1-200)" ||
	not_ok "no 'no quorum' in the log: $(tail -3 "$T/fxd.log")"
req GET $APPS/late; expect_code 404 "and nothing was made of it"
req GET $APPS
[ "$(j '[.items[].metadata.name] | join(" ")')" = echo ] && ok "the applications still list" ||
	not_ok "list without a quorum: $BODY"
post /namespaces/default/applicationsessions '{"metadata":{"name":"s1"},"spec":{"applicationName":"echo","sessionData":"aGk="}}'
expect_code 201 "a session is still opened: the open path writes nothing to the store"
stop9
start "$T/f.conf" && ok "fornaxd restarts without a quorum" || not_ok "restart without quorum: $(tail -3 "$T/fxd.log")"
req GET $APPS/echo; expect_code 200 "and reads echo from what the member knows"
summary
