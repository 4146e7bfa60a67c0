// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's application writes without waiting (core/writes.c), over a
 * real SQLite store whose writes are held until the test lets them go (as
 * etcd holds them while it commits): the core does not change until a
 * write is durable; a second create of the name waiting behind the first
 * is a 409, as is an update with the resourceVersion the first moved on;
 * a failed write leaves nothing; a list answered while a write is in
 * flight is as of the revision before the write's; a core that stops
 * answers the write in flight 504 and those waiting 503, and applies the
 * held write when it comes back without answering again. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "fx_core_test.h"
#include "unit.h"

/* SQLite behind the store interface, its writes held */
struct held {
	struct fx_store pub;
	struct fx_store *real;
	struct fx_store_ops ops;
	bool pending, del;
	char ns[64], name[64];
	uint64_t rv;
	char *json;
	fx_store_done done;
	void *arg;
};

static struct held *H(struct fx_store *s)
{
	return (struct held *)s;
}

static int put_held(struct fx_store *s, const char *ns, const char *name, uint64_t rv,
		    const char *json, fx_store_done done, void *arg)
{
	struct held *h = H(s);

	if (h->pending)
		return -1; /* the core sends one at a time */
	h->pending = true;
	h->del = !json;
	snprintf(h->ns, sizeof(h->ns), "%s", ns);
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->rv = rv;
	h->json = json ? strdup(json) : NULL;
	h->done = done;
	h->arg = arg;
	return 0;
}

static int del_held(struct fx_store *s, const char *ns, const char *name, uint64_t rv,
		    fx_store_done done, void *arg)
{
	return put_held(s, ns, name, rv, NULL, done, arg);
}

/* the held write goes to SQLite (or fails), and its done is called */
static void release(struct held *h, bool fail)
{
	int rc = -1;

	h->pending = false;
	if (!fail)
		rc = h->del ? h->real->ops->app_del(h->real, h->ns, h->name, h->rv)
			    : h->real->ops->app_put(h->real, h->ns, h->name, h->rv, h->json);
	free(h->json);
	h->json = NULL;
	h->done(h->arg, rc, fail ? "held write failed" : "");
}

static int each(struct fx_store *s, int (*fn)(void *, const char *, uint64_t), void *arg)
{
	return H(s)->real->ops->app_each(H(s)->real, fn, arg);
}

static int revision(struct fx_store *s, uint64_t *rv)
{
	return H(s)->real->ops->revision(H(s)->real, rv);
}

static const char *errmsg(struct fx_store *s)
{
	return H(s)->real->ops->errmsg(H(s)->real);
}

/* ---- the answers ---- */
struct ans {
	int calls, code;
	json_t *out;
};

static void done(void *arg, json_t *out, const struct fx_err *e)
{
	struct ans *a = arg;

	a->calls++;
	a->code = out ? 0 : e->code;
	json_decref(a->out);
	a->out = out;
}

static uint64_t rv_of(json_t *o)
{
	return strtoull(
	    json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion")),
	    NULL, 10);
}

static uint64_t now_ms(void *arg)
{
	(void)arg;
	return 1000;
}

static int n_events;

static void event(void *arg, enum fx_kind k, const char *type, json_t *obj, uint64_t rv)
{
	(void)arg, (void)type, (void)obj, (void)rv;
	n_events += k == FX_K_APP;
}

static int stored_apps(void *arg, const char *json, uint64_t rv)
{
	(void)json, (void)rv;
	(*(int *)arg)++;
	return 0;
}

#define APP                                                                                        \
	"{\"metadata\":{\"name\":\"%s\"%s},\"spec\":{\"containers\":[{\"name\":\"echo\","          \
	"\"command\":[\"/bin/x\"],\"ports\":[{\"containerPort\":8080}],\"resources\":{"            \
	"\"requests\":{\"cpu\":\"1\",\"memory\":\"64Mi\"}}}],\"scalingPolicy\":{"                  \
	"\"maximumInstance\":%d,\"burst\":1,\"scalingPolicyType\":\"idle_session_number\","        \
	"\"idleSessionNumThreshold\":{\"high\":1,\"low\":0}}}}"

static json_t *app(const char *name, uint64_t rv, int max)
{
	char buf[1024], md[64] = "";

	if (rv)
		snprintf(md, sizeof(md), ",\"resourceVersion\":\"%" PRIu64 "\"", rv);
	snprintf(buf, sizeof(buf), APP, name, md, max);
	return json_loads(buf, 0, NULL);
}

static void write_app(struct fx_core *c, enum fx_wop op, const char *name, json_t *body,
		      struct ans *a)
{
	fx_core_app_write(c, op, "default", name, body, done, a);
	json_decref(body);
}

int main(void)
{
	char dir[] = "/tmp/xgt-fxwrites-XXXXXX", path[300], err[300];
	struct held h = {0};
	struct ans a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0};
	const struct fx_core_hooks hk = {NULL, now_ms, NULL, event, NULL};
	struct fx_core *c;
	json_t *o, *l;
	uint64_t rv, lrev;
	int n = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f.db", dir);
	if (!(h.real = fx_store_sqlite_open(path, err, sizeof(err))))
		return 1;
	h.ops = *h.real->ops;
	h.ops.app_put_async = put_held;
	h.ops.app_del_async = del_held;
	h.ops.app_each = each;
	h.ops.revision = revision;
	h.ops.errmsg = errmsg;
	h.pub.ops = &h.ops;
	if (!(c = fx_test_core_new(&h.pub, &hk)))
		return 1;

	/* ---- a create in flight: nothing changes until it is durable ---- */
	write_app(c, FX_W_CREATE, NULL, app("echo", 0, 2), &a1);
	write_app(c, FX_W_CREATE, NULL, app("echo", 0, 3), &a2);
	CHECK(h.pending && !a1.calls && !a2.calls,
	      "a create is in flight, the second waits its turn");
	CHECK(!(o = fx_core_get(c, FX_K_APP, "default", "echo")) && !n_events,
	      "the core has no echo yet, and told no watcher");
	json_decref(o);
	l = fx_core_list(c, FX_K_APP, NULL, &lrev);
	CHECK(json_array_size(l) == 0 && lrev < h.rv,
	      "a list meanwhile is as of before the write's revision (%" PRIu64 " < %" PRIu64 ")",
	      lrev, h.rv);
	json_decref(l);
	release(&h, false);
	CHECK(a1.calls == 1 && !a1.code && rv_of(a1.out) == h.rv,
	      "durable: the first create is answered at its revision");
	CHECK((o = fx_core_get(c, FX_K_APP, "default", "echo")) && n_events == 1,
	      "the core has echo now, one event");
	json_decref(o);
	CHECK(a2.calls == 1 && a2.code == 409 && !h.pending,
	      "the second create of the name is a 409 when its turn comes, nothing sent");
	rv = rv_of(a1.out);

	/* ---- two updates from the same resourceVersion: the second is a 409 ---- */
	write_app(c, FX_W_UPDATE, "echo", app("echo", rv, 4), &a1);
	write_app(c, FX_W_UPDATE, "echo", app("echo", rv, 5), &a2);
	CHECK(h.pending && strstr(h.json, "\"maximumInstance\":4") && a2.calls == 1,
	      "the first update is in flight, the second waits");
	o = fx_core_get(c, FX_K_APP, "default", "echo");
	CHECK(o && rv_of(o) == rv, "echo is as it was while the update is in flight");
	json_decref(o);
	release(&h, false);
	CHECK(a1.calls == 2 && !a1.code && rv_of(a1.out) > rv,
	      "the first update: 200 at a new revision");
	CHECK(a2.calls == 2 && a2.code == 409, "the second, from the old resourceVersion: 409");

	/* ---- a failed write leaves nothing ---- */
	write_app(c, FX_W_CREATE, NULL, app("gone", 0, 2), &a3);
	release(&h, true);
	CHECK(a3.calls == 1 && a3.code == 500, "a create the store failed: 500");
	CHECK(!(o = fx_core_get(c, FX_K_APP, "default", "gone")), "and the core has nothing of it");
	json_decref(o);

	/* ---- a delete in flight ---- */
	write_app(c, FX_W_DELETE, "echo", NULL, &a3);
	CHECK((o = fx_core_get(c, FX_K_APP, "default", "echo")) != NULL && h.pending && h.del,
	      "echo is still there while its delete is in flight");
	json_decref(o);
	release(&h, false);
	CHECK(a3.calls == 2 && !a3.code && !(o = fx_core_get(c, FX_K_APP, "default", "echo")),
	      "deleted once durable");
	json_decref(o);

	/* ---- stopping with a write in flight and one waiting ---- */
	write_app(c, FX_W_CREATE, NULL, app("late", 0, 2), &a3);
	write_app(c, FX_W_CREATE, NULL, app("later", 0, 2), &a4);
	fx_core_writes_stop(c);
	CHECK(a3.calls == 3 && a3.code == 504, "stopping: the write in flight is answered 504");
	CHECK(a4.calls == 1 && a4.code == 503, "the one waiting 503 (nothing written)");
	write_app(c, FX_W_CREATE, NULL, app("after", 0, 2), &a4);
	CHECK(a4.calls == 2 && a4.code == 503, "a new one 503 at once");
	release(&h, false);
	CHECK(a3.calls == 3 && (o = fx_core_get(c, FX_K_APP, "default", "late")),
	      "the held write comes back: applied, not answered twice");
	json_decref(o);
	h.real->ops->app_each(h.real, stored_apps, &n);
	CHECK(n == 1, "the store holds late only");

	fx_core_free(c);
	json_decref(a1.out);
	json_decref(a2.out);
	json_decref(a3.out);
	json_decref(a4.out);
	h.real->ops->close(h.real);
	unlink(path);
	snprintf(path, sizeof(path), "%s/f.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/f.db-shm", dir);
	unlink(path);
	rmdir(dir);
	return unit_summary();
}
