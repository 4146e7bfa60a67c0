// SPDX-License-Identifier: BSD-2-Clause
/* nodeagentd's vocabulary: the session state machine, Kubernetes
 * quantities, ports from a pod's spec (errors name the field), pod
 * addresses from the slot, the config file's errors (the line, the
 * value quoted), and a session's owner (checked, echoed in its Session). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "na_config.h"
#include "na_model.h"
#include "unit.h"

#define A63 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static int parse(const char *text, struct na_config *c, char *err, size_t len)
{
	return na_conf_parse("t.conf", text, c, err, len);
}

int main(void)
{
	struct na_config c;
	struct na_pod p;
	char err[300];
	int64_t v;

	/* the session machine */
	CHECK_EXPR(na_sess_may(NA_SESS_STARTING, NA_SESS_AVAILABLE));
	CHECK_EXPR(na_sess_may(NA_SESS_AVAILABLE, NA_SESS_INUSE));
	CHECK_EXPR(na_sess_may(NA_SESS_INUSE, NA_SESS_AVAILABLE));
	CHECK_EXPR(na_sess_may(NA_SESS_INUSE, NA_SESS_CLOSING));
	CHECK_EXPR(na_sess_may(NA_SESS_CLOSING, NA_SESS_CLOSED));
	CHECK_EXPR(na_sess_may(NA_SESS_STARTING, NA_SESS_TIMEOUT));
	CHECK_EXPR(!na_sess_may(NA_SESS_AVAILABLE, NA_SESS_TIMEOUT));
	CHECK_EXPR(!na_sess_may(NA_SESS_CLOSING, NA_SESS_AVAILABLE));
	CHECK_EXPR(!na_sess_may(NA_SESS_CLOSED, NA_SESS_CLOSING));
	CHECK_EXPR(!na_sess_may(NA_SESS_TIMEOUT, NA_SESS_CLOSED));
	CHECK_EXPR(!na_sess_may(NA_SESS_AVAILABLE, NA_SESS_AVAILABLE));
	CHECK_EXPR(!na_sess_may(NA_SESS_AVAILABLE, NA_SESS_STARTING));
	for (int s = NA_POD_CREATING; s <= NA_POD_FAILED; s++) {
		enum na_pod_state back;

		CHECK(!na_pod_state_parse(na_pod_state_name(s), &back) &&
			  back == (enum na_pod_state)s,
		      "pod state %s round trip", na_pod_state_name(s));
	}

	/* quantities */
	CHECK(!na_cpu_milli("500m", &v) && v == 500, "500m");
	CHECK(!na_cpu_milli("0.5", &v) && v == 500, "0.5 cpu");
	CHECK(!na_cpu_milli("2", &v) && v == 2000, "2 cpu");
	CHECK_EXPR(na_cpu_milli("2x", &v) == -1);
	CHECK_EXPR(na_cpu_milli("-1", &v) == -1);
	/* past int64 as millicores: refused, not converted (it came out negative) */
	CHECK_EXPR(na_cpu_milli("1e37m", &v) == -1);
	CHECK_EXPR(na_cpu_milli("0.21e35", &v) == -1);
	CHECK(!na_cpu_milli("1099511627776m", &v) && v == (int64_t)1 << 40, "2^40m, the largest");
	CHECK_EXPR(na_cpu_milli("1099511627777m", &v) == -1);
	CHECK(!na_mem_bytes("64Mi", &v) && v == 64 << 20, "64Mi");
	CHECK(!na_mem_bytes("1G", &v) && v == 1000000000, "1G");
	CHECK(!na_mem_bytes("1000", &v) && v == 1000, "1000");
	CHECK_EXPR(na_mem_bytes("64MB", &v) == -1);

	/* ports from the spec */
	memset(&p, 0, sizeof(p));
	p.spec = json_loads("{\"containers\":[{\"ports\":[{\"containerPort\":8080},"
			    "{\"containerPort\":53,\"protocol\":\"UDP\"}]}]}",
			    0, NULL);
	CHECK(!na_pod_ports_from_spec(&p, err, sizeof(err)) && p.n_ports == 2 &&
		  p.ports[0].port == 8080 && p.ports[0].proto == IPPROTO_TCP &&
		  p.ports[1].proto == IPPROTO_UDP,
	      "two ports, TCP by default");
	json_decref(p.spec);
	p.spec = json_loads("{\"containers\":[{\"ports\":[{\"containerPort\":70000}]}]}", 0, NULL);
	CHECK(na_pod_ports_from_spec(&p, err, sizeof(err)) == -1 &&
		  strstr(err, "pod.containers[0].ports[0].containerPort"),
	      "a bad port names its field (%s)", err);
	json_decref(p.spec);
	p.spec = json_loads("{\"containers\":[{\"ports\":[{\"containerPort\":1,\"protocol\":"
			    "\"SCTP\"}]}]}",
			    0, NULL);
	CHECK(na_pod_ports_from_spec(&p, err, sizeof(err)) == -1 && strstr(err, "'SCTP'"),
	      "a bad protocol is quoted (%s)", err);
	json_decref(p.spec);

	/* the whole spec: each error names its field */
	static const struct {
		const char *json, *field;
	} bad[] = {
	    {"{\"containers\":[{\"ports\":[{\"containerPort\":80}]}]}", "command"},
	    {"{\"containers\":[{\"command\":[],\"ports\":[{\"containerPort\":80}]}]}", "command"},
	    {"{\"containers\":[{\"command\":[\"a\",1],\"ports\":[{\"containerPort\":80}]}]}",
	     "command[1]"},
	    {"{\"containers\":[{\"command\":[\"a\"],\"args\":\"x\",\"ports\":[{"
	     "\"containerPort\":80}]}]}",
	     "args"},
	    {"{\"containers\":[{\"command\":[\"a\"],\"env\":[{\"name\":\"A=B\"}],"
	     "\"ports\":[{\"containerPort\":80}]}]}",
	     "env[0]"},
	    {"{\"containers\":[{\"command\":[\"a\"],\"resources\":{\"limits\":{\"cpu\":"
	     "\"lots\"}},\"ports\":[{\"containerPort\":80}]}]}",
	     "resources.limits.cpu"},
	    {"{\"containers\":[{\"command\":[\"a\"],\"resources\":{\"limits\":{\"memory\":"
	     "\"64MB\"}},\"ports\":[{\"containerPort\":80}]}]}",
	     "resources.limits.memory"},
	    {"{\"containers\":[{\"command\":[\"a\"]}]}", "ports"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *spec = json_loads(bad[i].json, 0, NULL);
		char want[80];

		snprintf(want, sizeof(want), "pod.containers[0].%s:", bad[i].field);
		CHECK(spec && na_pod_check_spec(spec, err, sizeof(err)) == -1 && strstr(err, want),
		      "spec refused at %s (%s)", bad[i].field, err);
		json_decref(spec);
	}
	p.spec = json_loads("{\"containers\":[{\"command\":[\"a\"],\"args\":[\"b\"],"
			    "\"env\":[{\"name\":\"K\",\"value\":\"V\"}],\"resources\":{"
			    "\"limits\":{\"cpu\":\"500m\",\"memory\":\"64Mi\"}},\"ports\":[{"
			    "\"containerPort\":80}]}]}",
			    0, NULL);
	CHECK(!na_pod_check_spec(p.spec, err, sizeof(err)), "a whole spec passes (%s)", err);
	json_decref(p.spec);

	/* several containers: the pod's ports are all of theirs, errors name the index */
	p.spec = json_loads("{\"containers\":[{\"name\":\"web\",\"command\":[\"a\"],\"ports\":[{"
			    "\"containerPort\":80}]},{\"name\":\"side\",\"command\":[\"b\"]},"
			    "{\"name\":\"dns\",\"command\":[\"c\"],\"ports\":[{\"containerPort\":"
			    "80,\"protocol\":\"UDP\"}]}]}",
			    0, NULL);
	CHECK(!na_pod_check_spec(p.spec, err, sizeof(err)) &&
		  !na_pod_ports_from_spec(&p, err, sizeof(err)) && p.n_ports == 2 &&
		  p.ports[1].port == 80 && p.ports[1].proto == IPPROTO_UDP,
	      "three containers, a sidecar without ports, 80/TCP and 80/UDP (%s)", err);
	json_decref(p.spec);
	static const struct {
		const char *json, *want;
	} bad2[] = {
	    {"{\"containers\":[{\"name\":\"a\",\"command\":[\"a\"],\"ports\":[{"
	     "\"containerPort\":80}]},{\"name\":\"b\",\"ports\":[{\"containerPort\":81}]}]}",
	     "pod.containers[1].command:"},
	    {"{\"containers\":[{\"name\":\"a\",\"command\":[\"a\"],\"ports\":[{"
	     "\"containerPort\":80}]},{\"name\":\"a\",\"command\":[\"b\"]}]}",
	     "pod.containers[1].name 'a'"},
	    {"{\"containers\":[{\"command\":[\"a\"],\"ports\":[{\"containerPort\":80}]},"
	     "{\"name\":\"c0\",\"command\":[\"b\"]}]}",
	     "pod.containers[1].name 'c0'"},
	    {"{\"containers\":[{\"name\":\"a\",\"command\":[\"a\"],\"ports\":[{"
	     "\"containerPort\":80}]},{\"name\":\"b\",\"command\":[\"b\"],\"ports\":[{"
	     "\"containerPort\":80,\"protocol\":\"TCP\"}]}]}",
	     "pod.containers[1].ports[0].containerPort: 80/TCP"},
	    {"{\"containers\":[{\"name\":\"../x\",\"command\":[\"a\"],\"ports\":[{"
	     "\"containerPort\":80}]}]}",
	     "pod.containers[0].name '../x'"},
	    {"{\"containers\":[{\"name\":\"a\",\"command\":[\"a\"]},{\"name\":\"b\","
	     "\"command\":[\"b\"]}]}",
	     "pod.containers[0].ports:"},
	    {"{\"containers\":[{\"command\":[\"a\"]},{\"command\":[\"a\"]},{\"command\":"
	     "[\"a\"]},{\"command\":[\"a\"]},{\"command\":[\"a\"]}]}",
	     "pod.containers: 1 to 4"},
	};
	for (size_t i = 0; i < sizeof(bad2) / sizeof(bad2[0]); i++) {
		json_t *spec = json_loads(bad2[i].json, 0, NULL);

		CHECK(spec && na_pod_check_spec(spec, err, sizeof(err)) == -1 &&
			  strstr(err, bad2[i].want),
		      "spec refused with %s (%s)", bad2[i].want, err);
		json_decref(spec);
	}
	/* the containers' trees as the store keeps them */
	memset(&p, 0, sizeof(p));
	p.n_ctrs = 2;
	p.ctrs[0] = (struct na_ctr){101, 5000};
	p.ctrs[1] = (struct na_ctr){202, 18446744073709551615ull};
	{
		char *s = na_ctrs_str(&p);
		struct na_pod q;

		memset(&q, 0, sizeof(q));
		CHECK(s && !strcmp(s, "101:5000 202:18446744073709551615") &&
			  !na_ctrs_parse(&q, s) && q.n_ctrs == 2 && q.ctrs[1].pid == 202 &&
			  q.ctrs[1].start == 18446744073709551615ull,
		      "pids and start times round trip (%s)", s ? s : "NULL");
		free(s);
		CHECK_EXPR(!na_ctrs_parse(&q, "") && q.n_ctrs == 0);
		CHECK_EXPR(na_ctrs_parse(&q, "1:2 x") == -1);
		CHECK_EXPR(na_ctrs_parse(&q, "1:2 3:4 5:6 7:8 9:10") == -1);
	}

	/* addresses: .0 network, .1 gateway, the last broadcast */
	uint32_t net = htonl(0x0a010100);
	CHECK_EXPR(na_slot_ip(net, 24, 0) == htonl(0x0a010102));
	CHECK_EXPR(na_slot_ip(net, 24, 252) == htonl(0x0a0101fe));
	CHECK_EXPR(na_slot_ip(net, 24, 253) == 0);
	CHECK_EXPR(na_slot_ip(net, 30, 1) == 0);

	/* the config */
	CHECK(!parse("[Node]\nName = node-a\nIp = 10.0.0.1\n", &c, err, sizeof(err)) &&
		  c.public_ip_be == c.ip_be && c.max_pods == 100 && c.cgroup == NA_CG_AUTO &&
		  strstr(c.database, "node-a") && c.log_max_bytes == 10u << 20 && c.log_files == 2,
	      "defaults (%s)", err);
	CHECK(!parse("[Node]\nName = n\nIp = 10.0.0.1\n[Pods]\nLogMaxBytes = 4096\nLogFiles = 3\n",
		     &c, err, sizeof(err)) &&
		  c.log_max_bytes == 4096 && c.log_files == 3,
	      "log rotation's settings (%s)", err);
	CHECK(parse("[Node]\nName = n\nIp = 10.0.0.1\n[Pods]\nLogMaxBytes = 10\n", &c, err,
		    sizeof(err)) == -1 &&
		  strstr(err, "LogMaxBytes"),
	      "a cap under 1024 bytes is refused (%s)", err);
	CHECK(parse("[Node]\nName = Node_A\nIp = 10.0.0.1\n", &c, err, sizeof(err)) == -1 &&
		  strstr(err, "t.conf:2:") && strstr(err, "'Node_A'"),
	      "a bad name: line and value (%s)", err);
	CHECK(parse("[Node]\nName = a\nIp = 10.0.0.1\n[Core]\nURL = ws://10.1.1.1:8470\n", &c, err,
		    sizeof(err)) == -1 &&
		  strstr(err, "t.conf:5:") && strstr(err, "wss://"),
	      "ws:// off loopback refused (%s)", err);
	CHECK(!parse("[Node]\nName = a\nIp = 10.0.0.1\n[Core]\nURL = "
		     "ws://127.0.0.1:8470,ws://127.0.0.1:8471\n",
		     &c, err, sizeof(err)) &&
		  !strcmp(c.url, "ws://127.0.0.1:8470,ws://127.0.0.1:8471"),
	      "two cores (active/standby), comma-separated (%s)", err);
	CHECK(parse("[Node]\nName = a\nIp = 10.0.0.1\n[Core]\nURL = "
		    "ws://127.0.0.1:8470,ws://10.1.1.1:8471\n",
		    &c, err, sizeof(err)) == -1 &&
		  strstr(err, "'ws://10.1.1.1:8471'") && strstr(err, "wss://"),
	      "each core's URL is checked, the bad one quoted (%s)", err);
	CHECK(parse("[Node]\nName = a\nIp = 10.0.0.1\n[Core]\nURL = ws://127.0.0.1:1,"
		    "ws://127.0.0.1:2,ws://127.0.0.1:3,ws://127.0.0.1:4,ws://127.0.0.1:5\n",
		    &c, err, sizeof(err)) == -1 &&
		  strstr(err, "more than 4"),
	      "at most NA_MAX_CORES cores (%s)", err);
	CHECK(parse("[Node]\nName = a\nIp = 10.0.0.1\n[Pods]\nCgroup = v3\n", &c, err,
		    sizeof(err)) == -1 &&
		  strstr(err, "'v3'"),
	      "a bad cgroup mode (%s)", err);
	CHECK(parse("[Node]\nName = a\n", &c, err, sizeof(err)) == -1 && strstr(err, "Ip"),
	      "Ip required (%s)", err);
	CHECK(parse("[Node]\nName = a\nIp = 10.0.0.1\nFoo = 1\n", &c, err, sizeof(err)) == -1 &&
		  strstr(err, "t.conf:4:") && strstr(err, "'Foo'"),
	      "an unknown key (%s)", err);
	CHECK(!parse("[Node]\nName = a\nIp = 10.0.0.1\nCpu = 1500m\nMemory = 1Gi\n[Pods]\n"
		     "Cgroup = v1\nVethPrefix = xv123\n",
		     &c, err, sizeof(err)) &&
		  c.cpu_milli == 1500 && c.mem_bytes == 1ll << 30 && c.cgroup == NA_CG_V1,
	      "values (%s)", err);
	CHECK(!parse("[Node]\nName = i\nIp = 10.0.0.1\nPublicIp = 203.0.113.1\nRole = ingress\n",
		     &c, err, sizeof(err)) &&
		  c.role == NA_ROLE_INGRESS,
	      "Role = ingress (%s)", err);
	CHECK(parse("[Node]\nName = i\nIp = 10.0.0.1\nRole = ingress\n", &c, err, sizeof(err)) ==
		      -1 &&
		  strstr(err, "PublicIp"),
	      "an ingress host without PublicIp (%s)", err);
	CHECK(parse("[Node]\nName = i\nIp = 10.0.0.1\nRole = gateway\n", &c, err, sizeof(err)) ==
		      -1 &&
		  strstr(err, "t.conf:4:") && strstr(err, "'gateway'"),
	      "an unknown role (%s)", err);

	/* IngressOpen, and SessionOpen's ingress (form 2) */
	{
		struct na_ing_req q;
		struct na_sess s;
		static const struct {
			const char *json, *want;
		} bad[] = {
		    {"{\"podIdentifier\":\"d/p\",\"podIP\":\"10.1.1.5\",\"host\":\"10.0.0.2\","
		     "\"vni\":7,\"ports\":[{\"containerPort\":80}]}",
		     "sessionIdentifier"},
		    {"{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\",\"podIP\":"
		     "\"10.1.1\",\"host\":\"10.0.0.2\",\"vni\":7,\"ports\":[{\"containerPort\":80}]"
		     "}",
		     "podIP '10.1.1'"},
		    {"{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\",\"podIP\":"
		     "\"10.1.1.5\",\"host\":7,\"vni\":7,\"ports\":[{\"containerPort\":80}]}",
		     "host: required"},
		    {"{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\",\"podIP\":"
		     "\"10.1.1.5\",\"host\":\"10.0.0.2\",\"vni\":16777216,\"ports\":[{"
		     "\"containerPort\":80}]}",
		     "vni"},
		    {"{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\",\"podIP\":"
		     "\"10.1.1.5\",\"host\":\"10.0.0.2\",\"vni\":7,\"ports\":[]}",
		     "ports"},
		    {"{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\",\"podIP\":"
		     "\"10.1.1.5\",\"host\":\"10.0.0.2\",\"vni\":7,\"ports\":[{"
		     "\"containerPort\":80,\"protocol\":\"SCTP\"}]}",
		     "ports[0].protocol 'SCTP'"},
		    {"{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\",\"podIP\":"
		     "\"10.1.1.5\",\"host\":\"10.0.0.2\",\"vni\":7,\"ports\":[{"
		     "\"containerPort\":0}]}",
		     "ports[0].containerPort"},
		};
		json_t *m = json_loads("{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\","
				       "\"podIP\":\"10.1.1.5\",\"host\":\"10.0.0.2\",\"vni\":7,"
				       "\"ports\":[{\"containerPort\":80},{\"containerPort\":53,"
				       "\"protocol\":\"UDP\"}]}",
				       0, NULL);

		CHECK(!na_ing_open_parse(m, &q, err, sizeof(err)) && !strcmp(q.s.id, "d/s") &&
			  q.s.pod_ip_be == htonl(0x0a010105) && q.s.peer_be == htonl(0x0a000002) &&
			  q.vni == 7 && q.n_ports == 2 && q.ports[1].port == 53 &&
			  q.ports[1].proto == IPPROTO_UDP && q.ports[0].proto == IPPROTO_TCP,
		      "IngressOpen parsed (%s)", err);
		json_decref(m);
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			m = json_loads(bad[i].json, 0, NULL);
			CHECK(na_ing_open_parse(m, &q, err, sizeof(err)) == -1 &&
				  strstr(err, bad[i].want),
			      "bad IngressOpen %zu refused: %s", i, err);
			json_decref(m);
		}
		memset(&p, 0, sizeof(p));
		p.n_ports = 1;
		p.ports[0] = (struct na_port){8080, IPPROTO_TCP};
		memset(&s, 0, sizeof(s));
		m = json_loads("{\"host\":\"10.0.0.9\",\"accessEndPoints\":[{\"protocol\":\"TCP\","
			       "\"ipAddress\":\"203.0.113.1\",\"port\":30001,\"podPort\":8080}]}",
			       0, NULL);
		CHECK(!na_ing_pod_side_parse(m, &p, &s, err, sizeof(err)) &&
			  s.peer_be == htonl(0x0a000009) && s.n_eps == 1 &&
			  s.eps[0].port == 30001 && s.eps[0].ip_be == htonl(0xcb007101),
		      "SessionOpen's ingress parsed (%s)", err);
		json_decref(m);
		m = json_loads("{\"host\":\"10.0.0.9\",\"accessEndPoints\":[{\"protocol\":\"TCP\","
			       "\"ipAddress\":\"203.0.113.1\",\"port\":30001,\"podPort\":9090}]}",
			       0, NULL);
		CHECK(na_ing_pod_side_parse(m, &p, &s, err, sizeof(err)) == -1 &&
			  strstr(err, "podPort 9090"),
		      "an endpoint to a port the pod does not have: %s", err);
		json_decref(m);
		m = json_loads("{\"host\":\"nowhere\",\"accessEndPoints\":[]}", 0, NULL);
		CHECK(na_ing_pod_side_parse(m, &p, &s, err, sizeof(err)) == -1 &&
			  strstr(err, "'nowhere'") && strstr(err, "ingress.host"),
		      "a host that is no address: %s", err);
		json_decref(m);
	}

	/* a quoted value is cut between characters: the refusal and the
	 * report (PodState Failed) go out as JSON, which must be UTF-8 */
	CHECK_EXPR(na_quote_len("abc", 2) == 2);
	CHECK_EXPR(na_quote_len("a\xc3\xa9", 2) == 1);
	CHECK_EXPR(na_quote_len("a\xc3\xa9", 3) == 3);
	CHECK_EXPR(na_quote_len("\xe2\x82\xac", 2) == 0);
	{
		static const char *const bad[] = {
		    /* a name past 63 characters, its 64th byte inside "é" */
		    "{\"containers\":[{\"name\":\"" A63 "\xc3\xa9\",\"command\":[\"x\"],"
		    "\"ports\":[{\"containerPort\":80}]}]}",
		    "{\"containers\":[{\"command\":[\"x\"],\"ports\":[{\"containerPort\":80,"
		    "\"protocol\":\"TTTTTTTTTTTTTTTTTTT\xc3\xa9\"}]}]}",
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			json_t *spec = json_loads(bad[i], 0, NULL), *q = NULL;

			CHECK(spec && na_pod_check_spec(spec, err, sizeof(err)) == -1 &&
				  (q = json_string(err)) != NULL,
			      "spec %zu: refused, its error UTF-8 (%s)", i, err);
			json_decref(q);
			json_decref(spec);
		}
	}
	{
		struct na_ing_req q;
		json_t
		    *m = json_loads(
			"{\"sessionIdentifier\":\"d/s\",\"podIdentifier\":\"d/p\",\"podIP\":"
			"\"10.1.1.5\",\"host\":\"111111111111111111111111111111111111111\xc3\xa9\","
			"\"vni\":7,\"ports\":[{\"containerPort\":80}]}",
			0, NULL),
		    *e = NULL;

		CHECK(m && na_ing_open_parse(m, &q, err, sizeof(err)) == -1 &&
			  (e = json_string(err)) != NULL && strstr(err, "host '1111"),
		      "IngressOpen refused, its error UTF-8 (%s)", err);
		json_decref(e);
		json_decref(m);
	}

	CHECK(!parse("[Node]\nName = a\nIp = 10.0.0.1\n", &c, err, sizeof(err)) && c.ping_s == 10 &&
		  c.ping_misses == 3,
	      "the session service's ping: every 10 s, 3 misses (%s)", err);
	CHECK(!parse("[Node]\nName = a\nIp = 10.0.0.1\n[Pods]\nSessionPingSeconds = 0\n"
		     "SessionPingMisses = 5\n",
		     &c, err, sizeof(err)) &&
		  c.ping_s == 0 && c.ping_misses == 5,
	      "the ping off, 5 misses (%s)", err);
	CHECK(parse("[Node]\nName = a\nIp = 10.0.0.1\n[Pods]\nSessionPingMisses = 0\n", &c, err,
		    sizeof(err)) == -1 &&
		  strstr(err, "t.conf:5:") && strstr(err, "'0'"),
	      "SessionPingMisses 0 refused (%s)", err);

	/* ---- the owner fornaxd gives a session, echoed in every report ---- */
	{
		struct na_sess x;
		json_t *o;

		CHECK(!na_owner_check("891a34b312e96c1ef91e775d3f4ea78f") &&
			  !na_owner_check("A-b_9") &&
			  !na_owner_check("0123456789012345678901234567890123456789012345678901234"
					  "567890123"),
		      "owners: fornaxd's hex, letters, digits, '-', '_', 64 characters");
		CHECK(na_owner_check("") &&
			  na_owner_check("0123456789012345678901234567890123456789012345678901234"
					 "5678901234") &&
			  na_owner_check("a b") && na_owner_check("a'b") &&
			  na_owner_check("\xc3\xa9"),
		      "not: empty, 65 characters, a space, a quote, UTF-8");
		memset(&x, 0, sizeof(x));
		snprintf(x.id, sizeof(x.id), "default/s1");
		snprintf(x.pod, sizeof(x.pod), "default/p1");
		o = na_sess_json(&x);
		CHECK(o && !json_object_get(o, "owner"), "a session without one: no owner field");
		json_decref(o);
		snprintf(x.owner, sizeof(x.owner), "891a34b312e96c1ef91e775d3f4ea78f");
		o = na_sess_json(&x);
		CHECK(!strcmp(json_string_value(json_object_get(o, "owner")) ?: "",
			      "891a34b312e96c1ef91e775d3f4ea78f"),
		      "with one: owner in the Session");
		json_decref(o);
	}
	return unit_summary();
}
