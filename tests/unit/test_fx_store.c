// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's store, the same contract on both backends: SQLite on a real
 * file, and, when run under tests/etcd.sh (XGATE_ETCD_ENDPOINTS), etcd on a
 * real cluster. Applications written, replaced, read back after a reopen,
 * deleted; the revision only grows; node credentials (digest and subnet)
 * put, read, listed, deleted. On etcd also: an unreachable etcd is refused
 * at open, naming it; a standby's view follows another store's writes, and
 * after a compacted gap rereads everything (a delete in the gap is not
 * missed); with two of three members gone a write fails as "no quorum"
 * while the applications still read, also after a reopen. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_test.h"
#include "store.h"
#include "unit.h"

struct seen {
	int n;
	char last[256];
	uint64_t rv;
};

static int count_app(void *arg, const char *json, uint64_t rv)
{
	struct seen *s = arg;

	s->n++;
	snprintf(s->last, sizeof(s->last), "%s", json);
	s->rv = rv;
	return 0;
}

static int count_node(void *arg, const char *name, int subnet)
{
	struct seen *s = arg;

	s->n++;
	snprintf(s->last, sizeof(s->last), "%s:%d", name, subnet);
	return 0;
}

/* a store: open (again) the same one */
struct backend {
	const char *name;
	char path[300];			/* sqlite */
	struct fx_store_etcd_conf etcd; /* etcd */
};

static struct fx_store *reopen(struct backend *b, char *err, size_t errlen)
{
	if (b->etcd.endpoints)
		return fx_store_etcd_open(&b->etcd, err, errlen);
	return fx_store_sqlite_open(b->path, err, errlen);
}

static void contract(struct backend *b)
{
	char err[600];
	unsigned char d1[CTL_TOKEN_HASH_LEN], d2[CTL_TOKEN_HASH_LEN];
	struct fx_store *s;
	struct seen seen = {0};
	uint64_t rev = 1;
	int subnet = -1;

	printf("# %s\n", b->name);
	s = reopen(b, err, sizeof(err));
	CHECK(s != NULL, "%s: open a new store: %s", b->name, s ? "ok" : err);
	if (!s)
		return;
	CHECK(!s->ops->revision(s, &rev) && rev == 0, "a new store is at revision 0");
	CHECK(!s->ops->app_put(s, "default", "a", 10, "{\"v\":1}"), "put default/a at 10");
	CHECK(!s->ops->app_put(s, "default", "b", 11, "{\"v\":2}"), "put default/b at 11");
	CHECK(!s->ops->app_put(s, "default", "a", 12, "{\"v\":3}"), "replace default/a at 12");
	s->ops->close(s);

	s = reopen(b, err, sizeof(err));
	CHECK(s != NULL, "reopen");
	if (!s)
		return;
	CHECK(!s->ops->app_each(s, count_app, &seen) && seen.n == 2 && seen.rv == 12 &&
		  !strcmp(seen.last, "{\"v\":3}"),
	      "after the reopen: 2 applications, the replaced one last at 12 (%d, %s)", seen.n,
	      seen.last);
	CHECK(!s->ops->revision(s, &rev) && rev == 12, "revision 12 (%llu)",
	      (unsigned long long)rev);
	CHECK(s->ops->app_del(s, "default", "a", 13) == 0, "delete default/a at 13");
	CHECK(s->ops->app_del(s, "default", "a", 14) == 1, "deleting it again: absent");
	CHECK(!s->ops->revision(s, &rev) && rev == 13, "a delete moves the revision (13)");
	CHECK(!s->ops->app_put(s, "default", "c", 5, "{}") && !s->ops->revision(s, &rev) &&
		  rev == 13,
	      "a lower write does not move it back");
	seen.n = 0;
	CHECK(!s->ops->app_each(s, count_app, &seen) && seen.n == 2, "2 applications left");

	memset(d1, 1, sizeof(d1));
	d1[0] = 0xab;
	CHECK(s->ops->node_get(s, "node-a", d2, &subnet) == 0, "no credential for node-a yet");
	CHECK(!s->ops->node_put(s, "node-a", d1, 3), "put node-a's digest, subnet 3");
	CHECK(s->ops->node_get(s, "node-a", d2, &subnet) == 1 && !memcmp(d1, d2, sizeof(d1)) &&
		  subnet == 3,
	      "read back node-a's digest and subnet");
	seen.n = 0;
	CHECK(!s->ops->node_each(s, count_node, &seen) && seen.n == 1 &&
		  !strcmp(seen.last, "node-a:3"),
	      "node_each lists it (%s)", seen.last);
	CHECK(s->ops->node_del(s, "node-a") == 0 && s->ops->node_del(s, "node-a") == 1,
	      "delete node-a; again: absent");
	CHECK(s->ops->node_get(s, "node-a", d2, &subnet) == 0, "node-a is gone");
	s->ops->close(s);
}

struct view {
	int resets, puts, dels;
	char last[256];
};

static void v_reset(void *arg)
{
	struct view *v = arg;

	v->resets++;
	v->puts = v->dels = 0;
}

static void v_put(void *arg, const char *ns, const char *name, uint64_t rv, const char *json)
{
	struct view *v = arg;

	v->puts++;
	snprintf(v->last, sizeof(v->last), "%s/%s@%llu %s", ns, name, (unsigned long long)rv, json);
}

static void v_del(void *arg, const char *ns, const char *name)
{
	struct view *v = arg;

	v->dels++;
	snprintf(v->last, sizeof(v->last), "-%s/%s", ns, name);
}

/* a standby's view: another store's writes arrive through the watch */
static void watch_apps(struct backend *b)
{
	struct view v = {0};
	const struct fx_store_app_hooks h = {&v, v_reset, v_put, v_del, NULL};
	char err[600];
	struct fx_store *s = reopen(b, err, sizeof(err)), *writer = reopen(b, err, sizeof(err));
	struct fx_store_watch *sw = s ? fx_store_etcd_watch_apps(s, &h) : NULL;

	CHECK(sw != NULL, "watch the applications");
	if (!sw || !writer)
		return;
	for (int i = 0; i < 100 && !v.resets; i++)
		fx_store_watch_poll(sw, 50);
	CHECK(v.resets == 1 && v.puts == 2, "it starts with every application (%d)", v.puts);
	writer->ops->app_put(writer, "default", "v", 30, "{\"x\":1}");
	for (int i = 0; i < 100 && v.puts < 3; i++)
		fx_store_watch_poll(sw, 50);
	CHECK(v.puts == 3 && !strcmp(v.last, "default/v@30 {\"x\":1}"),
	      "another store's write arrives, parsed (%s)", v.last);
	writer->ops->app_del(writer, "default", "v", 31);
	for (int i = 0; i < 100 && !v.dels; i++)
		fx_store_watch_poll(sw, 50);
	CHECK(v.dels == 1 && !strcmp(v.last, "-default/v"), "and its delete (%s)", v.last);
	fx_store_watch_stop(sw);
	writer->ops->close(writer);
	s->ops->close(s);
}

/* the applications a view holds, "[ns/name]" each */
struct set {
	int resets, dels;
	char names[512];
};

static void set_reset(void *arg)
{
	struct set *v = arg;

	v->resets++;
	v->names[0] = 0;
}

static void set_put(void *arg, const char *ns, const char *name, uint64_t rv, const char *json)
{
	struct set *v = arg;
	char k[128];

	(void)rv;
	(void)json;
	snprintf(k, sizeof(k), "[%s/%s]", ns, name);
	if (!strstr(v->names, k) && strlen(v->names) + strlen(k) < sizeof(v->names))
		strcat(v->names, k);
}

static void set_del(void *arg, const char *ns, const char *name)
{
	struct set *v = arg;
	char k[128], *at;

	v->dels++;
	snprintf(k, sizeof(k), "[%s/%s]", ns, name);
	if ((at = strstr(v->names, k)))
		memmove(at, at + strlen(k), strlen(at + strlen(k)) + 1);
}

/* A standby's view across a compacted gap: its stream breaks (the member it
 * reads from is killed), meanwhile an application is deleted and another
 * created, and etcd compacts past the view's revision. The delete is then
 * nowhere to be read: only a reset and a full reread can drop the deleted
 * application, and that is what the view must do when it resumes. On a
 * prefix of its own, so the other checks' counts stay as they are. Kills
 * member 0 (no_quorum, after it, kills 0 and 1). */
static void compacted_gap(const struct backend *b, const struct etcd_test_members *m)
{
	struct backend g = *b;
	struct set v = {0};
	const struct fx_store_app_hooks h = {&v, set_reset, set_put, set_del, NULL};
	char err[600], prefix[128];
	struct fx_store *s, *writer;
	struct fx_store_watch *sw;
	struct ctl_etcd_kvs all;
	struct ctl_etcd *wc;
	int64_t rev = 0;

	snprintf(prefix, sizeof(prefix), "%sgap/", b->etcd.prefix);
	g.etcd.prefix = prefix;
	s = reopen(&g, err, sizeof(err));
	writer = reopen(&g, err, sizeof(err));
	if (!s || !writer)
		return;
	writer->ops->app_put(writer, "default", "old", 1, "{}");
	writer->ops->app_put(writer, "default", "keep", 2, "{}");
	sw = fx_store_etcd_watch_apps(s, &h);
	for (int i = 0; sw && i < 100 && !v.resets; i++)
		fx_store_watch_poll(sw, 50);
	CHECK(v.resets == 1 && !strcmp(v.names, "[default/keep][default/old]"),
	      "the view starts with both applications (%s)", v.names);
	CHECK(!strcmp(ctl_etcd_endpoint(fx_store_etcd_client(s)), m->url[0]),
	      "it reads from member 0 (%s)", ctl_etcd_endpoint(fx_store_etcd_client(s)));

	etcd_test_signal(m->pid[0], SIGKILL, ") Z ");
	CHECK(!writer->ops->app_del(writer, "default", "old", 3) &&
		  !writer->ops->app_put(writer, "default", "new", 4, "{}"),
	      "meanwhile, on another member: old deleted, new created (%s)",
	      writer->ops->errmsg(writer));
	wc = fx_store_etcd_client(writer);
	CHECK(!ctl_etcd_get(wc, prefix, true, false, &all) && !ctl_etcd_compact(wc, all.revision),
	      "etcd compacts up to %lld, past the view's revision", (long long)all.revision);
	rev = all.revision;
	ctl_etcd_kvs_free(&all);

	for (int i = 0; sw && i < 400 && v.resets < 2; i++)
		fx_store_watch_poll(sw, 50);
	for (int i = 0; sw && i < 10; i++)
		fx_store_watch_poll(sw, 20); /* anything the resumed stream still brings */
	CHECK(v.resets == 2 && v.dels == 0,
	      "on resume the view was reset and reread (%d resets), no delete event (%d)", v.resets,
	      v.dels);
	CHECK(!strcmp(v.names, "[default/keep][default/new]"),
	      "the deleted application is gone, the new one there (%s)", v.names);
	CHECK(ctl_etcd_get(fx_store_etcd_client(s), prefix, true, true, &all) == 0 &&
		  all.revision >= rev,
	      "the view's client reads on, from another member");
	ctl_etcd_kvs_free(&all);
	fx_store_watch_stop(sw);
	writer->ops->close(writer);
	s->ops->close(s);
}

/* etcd without two of its three members: writes refused as such, reads go on */
static void no_quorum(struct backend *b, const struct etcd_test_members *m)
{
	struct seen seen = {0};
	char err[600];
	struct fx_store *s;
	int n;
	uint64_t rev = 0;

	s = reopen(b, err, sizeof(err));
	if (!s)
		return;
	etcd_test_signal(m->pid[0], SIGKILL, ") Z ");
	etcd_test_signal(m->pid[1], SIGKILL, ") Z ");
	n = s->ops->app_put(s, "default", "d", 20, "{}");
	CHECK(n == -1 && strstr(s->ops->errmsg(s), "no quorum"),
	      "without a quorum a write fails, saying why: %s", s->ops->errmsg(s));
	CHECK(!s->ops->app_each(s, count_app, &seen) && seen.n == 2,
	      "the applications still read (%d)", seen.n);
	s->ops->close(s);
	s = reopen(b, err, sizeof(err));
	seen.n = 0;
	CHECK(s && !s->ops->revision(s, &rev) && rev == 31 &&
		  !s->ops->app_each(s, count_app, &seen) && seen.n == 2,
	      "a store opened now starts on what the member knows: revision %llu, %d applications",
	      (unsigned long long)rev, seen.n);
	if (s)
		s->ops->close(s);
}

int main(void)
{
	char dir[] = "/tmp/xgt-fxstore-XXXXXX", cmd[300], err[600], prefix[64];
	struct backend sq = {.name = "sqlite"}, et = {.name = "etcd"};
	const struct fx_store_etcd_conf dead = {.endpoints = "http://127.0.0.1:1"};
	const char *ep = getenv("XGATE_ETCD_ENDPOINTS");
	struct etcd_test_members m;

	if (!mkdtemp(dir))
		return 1;
	snprintf(sq.path, sizeof(sq.path), "%s/f.db", dir);
	contract(&sq);
	{
		char e2[600];
		struct fx_store *s = fx_store_sqlite_open(sq.path, e2, sizeof(e2));
		const struct fx_store_app_hooks h = {NULL, NULL, NULL, NULL, NULL};

		CHECK(s && !fx_store_etcd_watch_apps(s, &h), "SQLite has no watch of its own");
		if (s)
			s->ops->close(s);
	}
	CHECK(fx_store_sqlite_open("/proc/nonexistent/x.db", err, sizeof(err)) == NULL &&
		  strstr(err, "/proc/nonexistent/x.db"),
	      "an unusable path is refused, named: %s", err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;

	if (ep) {
		snprintf(prefix, sizeof(prefix), "/xgt-fxstore-%d/", (int)getpid());
		et.etcd.endpoints = ep;
		et.etcd.prefix = prefix;
		et.etcd.timeout_ms = 2000;
		contract(&et);
		CHECK(fx_store_etcd_open(&dead, err, sizeof(err)) == NULL &&
			  strstr(err, "unreachable") && strstr(err, "http://127.0.0.1:1"),
		      "an unreachable etcd is refused at open, named: %s", err);
		watch_apps(&et);
		if (etcd_test_members(&m) == 3) {
			compacted_gap(&et, &m);
			no_quorum(&et, &m);
		}
	}
	return unit_summary();
}
