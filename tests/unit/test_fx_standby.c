// SPDX-License-Identifier: BSD-2-Clause
/* A standby's core (fx_core_set_lead false) with a fake clock and a fake
 * node link over a real SQLite store: a node registers with it and is told
 * it is not the leader; its reports build the standby's pods and sessions;
 * it is sent no command (no pod placed, no session timed out, a pod of an
 * application it does not know yet is not terminated: the node's full sync
 * is asked again once the application is known). Taking the lead tells
 * the node its term, asks for a full sync, and the pool is kept again. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "fx_core_test.h"
#include "unit.h"

struct env {
	uint64_t now;
	json_t *sent;
	struct fx_core *c;
};

static int link_a;

static uint64_t now_ms(void *arg)
{
	return ((struct env *)arg)->now;
}

static void sendf(void *arg, void *link, json_t *msg)
{
	(void)link;
	json_array_append_new(((struct env *)arg)->sent, msg);
}

static void event(void *arg, enum fx_kind k, const char *type, json_t *obj, uint64_t rv)
{
	(void)arg, (void)k, (void)type, (void)obj, (void)rv;
}

/* messages of a type sent since *from (moved past them); NULL: any type */
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
		printf("# refused: %s\n", err.msg);
	return rc;
}

static void do_register(struct env *e)
{
	json_t *m = json_pack("{s:s,s:i,s:i,s:{s:s,s:s,s:s,s:{s:i,s:I,s:i}}}", "type",
			      "NodeRegister", "v", 1, "nodeRevision", 0, "node", "name", "node-a",
			      "ip", "192.0.2.1", "publicIp", "198.51.100.10", "capacity", "cpu",
			      4000, "memory", (json_int_t)8 << 30, "pods", 10);
	struct fx_err err;
	void *old;

	CHECK(!fx_core_node_register(e->c, &link_a, m, 2, NULL, &old, &err), "node-a registers");
	json_decref(m);
}

static const char *status_of(struct env *e, enum fx_kind k, const char *name, const char *field,
			     char buf[64])
{
	json_t *o = fx_core_get(e->c, k, "default", name);
	const char *v = json_string_value(json_object_get(json_object_get(o, "status"), field));

	snprintf(buf, 64, "%s", v ? v : "(none)");
	json_decref(o);
	return buf;
}

#define APP                                                                                        \
	"{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"command\":"   \
	"[\"/bin/x\"],\"ports\":[{\"containerPort\":8080}],\"resources\":{\"requests\":{\"cpu\":"  \
	"\"1\",\"memory\":\"64Mi\"}}}],\"scalingPolicy\":{\"maximumInstance\":3,\"burst\":1,"      \
	"\"scalingPolicyType\":\"idle_session_number\",\"idleSessionNumThreshold\":{\"high\":2,"   \
	"\"low\":1}}}}"

/* the application as the leader stores it, for the standby's watch */
static json_t *lead_create(struct env *l, const char *name)
{
	char buf[1024];
	json_t *b, *out = NULL;
	struct fx_err err;

	snprintf(buf, sizeof(buf), APP, name);
	b = json_loads(buf, 0, NULL);
	if (fx_core_app_create(l->c, "default", b, &out, &err))
		printf("# create %s: %s\n", name, err.msg);
	json_decref(b);
	return out;
}

int main(void)
{
	char dir[] = "/tmp/xgt-fxsb-XXXXXX", path[300], err[300], st[64], *text;
	struct env l = {.now = 100000, .sent = json_array()};
	struct env e = {.now = 100000, .sent = json_array()};
	const struct fx_core_hooks lh = {&l, now_ms, sendf, event, NULL};
	const struct fx_core_hooks h = {&e, now_ms, sendf, event, NULL};
	struct fx_store *store;
	json_t *m = NULL, *app;
	size_t at = 0, all = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f.db", dir);
	if (!(store = fx_store_sqlite_open(path, err, sizeof(err))) ||
	    !(l.c = fx_test_core_new(store, &lh)))
		return 1;
	json_decref(lead_create(&l, "echo"));
	/* the standby loads what the store holds, and follows */
	if (!(e.c = fx_test_core_new(store, &h)))
		return 1;
	fx_core_set_lead(e.c, false, 0);

	do_register(&e);
	CHECK(count(&e, "NodeConfiguration", &at, &m) == 1 &&
		  json_is_false(json_object_get(m, "leader")) &&
		  json_integer_value(json_object_get(m, "term")) == 0,
	      "NodeConfiguration says: not the leader");
	at = 0;
	CHECK(count(&e, "NodeFullSync", &at, NULL) == 1, "a standby asks for the full sync too");
	CHECK(node_msg(&e, "{\"type\":\"NodeState\",\"nodeRevision\":0,\"pods\":[]}") == 0 &&
		  node_msg(&e, "{\"type\":\"NodeReady\",\"nodeRevision\":0}") == 0,
	      "NodeState and NodeReady: node-a ready on the standby");
	for (int i = 0; i < 3; i++) {
		e.now += FX_ROUND_MS;
		fx_core_tick(e.c);
	}
	{
		uint64_t rv;
		json_t *pods = fx_core_list(e.c, FX_K_POD, NULL, &rv);

		CHECK(count(&e, "PodCreate", &at, NULL) == 0 && json_array_size(pods) == 0,
		      "echo wants a standby pod and node-a has room: the standby places none "
		      "(no PodCreate, no pod in its view)");
		json_decref(pods);
	}

	CHECK(node_msg(&e, "{\"type\":\"PodState\",\"nodeRevision\":1,\"pod\":{\"podIdentifier\":"
			   "\"default/echo-aaaaa\",\"application\":\"default/echo\",\"state\":"
			   "\"Standby\",\"podIP\":\"10.244.2.2\"}}") == 0 &&
		  !strcmp(status_of(&e, FX_K_POD, "echo-aaaaa", "fornaxState", st), "Standby"),
	      "the leader's pod, as node-a reports it: in the standby's view");
	CHECK(node_msg(
		  &e,
		  "{\"type\":\"SessionState\",\"nodeRevision\":2,\"session\":{"
		  "\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"default/echo-aaaaa\","
		  "\"state\":\"Starting\"}}") == 0 &&
		  !strcmp(status_of(&e, FX_K_SESSION, "s1", "sessionStatus", st), "Starting"),
	      "the leader's session s1 (Starting): in the standby's view");
	e.now += 3600 * 1000;
	fx_core_tick(e.c);
	CHECK(!strcmp(status_of(&e, FX_K_SESSION, "s1", "sessionStatus", st), "Starting"),
	      "an hour later s1 is still Starting: the standby times nothing out");
	CHECK(node_msg(
		  &e,
		  "{\"type\":\"SessionState\",\"nodeRevision\":3,\"session\":{"
		  "\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"default/echo-aaaaa\","
		  "\"state\":\"Available\",\"accessEndPoints\":[{\"protocol\":\"TCP\","
		  "\"ipAddress\":\"198.51.100.10\",\"port\":30001}]}}") == 0 &&
		  !strcmp(status_of(&e, FX_K_SESSION, "s1", "sessionStatus", st), "Available"),
	      "then Available, as the node says");

	CHECK(node_msg(&e, "{\"type\":\"PodState\",\"nodeRevision\":4,\"pod\":{\"podIdentifier\":"
			   "\"default/late-bbbbb\",\"application\":\"default/late\",\"state\":"
			   "\"Standby\",\"podIP\":\"10.244.2.3\"}}") == 0 &&
		  !fx_core_get(e.c, FX_K_POD, "default", "late-bbbbb"),
	      "a pod of late, which the watch has not brought yet: not in the view");
	CHECK(count(&e, "PodTerminate", &at, NULL) == 0, "and not terminated");
	CHECK(node_msg(&e, "{\"type\":\"SessionState\",\"nodeRevision\":5,\"session\":{"
			   "\"sessionIdentifier\":\"default/x9\",\"podIdentifier\":"
			   "\"default/ghost-ccccc\",\"state\":\"Available\"}}") == 0 &&
		  count(&e, "SessionClose", &at, NULL) == 0,
	      "a session on a pod it does not know: not closed (the leader decides)");
	app = lead_create(&l, "late");
	text = json_dumps(app, JSON_COMPACT);
	fx_core_app_stored(e.c, "default", "late",
			   strtoull(json_string_value(json_object_get(
					json_object_get(app, "metadata"), "resourceVersion")),
				    NULL, 10),
			   text);
	free(text);
	json_decref(app);
	CHECK(count(&e, "NodeFullSync", &at, NULL) == 1,
	      "the watch brings late: node-a is asked for its full state again");
	CHECK(node_msg(
		  &e,
		  "{\"type\":\"NodeState\",\"nodeRevision\":5,\"pods\":[{\"podIdentifier\":"
		  "\"default/echo-aaaaa\",\"application\":\"default/echo\",\"state\":"
		  "\"Running\",\"podIP\":\"10.244.2.2\"},{\"podIdentifier\":"
		  "\"default/late-bbbbb\",\"application\":\"default/late\",\"state\":"
		  "\"Standby\",\"podIP\":\"10.244.2.3\"}],\"sessions\":[{"
		  "\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"default/echo-aaaaa\","
		  "\"state\":\"Available\"}]}") == 0 &&
		  !strcmp(status_of(&e, FX_K_POD, "late-bbbbb", "fornaxState", st), "Standby"),
	      "whose answer brings late's pod");
	for (int i = 0; i < 3; i++) {
		e.now += FX_ROUND_MS;
		fx_core_tick(e.c);
	}
	{
		size_t k = 0;
		int n = count(&e, NULL, &all, NULL), links = 0;

		links += count(&e, "NodeConfiguration", &k, NULL);
		k = 0;
		links += count(&e, "NodeFullSync", &k, NULL);
		CHECK(n == links,
		      "all the standby sent: %d message(s), NodeConfiguration and "
		      "NodeFullSync only (no command)",
		      n);
	}

	/* ---- the standby takes the lead ---- */
	fx_core_set_lead(e.c, true, 42);
	CHECK(count(&e, "CoreState", &at, &m) == 1 && json_is_true(json_object_get(m, "leader")) &&
		  json_integer_value(json_object_get(m, "term")) == 42,
	      "taking the lead: CoreState leader, term 42");
	at -= 1;
	CHECK(count(&e, "NodeFullSync", &at, NULL) == 1, "and a full sync asked");
	CHECK(!strcmp(status_of(&e, FX_K_SESSION, "s1", "sessionStatus", st), "Available"),
	      "s1 is served from the view it has, Available");
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	CHECK(count(&e, "PodCreate", &at, NULL) >= 1,
	      "the new leader keeps echo's pool (its pod is s1's): a PodCreate");
	do_register(&e);
	CHECK(count(&e, "NodeConfiguration", &at, &m) == 1 &&
		  json_is_true(json_object_get(m, "leader")) &&
		  json_integer_value(json_object_get(m, "term")) == 42,
	      "a node registering now is told: the leader, term 42");

	fx_core_free(e.c);
	fx_core_free(l.c);
	store->ops->close(store);
	json_decref(e.sent);
	json_decref(l.sent);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	return unit_summary();
}
