// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's core with form 2 endpoints (proto/fornax.md "Endpoints"), with
 * a fake clock and fake links over a real SQLite store: a pod node and an
 * ingress host. A session of an application whose form is 2 waits for a
 * ready ingress host; IngressOpen goes first, SessionOpen (with the
 * ingress host's endpoints) only after its IngressState Open; Available
 * shows those endpoints; a close sends IngressClose before SessionClose;
 * an entry refused, missing from a full sync, or on a host away too long
 * closes its session; a restarted core adopts the entries of the sessions
 * the pod nodes report and closes the others only after FX_STALE_NODE_MS;
 * malformed Ingress messages are refused naming the field. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "fx_core_test.h"
#include "core_int.h"
#include "unit.h"

struct env {
	uint64_t now;
	json_t *sent;
	struct fx_core *c;
	struct fx_store *st;
};

static int link_pod, link_ing;

static uint64_t now_ms(void *arg)
{
	return ((struct env *)arg)->now;
}

static void sendf(void *arg, void *link, json_t *msg)
{
	json_object_set_new(msg, "_to", json_string(link == &link_pod ? "node-a" : "ing-a"));
	json_array_append_new(((struct env *)arg)->sent, msg);
}

/* the index of the next message of type (to whom, if given) from *from;
 * -1 if none (*from moved past the end) */
static long next_msg(struct env *e, const char *type, const char *to, size_t *from, json_t **m)
{
	for (; *from < json_array_size(e->sent); (*from)++) {
		json_t *x = json_array_get(e->sent, *from);

		if (!strcmp(json_string_value(json_object_get(x, "type")), type) &&
		    (!to || !strcmp(json_string_value(json_object_get(x, "_to")), to))) {
			if (m)
				*m = x;
			return (long)(*from)++;
		}
	}
	return -1;
}

static int msg_from(struct env *e, const char *node, void *link, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	json_t *m;
	struct fx_err err;
	int rc;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(m = json_loads(buf, 0, NULL))) {
		printf("# bad test JSON: %s\n", buf);
		return -9;
	}
	rc = fx_core_node_message(e->c, node, link, m, &err);
	if (rc)
		printf("# refused: %s (field %s)\n", err.msg, err.field);
	json_decref(m);
	return rc;
}

static struct fx_err last_err;

static int bad_from_ing(struct env *e, const char *text)
{
	json_t *m = json_loads(text, 0, NULL);
	int rc = fx_core_node_message(e->c, "ing-a", &link_ing, m, &last_err);

	json_decref(m);
	return rc;
}

static const char *sess_field(struct env *e, const char *name, const char *k, char *buf)
{
	json_t *o = fx_core_get(e->c, FX_K_SESSION, "default", name);
	const char *v = json_string_value(json_object_get(json_object_get(o, "status"), k));

	snprintf(buf, 64, "%s", v ? v : "(none)");
	json_decref(o);
	return buf;
}

static bool sess_is(struct env *e, const char *name, const char *state)
{
	char buf[64];

	return !strcmp(sess_field(e, name, "sessionStatus", buf), state);
}

static struct fx_core *core_new(struct env *e)
{
	const struct fx_core_hooks h = {e, now_ms, sendf, NULL, NULL};

	return fx_test_core_new(e->st, &h);
}

static int do_register(struct env *e, const char *name, void *link, const char *role, int rev,
		       struct fx_err *err)
{
	json_t *m = json_pack("{s:s,s:i,s:i,s:{s:s,s:s,s:s,s:s,s:{s:i,s:I,s:i}}}", "type",
			      "NodeRegister", "v", 1, "nodeRevision", rev, "node", "name", name,
			      "ip", link == &link_pod ? "192.0.2.1" : "192.0.2.9", "publicIp",
			      link == &link_pod ? "198.51.100.10" : "203.0.113.1", "role", role,
			      "capacity", "cpu", 4000, "memory", (json_int_t)8 << 30, "pods",
			      link == &link_pod ? 10 : 0);
	void *old;
	int rc = fx_core_node_register(e->c, link, m, link == &link_pod ? 2 : 3, NULL, &old, err);

	json_decref(m);
	return rc;
}

#define APP                                                                                        \
	"{\"metadata\":{\"name\":\"echo\",\"annotations\":{\"" FX_FORM_ANNOTATION                  \
	"\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"echo\",\"command\":[\"/bin/x\"],"       \
	"\"ports\":[{\"containerPort\":8080}],\"resources\":{\"requests\":{\"cpu\":\"100m\","      \
	"\"memory\":\"64Mi\"}}}],\"scalingPolicy\":{\"maximumInstance\":4,\"burst\":4,"            \
	"\"scalingPolicyType\":\"idle_session_number\",\"idleSessionNumThreshold\":{\"high\":4,"   \
	"\"low\":3}}}}"
#define SESS                                                                                       \
	"{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"applicationName\":\"echo\",\"sessionData\":"  \
	"\"aGk=\",\"openTimeoutSeconds\":%d,\"killInstanceWhenSessionClosed\":false}}"
#define ING_OPEN                                                                                   \
	"{\"type\":\"IngressState\",\"nodeRevision\":%d,\"ingress\":{\"sessionIdentifier\":"       \
	"\"default/%s\",\"podIdentifier\":\"%s\",\"state\":\"Open\",\"accessEndPoints\":[{"        \
	"\"protocol\":\"TCP\",\"ipAddress\":\"203.0.113.1\",\"port\":%d,\"podPort\":8080}]}}"

static int create_session(struct env *e, const char *name, int timeout)
{
	char buf[512];
	json_t *b, *out = NULL;
	struct fx_err err;
	int rc;

	snprintf(buf, sizeof(buf), SESS, name, timeout);
	b = json_loads(buf, 0, NULL);
	rc = fx_core_session_create(e->c, "default", b, NULL, &out, &err);
	if (rc)
		printf("# session create: %s\n", err.msg);
	json_decref(b);
	json_decref(out);
	return rc;
}

static const char *str(json_t *m, const char *k)
{
	return json_string_value(json_object_get(m, k)) ?: "";
}

int main(void)
{
	char dir[] = "/tmp/xgt-fxing-XXXXXX", path[300], err[300], buf[1024], st[64];
	char pods[3][128];
	struct env e = {.now = 100000, .sent = json_array()};
	struct fx_err fe;
	json_t *m = NULL, *out = NULL, *b;
	size_t at = 0, from;
	int rev = 0, irev = 0;
	long i_open, i_close;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f.db", dir);
	if (!(e.st = fx_store_sqlite_open(path, err, sizeof(err))) || !(e.c = core_new(&e)))
		return 1;

	/* ---- bad input: an annotation that is no form, a role that is none ---- */
	snprintf(buf, sizeof(buf), APP, "3");
	b = json_loads(buf, 0, NULL);
	CHECK(fx_core_app_create(e.c, "default", b, &out, &fe) == -1 && fe.code == 422 &&
		  strstr(fe.field, FX_FORM_ANNOTATION) && strstr(fe.msg, "'3'"),
	      "endpoint-form annotation '3': 422 naming it (%s)", fe.msg);
	json_decref(b);
	CHECK(do_register(&e, "ing-x", &link_ing, "gateway", 0, &fe) == -1 &&
		  !strcmp(fe.field, "node.role") && strstr(fe.msg, "'gateway'"),
	      "NodeRegister with role 'gateway': refused naming node.role (%s)", fe.msg);

	/* ---- an application of form 2, its pool on node-a ---- */
	snprintf(buf, sizeof(buf), APP, "2");
	b = json_loads(buf, 0, NULL);
	CHECK(!fx_core_app_create(e.c, "default", b, &out, &fe), "create echo, form 2");
	json_decref(b);
	json_decref(out);
	CHECK(!do_register(&e, "node-a", &link_pod, "pod", 0, &fe), "node-a registers");
	msg_from(&e, "node-a", &link_pod, "{\"type\":\"NodeReady\",\"nodeRevision\":0}");
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	for (int i = 0; i < 3; i++) {
		CHECK(next_msg(&e, "PodCreate", "node-a", &at, &m) >= 0, "PodCreate %d", i);
		snprintf(pods[i], sizeof(pods[i]), "%s", str(m, "podIdentifier"));
		msg_from(&e, "node-a", &link_pod,
			 "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":"
			 "\"%s\",\"application\":\"default/echo\",\"state\":\"Standby\","
			 "\"podIP\":\"10.244.2.%d\"}}",
			 ++rev, pods[i], i + 2);
	}

	/* ---- no ingress host yet: the session waits ---- */
	at = json_array_size(e.sent);
	CHECK(!create_session(&e, "s1", 30) && sess_is(&e, "s1", "Pending"),
	      "s1 Pending: form 2 and no ingress host");
	from = at;
	CHECK(next_msg(&e, "SessionOpen", NULL, &from, NULL) < 0, "  no SessionOpen");

	/* ---- the ingress host joins: s1's IngressOpen, nothing to the pod yet ---- */
	CHECK(!do_register(&e, "ing-a", &link_ing, "ingress", 0, &fe), "ing-a registers (ingress)");
	CHECK(next_msg(&e, "NodeConfiguration", "ing-a", &at, &m) >= 0 &&
		  json_integer_value(json_object_get(json_object_get(m, "endpoints"), "form")) == 2,
	      "its NodeConfiguration says endpoints form 2");
	CHECK(!msg_from(&e, "ing-a", &link_ing,
			"{\"type\":\"NodeReady\",\"nodeRevision\":0,\"ingress\":[]}"),
	      "ing-a NodeReady");
	from = at;
	CHECK(next_msg(&e, "IngressOpen", "ing-a", &from, &m) >= 0 &&
		  !strcmp(str(m, "sessionIdentifier"), "default/s1") &&
		  !strcmp(str(m, "host"), "192.0.2.1") &&
		  !strncmp(str(m, "podIP"), "10.244.2.", 9) &&
		  json_integer_value(json_object_get(m, "vni")) == 7 &&
		  json_integer_value(json_object_get(json_array_get(json_object_get(m, "ports"), 0),
						     "containerPort")) == 8080,
	      "IngressOpen for s1: the pod's IP, its node's address, the VNI, its port");
	from = at;
	CHECK(next_msg(&e, "SessionOpen", NULL, &from, NULL) < 0 && sess_is(&e, "s1", "Starting"),
	      "s1 Starting, no SessionOpen before the ingress entry is open");
	at = json_array_size(e.sent);
	CHECK(!msg_from(&e, "node-a", &link_pod,
			"{\"type\":\"NodeState\",\"nodeRevision\":%d,\"pods\":[{\"podIdentifier\":"
			"\"%s\",\"application\":\"default/echo\",\"state\":\"Standby\"},"
			"{\"podIdentifier\":\"%s\",\"application\":\"default/echo\",\"state\":"
			"\"Standby\"},{\"podIdentifier\":\"%s\",\"application\":\"default/echo\","
			"\"state\":\"Standby\"}],\"sessions\":[]}",
			rev, pods[0], pods[1], pods[2]) &&
		  sess_is(&e, "s1", "Starting"),
	      "a full sync of node-a meanwhile (without s1) does not close it");

	/* ---- Open: SessionOpen with the ingress host's endpoints ---- */
	{
		json_t *o = fx_core_get(e.c, FX_K_SESSION, "default", "s1");
		const char *pod = json_string_value(json_object_get(
		    json_object_get(json_object_get(o, "status"), "podReference"), "name"));
		char pid[160];

		snprintf(pid, sizeof(pid), "default/%s", pod ? pod : "?");
		json_decref(o);
		CHECK(!msg_from(&e, "ing-a", &link_ing, ING_OPEN, ++irev, "s1", pid, 30005),
		      "ing-a: s1 Open at 203.0.113.1:30005");
		CHECK(next_msg(&e, "SessionOpen", "node-a", &at, &m) >= 0 &&
			  !strcmp(str(json_object_get(m, "ingress"), "host"), "192.0.2.9") &&
			  json_integer_value(json_object_get(
			      json_array_get(
				  json_object_get(json_object_get(m, "ingress"), "accessEndPoints"),
				  0),
			      "port")) == 30005,
		      "then SessionOpen to node-a with ingress {host 192.0.2.9, the endpoints}");
		CHECK(
		    !msg_from(&e, "node-a", &link_pod,
			      "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
			      "\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"%s\","
			      "\"state\":\"Available\",\"accessEndPoints\":[{\"protocol\":\"TCP\","
			      "\"ipAddress\":\"203.0.113.1\",\"port\":30005,\"podPort\":8080}]}}",
			      ++rev, pid),
		    "node-a: s1 Available");
		o = fx_core_get(e.c, FX_K_SESSION, "default", "s1");
		m = json_array_get(json_object_get(json_object_get(o, "status"), "accessEndPoints"),
				   0);
		CHECK(sess_is(&e, "s1", "Available") &&
			  !strcmp(str(m, "ipAddress"), "203.0.113.1") &&
			  json_integer_value(json_object_get(m, "port")) == 30005,
		      "s1 Available at the ingress host's 203.0.113.1:30005");
		json_decref(o);
	}

	/* ---- close: the public entry first ---- */
	at = json_array_size(e.sent);
	CHECK(!fx_core_session_delete(e.c, "default", "s1", &out, &fe), "delete s1");
	json_decref(out);
	from = at;
	i_close = next_msg(&e, "IngressClose", "ing-a", &from, &m);
	from = at;
	i_open = next_msg(&e, "SessionClose", "node-a", &from, NULL);
	CHECK(i_close >= 0 && i_open > i_close,
	      "IngressClose to ing-a before SessionClose to node-a");
	CHECK(!msg_from(&e, "ing-a", &link_ing,
			"{\"type\":\"IngressState\",\"nodeRevision\":%d,\"ingress\":{"
			"\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"default/x\","
			"\"state\":\"Closed\",\"reason\":\"Closed\"}}",
			++irev) &&
		  sess_is(&e, "s1", "Closing"),
	      "ing-a: s1 Closed: s1 stays Closing until its node says");

	/* ---- refused by the ingress host: the session closes ---- */
	at = json_array_size(e.sent);
	CHECK(!create_session(&e, "s2", 30), "s2");
	CHECK(next_msg(&e, "IngressOpen", "ing-a", &at, &m) >= 0, "  IngressOpen");
	CHECK(!msg_from(&e, "ing-a", &link_ing,
			"{\"type\":\"IngressState\",\"nodeRevision\":%d,\"ingress\":{"
			"\"sessionIdentifier\":\"default/s2\",\"podIdentifier\":\"%s\",\"state\":"
			"\"Closed\",\"reason\":\"NoFreePort\"}}",
			++irev, str(m, "podIdentifier")) &&
		  sess_is(&e, "s2", "Closed") &&
		  !strcmp(sess_field(&e, "s2", "reason", st), "NoFreePort"),
	      "ing-a refuses s2 (NoFreePort): s2 Closed, that reason");
	from = at;
	CHECK(next_msg(&e, "SessionOpen", NULL, &from, NULL) < 0, "  its pod never told");

	/* ---- a full sync of the ingress host without an open entry ---- */
	CHECK(!create_session(&e, "s3", 30), "s3");
	CHECK(next_msg(&e, "IngressOpen", "ing-a", &at, &m) >= 0, "  IngressOpen");
	CHECK(!msg_from(&e, "ing-a", &link_ing, ING_OPEN, ++irev, "s3", str(m, "podIdentifier"),
			30007),
	      "  Open");
	msg_from(&e, "ing-a", &link_ing,
		 "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"ingress\":[]}", irev);
	CHECK(sess_is(&e, "s3", "Starting"),
	      "a full sync asked before the IngressOpen does not close s3");
	fx_core_node_unlinked(e.c, "ing-a", &link_ing);
	CHECK(!do_register(&e, "ing-a", &link_ing, "ingress", irev, &fe), "ing-a links again");
	at = json_array_size(e.sent);
	CHECK(!msg_from(&e, "ing-a", &link_ing,
			"{\"type\":\"NodeState\",\"nodeRevision\":%d,\"ingress\":[]}", irev) &&
		  sess_is(&e, "s3", "Closed") &&
		  !strcmp(sess_field(&e, "s3", "reason", st), "NotOnIngress"),
	      "its full sync lacks s3: s3 Closed (NotOnIngress)");
	CHECK(next_msg(&e, "SessionClose", "node-a", &at, NULL) >= 0,
	      "  and node-a told to close it");
	msg_from(&e, "ing-a", &link_ing, "{\"type\":\"NodeReady\",\"nodeRevision\":%d}", irev);

	/* ---- an ingress host away too long ---- */
	CHECK(!create_session(&e, "s4", 3600), "s4");
	CHECK(next_msg(&e, "IngressOpen", "ing-a", &at, &m) >= 0, "  IngressOpen");
	msg_from(&e, "ing-a", &link_ing, ING_OPEN, ++irev, "s4", str(m, "podIdentifier"), 30008);
	fx_core_node_unlinked(e.c, "ing-a", &link_ing);
	e.now += FX_STALE_NODE_MS - 1;
	fx_core_tick(e.c);
	CHECK(sess_is(&e, "s4", "Starting"), "ing-a away less than FX_STALE_NODE_MS: s4 goes on");
	e.now += 1;
	fx_core_tick(e.c);
	CHECK(sess_is(&e, "s4", "Closed") &&
		  !strcmp(sess_field(&e, "s4", "reason", st), "IngressLost"),
	      "away FX_STALE_NODE_MS: s4 Closed (IngressLost)");
	CHECK(!create_session(&e, "s5", 30) && sess_is(&e, "s5", "Pending"),
	      "no ingress host ready: s5 waits");
	CHECK(!do_register(&e, "ing-a", &link_ing, "ingress", irev, &fe), "ing-a back");
	at = json_array_size(e.sent);
	CHECK(!msg_from(&e, "ing-a", &link_ing,
			"{\"type\":\"NodeReady\",\"nodeRevision\":%d,\"ingress\":[{"
			"\"sessionIdentifier\":\"default/s4\",\"podIdentifier\":\"default/x\","
			"\"state\":\"Open\",\"accessEndPoints\":[{\"protocol\":\"TCP\","
			"\"ipAddress\":\"203.0.113.1\",\"port\":30008}]}]}",
			irev),
	      "its NodeReady still lists s4's entry");
	from = at;
	CHECK(next_msg(&e, "IngressClose", "ing-a", &from, &m) >= 0 &&
		  !strcmp(str(m, "sessionIdentifier"), "default/s4"),
	      "  told to close it");
	from = at;
	CHECK(next_msg(&e, "IngressOpen", "ing-a", &from, &m) >= 0 &&
		  !strcmp(str(m, "sessionIdentifier"), "default/s5"),
	      "  and s5 is served now");

	/* ---- bad input from the ingress host ---- */
	CHECK(bad_from_ing(&e, "{\"type\":\"IngressState\",\"nodeRevision\":99,\"ingress\":{"
			       "\"sessionIdentifier\":\"default/s5\",\"podIdentifier\":\"default/"
			       "x\",\"state\":\"Bogus\"}}") == -1 &&
		  !strcmp(last_err.field, "ingress.state") && strstr(last_err.msg, "'Bogus'"),
	      "IngressState state 'Bogus': refused naming ingress.state (%s)", last_err.msg);
	CHECK(bad_from_ing(&e, "{\"type\":\"IngressState\",\"nodeRevision\":99,\"ingress\":{"
			       "\"sessionIdentifier\":\"default/s5\",\"podIdentifier\":\"default/"
			       "x\",\"state\":\"Open\"}}") == -1 &&
		  !strcmp(last_err.field, "ingress.accessEndPoints"),
	      "Open without endpoints: refused naming ingress.accessEndPoints");
	CHECK(bad_from_ing(&e, "{\"type\":\"IngressState\",\"nodeRevision\":99,\"ingress\":{"
			       "\"sessionIdentifier\":\"nope\",\"podIdentifier\":\"default/x\","
			       "\"state\":\"Closed\"}}") == -1 &&
		  !strcmp(last_err.field, "ingress.sessionIdentifier"),
	      "a sessionIdentifier that is no NS/NAME: refused naming it");
	CHECK(bad_from_ing(&e, "{\"type\":\"NodeState\",\"nodeRevision\":99,\"ingress\":{}}") ==
		      -1 &&
		  !strcmp(last_err.field, "ingress"),
	      "NodeState with ingress not an array: refused naming ingress");

	/* ---- a restarted core: entries matched to what the pod nodes report ---- */
	fx_core_free(e.c);
	e.c = core_new(&e);
	CHECK(!do_register(&e, "ing-a", &link_ing, "ingress", irev, &fe) &&
		  !do_register(&e, "node-a", &link_pod, "pod", rev, &fe),
	      "a restarted core: both link again");
	at = json_array_size(e.sent);
	snprintf(buf, sizeof(buf),
		 "{\"type\":\"NodeReady\",\"nodeRevision\":%d,\"ingress\":[{"
		 "\"sessionIdentifier\":\"default/s9\",\"podIdentifier\":\"%s\",\"state\":"
		 "\"Open\",\"accessEndPoints\":[{\"protocol\":\"TCP\",\"ipAddress\":"
		 "\"203.0.113.1\",\"port\":30009}]}]}",
		 irev, pods[2]);
	CHECK(!msg_from(&e, "ing-a", &link_ing, "%s", buf), "ing-a's full sync lists s9 first");
	from = at;
	CHECK(next_msg(&e, "IngressClose", NULL, &from, NULL) < 0,
	      "  unknown yet, and the core is young: kept");
	CHECK(!msg_from(&e, "node-a", &link_pod,
			"{\"type\":\"NodeReady\",\"nodeRevision\":%d,\"pods\":[{\"podIdentifier\":"
			"\"%s\",\"application\":\"default/echo\",\"state\":\"Running\"}],"
			"\"sessions\":[{\"sessionIdentifier\":\"default/s9\",\"podIdentifier\":"
			"\"%s\",\"state\":\"Available\",\"accessEndPoints\":[{\"protocol\":\"TCP\","
			"\"ipAddress\":\"203.0.113.1\",\"port\":30009}]}]}",
			rev, pods[2], pods[2]) &&
		  sess_is(&e, "s9", "Available"),
	      "node-a's full sync brings s9 (Available)");
	CHECK(!msg_from(&e, "ing-a", &link_ing, "%s", buf), "ing-a's next full sync");
	at = json_array_size(e.sent);
	CHECK(!fx_core_session_delete(e.c, "default", "s9", &out, &fe), "delete s9");
	json_decref(out);
	CHECK(next_msg(&e, "IngressClose", "ing-a", &at, &m) >= 0 &&
		  !strcmp(str(m, "sessionIdentifier"), "default/s9"),
	      "the adopted entry is closed on ing-a");
	at = json_array_size(e.sent);
	e.now += FX_STALE_NODE_MS;
	snprintf(buf, sizeof(buf),
		 "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"ingress\":[{"
		 "\"sessionIdentifier\":\"default/zz\",\"podIdentifier\":\"default/x\",\"state\":"
		 "\"Open\",\"accessEndPoints\":[{\"protocol\":\"TCP\",\"ipAddress\":"
		 "\"203.0.113.1\",\"port\":30010}]}]}",
		 irev);
	CHECK(!msg_from(&e, "ing-a", &link_ing, "%s", buf) &&
		  next_msg(&e, "IngressClose", "ing-a", &at, &m) >= 0 &&
		  !strcmp(str(m, "sessionIdentifier"), "default/zz"),
	      "FX_STALE_NODE_MS after the restart, an entry nobody claims is closed");

	fx_core_free(e.c);
	e.st->ops->close(e.st);
	json_decref(e.sent);
	snprintf(buf, sizeof(buf), "rm -rf %s", dir);
	if (system(buf))
		return 1;
	return unit_summary();
}
