// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's SQLite store, on a real file: applications written, replaced,
 * read back after a reopen, deleted; the revision only grows; node
 * credentials (digest and subnet) put, read, listed, deleted. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int main(void)
{
	char dir[] = "/tmp/xgt-fxstore-XXXXXX", path[300], err[300];
	unsigned char d1[CTL_TOKEN_HASH_LEN], d2[CTL_TOKEN_HASH_LEN];
	struct fx_store *s;
	struct seen seen = {0};
	uint64_t rev = 1;
	int subnet = -1;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f.db", dir);
	s = fx_store_sqlite_open(path, err, sizeof(err));
	CHECK(s != NULL, "open a new store: %s", s ? "ok" : err);
	if (!s)
		return unit_summary();
	CHECK(!s->ops->revision(s, &rev) && rev == 0, "a new store is at revision 0");
	CHECK(!s->ops->app_put(s, "default", "a", 10, "{\"v\":1}"), "put default/a at 10");
	CHECK(!s->ops->app_put(s, "default", "b", 11, "{\"v\":2}"), "put default/b at 11");
	CHECK(!s->ops->app_put(s, "default", "a", 12, "{\"v\":3}"), "replace default/a at 12");
	s->ops->close(s);

	s = fx_store_sqlite_open(path, err, sizeof(err));
	CHECK(s != NULL, "reopen");
	if (!s)
		return unit_summary();
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

	CHECK(fx_store_sqlite_open("/proc/nonexistent/x.db", err, sizeof(err)) == NULL &&
		  strstr(err, "/proc/nonexistent/x.db"),
	      "an unusable path is refused, named: %s", err);
	snprintf(err, sizeof(err), "rm -rf %s", dir);
	if (system(err))
		return 1;
	return unit_summary();
}
