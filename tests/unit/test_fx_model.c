// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's model: quantities; Application and ApplicationSession
 * validation with field paths; the scaling round (both types, the
 * thresholds, min/max, burst, allocated pods never removed); the session
 * state machine and its clock; the node revision rules; the node link's
 * objects. */
#include <string.h>

#include <arpa/inet.h>

#include "config.h"
#include "model.h"
#include "unit.h"

static struct fx_scale round_of(struct fx_policy p, int pending, int idle, int alloc, int queued)
{
	struct fx_pool_counts c = {pending, idle, alloc, queued};

	return fx_scale_round(&p, &c);
}

static void test_quantities(void)
{
	CHECK_EXPR(fx_cpu_milli("100m") == 100);
	CHECK_EXPR(fx_cpu_milli("0.5") == 500);
	CHECK_EXPR(fx_cpu_milli("2") == 2000);
	CHECK_EXPR(fx_cpu_milli("1.5k") == 1500000);
	CHECK_EXPR(fx_mem_bytes("64Mi") == 64 << 20);
	CHECK_EXPR(fx_mem_bytes("1G") == 1000000000);
	CHECK_EXPR(fx_mem_bytes("1e3") == 1000);
	CHECK_EXPR(fx_mem_bytes("512") == 512);
	CHECK_EXPR(fx_mem_bytes("1.5Gi") == 1610612736);
	CHECK_EXPR(fx_cpu_milli("-1") < 0);
	CHECK_EXPR(fx_cpu_milli("1x") < 0);
	CHECK_EXPR(fx_cpu_milli("") < 0);
	CHECK_EXPR(fx_mem_bytes("inf") < 0);
	CHECK_EXPR(fx_mem_bytes("0x10") < 0);
	CHECK_EXPR(fx_mem_bytes("1e99") < 0);
}

static void test_scaling(void)
{
	struct fx_policy num = {0, 10, 2, FX_IDLE_NUMBER, 3, 1};
	struct fx_policy pct = {0, 100, 5, FX_IDLE_PERCENT, 50, 20};
	struct fx_scale s;

	s = round_of(num, 0, 0, 0, 0);
	CHECK(s.create == 1 && s.remove == 0 && s.desired == 1, "number: empty pool -> low (1)");
	s = round_of(num, 0, 2, 0, 0);
	CHECK(s.create == 0 && s.remove == 0, "number: idle within [low, high] -> nothing");
	s = round_of(num, 0, 6, 0, 0);
	CHECK(s.remove == 2 && s.desired == 3, "number: 6 idle, high 3 -> remove 3, burst 2 of it");
	s = round_of(num, 0, 0, 0, 5);
	CHECK(s.create == 2 && s.desired == 6, "number: 5 pending sessions -> want 6, burst 2");
	s = round_of(num, 1, 0, 0, 1);
	CHECK(s.create == 1, "number: a pending pod for a pending session does not count as idle");
	s = round_of(num, 0, 0, 10, 3);
	CHECK(s.create == 0 && s.desired == 10, "max 10 reached: nothing more");
	s = round_of((struct fx_policy){4, 10, 10, FX_IDLE_NUMBER, 3, 0}, 0, 0, 0, 0);
	CHECK(s.create == 4 && s.desired == 4, "min 4 with low 0: 4 created");
	s = round_of((struct fx_policy){0, 2, 10, FX_IDLE_NUMBER, 3, 1}, 0, 3, 2, 0);
	CHECK(s.remove == 3 && s.desired == 2, "max 2 below 5 pods: the 3 idle go, allocated stay");
	s = round_of((struct fx_policy){0, 1, 10, FX_IDLE_NUMBER, 3, 1}, 0, 0, 4, 0);
	CHECK(s.remove == 0 && s.create == 0 && s.desired == 4,
	      "4 allocated over max 1: none removed (a live session is never scaled away)");
	s = round_of((struct fx_policy){0, 10, 1, FX_IDLE_NUMBER, 0, 0}, 2, 3, 0, 0);
	CHECK(s.remove == 1, "burst 1: one removal per round");

	s = round_of(pct, 0, 0, 10, 0);
	CHECK(s.create == 2 && s.desired == 12, "percent: 10 allocated, low 20%% -> 2 idle");
	s = round_of(pct, 0, 2, 10, 0);
	CHECK(s.create == 0 && s.remove == 0, "percent: 2 idle of 10 allocated within 20..50%%");
	s = round_of(pct, 0, 9, 10, 0);
	CHECK(s.remove == 4 && s.desired == 15, "percent: 9 idle, high 50%% of 10 -> 5 kept");
	s = round_of(pct, 0, 0, 1, 0);
	CHECK(s.create == 1, "percent: low rounds up (20%% of 1 -> 1)");
	s = round_of(pct, 0, 0, 0, 1);
	CHECK(s.create == 1, "percent: a pending session with nothing allocated gets a pod");
	s = round_of((struct fx_policy){0, 100, 3, FX_IDLE_PERCENT, 100, 100}, 0, 0, 10, 0);
	CHECK(s.create == 3 && s.desired == 20, "percent 100: as many idle as allocated, burst 3");
}

static void test_sessions(void)
{
	struct fx_sess_clock c = {.created_ms = 1000, .open_timeout_s = 10, .close_grace_s = 2};
	uint64_t next;

	CHECK_EXPR(fx_sess_can(FX_S_PENDING, FX_S_STARTING));
	CHECK_EXPR(fx_sess_can(FX_S_STARTING, FX_S_AVAILABLE));
	CHECK_EXPR(fx_sess_can(FX_S_AVAILABLE, FX_S_INUSE));
	CHECK_EXPR(fx_sess_can(FX_S_INUSE, FX_S_CLOSING));
	CHECK_EXPR(fx_sess_can(FX_S_CLOSING, FX_S_CLOSED));
	CHECK_EXPR(fx_sess_can(FX_S_STARTING, FX_S_TIMEOUT));
	CHECK_EXPR(!fx_sess_can(FX_S_CLOSED, FX_S_AVAILABLE));
	CHECK_EXPR(!fx_sess_can(FX_S_TIMEOUT, FX_S_AVAILABLE));
	CHECK_EXPR(!fx_sess_can(FX_S_CLOSING, FX_S_AVAILABLE));
	CHECK_EXPR(!fx_sess_can(FX_S_AVAILABLE, FX_S_TIMEOUT));
	CHECK_EXPR(!fx_sess_can(FX_S_PENDING, FX_S_AVAILABLE));
	CHECK_EXPR(!fx_sess_can(FX_S_AVAILABLE, FX_S_AVAILABLE));
	CHECK_EXPR(fx_sess_final(FX_S_CLOSED) && fx_sess_final(FX_S_TIMEOUT) &&
		   !fx_sess_final(FX_S_CLOSING));
	CHECK_EXPR(fx_sess_state_parse("InUse") == FX_S_INUSE && fx_sess_state_parse("x") < 0);

	CHECK(fx_sess_due(FX_S_PENDING, &c, 10999, &next) == FX_DUE_NONE && next == 11000,
	      "Pending: nothing due before openTimeoutSeconds, due at created + 10 s");
	CHECK(fx_sess_due(FX_S_STARTING, &c, 11000, NULL) == FX_DUE_TIMEOUT,
	      "Starting at created + openTimeoutSeconds: Timeout");
	CHECK(fx_sess_due(FX_S_AVAILABLE, &c, 1000000, &next) == FX_DUE_NONE && next == UINT64_MAX,
	      "Available: no timeout ever");
	c.closing_ms = 50000;
	CHECK(fx_sess_due(FX_S_CLOSING, &c, 50000 + 2000 + FX_CLOSE_SLACK_MS - 1, NULL) ==
		  FX_DUE_NONE,
	      "Closing: waits the grace period and the slack");
	CHECK(fx_sess_due(FX_S_CLOSING, &c, 50000 + 2000 + FX_CLOSE_SLACK_MS, NULL) ==
		  FX_DUE_CLOSED,
	      "Closing past grace + slack: Closed");
	c.final_ms = 70000;
	CHECK(fx_sess_due(FX_S_CLOSED, &c, 70000 + FX_FINAL_KEEP_MS, NULL) == FX_DUE_FORGET &&
		  fx_sess_due(FX_S_TIMEOUT, &c, 70000 + FX_FINAL_KEEP_MS - 1, NULL) == FX_DUE_NONE,
	      "a final session is forgotten after FX_FINAL_KEEP_MS");
}

static void test_revisions(void)
{
	struct fx_rev r = {.cur = -1};

	fx_rev_register(&r, 5);
	CHECK(fx_rev_delta(&r, 6) == FX_REV_DROP, "a delta before the full sync is dropped");
	CHECK(fx_rev_full(&r, 5) == FX_REV_APPLY && r.cur == 5, "the full sync at 5 applies");
	CHECK(fx_rev_delta(&r, 6) == FX_REV_APPLY && r.cur == 6, "6 after 5 applies");
	CHECK(fx_rev_delta(&r, 6) == FX_REV_DROP && r.cur == 6, "a duplicate is dropped");
	CHECK(fx_rev_delta(&r, 4) == FX_REV_DROP, "an older one is dropped");
	CHECK(fx_rev_delta(&r, 9) == FX_REV_FULLSYNC && r.awaiting_full, "a gap asks a full sync");
	CHECK(fx_rev_delta(&r, 7) == FX_REV_DROP, "deltas wait for the full sync");
	CHECK(fx_rev_full(&r, 3) == FX_REV_DROP,
	      "a full sync below cur, not after a register: drop");
	CHECK(fx_rev_full(&r, 9) == FX_REV_APPLY && r.cur == 9 && !r.awaiting_full,
	      "the full sync at 9 applies");
	CHECK(fx_rev_delta(&r, 10) == FX_REV_APPLY, "and deltas flow again");
	/* the node lost its store */
	fx_rev_register(&r, 0);
	CHECK(fx_rev_full(&r, 0) == FX_REV_APPLY && r.cur == 0,
	      "a node that lost its store registers at 0: its full sync at 0 applies");
	CHECK(fx_rev_delta(&r, 1) == FX_REV_APPLY, "then 1");
	CHECK(fx_rev_full(&r, 0) == FX_REV_DROP, "a later full sync below cur does not");
}

static json_t *app_json(const char *spec_extra)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"echo\",\"labels\":{\"a\":\"b\"}},\"spec\":{"
		 "\"containers\":[{\"name\":\"echo\",\"command\":[\"/bin/x\"],"
		 "\"ports\":[{\"containerPort\":8080}],"
		 "\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"64Mi\"}}}],"
		 "\"scalingPolicy\":{\"maximumInstance\":5,\"scalingPolicyType\":"
		 "\"idle_session_number\",\"idleSessionNumThreshold\":{\"high\":2,\"low\":1}}%s}}",
		 spec_extra);
	return json_loads(buf, 0, NULL);
}

static void bad_app(const char *text, const char *field, int code)
{
	json_t *o = json_loads(text, 0, NULL);
	struct fx_app_spec sp;
	struct fx_err e = {0};
	int rc = fx_app_validate(o, "default", &sp, &e);

	CHECK(rc == -1 && e.code == code && !strcmp(e.field, field), "refused at %s (%d): %s",
	      field, e.code, e.msg);
	json_decref(o);
}

static void test_validation(void)
{
	json_t *o = app_json("");
	struct fx_app_spec sp;
	struct fx_session_spec ss;
	struct fx_err e;

	CHECK(!fx_app_validate(o, "default", &sp, &e) && sp.cpu_req == 250 &&
		  sp.mem_req == 64 << 20 && sp.policy.max == 5 && sp.policy.burst == 1 &&
		  sp.policy.low == 1 && sp.policy.high == 2,
	      "a good application: requests and policy read, burst defaults to 1");
	json_decref(o);
#define APP(spec) "{\"metadata\":{\"name\":\"x\"},\"spec\":" spec "}"
#define C0	  "\"containers\":[{\"name\":\"c\",\"command\":[\"/x\"],\"ports\":[{\"containerPort\":80}]"
#define SP                                                                                         \
	"\"scalingPolicy\":{\"maximumInstance\":1,\"scalingPolicyType\":\"idle_session_number\","  \
	"\"idleSessionNumThreshold\":{\"high\":1,\"low\":0}}"
	bad_app("[]", "", 400);
	bad_app("{\"metadata\":{}}", "metadata.name", 422);
	bad_app("{\"metadata\":{\"name\":\"Bad_Name\"}}", "metadata.name", 422);
	bad_app("{\"metadata\":{\"name\":\"x\",\"namespace\":\"other\"}}", "metadata.namespace",
		400);
	bad_app(APP("{}"), "spec.containers", 422);
	bad_app(APP("{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80}]}]}"),
		"spec.containers[0].command", 422);
	bad_app(APP("{\"containers\":[{\"name\":\"c\",\"command\":[\"/x\",3]}]}"),
		"spec.containers[0].command[1]", 422);
	bad_app(APP("{" C0 ",\"resources\":{\"limits\":{\"memory\":\"lots\"}}}]}"),
		"spec.containers[0].resources.limits.memory", 422);
	bad_app(APP("{" C0 "}]}"), "spec.scalingPolicy", 422);
	/* several containers: names unique, ports unique across them, the index named */
	bad_app(APP("{" C0 "},{\"name\":\"c\",\"command\":[\"/y\"]}]," SP "}"),
		"spec.containers[1].name", 422);
	bad_app(APP("{" C0 "},{\"name\":\"d\"}]," SP "}"), "spec.containers[1].command", 422);
	bad_app(APP("{" C0 "},{\"name\":\"d\",\"command\":[\"/y\"],\"ports\":[{"
		    "\"containerPort\":80}]}]," SP "}"),
		"spec.containers[1].ports[0].containerPort", 422);
	bad_app(APP("{\"containers\":[{\"name\":\"c\",\"command\":[\"/x\"]}]," SP "}"),
		"spec.containers[0].ports", 422);
	bad_app(APP("{" C0 ",\"resources\":{\"limits\":{\"cpu\":\"1\"}}},{\"name\":\"d\","
		    "\"command\":[\"/y\"],\"resources\":{\"limits\":{\"cpu\":\"x\"}}}]," SP "}"),
		"spec.containers[1].resources.limits.cpu", 422);
	{
		json_t *o2 = json_loads(
		    APP("{" C0 ",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}},{\"name\":"
			"\"d\",\"command\":[\"/y\"],\"resources\":{\"requests\":{\"cpu\":"
			"\"150m\"}},\"ports\":[{\"containerPort\":80,\"protocol\":\"UDP\"}]}]," SP
			"}"),
		    0, NULL);
		json_t *ps = fx_app_ports(json_object_get(o2, "spec"));

		CHECK(o2 && !fx_app_validate(o2, "default", &sp, &e) && sp.cpu_req == 250 &&
			  json_array_size(ps) == 2,
		      "two containers: requests summed, the pod's ports both (%s)", e.msg);
		json_decref(ps);
		json_decref(o2);
	}
	bad_app(APP("{" C0 "}]," SP ",\"usingNodeSessionService\":\"yes\"}"),
		"spec.usingNodeSessionService", 422);
	bad_app(APP("{" C0 "}],\"scalingPolicy\":{\"maximumInstance\":0}}"),
		"spec.scalingPolicy.maximumInstance", 422);
	bad_app(APP("{" C0 "}],\"scalingPolicy\":{\"minimumInstance\":3,\"maximumInstance\":2}}"),
		"spec.scalingPolicy.maximumInstance", 422);
	bad_app(APP("{" C0 "}],\"scalingPolicy\":{\"maximumInstance\":2,\"scalingPolicyType\":"
		    "\"idle_session_percent\",\"idleSessionPercentThreshold\":{\"high\":101}}}"),
		"spec.scalingPolicy.idleSessionPercentThreshold.high", 422);
	bad_app(APP("{" C0 "}],\"scalingPolicy\":{\"maximumInstance\":2,\"scalingPolicyType\":"
		    "\"idle_session_number\",\"idleSessionNumThreshold\":{\"high\":1,\"low\":2}}}"),
		"spec.scalingPolicy.idleSessionNumThreshold.high", 422);
	bad_app(APP("{" C0 "}],\"scalingPolicy\":{\"maximumInstance\":2,\"scalingPolicyType\":"
		    "\"fastest\"}}"),
		"spec.scalingPolicy.scalingPolicyType", 422);

	/* updates: only the policy (labels are metadata) */
	{
		json_t *a = app_json(""), *b = app_json(",\"configData\":{\"k\":\"v\"}");
		json_t *c2 = app_json("");

		json_object_set_new(json_object_get(json_object_get(c2, "spec"), "scalingPolicy"),
				    "burst", json_integer(3));
		CHECK(fx_app_update_check(json_object_get(a, "spec"), json_object_get(b, "spec"),
					  &e) == -1 &&
			  !strcmp(e.field, "spec.configData"),
		      "an update adding configData is refused at spec.configData");
		CHECK(!fx_app_update_check(json_object_get(a, "spec"), json_object_get(c2, "spec"),
					   &e),
		      "an update of the scaling policy only is taken");
		json_decref(a);
		json_decref(b);
		json_decref(c2);
	}

	o = json_loads("{\"metadata\":{\"name\":\"s1\"},\"spec\":{\"applicationName\":\"echo\","
		       "\"sessionData\":\"aGVsbG8=\"}}",
		       0, NULL);
	CHECK(!fx_session_validate(o, "default", &ss, &e) && ss.open_timeout_s == 10 &&
		  ss.close_grace_s == 60 && ss.kill_on_close && !strcmp(ss.app, "echo"),
	      "a session: the defaults 10 s, 60 s, kill");
	json_object_set_new(json_object_get(o, "spec"), "sessionData", json_string("not base64!"));
	CHECK(fx_session_validate(o, "default", &ss, &e) && !strcmp(e.field, "spec.sessionData"),
	      "sessionData not base64: %s", e.msg);
	json_object_set_new(json_object_get(o, "spec"), "sessionData", json_string("aGVsbG8="));
	json_object_set_new(json_object_get(o, "spec"), "openTimeoutSeconds", json_integer(0));
	CHECK(fx_session_validate(o, "default", &ss, &e) &&
		  !strcmp(e.field, "spec.openTimeoutSeconds"),
	      "openTimeoutSeconds 0: %s", e.msg);
	json_object_del(json_object_get(o, "spec"), "openTimeoutSeconds");
	json_object_del(json_object_get(o, "spec"), "applicationName");
	CHECK(fx_session_validate(o, "default", &ss, &e) &&
		  !strcmp(e.field, "spec.applicationName"),
	      "no applicationName: %s", e.msg);
	json_decref(o);
}

static void test_link(void)
{
	json_t *p = json_loads("{\"podIdentifier\":\"default/echo-x\",\"application\":"
			       "\"default/echo\",\"state\":\"Standby\",\"podIP\":\"10.0.0.2\"}",
			       0, NULL);
	json_t *s = json_loads("{\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":"
			       "\"default/echo-x\",\"state\":\"Available\",\"accessEndPoints\":"
			       "[{\"protocol\":\"TCP\",\"ipAddress\":\"1.2.3.4\",\"port\":0}]}",
			       0, NULL);
	struct fx_link_pod lp;
	struct fx_link_sess ls;
	struct fx_err e;

	CHECK(!fx_link_pod_parse(p, "pod", &lp, &e) && lp.state == FX_P_STANDBY &&
		  !strcmp(lp.ip, "10.0.0.2"),
	      "a Pod on the link");
	json_object_set_new(p, "state", json_string("Frozen"));
	CHECK(fx_link_pod_parse(p, "pods[2]", &lp, &e) && !strcmp(e.field, "pods[2].state"),
	      "a bad pod state names pods[2].state: %s", e.msg);
	json_object_set_new(p, "podIdentifier", json_string("noslash"));
	CHECK(fx_link_pod_parse(p, "pod", &lp, &e) && !strcmp(e.field, "pod.podIdentifier"),
	      "a bad podIdentifier: %s", e.msg);
	CHECK(fx_link_sess_parse(s, "session", &ls, &e) &&
		  !strcmp(e.field, "session.accessEndPoints[0]"),
	      "port 0 refused at session.accessEndPoints[0]: %s", e.msg);
	json_object_set_new(json_array_get(json_object_get(s, "accessEndPoints"), 0), "port",
			    json_integer(30001));
	CHECK(!fx_link_sess_parse(s, "session", &ls, &e) && ls.state == FX_S_AVAILABLE &&
		  json_array_size(ls.endpoints) == 1,
	      "a Session on the link");
	json_decref(p);
	json_decref(s);

	p = json_loads("{\"type\":\"NodeRegister\",\"nodeRevision\":3,\"node\":{\"name\":"
		       "\"node-a\",\"ip\":\"192.0.2.1\",\"capacity\":{\"cpu\":1000,"
		       "\"memory\":1024,\"pods\":10}}}",
		       0, NULL);
	CHECK(!fx_link_register_check(p, &e), "a good NodeRegister");
	json_object_set_new(json_object_get(json_object_get(p, "node"), "capacity"), "pods",
			    json_integer(-1));
	CHECK(fx_link_register_check(p, &e) && !strcmp(e.field, "node.capacity.pods"),
	      "pods -1 refused at node.capacity.pods: %s", e.msg);
	json_object_set_new(json_object_get(json_object_get(p, "node"), "capacity"), "pods",
			    json_integer(1));
	json_object_set_new(json_object_get(p, "node"), "publicIp", json_integer(1));
	CHECK(fx_link_register_check(p, &e) && !strcmp(e.field, "node.publicIp"),
	      "a publicIp not a string: %s", e.msg);
	json_object_del(json_object_get(p, "node"), "publicIp");
	json_object_set_new(p, "nodeRevision", json_string("1"));
	CHECK(fx_link_register_check(p, &e) && !strcmp(e.field, "nodeRevision"),
	      "nodeRevision a string: %s", e.msg);
	json_decref(p);
}

static void test_config(void)
{
	struct fx_conf c;
	char err[300];

	CHECK(!fx_conf_parse("f.conf", "[API]\nToken = 0123456789abcdef\n", &c, err, sizeof(err)) &&
		  ntohs(c.listen.sin_port) == 8470 &&
		  ntohl(c.listen.sin_addr.s_addr) == 0x7f000001 && c.port_lo == 30000 &&
		  c.port_hi == 32767 && c.node_bits == 24 && c.pod_net == 0x0af40000 &&
		  c.queue_max == 4u << 20 && !strcmp(c.database, "/var/lib/xgate/fornaxd.db"),
	      "defaults: 127.0.0.1:8470, ports 30000-32767, 10.244.0.0/16 in /24s, 4 MiB");
	CHECK(fx_conf_parse("f.conf",
			    "[API]\nToken = 0123456789abcdef\n[Nodes]\nPortRange = 5000-4000\n", &c,
			    err, sizeof(err)) &&
		  strstr(err, "f.conf:4: PortRange 5000-4000: HI below LO"),
	      "a reversed PortRange names its line: %s", err);
	CHECK(!fx_conf_parse("f.conf", "[API]\nToken = 0123456789abcdef\n", &c, err, sizeof(err)) &&
		  c.endpoint_form == 1,
	      "EndpointForm defaults to 1");
	CHECK(!fx_conf_parse("f.conf",
			     "[API]\nToken = 0123456789abcdef\n[Nodes]\nEndpointForm = 2\n", &c,
			     err, sizeof(err)) &&
		  c.endpoint_form == 2,
	      "EndpointForm = 2 (%s)", err);
	CHECK(fx_conf_parse("f.conf",
			    "[API]\nToken = 0123456789abcdef\n[Nodes]\nEndpointForm = 3\n", &c, err,
			    sizeof(err)) &&
		  strstr(err, "f.conf:4: EndpointForm '3'"),
	      "EndpointForm 3: %s", err);
	CHECK(fx_conf_parse("f.conf", "[API]\nToken = 0123456789abcdef\n[Nodes]\nVNI = 0\n", &c,
			    err, sizeof(err)) &&
		  strstr(err, "f.conf:4: VNI '0'"),
	      "VNI 0: %s", err);
	CHECK(fx_conf_parse("f.conf", "[API]\nToken = 0123456789abcdef\nToken = short\n", &c, err,
			    sizeof(err)) &&
		  strstr(err, "f.conf:3: Token must be 16-256"),
	      "a short token: %s", err);
	CHECK(fx_conf_parse("f.conf", "[Store]\nDatabase = /x\n", &c, err, sizeof(err)) &&
		  strstr(err, "needs a Token"),
	      "no token at all: %s", err);
}

/* [Store]: the backend and each backend's keys only with it */
static void test_store_config(void)
{
	static const char *const bad[][2] = {
	    {"Backend = mysql\n", "f.conf:4: Backend 'mysql': expected sqlite or etcd"},
	    {"Backend = etcd\n", "f.conf:4: Backend = etcd needs Endpoints"},
	    {"Backend = etcd\nEndpoints = 127.0.0.1:2379\n",
	     "f.conf:5: Endpoints '127.0.0.1:2379': expected http://HOST:PORT"},
	    {"Backend = etcd\nEndpoints = http://a:1,ftp://b:2\n", "Endpoints 'ftp://b:2'"},
	    {"Endpoints = http://a:1\n", "f.conf:4: Endpoints is for Backend = etcd"},
	    {"Backend = etcd\nEndpoints = http://a:1\nDatabase = /x\n",
	     "f.conf:6: Database is for Backend = sqlite"},
	    {"Backend = etcd\nEndpoints = https://a:1\nTLSCert = /etc/hostname\n",
	     "f.conf:6: TLSCert and TLSKey go together"},
	    {"Backend = etcd\nEndpoints = http://a:1\nTLSCA = /etc/hostname\n",
	     "f.conf:6: TLSCA is given but an endpoint is http://"},
	    {"Backend = etcd\nEndpoints = https://a:1\nTLSCA = /nonexistent/ca.pem\n",
	     "/nonexistent/ca.pem"},
	    {"Backend = etcd\nEndpoints = http://a:1\nTimeout = 0\n", "f.conf:6: Timeout '0'"},
	    {"Election = on\n", "f.conf:4: Election is for Backend = etcd"},
	    {"Backend = etcd\nEndpoints = http://a:1\nElection = yes\n",
	     "f.conf:6: Election 'yes': expected on or off"},
	    {"Backend = etcd\nEndpoints = http://a:1\nTimeout = 5\nElection = on\nElectionTTL = "
	     "10\n",
	     "f.conf:8: ElectionTTL 10s must be at least 3 x Timeout (5s)"},
	    {"Backend = etcd\nEndpoints = http://a:1\nTimeout = 400ms\nElection = on\nElectionTTL "
	     "= "
	     "1\n",
	     "f.conf:8: ElectionTTL 1s must be at least 3 x Timeout (400ms)"},
	    {"Backend = etcd\nEndpoints = http://a:1\nTimeout = 50ms\n",
	     "f.conf:6: Timeout '50ms': expected 100ms to 60s"},
	    {"Backend = etcd\nEndpoints = http://a:1\nTimeout = 2m\n", "f.conf:6: Timeout '2m'"},
	};
	struct fx_conf c;
	char text[512], err[300];

	CHECK(!fx_conf_parse("f.conf", "[API]\nToken = 0123456789abcdef\n", &c, err, sizeof(err)) &&
		  c.store == FX_STORE_SQLITE,
	      "the store is SQLite by default");
	CHECK(!fx_conf_parse(
		  "f.conf",
		  "[API]\nToken = 0123456789abcdef\n[Store]\nBackend = etcd\n"
		  "Endpoints = https://10.0.0.1:2379, https://10.0.0.2:2379\n"
		  "TLSCA = /etc/hostname\nTLSCert = /etc/hostname\nTLSKey = /etc/hostname\n"
		  "Timeout = 5s\n",
		  &c, err, sizeof(err)) &&
		  c.store == FX_STORE_ETCD && !strcmp(c.etcd_conf.prefix, "/xgate/fornaxd/") &&
		  c.etcd_conf.timeout_ms == 5000 && !strcmp(c.etcd_conf.ca, "/etc/hostname") && !c.election &&
		  c.etcd_conf.election_ttl_s == 10 && strstr(c.etcd_conf.endpoints, "10.0.0.2:2379"),
	      "Backend = etcd with two https endpoints, TLS and a timeout: %s", err);
	CHECK(!fx_conf_parse("f.conf",
			     "[API]\nToken = 0123456789abcdef\n[Store]\nBackend = etcd\n"
			     "Endpoints = http://10.0.0.1:2379\nTimeout = 300ms\nElection = on\n"
			     "ElectionTTL = 1s\n",
			     &c, err, sizeof(err)) &&
		  c.etcd_conf.timeout_ms == 300 && c.etcd_conf.election_ttl_s == 1,
	      "a lease of 1 s with a Timeout of 300 ms: %s", err);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[API]\nToken = 0123456789abcdef\n[Store]\n%s",
			 bad[i][0]);
		CHECK(fx_conf_parse("f.conf", text, &c, err, sizeof(err)) && strstr(err, bad[i][1]),
		      "refused: %s", err);
	}
}

int main(void)
{
	test_config();
	test_store_config();
	test_quantities();
	test_scaling();
	test_sessions();
	test_revisions();
	test_validation();
	test_link();
	return unit_summary();
}
