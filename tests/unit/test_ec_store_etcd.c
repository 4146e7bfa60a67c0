// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd's store on etcd (store_etcd.h) against a real etcd
 * (XGATE_ETCD_ENDPOINTS, from tests/etcd.sh), each root with its own
 * SQLite view (leases of 30 s: a leader is deposed here by taking its key
 * away, not by time): what the leader writes reaches etcd and the standby's view
 * (rows, resourceVersions, state, a credential's bytes, deletes with their
 * state rows); the standby's writes are refused and reach nowhere; a
 * leader deposed without noticing (its election key taken away) writes
 * nothing, in etcd or in its own view; a standby whose watch resumes from
 * a compacted revision rereads everything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_etcd.h"
#include "ctl_log.h"
#include "store_etcd.h"
#include "tree_store.h"
#include "unit.h"

static char prefix[64], dir[64];

struct root {
	struct ec_store s;
	struct ec_etcd *m;
};

static int open_root(struct root *r, const char *ep, const char *name)
{
	char path[160], err[600];
	const struct ec_etcd_conf c = {
	    .endpoints = ep, .prefix = prefix, .id = name, .timeout_ms = 1000, .ttl_s = 30};

	snprintf(path, sizeof(path), "%s/%s.db", dir, name);
	if (ec_store_open(&r->s, path, err, sizeof(err))) {
		printf("# %s: %s\n", name, err);
		return -1;
	}
	if (!(r->m = ec_etcd_open(&r->s, &c, err, sizeof(err)))) {
		printf("# %s: %s\n", name, err);
		ec_store_close(&r->s);
		return -1;
	}
	return 0;
}

static void close_root(struct root *r)
{
	ec_etcd_close(r->m, true);
	ec_store_close(&r->s);
}

static struct ec_row mk(const char *name)
{
	struct ec_row r = {0};

	snprintf(r.name, sizeof(r.name), "%s", name);
	ec_uuid4(r.uid);
	ec_timestamp(1700000000, r.created);
	r.labels = strdup("{}");
	r.spec = strdup("{\"command\":{\"command\":[\"/bin/true\"]}}");
	return r;
}

static int create(struct root *r, const char *name, uint64_t *rv)
{
	struct ec_row row = mk(name);
	int rc = ec_store_create(&r->s, EC_T_MISSIONS, &row);

	if (rv)
		*rv = row.rv;
	ec_row_free(&row);
	return rc;
}

static int del(struct root *r, const char *name)
{
	struct ec_row old;
	int rc = ec_store_delete(&r->s, EC_T_MISSIONS, name, 0, &old);

	if (!rc)
		ec_row_free(&old);
	return rc;
}

/* step r until its view has mission name at rv (0: until it is gone) */
static bool sees(struct root *r, const char *name, uint64_t rv)
{
	for (int i = 0; i < 100; i++) {
		struct ec_row row;
		int rc;

		ec_etcd_step(r->m);
		rc = ec_store_get(&r->s, EC_T_MISSIONS, name, &row);
		if (!rc) {
			bool same = row.rv == rv;

			ec_row_free(&row);
			if (same)
				return true;
		} else if (rc == EC_ST_NOTFOUND && !rv) {
			return true;
		}
		usleep(50000);
	}
	return false;
}

static bool in_etcd(struct ctl_etcd *e, const char *name)
{
	struct ctl_etcd_kvs kv = {0};
	char key[160];
	bool there;

	snprintf(key, sizeof(key), "%srows/missions/[\"%s\"]", prefix, name);
	there = !ctl_etcd_get(e, key, false, false, &kv) && kv.n == 1;
	ctl_etcd_kvs_free(&kv);
	return there;
}

int main(void)
{
	const char *ep = getenv("XGATE_ETCD_ENDPOINTS");
	const struct ctl_etcd_conf ec = {.endpoints = ep, .timeout_ms = 2000};
	struct root a = {0}, b = {0}, c = {0};
	struct ec_cred cred = {0}, got = {0};
	struct ctl_etcd *e;
	uint64_t rv1 = 0, rv2 = 0, rv4 = 0, rv5 = 0;
	char err[300], key[160], *v = NULL;
	int64_t rev = 0;

	if (!ep) {
		printf("# XGATE_ETCD_ENDPOINTS is not set (run under tests/etcd.sh)\n");
		return 1;
	}
	snprintf(prefix, sizeof(prefix), "/xgt-ecse%d/", (int)getpid());
	snprintf(dir, sizeof(dir), "/tmp/xgt-ecse-XXXXXX");
	if (!mkdtemp(dir) || !(e = ctl_etcd_new(&ec, err, sizeof(err)))) {
		printf("# setup: %s\n", err);
		return 1;
	}

	/* ---- a leads, b stands by ---- */
	CHECK(!open_root(&a, ep, "a") && ec_etcd_leading(a.m), "a opens and leads");
	CHECK(!open_root(&b, ep, "b") && !ec_etcd_leading(b.m), "b opens as the standby");
	if (!a.m || !b.m)
		return unit_summary();
	CHECK(!strcmp(ec_etcd_leader(b.m), "a"), "b knows a leads: '%s'", ec_etcd_leader(b.m));

	CHECK(!create(&a, "m1", &rv1) && !create(&a, "m2", &rv2),
	      "a creates m1, m2 (rv %llu, %llu)", (unsigned long long)rv1, (unsigned long long)rv2);
	CHECK(!ec_store_state_put(&a.s, "m1", "c", "applied") &&
		  !ec_store_state_put(&a.s, "m2", "c", "ok"),
	      "a puts state keys");
	snprintf(cred.name, sizeof(cred.name), "c");
	for (int i = 0; i < EC_HASH_LEN; i++)
		cred.cur[i] = (unsigned char)(i * 7 + 1);
	cred.cur_expires = 1234567890123;
	CHECK(!ec_store_cred_put(&a.s, &cred), "a issues a credential");
	CHECK(in_etcd(e, "m1") && in_etcd(e, "m2"), "etcd holds m1 and m2");

	CHECK(sees(&b, "m1", rv1) && sees(&b, "m2", rv2), "b's view has m1 and m2 at a's rvs");
	CHECK(!ec_store_state_get(&b.s, "m1", "c", &v) && v && !strcmp(v, "applied"),
	      "b has m1's state key: %s", v ? v : "(none)");
	free(v);
	v = NULL;
	CHECK(!ec_store_cred_get(&b.s, "c", &got) && !memcmp(got.cur, cred.cur, EC_HASH_LEN) &&
		  got.cur_expires == cred.cur_expires,
	      "b has the credential's digest, byte for byte");

	CHECK(!del(&a, "m2"), "a deletes m2");
	{
		struct ctl_etcd_kvs kv = {0};

		snprintf(key, sizeof(key), "%srows/mstate/[\"m2\",\"c\"]", prefix);
		CHECK(!ctl_etcd_get(e, key, false, false, &kv) && kv.n == 0,
		      "etcd lost m2's state row with it (the trigger's delete is sent too)");
		ctl_etcd_kvs_free(&kv);
	}
	CHECK(sees(&b, "m2", 0), "b's view loses m2");
	CHECK(ec_store_state_get(&b.s, "m2", "c", &v) == EC_ST_NOTFOUND, "and its state rows");
	free(v);
	v = NULL;

	/* ---- a group larger than one etcd txn takes: by ops, by bytes ---- */
	{
		char name[32];
		uint64_t rvl = 0;
		int rc = ec_store_tx_begin(&a.s, 0);

		for (int i = 0; i < 200 && !rc; i++) {
			snprintf(name, sizeof(name), "many-%03d", i);
			rc = create(&a, name, &rvl);
		}
		CHECK(!ec_store_tx_end(&a.s, rc), "a writes 200 missions in one group (%s)",
		      ec_store_errmsg(&a.s));
		CHECK(sees(&b, "many-199", rvl) && sees(&b, "many-000", rvl - 199),
		      "b's view has all of them (etcd's txns take 128 ops at most)");
	}
	{
		char name[32], *big = malloc(100 << 10);
		uint64_t rvl = 0;
		int rc = big ? ec_store_tx_begin(&a.s, 0) : -1;

		if (big) {
			memset(big, 'x', (100 << 10) - 1);
			big[(100 << 10) - 1] = 0;
		}
		for (int i = 0; i < 20 && !rc; i++) {
			struct ec_row row = mk("");

			snprintf(row.name, sizeof(row.name), "big-%02d", i);
			free(row.spec);
			if (asprintf(&row.spec, "{\"content\":\"%s\"}", big) < 0)
				row.spec = NULL;
			rc = row.spec ? ec_store_create(&a.s, EC_T_MISSIONS, &row) : -1;
			rvl = row.rv;
			ec_row_free(&row);
		}
		free(big);
		CHECK(!ec_store_tx_end(&a.s, rc), "a writes 2 MB of missions in one group (%s)",
		      ec_store_errmsg(&a.s));
		snprintf(name, sizeof(name), "big-%02d", 19);
		CHECK(sees(&b, name, rvl), "b's view has them (etcd takes 1.5 MiB a request)");
	}

	/* ---- a group whose second txn etcd refuses (a row over its request
	 * limit, in a table the session lists after the missions): the first
	 * is in etcd, SQLite rolled the group back: 504, and the leader's view
	 * is read again from etcd ---- */
	{
		char name[32], *big = malloc(2 << 20);
		struct ec_row row = mk("huge");
		int rc = big ? ec_store_tx_begin(&a.s, 0) : -1;

		for (int i = 0; i < 130 && !rc; i++) {
			snprintf(name, sizeof(name), "part-%03d", i);
			rc = create(&a, name, NULL);
		}
		if (big) {
			memset(big, 'x', (2 << 20) - 1);
			big[(2 << 20) - 1] = 0;
			free(row.spec);
			if (asprintf(&row.spec, "{\"content\":\"%s\"}", big) < 0)
				row.spec = NULL;
		}
		if (!rc)
			rc = row.spec ? ec_store_create(&a.s, EC_T_CLUSTERS, &row) : -1;
		free(big);
		ec_row_free(&row);
		rc = ec_store_tx_end(&a.s, rc);
		CHECK(rc == -1 && ec_store_maybe_applied(&a.s),
		      "a group with a 2 MB row fails, and may be partly applied (%s)",
		      ec_store_errmsg(&a.s));
		CHECK(in_etcd(e, "part-000") || in_etcd(e, "part-129"),
		      "etcd holds the first txn's missions");
		for (int i = 0; i < 50; i++) {
			ec_etcd_step(a.m);
			usleep(20000);
		}
		{
			int n_a = 0, n_e = 0;

			for (int i = 0; i < 130; i++) {
				struct ec_row r;

				snprintf(name, sizeof(name), "part-%03d", i);
				if (!ec_store_get(&a.s, EC_T_MISSIONS, name, &r)) {
					n_a++;
					ec_row_free(&r);
				}
				n_e += in_etcd(e, name);
			}
			CHECK(n_a == n_e && n_e > 0, "a's view has what etcd has of it (%d, %d)",
			      n_a, n_e);
		}
	}

	/* ---- the standby writes nothing ---- */
	CHECK(create(&b, "from-b", NULL) == -1, "b's create is refused: %s", ec_store_errmsg(&b.s));
	CHECK(strstr(ec_store_errmsg(&b.s), "standby") != NULL, "saying b is a standby");
	CHECK(!in_etcd(e, "from-b"), "etcd has nothing of it");
	CHECK(sees(&b, "from-b", 0), "nor has b's view");

	/* ---- a deposed without noticing: its key goes, b takes over ---- */
	snprintf(key, sizeof(key), "%sleader", prefix);
	CHECK(!ctl_etcd_delete(e, key, false, NULL), "the election key is taken from a");
	for (int i = 0; i < 60 && !ec_etcd_leading(b.m); i++) {
		ec_etcd_step(b.m);
		usleep(50000);
	}
	CHECK(ec_etcd_leading(b.m), "b leads");
	CHECK(ec_etcd_leading(a.m), "a still believes it leads (it has not looked)");
	CHECK(create(&a, "from-a", NULL) == -1, "a's write is fenced off: %s",
	      ec_store_errmsg(&a.s));
	CHECK(!in_etcd(e, "from-a"), "etcd has nothing of it");
	{
		struct ec_row row;
		int rc = ec_store_get(&a.s, EC_T_MISSIONS, "from-a", &row);

		if (!rc)
			ec_row_free(&row);
		CHECK(rc == EC_ST_NOTFOUND, "nor has a's own view (rolled back)");
	}
	CHECK(ec_etcd_step(a.m) == EC_ETCD_LOST, "a's next step says it lost the lead");

	/* ---- a row etcd has that the leader did not write just before: a write
	 * of its own that etcd applied late (here written behind its back),
	 * then a write of the leader's: the leader rereads ---- */
	{
		static const char row[] =
		    "{\"name\":\"late\",\"uid\":\"u-late\",\"rv\":99,\"created\":"
		    "\"2023-11-14T22:13:20Z\",\"labels\":\"{}\",\"spec\":\"{}\",\"state\":"
		    "\"{}\",\"annotations\":\"{}\"}";
		uint64_t rv3 = 0;

		snprintf(key, sizeof(key), "%srows/missions/[\"late\"]", prefix);
		CHECK(!ctl_etcd_put(e, key, row, strlen(row), 0, NULL),
		      "a row appears in etcd behind the leader's back");
		CHECK(!create(&b, "m3", &rv3), "then the leader b writes m3");
		CHECK(sees(&b, "late", 99) && sees(&b, "m3", rv3),
		      "b's view gets the row (a reread) and keeps m3");
	}
	snprintf(key, sizeof(key), "%sleader", prefix);

	/* ---- a standby whose watch resumes from a compacted revision ---- */
	CHECK(!open_root(&c, ep, "c") && !ec_etcd_leading(c.m), "c opens as a standby");
	CHECK(!create(&b, "m4", &rv4) && !create(&b, "m5", &rv5) && !del(&b, "m1"),
	      "b creates m4, m5 and deletes m1");
	{
		struct ctl_etcd_kvs kv = {0};

		if (!ctl_etcd_get(e, key, false, false, &kv))
			rev = kv.revision;
		ctl_etcd_kvs_free(&kv);
	}
	CHECK(rev > 0 && !ctl_etcd_compact(e, rev), "etcd compacted at %lld", (long long)rev);
	CHECK(c.m && sees(&c, "m5", rv5) && sees(&c, "m4", rv4) && sees(&c, "m1", 0),
	      "c rereads: m4 and m5 at b's rvs, m1 gone");
	CHECK(c.m && rv5 > rv1, "the rvs go on across the takeover (%llu > %llu)",
	      (unsigned long long)rv5, (unsigned long long)rv1);

	if (c.m)
		close_root(&c);
	close_root(&b);
	close_root(&a);
	ctl_etcd_delete(e, prefix, true, NULL);
	ctl_etcd_free(e);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			printf("# cannot remove %s\n", dir);
	}
	return unit_summary();
}
