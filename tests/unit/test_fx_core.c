// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's core, whole, with a fake clock and a fake node link over a real
 * SQLite store: the pool fills to its policy on a ready node; a session
 * takes an idle pod at once (warm) and becomes Available with the node's
 * endpoint; close -> Closing -> Closed and the pod killed (or returned);
 * pending sessions are served first come first served; openTimeoutSeconds
 * -> Timeout without sleeping; a pod holding a session is never scaled
 * away; the revision rules (gap -> NodeFullSync, duplicates dropped); a
 * restarted core keeps its applications and rebuilds pods and sessions
 * from the node's full sync. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "fx_core_test.h"
#include "core_int.h"
#include "fx_books.h"
#include "unit.h"

struct env {
	uint64_t now;
	json_t *sent; /* every message to the node */
	int events;
	struct fx_core *c;
	struct fx_store *st;
};

static uint64_t now_ms(void *arg)
{
	return ((struct env *)arg)->now;
}

static int link_a, link_b; /* the fake links' identities */

static void sendf(void *arg, void *link, json_t *msg)
{
	json_object_set_new(msg, "_to", json_string(link == &link_a ? "node-a" : "node-b"));
	json_array_append_new(((struct env *)arg)->sent, msg);
}

static void event(void *arg, enum fx_kind k, const char *type, json_t *obj, uint64_t rv)
{
	(void)k, (void)type, (void)obj, (void)rv;
	((struct env *)arg)->events++;
}

/* messages of a type sent since *from (moved past them) */
static int count(struct env *e, const char *type, size_t *from, json_t **last)
{
	return fx_test_count(e->sent, type, from, last);
}

__attribute__((format(printf, 2, 3))) static int node_msg(struct env *e, const char *fmt, ...)
{
	struct fx_err err;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fx_test_node_vmsg(e->c, "node-a", &link_a, &err, fmt, ap);
	va_end(ap);
	if (rc == -1) /* a refusal: err says why */
		printf("# node message refused: %s\n", err.msg);
	return rc;
}

static const char *state_of(struct env *e, enum fx_kind k, const char *name, const char *path1,
			    const char *path2, char *buf)
{
	json_t *o = fx_core_get(e->c, k, "default", name);
	const char *v =
	    o ? json_string_value(json_object_get(json_object_get(o, path1), path2)) : NULL;

	snprintf(buf, 64, "%s", v ? v : "(none)");
	json_decref(o);
	return buf;
}

static bool exists(struct env *e, enum fx_kind k, const char *name)
{
	json_t *o = fx_core_get(e->c, k, "default", name);

	json_decref(o);
	return o != NULL;
}

static int app_status(struct env *e, const char *field)
{
	json_t *o = fx_core_get(e->c, FX_K_APP, "default", "echo");
	int v = (int)json_integer_value(json_object_get(json_object_get(o, "status"), field));

	json_decref(o);
	return v;
}

static struct fx_core *core_new(struct env *e)
{
	const struct fx_core_hooks h = {e, now_ms, sendf, event, NULL};

	return fx_test_core_new(e->st, &h);
}

static void register_as(struct env *e, const char *name, void *link, int rev)
{
	json_t *m = json_pack("{s:s,s:i,s:i,s:{s:s,s:s,s:s,s:{s:i,s:I,s:i}}}", "type",
			      "NodeRegister", "v", 1, "nodeRevision", rev, "node", "name", name,
			      "ip", "192.0.2.1", "publicIp", "198.51.100.10", "capacity", "cpu",
			      4000, "memory", (json_int_t)8 << 30, "pods", 10);
	struct fx_err err;
	void *old;

	CHECK(!fx_core_node_register(e->c, link, m, link == &link_a ? 2 : 3, NULL, &old, &err),
	      "%s registers at revision %d", name, rev);
	json_decref(m);
}

static void do_register(struct env *e, int rev)
{
	register_as(e, "node-a", &link_a, rev);
}

static json_t *body(const char *text)
{
	return json_loads(text, 0, NULL);
}

#define APP                                                                                        \
	"{\"metadata\":{\"name\":\"echo\"},\"spec\":{\"containers\":[{\"name\":\"echo\","          \
	"\"command\":[\"/bin/x\"],\"ports\":[{\"containerPort\":8080}],\"resources\":{"            \
	"\"requests\":{\"cpu\":\"1\",\"memory\":\"64Mi\"}}}],\"scalingPolicy\":{"                  \
	"\"maximumInstance\":%d,\"burst\":%d,\"scalingPolicyType\":\"idle_session_number\","       \
	"\"idleSessionNumThreshold\":{\"high\":%d,\"low\":%d}}}}"
#define SESS                                                                                       \
	"{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"applicationName\":\"echo\",\"sessionData\":"  \
	"\"aGk=\",\"openTimeoutSeconds\":%d,\"killInstanceWhenSessionClosed\":%s}}"

static int create_session(struct env *e, const char *name, int timeout, bool kill)
{
	char buf[512];
	json_t *b, *out = NULL;
	struct fx_err err;
	int rc;

	snprintf(buf, sizeof(buf), SESS, name, timeout, kill ? "true" : "false");
	b = body(buf);
	rc = fx_core_session_create(e->c, "default", b, NULL, &out, &err);
	if (rc)
		printf("# session create: %s\n", err.msg);
	json_decref(b);
	json_decref(out);
	return rc;
}

static const char *pod_of(json_t *m)
{
	return json_string_value(json_object_get(m, "podIdentifier"));
}

/* Random node reports, API calls and ticks: nothing crashes (ASan), the
 * books stay consistent. */
static void storm(struct env *e)
{
	static const char *const pst[] = {"Creating",	 "Standby",    "Running",
					  "Terminating", "Terminated", "Failed"};
	static const char *const sst[] = {"Starting", "Available", "InUse",
					  "Closing",  "Closed",	   "Timeout"};
	unsigned rng = 12345;
	int rev = 0, bad = 0;
	char buf[512];

	for (int i = 0; i < 3000; i++) {
		int r = (int)(rand_r(&rng) % 100), pod = (int)(rand_r(&rng) % 6);
		int sess = (int)(rand_r(&rng) % 6), dr = (int)(rand_r(&rng) % 4) - 1;
		json_t *m = NULL, *out = NULL;
		struct fx_err err;

		rev += dr > 0 ? dr : 0;
		if (r < 30) {
			snprintf(buf, sizeof(buf),
				 "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{"
				 "\"podIdentifier\":\"default/echo-p%d\",\"application\":"
				 "\"default/echo\",\"state\":\"%s\"}}",
				 rev, pod, pst[rand_r(&rng) % 6]);
		} else if (r < 60) {
			snprintf(buf, sizeof(buf),
				 "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
				 "\"sessionIdentifier\":\"default/x%d\",\"podIdentifier\":"
				 "\"default/echo-p%d\",\"state\":\"%s\"}}",
				 rev, sess, pod, sst[rand_r(&rng) % 6]);
		} else if (r < 65) {
			snprintf(buf, sizeof(buf),
				 "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"pods\":[{"
				 "\"podIdentifier\":\"default/echo-p%d\",\"application\":"
				 "\"default/echo\",\"state\":\"Standby\"}],\"sessions\":[{"
				 "\"sessionIdentifier\":\"default/x%d\",\"podIdentifier\":"
				 "\"default/echo-p%d\",\"state\":\"Available\"}]}",
				 rev, pod, sess, pod);
		} else if (r < 75) {
			snprintf(buf, sizeof(buf), SESS, "x0", 1 + (int)(rand_r(&rng) % 3),
				 rand_r(&rng) % 2 ? "true" : "false");
			buf[strstr(buf, "x0") - buf + 1] = (char)('0' + sess);
			m = json_loads(buf, 0, NULL);
			fx_core_session_create(e->c, "default", m, NULL, &out, &err);
			json_decref(m);
			json_decref(out);
			buf[0] = 0;
		} else if (r < 82) {
			snprintf(buf, sizeof(buf), "x%d", sess);
			if (!fx_core_session_delete(e->c, "default", buf, &out, &err))
				json_decref(out);
			buf[0] = 0;
		} else if (r < 84) {
			void *old;

			m = json_pack("{s:s,s:i,s:i,s:{s:s,s:{s:i,s:i,s:i}}}", "type",
				      "NodeRegister", "v", 1, "nodeRevision", rev, "node", "name",
				      "node-a", "capacity", "cpu", 4000, "memory", 1 << 30, "pods",
				      10);
			fx_core_node_register(e->c, &link_a, m, 2, NULL, &old, &err);
			json_decref(m);
			buf[0] = 0;
		} else if (r < 86) {
			fx_core_node_unlinked(e->c, "node-a", &link_a);
			buf[0] = 0;
		} else {
			e->now += 50 + rand_r(&rng) % 500;
			fx_core_tick(e->c);
			buf[0] = 0;
		}
		if (buf[0]) {
			m = json_loads(buf, 0, NULL);
			fx_core_node_message(e->c, "node-a", &link_a, m, &err);
			json_decref(m);
		}
		if (!fx_books_balance(e->c) && !bad++)
			printf("# inconsistent after step %d: %s\n", i, buf);
	}
	CHECK(!bad, "3000 random reports, API calls and ticks: the books stay consistent");
}

int main(void)
{
	char dir[] = "/tmp/xgt-fxcore-XXXXXX", path[300], err[300], buf[512], st[64];
	struct env e = {.now = 100000, .sent = json_array()};
	struct fx_err fe;
	json_t *m = NULL, *out = NULL, *b;
	size_t at = 0;
	int rev = 0;
	char pod1[128], pod2[128];

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f.db", dir);
	if (!(e.st = fx_store_sqlite_open(path, err, sizeof(err))) || !(e.c = core_new(&e)))
		return 1;

	/* ---- an application, a node, the pool ---- */
	snprintf(buf, sizeof(buf), APP, 3, 1, 2, 1);
	b = body(buf);
	CHECK(!fx_core_app_create(e.c, "default", b, &out, &fe), "create default/echo");
	json_decref(b);
	json_decref(out);
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) == 0, "no pod while no node is ready");
	do_register(&e, 0);
	CHECK(count(&e, "NodeConfiguration", &at, &m) == 1 &&
		  !strcmp(json_string_value(json_object_get(m, "podCIDR")), "10.244.2.0/24"),
	      "NodeConfiguration with subnet 2: 10.244.2.0/24");
	at = 0;
	CHECK(count(&e, "NodeFullSync", &at, NULL) == 1, "then NodeFullSync");
	CHECK(node_msg(&e, "{\"type\":\"NodeState\",\"nodeRevision\":0,\"pods\":[]}") == 0 &&
		  node_msg(&e, "{\"type\":\"NodeReady\",\"nodeRevision\":0}") == 0,
	      "NodeState and NodeReady at 0");
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, &m) == 1, "a round creates one pod (low 1)");
	snprintf(pod1, sizeof(pod1), "%s", pod_of(m));
	CHECK(json_is_true(json_object_get(m, "standby")) &&
		  !strcmp(
		      json_string_value(json_object_get(json_object_get(m, "pod"), "application")),
		      "default/echo"),
	      "PodCreate: standby, for default/echo");
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) == 0, "no second round within FX_ROUND_MS");
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) == 0,
	      "the pending pod counts as idle capacity: none more");
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":\"%s\","
		     "\"application\":\"default/echo\",\"state\":\"Standby\",\"podIP\":"
		     "\"10.244.2.2\"}}",
		     ++rev, pod1) == 0,
	    "PodState Standby");
	CHECK(app_status(&e, "idleInstances") == 1, "one idle instance");

	/* ---- warm open ---- */
	CHECK(!create_session(&e, "s1", 10, true), "create s1");
	CHECK(count(&e, "SessionOpen", &at, &m) == 1 && !strcmp(pod_of(m), pod1),
	      "SessionOpen on the idle pod at once (warm)");
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s1", "status", "sessionStatus", st), "Starting"),
	      "s1 Starting");
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":\"%s\","
		     "\"application\":\"default/echo\",\"state\":\"Activating\"}}",
		     ++rev, pod1) == 0 &&
		!strcmp(state_of(&e, FX_K_POD, strchr(pod1, '/') + 1, "status", "fornaxState", st),
			"Activating") &&
		!strcmp(state_of(&e, FX_K_POD, strchr(pod1, '/') + 1, "status", "phase", st),
			"Running") &&
		app_status(&e, "allocatedInstances") == 1 && app_status(&e, "idleInstances") == 0,
	    "the node thaws the pod for s1: Activating (phase Running), allocated");
	CHECK(node_msg(&e,
		       "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
		       "\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"%s\",\"state\":"
		       "\"Available\",\"accessEndPoints\":[{\"protocol\":\"TCP\",\"ipAddress\":"
		       "\"198.51.100.10\",\"port\":30001}]}}",
		       ++rev, pod1) == 0,
	      "SessionState Available");
	{
		json_t *o = fx_core_get(e.c, FX_K_SESSION, "default", "s1");
		json_t *ep = json_array_get(
		    json_object_get(json_object_get(o, "status"), "accessEndPoints"), 0);

		CHECK(!strcmp(json_string_value(
				  json_object_get(json_object_get(o, "status"), "sessionStatus")),
			      "Available") &&
			  json_integer_value(json_object_get(ep, "port")) == 30001,
		      "s1 Available with the endpoint 198.51.100.10:30001");
		json_decref(o);
	}
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, &m) == 1, "the pool refills: a new standby pod");
	snprintf(pod2, sizeof(pod2), "%s", pod_of(m));

	/* ---- revisions ---- */
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":\"%s\","
		     "\"application\":\"default/echo\",\"state\":\"Standby\"}}",
		     rev, pod2) == 0 &&
		app_status(&e, "idleInstances") == 0,
	    "a duplicate revision is dropped (the pod stays pending)");
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":\"%s\","
		     "\"application\":\"default/echo\",\"state\":\"Standby\"}}",
		     rev + 5, pod2) == 0 &&
		count(&e, "NodeFullSync", &at, NULL) == 1 && app_status(&e, "idleInstances") == 0,
	    "a gap: dropped, NodeFullSync sent");
	rev += 1;
	CHECK(node_msg(&e,
		       "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"pods\":[{\"podIdentifier\":"
		       "\"%s\",\"application\":\"default/echo\",\"state\":\"Running\"},"
		       "{\"podIdentifier\":\"%s\",\"application\":\"default/echo\",\"state\":"
		       "\"Standby\"}],\"sessions\":[{\"sessionIdentifier\":\"default/s1\","
		       "\"podIdentifier\":\"%s\",\"state\":\"Available\"}]}",
		       rev, pod1, pod2, pod1) == 0 &&
		  app_status(&e, "idleInstances") == 1 && app_status(&e, "allocatedInstances") == 1,
	      "the full sync applies: 1 idle, 1 allocated");

	/* ---- a live session is never scaled away ---- */
	snprintf(buf, sizeof(buf), APP, 1, 5, 0, 0);
	b = body(buf);
	json_object_set_new(json_object_get(b, "metadata"), "labels", json_pack("{s:s}", "t", "x"));
	CHECK(!fx_core_app_update(e.c, "default", "echo", b, &out, &fe),
	      "update: max 1, thresholds 0");
	json_decref(b);
	json_decref(out);
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	CHECK(count(&e, "PodTerminate", &at, &m) == 1 && !strcmp(pod_of(m), pod2),
	      "the round removes the idle pod, not the one holding s1");
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s1", "status", "sessionStatus", st), "Available"),
	      "s1 still Available");
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":\"%s\","
		     "\"application\":\"default/echo\",\"state\":\"Terminated\"}}",
		     ++rev, pod2) == 0 &&
		!exists(&e, FX_K_POD, strchr(pod2, '/') + 1),
	    "Terminated: the pod is gone");
	snprintf(buf, sizeof(buf), APP, 3, 1, 2, 1);
	b = body(buf);
	CHECK(fx_core_app_update(e.c, "default", "echo", b, &out, &fe) == 0,
	      "back to max 3, low 1");
	json_decref(b);
	json_decref(out);

	/* ---- close: Closing, the node says Closed, the pod is killed ---- */
	CHECK(!fx_core_session_delete(e.c, "default", "s1", &out, &fe) &&
		  !strcmp(json_string_value(
			      json_object_get(json_object_get(out, "status"), "sessionStatus")),
			  "Closing"),
	      "delete s1: Closing");
	json_decref(out);
	CHECK(count(&e, "SessionClose", &at, &m) == 1 &&
		  json_integer_value(json_object_get(m, "gracePeriodSeconds")) == 60,
	      "SessionClose with the grace period");
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
		     "\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"%s\",\"state\":"
		     "\"Closed\"}}",
		     ++rev, pod1) == 0 &&
		!strcmp(state_of(&e, FX_K_SESSION, "s1", "status", "sessionStatus", st), "Closed"),
	    "the node says Closed: s1 Closed");
	CHECK(count(&e, "PodTerminate", &at, &m) == 1 && !strcmp(pod_of(m), pod1),
	      "killInstanceWhenSessionClosed: its pod is terminated");
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":\"%s\","
		     "\"application\":\"default/echo\",\"state\":\"Evacuating\"}}",
		     ++rev, pod1) == 0 &&
		!strcmp(state_of(&e, FX_K_POD, strchr(pod1, '/') + 1, "status", "fornaxState", st),
			"Evacuating") &&
		app_status(&e, "deletingInstances") == 1,
	    "the node drains it first: Evacuating, counted as deleting");
	CHECK(node_msg(&e,
		       "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"pods\":[{\"podIdentifier\":"
		       "\"%s\",\"application\":\"default/echo\",\"state\":\"Evacuating\"}]}",
		       rev, pod1) == 0 &&
		  count(&e, "PodTerminate", &at, NULL) == 0,
	      "a full sync with it Evacuating: not told to terminate again");

	/* ---- timeout, FIFO ---- */
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c); /* a new pod is asked for (pending, no answer yet) */
	CHECK(count(&e, "PodCreate", &at, &m) >= 1, "the pool asks for a pod again");
	snprintf(pod2, sizeof(pod2), "%s", pod_of(m));
	CHECK(!create_session(&e, "s2", 1, false) && !create_session(&e, "s3", 30, false),
	      "s2 (timeout 1 s) and s3 wait");
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s2", "status", "sessionStatus", st), "Pending"),
	      "s2 Pending: no idle pod");
	e.now += 999;
	fx_core_tick(e.c);
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s2", "status", "sessionStatus", st), "Pending"),
	      "s2 still Pending 999 ms later");
	e.now += 1;
	fx_core_tick(e.c);
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s2", "status", "sessionStatus", st), "Timeout"),
	      "s2 Timeout at openTimeoutSeconds");
	CHECK(!create_session(&e, "s4", 30, false), "s4 waits behind s3");
	CHECK(
	    node_msg(&e,
		     "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":\"%s\","
		     "\"application\":\"default/echo\",\"state\":\"Standby\"}}",
		     ++rev, pod2) == 0,
	    "a pod becomes Standby");
	CHECK(count(&e, "SessionOpen", &at, &m) == 1 &&
		  !strcmp(json_string_value(json_object_get(m, "sessionIdentifier")), "default/s3"),
	      "the oldest pending session (s3) gets it");
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s4", "status", "sessionStatus", st), "Pending"),
	      "s4 still Pending");
	CHECK(node_msg(&e,
		       "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
		       "\"sessionIdentifier\":\"default/s3\",\"podIdentifier\":\"%s\",\"state\":"
		       "\"Closed\"}}",
		       ++rev, pod2) == 0,
	      "s3 closed by the node");
	CHECK(count(&e, "PodTerminate", &at, NULL) == 0 && count(&e, "SessionOpen", &at, &m) == 0,
	      "kill false: the pod is not terminated");
	at = 0;
	{
		int opens = 0;
		json_t *x;

		for (size_t i = 0; i < json_array_size(e.sent); i++) {
			x = json_array_get(e.sent, i);
			if (!strcmp(json_string_value(json_object_get(x, "type")), "SessionOpen") &&
			    !strcmp(json_string_value(json_object_get(x, "sessionIdentifier")),
				    "default/s4") &&
			    !strcmp(pod_of(x), pod2))
				opens++;
		}
		CHECK(opens == 1, "the returned pod serves s4 next");
		at = json_array_size(e.sent);
	}
	CHECK(node_msg(&e,
		       "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
		       "\"sessionIdentifier\":\"default/s4\",\"podIdentifier\":\"%s\",\"state\":"
		       "\"Available\"}}",
		       ++rev, pod2) == 0,
	      "s4 Available");

	/* ---- bad messages ---- */
	CHECK(node_msg(&e, "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{}}", rev + 1) == -1,
	      "a PodState without podIdentifier is refused");
	CHECK(node_msg(&e, "{\"type\":\"Bogus\",\"nodeRevision\":1}") == -1, "an unknown type");

	/* ---- a pod that cannot be the application's is terminated ---- */
	CHECK(node_msg(&e,
		       "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":"
		       "\"other/echo-zz\",\"application\":\"default/echo\",\"state\":\"Standby\"}}",
		       ++rev) == 0 &&
		  count(&e, "PodTerminate", &at, &m) == 1 && !strcmp(pod_of(m), "other/echo-zz"),
	      "a pod of default/echo in namespace other: PodTerminate");

	/* ---- a node that is gone: its standby pods do not count ---- */
	{
		struct fx_err ferr;
		json_t *x = json_loads("{\"type\":\"NodeState\",\"nodeRevision\":0}", 0, NULL);
		int to_b = 0;

		register_as(&e, "node-b", &link_b, 0);
		fx_core_node_message(e.c, "node-b", &link_b, x, &ferr);
		json_object_set_new(x, "type", json_string("NodeReady"));
		fx_core_node_message(e.c, "node-b", &link_b, x, &ferr);
		json_decref(x);
		e.now += FX_ROUND_MS;
		fx_core_tick(e.c);
		at = json_array_size(e.sent);
		fx_core_node_unlinked(e.c, "node-a", &link_a);
		e.now += FX_ROUND_MS;
		fx_core_tick(e.c);
		for (; at < json_array_size(e.sent); at++) {
			x = json_array_get(e.sent, at);
			if (!strcmp(json_string_value(json_object_get(x, "type")), "PodCreate") &&
			    !strcmp(json_string_value(json_object_get(x, "_to")), "node-b"))
				to_b++;
		}
		CHECK(to_b == 1, "node-a gone: the pool is made up on node-b (%d PodCreate)", to_b);
		fx_core_node_unlinked(e.c, "node-b", &link_b);
	}

	/* ---- node-a away too long: its pods are forgotten; back, it is told ---- */
	e.now += FX_STALE_NODE_MS - FX_ROUND_MS - 1; /* it went a round ago */
	fx_core_tick(e.c);
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s4", "status", "sessionStatus", st), "Available"),
	      "a node away less than FX_STALE_NODE_MS: s4 still Available");
	e.now += 1;
	fx_core_tick(e.c);
	CHECK(!strcmp(state_of(&e, FX_K_SESSION, "s4", "status", "sessionStatus", st), "Closed") &&
		  !exists(&e, FX_K_POD, strchr(pod2, '/') + 1) &&
		  !strcmp(state_of(&e, FX_K_SESSION, "s4", "status", "reason", st), "NodeLost"),
	      "away FX_STALE_NODE_MS: its pods forgotten, s4 Closed (NodeLost)");
	register_as(&e, "node-a", &link_a, rev);
	at = json_array_size(e.sent);
	CHECK(node_msg(&e,
		       "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"pods\":[{\"podIdentifier\":"
		       "\"%s\",\"application\":\"default/echo\",\"state\":\"Running\"}],"
		       "\"sessions\":[{\"sessionIdentifier\":\"default/s4\",\"podIdentifier\":"
		       "\"%s\",\"state\":\"Available\"}]}",
		       rev, pod2, pod2) == 0,
	      "node-a back: its full sync still has s4 on its pod");
	{
		size_t from = at;

		CHECK(count(&e, "SessionClose", &from, &m) == 1 &&
			  !strcmp(json_string_value(json_object_get(m, "sessionIdentifier")),
				  "default/s4"),
		      "the node is told to close s4");
		from = at;
		CHECK(count(&e, "PodTerminate", &from, &m) == 1 && !strcmp(pod_of(m), pod2),
		      "and to stop the pod nobody holds");
	}
	storm(&e);

	/* ---- restart: applications from the store, the rest from the node ---- */
	fx_core_free(e.c);
	e.c = core_new(&e);
	CHECK(e.c && app_status(&e, "totalInstances") == 0, "a restarted core: echo, no pods");
	CHECK(fx_core_revision(e.c) >= 1000, "revisions continue above rev0");
	do_register(&e, rev);
	CHECK(node_msg(&e,
		       "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"pods\":[{\"podIdentifier\":"
		       "\"%s\",\"application\":\"default/echo\",\"state\":\"Running\"}],"
		       "\"sessions\":[{\"sessionIdentifier\":\"default/s4\",\"podIdentifier\":"
		       "\"%s\",\"state\":\"Available\",\"accessEndPoints\":[{\"protocol\":\"TCP\","
		       "\"ipAddress\":\"198.51.100.10\",\"port\":30002}]}]}",
		       rev, pod2, pod2) == 0,
	      "its full sync");
	CHECK(app_status(&e, "allocatedInstances") == 1 &&
		  !strcmp(state_of(&e, FX_K_SESSION, "s4", "status", "sessionStatus", st),
			  "Available"),
	      "pod and session rebuilt from the full sync (s4 Available)");
	CHECK(fx_core_app_delete(e.c, "default", "echo", &out, &fe) == 0, "delete echo");
	json_decref(out);
	CHECK(
	    !exists(&e, FX_K_POD, strchr(pod2, '/') + 1) &&
		!strcmp(state_of(&e, FX_K_SESSION, "s4", "status", "sessionStatus", st), "Closed"),
	    "its pods go, its sessions close");
	CHECK(e.events > 10, "events reached the watches (%d)", e.events);

	/* ---- a cold open: a round that changed nothing does not hold the
	 * next back; the session's round comes at once ---- */
	snprintf(buf, sizeof(buf), APP, 3, 1, 0, 0);
	b = body(buf);
	CHECK(!fx_core_app_create(e.c, "default", b, &out, &fe), "echo again, no standby (low 0)");
	CHECK(node_msg(&e, "{\"type\":\"NodeReady\",\"nodeRevision\":%d}", rev) == 0,
	      "node-a ready");
	json_decref(b);
	json_decref(out);
	fx_core_tick(e.c);
	at = json_array_size(e.sent);
	e.now += FX_ROUND_MS / 10;
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) == 0, "nothing asked for: no pod");
	CHECK(!create_session(&e, "c1", 30, true), "c1: no pod to serve it");
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) == 1,
	      "its pod asked for at once, not FX_ROUND_MS after the idle round");
	fx_core_tick(e.c);
	CHECK(!create_session(&e, "c2", 30, true), "c2 just after");
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) == 0,
	      "the round that made c1's pod holds c2's back FX_ROUND_MS");
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) == 1, "then c2's pod");

	fx_core_free(e.c);
	e.st->ops->close(e.st);
	json_decref(e.sent);
	snprintf(buf, sizeof(buf), "rm -rf %s", dir);
	if (system(buf))
		return 1;
	return unit_summary();
}
