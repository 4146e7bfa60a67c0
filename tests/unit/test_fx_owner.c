// SPDX-License-Identifier: BSD-2-Clause
/* A session's owner across a restart and a takeover, with a fake clock and a
 * fake node link over a real SQLite store (MaxSessionsPerClient 2): the id
 * is BLAKE2b-128 of the label and the token's digest (a known answer from
 * Python's hashlib), goes to the node in SessionOpen; a restarted core and
 * a standby that takes the lead rebuild the sessions from the node's echo
 * and refuse the same token's next create (403) while another token
 * creates; a report without the field (an older node) counts for nobody;
 * a malformed one is refused naming the field and quoting the value. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "ctl_token.h"
#include "fx_core_test.h"
#include "model.h"
#include "unit.h"

struct env {
	uint64_t now;
	json_t *sent;
	struct fx_core *c;
	struct fx_store *st;
	struct fx_err err; /* the last refusal */
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

static struct fx_core *core_new(struct env *e, bool leading)
{
	const struct fx_core_hooks h = {e, now_ms, sendf, event, NULL};
	struct fx_core_conf cf = fx_test_core_conf();

	cf.max_sess_client = 2;
	e->c = fx_test_core_open(e->st, &cf, &h);
	if (e->c && !leading)
		fx_core_set_lead(e->c, false, 0);
	return e->c;
}

/* messages of a type sent since *from (moved past them) */
static int count(struct env *e, const char *type, size_t *from, json_t **last)
{
	return fx_test_count(e->sent, type, from, last);
}

__attribute__((format(printf, 2, 3))) static int node_msg(struct env *e, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fx_test_node_vmsg(e->c, "node-a", &link_a, &e->err, fmt, ap);
	va_end(ap);
	return rc;
}

static void do_register(struct env *e, int rev)
{
	json_t *m = json_pack("{s:s,s:i,s:i,s:{s:s,s:s,s:s,s:{s:i,s:I,s:i}}}", "type",
			      "NodeRegister", "v", 1, "nodeRevision", rev, "node", "name", "node-a",
			      "ip", "192.0.2.1", "publicIp", "198.51.100.10", "capacity", "cpu",
			      4000, "memory", (json_int_t)8 << 30, "pods", 10);
	struct fx_err err;
	void *old;

	CHECK(!fx_core_node_register(e->c, &link_a, m, 2, NULL, &old, &err),
	      "node-a registers at revision %d", rev);
	json_decref(m);
}

#define APP                                                                                        \
	"{\"metadata\":{\"name\":\"echo\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"command\":" \
	"[\"/bin/x\"],\"ports\":[{\"containerPort\":8080}],\"resources\":{\"requests\":{\"cpu\":"  \
	"\"100m\",\"memory\":\"64Mi\"}}}],\"scalingPolicy\":{\"maximumInstance\":8,\"burst\":4,"   \
	"\"scalingPolicyType\":\"idle_session_number\",\"idleSessionNumThreshold\":{\"high\":4,"   \
	"\"low\":4}}}}"
#define SESS                                                                                       \
	"{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"applicationName\":\"echo\",\"sessionData\":"  \
	"\"aGk=\"}}"

/* 0, or the refusal's HTTP code (its message in e->err) */
static int create(struct env *e, const char *name, const unsigned char *client)
{
	char buf[256];
	json_t *b, *out = NULL;

	snprintf(buf, sizeof(buf), SESS, name);
	b = json_loads(buf, 0, NULL);
	if (fx_core_session_create(e->c, "default", b, client, &out, &e->err)) {
		json_decref(b);
		return e->err.code;
	}
	json_decref(b);
	json_decref(out);
	return 0;
}

/* node-a's full state: pods p[0..3] (p[0], p[1] holding s1, s2), and
 * owner_field ("" for none) in each session */
static int full_sync(struct env *e, int rev, char p[4][128], const char *owner_field)
{
	return node_msg(
	    e,
	    "{\"type\":\"NodeState\",\"nodeRevision\":%d,\"pods\":["
	    "{\"podIdentifier\":\"%s\",\"application\":\"default/echo\",\"state\":\"Running\"},"
	    "{\"podIdentifier\":\"%s\",\"application\":\"default/echo\",\"state\":\"Running\"},"
	    "{\"podIdentifier\":\"%s\",\"application\":\"default/echo\",\"state\":\"Standby\"},"
	    "{\"podIdentifier\":\"%s\",\"application\":\"default/echo\",\"state\":\"Standby\"}],"
	    "\"sessions\":["
	    "{\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"%s\",\"state\":"
	    "\"Available\"%s},"
	    "{\"sessionIdentifier\":\"default/s2\",\"podIdentifier\":\"%s\",\"state\":"
	    "\"Available\"%s}]}",
	    rev, p[0], p[1], p[2], p[3], p[0], owner_field, p[1], owner_field);
}

int main(void)
{
	char dir[] = "/tmp/xgt-fxown-XXXXXX", path[300], err[300], pods[4][128], own_a[40];
	char field[80];
	unsigned char tok_a[CTL_TOKEN_HASH_LEN], tok_b[CTL_TOKEN_HASH_LEN];
	struct env e = {.now = 100000, .sent = json_array()};
	json_t *m = NULL, *b, *out = NULL;
	size_t at = 0;
	int rev = 0, np = 0;

	/* ---- the id ---- */
	ctl_token_digest("tok-a", 5, tok_a);
	ctl_token_digest("tok-b", 5, tok_b);
	fx_owner_id(tok_a, own_a);
	/* hashlib.blake2b(b"xgate fornax session owner v1" +
	 *   hashlib.blake2b(b"tok-a", digest_size=32).digest(), digest_size=16) */
	CHECK(!strcmp(own_a, "891a34b312e96c1ef91e775d3f4ea78f"),
	      "owner id of tok-a: BLAKE2b-128(label || BLAKE2b-256(token)) = %s", own_a);
	{
		char again[40], other[40];

		fx_owner_id(tok_a, again);
		fx_owner_id(tok_b, other);
		CHECK(!strcmp(own_a, again) && strcmp(own_a, other) && !fx_check_owner(own_a),
		      "the same for the same token, another for another (%s), well formed", other);
	}
	CHECK(fx_check_owner("891A34B312E96C1EF91E775D3F4EA78F") &&
		  fx_check_owner("891a34b312e96c1ef91e775d3f4ea78") && fx_check_owner(""),
	      "upper case, 31 digits, empty: malformed");

	/* ---- a client fills its limit ---- */
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f.db", dir);
	if (!(e.st = fx_store_sqlite_open(path, err, sizeof(err))) || !core_new(&e, true))
		return 1;
	b = json_loads(APP, 0, NULL);
	CHECK(!fx_core_app_create(e.c, "default", b, &out, &e.err), "create echo (4 standby)");
	json_decref(b);
	json_decref(out);
	do_register(&e, 0);
	CHECK(node_msg(&e, "{\"type\":\"NodeState\",\"nodeRevision\":0,\"pods\":[]}") == 0 &&
		  node_msg(&e, "{\"type\":\"NodeReady\",\"nodeRevision\":0}") == 0,
	      "node-a ready");
	e.now += FX_ROUND_MS;
	fx_core_tick(e.c);
	for (; at < json_array_size(e.sent); at++) {
		m = json_array_get(e.sent, at);
		if (!strcmp(json_string_value(json_object_get(m, "type")), "PodCreate") && np < 4)
			snprintf(pods[np++], sizeof(pods[0]), "%s",
				 json_string_value(json_object_get(m, "podIdentifier")));
	}
	CHECK(np == 4, "4 pods asked for (%d)", np);
	for (int i = 0; i < np; i++)
		node_msg(&e,
			 "{\"type\":\"PodState\",\"nodeRevision\":%d,\"pod\":{\"podIdentifier\":"
			 "\"%s\",\"application\":\"default/echo\",\"state\":\"Standby\"}}",
			 ++rev, pods[i]);
	CHECK(create(&e, "s1", tok_a) == 0 && create(&e, "s2", tok_a) == 0,
	      "tok-a opens s1 and s2");
	{
		int good = 0;

		for (size_t i = 0; i < json_array_size(e.sent); i++) {
			const char *o;

			m = json_array_get(e.sent, i);
			if (strcmp(json_string_value(json_object_get(m, "type")), "SessionOpen"))
				continue;
			o = json_string_value(
			    json_object_get(json_object_get(m, "session"), "owner"));
			good += o && !strcmp(o, own_a);
		}
		CHECK(good == 2 && count(&e, "SessionOpen", &at, NULL) == 2,
		      "each SessionOpen carries session.owner %s (%d of 2)", own_a, good);
	}
	for (int i = 0; i < 2; i++)
		node_msg(&e,
			 "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
			 "\"sessionIdentifier\":\"default/s%d\",\"podIdentifier\":\"%s\","
			 "\"state\":\"Available\",\"owner\":\"%s\"}}",
			 ++rev, i + 1, pods[i], own_a);
	CHECK(create(&e, "s3", tok_a) == 403, "tok-a's third: 403 (%s)", e.err.msg);

	/* ---- restart: the sessions come back from the node, still tok-a's ---- */
	fx_core_free(e.c);
	if (!core_new(&e, true))
		return 1;
	do_register(&e, rev);
	snprintf(field, sizeof(field), ",\"owner\":\"%s\"", own_a);
	CHECK(full_sync(&e, rev, pods, field) == 0, "a restarted core: node-a's full sync");
	CHECK(create(&e, "s3", tok_a) == 403 && strstr(e.err.msg, "this token holds 2"),
	      "tok-a's third after the restart: 403 (%s)", e.err.msg);
	CHECK(create(&e, "s3", tok_b) == 0, "tok-b still opens s3");
	CHECK(create(&e, "s4", NULL) == 0, "and a create with no client, not limited");

	/* ---- an older node: no owner, the sessions count for nobody ---- */
	fx_core_free(e.c);
	if (!core_new(&e, true))
		return 1;
	do_register(&e, rev);
	CHECK(full_sync(&e, rev, pods, "") == 0, "a full sync without owners (an older node)");
	CHECK(create(&e, "s3", tok_a) == 0, "rebuilt without an owner: tok-a opens s3, as before");

	/* ---- a standby rebuilds them from the echo, then takes the lead ---- */
	fx_core_free(e.c);
	if (!core_new(&e, false))
		return 1;
	do_register(&e, rev);
	CHECK(full_sync(&e, rev, pods, field) == 0, "a standby: node-a's full sync");
	fx_core_set_lead(e.c, true, 7);
	CHECK(create(&e, "s3", tok_a) == 403,
	      "the standby took the lead: tok-a's third is refused (%s)", e.err.msg);
	CHECK(create(&e, "s3", tok_b) == 0, "tok-b opens s3");

	/* ---- malformed owners ---- */
	CHECK(node_msg(&e,
		       "{\"type\":\"SessionState\",\"nodeRevision\":%d,\"session\":{"
		       "\"sessionIdentifier\":\"default/s1\",\"podIdentifier\":\"%s\","
		       "\"state\":\"InUse\",\"owner\":\"NOT-HEX\"}}",
		       rev + 1, pods[0]) != 0 &&
		  e.err.code == 400 && !strcmp(e.err.field, "session.owner") &&
		  strstr(e.err.msg, "session.owner 'NOT-HEX'"),
	      "a SessionState with owner NOT-HEX: refused (%s)", e.err.msg);
	CHECK(full_sync(&e, rev, pods, ",\"owner\":\"891a34b312e96c1ef91e775d3f4ea78\"") != 0 &&
		  !strcmp(e.err.field, "sessions[0].owner"),
	      "a full sync with a 31-digit owner: refused (%s)", e.err.msg);
	CHECK(full_sync(&e, rev, pods, ",\"owner\":7") != 0 &&
		  !strcmp(e.err.field, "sessions[0].owner"),
	      "an owner that is not a string: refused (%s)", e.err.msg);
	{
		json_t *msg = NULL;

		/* 39 ASCII bytes, then a 2-byte character across the 40 quoted */
		CHECK(full_sync(&e, rev, pods,
				",\"owner\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9\"") !=
			      0 &&
			  (msg = json_string(e.err.msg)) && strstr(e.err.msg, "a': must"),
		      "an owner quoted where a character would be cut: before it, still UTF-8 "
		      "(%s)",
		      e.err.msg);
		json_decref(msg);
	}
	CHECK(full_sync(&e, rev, pods, ",\"owner\":\"\"") != 0, "an empty owner: refused (%s)",
	      e.err.msg);

	fx_core_free(e.c);
	e.st->ops->close(e.st);
	json_decref(e.sent);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	return unit_summary();
}
