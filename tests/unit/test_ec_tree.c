// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd slice 2 on a real SQLite file, without lws: state maps keyed
 * by path (replace a child's subtree, mark it unreachable), the outbox,
 * missions applied from a parent (no rewrite of unchanged ones, the digest,
 * local edits undone by anti-entropy, local missions kept), descendants'
 * EdgeCluster rows (name clashes, removal), credentials, and the Attach
 * resource through api_handle. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "tree.h"
#include "unit.h"

/* the daemon's log and clock (main.c); quiet here */
void ecd_log(const char *fmt, ...)
{
	(void)fmt;
}

uint64_t ecd_now_ms(void)
{
	return 0;
}

static char *state_of(struct ec_store *s, const char *m)
{
	struct ec_row r;
	char *st;

	if (ec_store_get(s, EC_T_MISSIONS, m, &r))
		return strdup("(none)");
	st = strdup(r.state);
	ec_row_free(&r);
	return st;
}

static int outbox_cb(void *arg, const char *mission, int64_t seq)
{
	char *buf = arg;

	(void)seq;
	strcat(buf, mission);
	strcat(buf, " ");
	return 0;
}

static int outbox_max(void *arg, const char *mission, int64_t seq)
{
	(void)mission;
	if (seq > *(int64_t *)arg)
		*(int64_t *)arg = seq;
	return 0;
}

/* The highest seq in the outbox (0: empty). */
static int64_t outbox_top(struct ec_store *s)
{
	int64_t top = 0;

	ec_store_outbox_list(s, 0, outbox_max, &top);
	return top;
}

static json_t *pmission(const char *name, const char *uid, const char *rv, const char *content)
{
	return json_pack("{s:{s:s,s:s,s:s,s:s,s:{}},s:{s:s}}", "metadata", "name", name, "uid", uid,
			 "resourceVersion", rv, "creationTimestamp", "2025-01-01T00:00:00Z",
			 "labels", "spec", "content", content);
}

static uint64_t rv_of(struct ec_store *s, const char *m)
{
	struct ec_row r = {0};
	uint64_t rv = 0;

	if (!ec_store_get(s, EC_T_MISSIONS, m, &r))
		rv = r.rv;
	ec_row_free(&r);
	return rv;
}

static json_t *cluster(const char *name, const char *path)
{
	return json_pack("{s:{s:s,s:s,s:s,s:{}},s:{},s:{s:s,s:s}}", "metadata", "name", name, "uid",
			 "00000000-0000-4000-8000-000000000000", "creationTimestamp",
			 "2025-01-01T00:00:00Z", "labels", "spec", "state", "path", path, "health",
			 "ok");
}

static void call(struct ecd *d, enum ec_method m, const char *body, struct api_resp *rs)
{
	struct api_req rq = {.method = m,
			     .method_name = m == EC_PUT	     ? "PUT"
					    : m == EC_DELETE ? "DELETE"
							     : "GET",
			     .path = "/apis/edge.xgate.io/v1/attach",
			     .query = "",
			     .content_type = "application/json",
			     .body = body,
			     .body_len = body ? strlen(body) : 0,
			     .peer = "test"};

	free(rs->body);
	api_handle(d, &rq, rs);
}

static const char *field(struct api_resp *rs, const char *a, const char *b)
{
	static char buf[256];
	json_t *v = json_loads(rs->body, 0, NULL);

	snprintf(buf, sizeof(buf), "%s",
		 json_string_value(json_object_get(json_object_get(v, a), b))
		     ? json_string_value(json_object_get(json_object_get(v, a), b))
		     : "(none)");
	json_decref(v);
	return buf;
}

int main(void)
{
	char dir[] = "/tmp/ec-tree-XXXXXX", path[128], err[256], cmd[160], hex[65], hex2[65];
	char box[256] = "", *st;
	struct ec_store s;
	struct ec_row r = {0};
	struct ec_state_item it;
	struct ec_sync_out out;
	struct ec_digest g;
	struct ec_attach a;
	struct ec_cred cr, cr2;
	json_t *map, *ups, *objs, *inh;
	uint64_t rev, rev2, rv1;
	int clashes;

	if (sodium_init() < 0 || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.db", dir);
	CHECK(ec_store_open(&s, path, err, sizeof(err)) == 0, "open (%s)", err);

	/* ---- the config's tree keys ---- */
	{
		struct ec_conf c;
		unsigned char dg[EC_HASH_LEN];

		CHECK(ec_conf_parse("t.conf",
				    "[Cluster]\nName = a\n[API]\nToken = 0123456789abcdef\n[Hub]\n"
				    "JoinToken = join-0123456789abcdef\nJoinToken = "
				    "join-fedcba9876543210\nCredentialLifetime = 60\n[Intervals]\n"
				    "ReconnectMax = 5\n",
				    &c, err, sizeof(err)) == 0,
		      "[Hub] JoinToken (twice), CredentialLifetime, ReconnectMax (%s)", err);
		ec_token_digest("join-fedcba9876543210", 21, dg);
		CHECK(c.n_join_tokens == 2 && !memcmp(c.join_tokens[1], dg, EC_HASH_LEN) &&
			  c.credential_s == 60 && c.reconnect_max_s == 5,
		      "join tokens kept as digests; lifetime 60 s; backoff ceiling 5 s");
		CHECK(ec_conf_parse("t.conf",
				    "[Cluster]\nName = a\n[API]\nToken = 0123456789abcdef\n", &c,
				    err, sizeof(err)) == 0 &&
			  c.credential_s == 30 * 86400 && c.reconnect_max_s == 30 &&
			  !c.n_join_tokens,
		      "defaults: 30 days, 30 s, no join token");
		CHECK(ec_conf_parse("t.conf", "[Cluster]\nName = a\n[Hub]\nJoinToken = short\n", &c,
				    err, sizeof(err)) &&
			  strstr(err, "t.conf:4: JoinToken must be 16-256"),
		      "a short join token names its line: %s", err);
		CHECK(ec_conf_parse("t.conf",
				    "[Cluster]\nName = a\nInstallScript = /nonexistent/x\n", &c,
				    err, sizeof(err)) &&
			  strstr(err, "t.conf:3: InstallScript /nonexistent/x"),
		      "an unreadable InstallScript: %s", err);
		CHECK(ec_conf_parse("t.conf",
				    "[Cluster]\nName = a\n[Hub]\nCredentialLifetime = 1\n", &c, err,
				    sizeof(err)) &&
			  strstr(err, "t.conf:4: CredentialLifetime"),
		      "CredentialLifetime 1: refused (%s)", err);
	}

	/* ---- paths ---- */
	CHECK(tree_path_ok("b") && tree_path_ok("b/c/d") && !tree_path_ok("") &&
		  !tree_path_ok("b//c") && !tree_path_ok("b/") && !tree_path_ok("B") &&
		  !tree_path_ok("/b"),
	      "tree_path_ok: DNS labels joined by /");
	CHECK(tree_in_subtree("b", "b") && tree_in_subtree("b/c", "b") &&
		  !tree_in_subtree("bb", "b") && !tree_in_subtree("a", "b"),
	      "tree_in_subtree: b and b/..., not bb");

	/* ---- state maps ---- */
	snprintf(r.name, sizeof(r.name), "m1");
	ec_uuid4(r.uid);
	ec_timestamp(time(NULL), r.created);
	r.labels = strdup("{}");
	r.spec = strdup("{\"content\":\"x\"}");
	r.state = strdup("{\"ignored\":\"x\"}");
	CHECK(ec_store_create(&s, EC_T_MISSIONS, &r) == 0 &&
		  ec_store_state_put(&s, "m1", "a", "x") == 0 &&
		  ec_store_state_put(&s, "m1", "b", "y") == 0 &&
		  ec_store_state_put(&s, "m1", "b/c", "z") == 0 &&
		  ec_store_state_put(&s, "m1", "bb", "w") == 0 &&
		  ec_store_state_put(&s, "m1", "b-1", "v") == 0 &&
		  ec_store_state_put(&s, "m1", "b0", "u") == 0,
	      "a mission with a state map (b-1 and b0 sort around b's subtree, not in it)");
	ec_row_free(&r);
	ec_store_revision(&s, &rev);
	map = json_pack("{s:s,s:s,s:s}", "b", "1", "b/d", "2", "c", "not b's");
	it = (struct ec_state_item){.mission = "m1", .map = map};
	CHECK(ec_store_state_replace_batch(&s, "b", &it, 1, true) == 0 && it.found,
	      "replace b's subtree");
	st = state_of(&s, "m1");
	CHECK(!strcmp(st, "{\"a\":\"x\",\"b\":\"1\",\"b-1\":\"v\",\"b/d\":\"2\",\"b0\":\"u\","
			  "\"bb\":\"w\"}"),
	      "b and b/c replaced by b and b/d; a, b-1, b0, bb kept; a key outside b's subtree "
	      "ignored: %s",
	      st);
	free(st);
	json_decref(map);
	ec_store_revision(&s, &rev2);
	CHECK(rev2 == rev, "state writes do not bump the revision");
	map = json_object();
	CHECK(ec_store_state_replace_subtree(&s, "gone", "b", map) == EC_ST_NOTFOUND,
	      "a report for a mission that is not here: not found");
	json_decref(map);
	ec_store_outbox_list(&s, 0, outbox_cb, box);
	CHECK(!strcmp(box, "m1 "), "owed: m1 is in the outbox (%s)", box);
	CHECK(ec_store_state_mark_subtree(&s, "b", "unreachable", false) == 0,
	      "mark b unreachable");
	st = state_of(&s, "m1");
	CHECK(!strcmp(st,
		      "{\"a\":\"x\",\"b\":\"unreachable\",\"b-1\":\"v\",\"b/d\":\"unreachable\","
		      "\"b0\":\"u\",\"bb\":\"w\"}"),
	      "b's subtree unreachable, the rest untouched: %s", st);
	free(st);
	CHECK(ec_store_outbox_ack(&s, 1000) == 0, "ack");
	box[0] = 0;
	ec_store_outbox_list(&s, 0, outbox_cb, box);
	CHECK(!box[0], "acked: the outbox is empty");
	CHECK(ec_store_outbox_mark_all(&s) == 0, "owe everything (a resync)");
	ec_store_outbox_list(&s, 0, outbox_cb, box);
	CHECK(!strcmp(box, "m1 "), "m1 owed again");
	{
		int64_t s1 = outbox_top(&s), s2 = 0, s3 = 0;

		CHECK(ec_store_tx_begin(&s, 0) == 0 && ec_store_outbox_mark(&s, "m1") == 0 &&
			  outbox_top(&s) > s1 && ec_store_tx_end(&s, -1) == -1 &&
			  outbox_top(&s) == s1,
		      "a mark rolled back with its group: m1 keeps seq %lld", (long long)s1);
		CHECK(ec_store_outbox_mark(&s, "m1") == 0 && (s2 = outbox_top(&s)) > s1,
		      "marked again: a higher seq (%lld > %lld)", (long long)s2, (long long)s1);
		ec_store_close(&s);
		CHECK(ec_store_open(&s, path, err, sizeof(err)) == 0 &&
			  ec_store_outbox_mark(&s, "m1") == 0 && (s3 = outbox_top(&s)) > s2,
		      "reopened: the counter went on from the committed seq (%lld > %lld)",
		      (long long)s3, (long long)s2);
	}

	/* ---- missions from a parent ---- */
	ups = json_pack("[o,o]", pmission("p1", "11111111-1111-4111-8111-111111111111", "7", "one"),
			pmission("p2", "22222222-2222-4222-8222-222222222222", "8", "two"));
	CHECK(ec_store_sync_apply(&s, ups, NULL, &out) == 0 && json_array_size(out.changed) == 2,
	      "two missions from the parent written");
	json_decref(out.changed);
	rv1 = rv_of(&s, "p1");
	CHECK(ec_store_sync_apply(&s, ups, NULL, &out) == 0 && json_array_size(out.changed) == 0 &&
		  rv_of(&s, "p1") == rv1,
	      "the same batch again: nothing rewritten, rv %llu kept", (unsigned long long)rv1);
	json_decref(out.changed);
	ec_digest_init(&g);
	ec_digest_add(&g, "p1", "11111111-1111-4111-8111-111111111111", 7);
	ec_digest_add(&g, "p2", "22222222-2222-4222-8222-222222222222", 8);
	ec_digest_final(&g, hex);
	CHECK(
	    ec_store_inherited_digest(&s, hex2) == 0 && !strcmp(hex, hex2),
	    "the child's digest is the parent's over (name, uid, parent rv); m1 (local) is not in "
	    "it");
	json_decref(ups);
	{ /* kubectl apply here leaves its annotation on the inherited p1 */
		struct ec_row e;

		ec_store_get(&s, EC_T_MISSIONS, "p1", &e);
		free(e.annotations);
		e.annotations = strdup("{\"k\":\"v\"}");
		ec_store_replace(&s, EC_T_MISSIONS, &e, e.rv);
		ec_row_free(&e);
	}
	ups =
	    json_pack("[o]", pmission("p1", "11111111-1111-4111-8111-111111111111", "9", "one v2"));
	CHECK(ec_store_sync_apply(&s, ups, NULL, &out) == 0 && json_array_size(out.changed) == 1 &&
		  rv_of(&s, "p1") > rv1,
	      "a changed spec is rewritten with a new rv");
	json_decref(out.changed);
	{
		struct ec_row e = {0};

		CHECK(ec_store_get(&s, EC_T_MISSIONS, "p1", &e) == 0 && e.annotations &&
			  !strcmp(e.annotations, "{}"),
		      "the parent's version replaces a local annotation too: %s",
		      e.annotations ? e.annotations : "-");
		ec_row_free(&e);
	}
	json_decref(ups);
	/* a local edit of an inherited mission: the digest no longer counts it */
	{
		struct ec_row e;

		ec_store_get(&s, EC_T_MISSIONS, "p2", &e);
		free(e.spec);
		e.spec = strdup("{\"content\":\"edited here\"}");
		CHECK(ec_store_replace(&s, EC_T_MISSIONS, &e, e.rv) == 0, "a local edit of p2");
		ec_row_free(&e);
	}
	ec_store_inherited_map(&s, &inh);
	CHECK(json_is_false(json_object_get(json_object_get(inh, "p2"), "ok")) &&
		  json_is_true(json_object_get(json_object_get(inh, "p1"), "ok")),
	      "inherited map: p2 no longer as the parent sent it, p1 is");
	json_decref(inh);
	ec_digest_init(&g);
	ec_digest_add(&g, "p1", "11111111-1111-4111-8111-111111111111", 9);
	ec_digest_final(&g, hex);
	CHECK(ec_store_inherited_digest(&s, hex2) == 0 && !strcmp(hex, hex2),
	      "so the digest differs from the parent's: the list exchange will restore p2");
	ups = json_pack("[s,s]", "p2", "m1");
	CHECK(ec_store_sync_apply(&s, NULL, ups, &out) == 0 && json_array_size(out.changed) == 1 &&
		  rv_of(&s, "p2") == 0 && rv_of(&s, "m1") != 0,
	      "the parent deletes p2 and m1: p2 goes, m1 (created here) stays");
	json_decref(out.changed);
	json_decref(ups);
	CHECK(ec_store_inherited_drop(&s, &out) == 0 && json_array_size(out.changed) == 1 &&
		  rv_of(&s, "p1") == 0,
	      "detach: every inherited mission goes");
	json_decref(out.changed);

	/* ---- descendants' rows ---- */
	objs = json_pack("[o,o,o]", cluster("b", "b"), cluster("c", "b/c"), cluster("d", "b/c/d"));
	CHECK(ec_store_subtree_sync(&s, "a", "b", objs, &clashes) == 0 && !clashes,
	      "b's subtree: b, b/c, b/c/d");
	json_decref(objs);
	objs = json_pack("[o,o]", cluster("e", "e"), cluster("c", "e/c"));
	CHECK(ec_store_subtree_sync(&s, "a", "e", objs, &clashes) == 0 && clashes == 1,
	      "e reports a c: the name is b/c's, skipped (1 clash)");
	json_decref(objs);
	CHECK(ec_store_cluster_path(&s, "c", path, sizeof(path)) == 0 && !strcmp(path, "b/c"),
	      "c is still at b/c");
	objs = json_pack("[o]", cluster("b", "b"));
	CHECK(ec_store_subtree_sync(&s, "a", "b", objs, &clashes) == 0, "b reports only itself");
	json_decref(objs);
	CHECK(ec_store_cluster_path(&s, "d", path, sizeof(path)) == 0 && !path[0],
	      "b/c/d is gone from the rows");
	CHECK(ec_store_subtree_health(&s, "b", "disconnected", "unreachable") == 0 &&
		  ec_store_get(&s, EC_T_CLUSTERS, "b", &r) == 0 && strstr(r.state, "disconnected"),
	      "b disconnected");
	ec_row_free(&r);
	CHECK(ec_store_subtree_drop(&s, "b", false) == 0 &&
		  ec_store_get(&s, EC_T_CLUSTERS, "b", &r) == EC_ST_NOTFOUND,
	      "b left: its rows go");

	/* ---- credentials ---- */
	memset(&cr, 0, sizeof(cr));
	snprintf(cr.name, sizeof(cr.name), "kid");
	ec_token_digest("secret-credential", 17, cr.cur);
	cr.cur_expires = 12345;
	cr.resync = true;
	CHECK(ec_store_cred_put(&s, &cr) == 0 && ec_store_cred_get(&s, "kid", &cr2) == 0 &&
		  !memcmp(cr.cur, cr2.cur, EC_HASH_LEN) && cr2.cur_expires == 12345 && cr2.resync,
	      "a credential digest round-trips");
	CHECK(ec_store_cred_get(&s, "nobody", &cr2) == EC_ST_NOTFOUND, "unknown child: not found");

	/* ---- the attach record and the Attach resource ---- */
	{
		struct ecd d;
		struct api_resp rs = {0};

		memset(&d, 0, sizeof(d));
		snprintf(d.conf.name, sizeof(d.conf.name), "leaf");
		d.store = s; /* moved: its kept statements go with it (back below) */
		d.self_labels = json_object();
		CHECK(tree_prepare(&d) == 0 && api_self_sync(&d) == 0, "prepare a root cluster");
		{ /* missions{known, matched, active}: placement and our own key, in SQL */
			static const char *const specs[][2] = {
			    {"cnt-all", "{\"content\":\"x\"}"},
			    {"cnt-name",
			     "{\"content\":\"x\",\"placement\":{\"clusters\":[\"leaf\"]}}"},
			    {"cnt-other",
			     "{\"content\":\"x\",\"placement\":{\"clusters\":[\"b\"]}}"},
			    {"cnt-label",
			     "{\"content\":\"x\",\"placement\":{\"matchLabels\":{\"z\":\"e\"}}}"},
			    {"cnt-pend", "{\"content\":\"x\",\"placement\":null}"},
			};
			static const char *const own[] = {"applied", "ok 1", "not matched",
							  "not matched", "pending"};
			int k0, m0, a0, k, m, n;

			CHECK(tree_mission_counts(&d, &k0, &m0, &a0) == 0, "counts");
			for (size_t i = 0; i < 5; i++) {
				struct ec_row r = {0};

				snprintf(r.name, sizeof(r.name), "%s", specs[i][0]);
				ec_uuid4(r.uid);
				ec_timestamp(1700000000, r.created);
				r.labels = strdup("{}");
				r.spec = strdup(specs[i][1]);
				CHECK(ec_store_create(&d.store, EC_T_MISSIONS, &r) == 0 &&
					  ec_store_state_put(&d.store, r.name, "leaf", own[i]) ==
					      0 &&
					  ec_store_state_put(&d.store, r.name, "b", "applied") == 0,
				      "create %s", r.name);
				ec_row_free(&r);
			}
			CHECK(tree_mission_counts(&d, &k, &m, &n) == 0 && k == k0 + 5 &&
				  m == m0 + 3 && n == a0 + 2,
			      "counts: known +5, matched +3 (all, by name, null placement), active "
			      "+2 (applied, a check's output): %d %d %d",
			      k - k0, m - m0, n - a0);
			json_object_set_new(d.self_labels, "z", json_string("e"));
			CHECK(
			    tree_mission_counts(&d, &k, &m, &n) == 0 && m == m0 + 4 && n == a0 + 2,
			    "a matching label adds to matched, not to active (not matched there)");
			json_object_del(d.self_labels, "z");
			for (size_t i = 0; i < 5; i++) {
				struct ec_row old;

				if (!ec_store_delete(&d.store, EC_T_MISSIONS, specs[i][0], 0, &old))
					ec_row_free(&old);
			}
		}
		CHECK(ec_store_attach_get(&d.store, &a) == 0 && a.phase == PH_INACTIVE, "inactive");
		call(&d, EC_GET, NULL, &rs);
		CHECK(rs.code == 200 && !strcmp(field(&rs, "state", "phase"), "inactive"),
		      "GET attach: inactive");
		call(
		    &d, EC_PUT,
		    "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Attach\",\"spec\":{\"parent\":"
		    "\"ftp://x\",\"token\":\"0123456789abcdef\"}}",
		    &rs);
		CHECK(rs.code == 422 && strstr(rs.body, "spec.parent"),
		      "PUT a bad URL: 422 spec.parent");
		call(
		    &d, EC_PUT,
		    "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Attach\",\"spec\":{\"parent\":"
		    "\"ws://127.0.0.1:9\",\"token\":\"short\"}}",
		    &rs);
		CHECK(rs.code == 422 && strstr(rs.body, "spec.token"), "PUT a short token: 422");
		d.conf.etcd = true;
		call(
		    &d, EC_PUT,
		    "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Attach\",\"spec\":{\"parent\":"
		    "\"ws://127.0.0.1:9\",\"token\":\"0123456789abcdef\"}}",
		    &rs);
		CHECK(rs.code == 409 && strstr(rs.body, "Backend = etcd"),
		      "PUT on a root on etcd: 409 (a root has no parent)");
		d.conf.etcd = false;
		call(
		    &d, EC_PUT,
		    "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Attach\",\"spec\":{\"parent\":"
		    "\"ws://127.0.0.1:9,ftp://x\",\"token\":\"0123456789abcdef\"}}",
		    &rs);
		CHECK(rs.code == 422 && strstr(rs.body, "ftp://x"),
		      "PUT with two parents, the second bad: 422 naming it");
		call(
		    &d, EC_PUT,
		    "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Attach\",\"spec\":{\"parent\":"
		    "\"ws://127.0.0.1:9\",\"token\":\"0123456789abcdef\"}}",
		    &rs);
		CHECK(rs.code == 202 && !strcmp(field(&rs, "state", "phase"), "registering") &&
			  !strstr(rs.body, "0123456789abcdef"),
		      "PUT: 202 registering (the token is not echoed)");
		CHECK(!strcmp(d.parent.url, "ws://127.0.0.1:9") &&
			  !strcmp(d.parent.hub.path, TREE_HUB_PATH),
		      "the live parent follows the record, with the hub's path");
		call(
		    &d, EC_PUT,
		    "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Attach\",\"spec\":{\"parent\":"
		    "\"ws://127.0.0.1:10\",\"token\":\"0123456789abcdef\"}}",
		    &rs);
		CHECK(rs.code == 409, "PUT another parent while attached: 409");
		call(&d, EC_DELETE, NULL, &rs);
		CHECK(rs.code == 202 && !strcmp(field(&rs, "state", "phase"), "deregistering"),
		      "DELETE: 202 deregistering");
		CHECK(tree_prepare(&d) == 0 && ec_store_attach_get(&d.store, &a) == 0 &&
			  a.phase == PH_DEREGISTERING && !strcmp(a.token, "0123456789abcdef"),
		      "the record survives a restart (the phase resumes)");
		free(rs.body);
		json_decref(d.self_labels);
		s = d.store;
	}

	ec_store_close(&s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return unit_summary();
}
