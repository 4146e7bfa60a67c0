// SPDX-License-Identifier: BSD-2-Clause
/*
 * The request half of the etcd client (ctl_etcd.h): one curl easy handle,
 * kept so that its connection to the member is reused; every call is a
 * POST of a JSON body to one of the gateway's /v3 paths.
 *
 * How a failure is named: curl says whether a connection was made at all
 * (unreachable) or the deadline passed; etcd says "no leader" itself, and
 * for a request it accepted but could not commit (its "request timed out",
 * the gateway's "context deadline exceeded", or our own deadline) the
 * member's status tells whether it has a leader: none means the cluster
 * lost its quorum, one means it is merely slow.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_etcd.h"
#include "ctl_etcd_int.h"

struct ctl_etcd {
	char *ep[CTL_ETCD_MAX_ENDPOINTS];
	int n_ep, cur;
	char *ca, *cert, *key;
	long timeout_ms;
	CURL *curl;
	char detail[CURL_ERROR_SIZE]; /* curl's own words on the last failure (TLS alerts) */
	char err[700];
	bool maybe_applied; /* the last request failed after a member took it */
};

const char *ctl_etcd_rc_name(int rc)
{
	switch (rc) {
	case CTL_ETCD_OK:
		return "ok";
	case CTL_ETCD_UNREACHABLE:
		return "unreachable";
	case CTL_ETCD_TIMEOUT:
		return "timeout";
	case CTL_ETCD_NO_QUORUM:
		return "no quorum";
	}
	return "error";
}

const char *ctl_etcd_errmsg(const struct ctl_etcd *e)
{
	return e->err;
}

bool ctl_etcd_maybe_applied(const struct ctl_etcd *e)
{
	return e->maybe_applied;
}

const char *ctl_etcd_endpoint(const struct ctl_etcd *e)
{
	return e->ep[e->cur];
}

void ctl_etcd_next_endpoint(struct ctl_etcd *e)
{
	e->cur = (e->cur + 1) % e->n_ep;
}

void ctl_etcd_curl_setup(const struct ctl_etcd *e, void *curl)
{
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, e->timeout_ms);
	if (e->ca)
		curl_easy_setopt(curl, CURLOPT_CAINFO, e->ca);
	if (e->cert)
		curl_easy_setopt(curl, CURLOPT_SSLCERT, e->cert);
	if (e->key)
		curl_easy_setopt(curl, CURLOPT_SSLKEY, e->key);
}

static int post(struct ctl_etcd *e, const char *url, const char *body, long timeout_ms,
		struct ctl_etcd_body *a, long *status)
{
	curl_easy_reset(e->curl);
	ctl_etcd_curl_setup(e, e->curl);
	curl_easy_setopt(e->curl, CURLOPT_URL, url);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, ctl_etcd_body_data);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(e->curl, CURLOPT_ERRORBUFFER, e->detail);
	e->detail[0] = 0;
	int rc = curl_easy_perform(e->curl);

	if (rc == CURLE_WRITE_ERROR && a->done)
		rc = CURLE_OK;
	curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, status);
	return rc;
}

/* Whether the member at ep knows a leader: 1 yes, 0 no, -1 it did not say. */
static int has_leader(struct ctl_etcd *e, const char *ep)
{
	char url[600];
	struct ctl_etcd_body a = {0};
	long status = 0;
	json_t *o;
	int r = -1;

	snprintf(url, sizeof(url), "%s/v3/maintenance/status", ep);
	if (post(e, url, "{}", 500, &a, &status) == CURLE_OK && status == 200 &&
	    (o = json_loads(a.p ? a.p : "", 0, NULL))) {
		r = ctl_etcd_jint(o, "leader") != 0;
		json_decref(o);
	}
	free(a.p);
	return r;
}

static int stalled(struct ctl_etcd *e, const char *ep, const char *what)
{
	if (has_leader(e, ep) == 0) {
		snprintf(
		    e->err, sizeof(e->err),
		    "etcd at %s: %s; the member has no leader (the cluster has lost its quorum)",
		    ep, what);
		return CTL_ETCD_NO_QUORUM;
	}
	snprintf(e->err, sizeof(e->err), "etcd at %s: %s (timeout %ld ms)", ep, what,
		 e->timeout_ms);
	return CTL_ETCD_TIMEOUT;
}

/* One POST of text to the current endpoint within left_ms. AGAIN: it
 * cannot have been applied (refused, or "no leader"): another endpoint, or
 * the same later, may take it. SILENT: no answer in time (a proposal made
 * while the member had no leader is dropped without a word: an election
 * in progress looks like this), also worth another try. */
#define AGAIN  CTL_ETCD_AGAIN
#define SILENT CTL_ETCD_SILENT
static int attempt(struct ctl_etcd *e, const char *path, const char *text, long left_ms,
		   bool first_line, json_t **out)
{
	const char *ep = e->ep[e->cur];
	struct ctl_etcd_body a = {.first_line = first_line};
	char url[600];
	long status = 0;
	int c;

	snprintf(url, sizeof(url), "%s%s", ep, path);
	c = post(e, url, text, left_ms, &a, &status);
	c = ctl_etcd_classify(e, ep, path, c, e->detail, a.p, status, out);
	free(a.p);
	return c;
}

int ctl_etcd_classify(struct ctl_etcd *e, const char *ep, const char *path, int c,
		      const char *detail, const char *text, long status, json_t **out)
{
	json_error_t je;
	json_t *o, *err;
	const char *m;

	if (c != CURLE_OK) {
		if (c == CURLE_OPERATION_TIMEDOUT)
			return SILENT;
		/* with TLS 1.3 a member that wants a client certificate drops
		 * the connection after the handshake: say what is likely */
		snprintf(e->err, sizeof(e->err), "etcd at %s: unreachable (%s)%s", ep,
			 detail && detail[0] ? detail : curl_easy_strerror(c),
			 !strncmp(ep, "https:", 6) && !e->cert &&
				 (c == CURLE_SEND_ERROR || c == CURLE_RECV_ERROR)
			     ? "; without a client certificate: does etcd want one?"
			     : "");
		/* refused, or reset by a member on its way down: every request
		 * made here is safe to repeat (puts, deletes, guarded txns) */
		return c == CURLE_COULDNT_CONNECT || c == CURLE_COULDNT_RESOLVE_HOST ||
			       c == CURLE_RECV_ERROR || c == CURLE_SEND_ERROR ||
			       c == CURLE_GOT_NOTHING
			   ? AGAIN
			   : CTL_ETCD_UNREACHABLE;
	}
	o = json_loads(text ? text : "", JSON_DISABLE_EOF_CHECK, &je);
	if (!o) {
		snprintf(e->err, sizeof(e->err), "etcd at %s%s: HTTP %ld, not JSON (%s)", ep, path,
			 status, je.text);
		return CTL_ETCD_ERROR;
	}
	if (!(err = json_object_get(o, "error"))) {
		*out = o;
		return CTL_ETCD_OK;
	}
	/* a string in unary answers, {"grpc_code", "message", ...} in streams */
	m = json_string_value(err) ? json_string_value(err)
				   : json_string_value(json_object_get(err, "message"));
	m = m ? m : "?";
	if (strstr(m, "no leader")) {
		snprintf(e->err, sizeof(e->err), "etcd at %s: %s (the cluster has lost its quorum)",
			 ep, m);
		c = AGAIN;
	} else if (strstr(m, "request timed out") || strstr(m, "deadline exceeded")) {
		c = stalled(e, ep, m);
	} else {
		snprintf(e->err, sizeof(e->err), "etcd at %s%s: %s (HTTP %ld)", ep, path, m,
			 status);
		c = CTL_ETCD_ERROR;
	}
	json_decref(o);
	return c;
}

/* POST body (consumed) to path; *out the answer's JSON. While the request
 * cannot have been applied, the endpoints are tried in turn until the
 * deadline (an election takes a moment); when every one refuses the
 * connection, at once "unreachable". */
static int call_ex(struct ctl_etcd *e, const char *path, json_t *body, json_t **out,
		   bool first_line)
{
	char *text = json_dumps(body, JSON_COMPACT);
	long long deadline = ctl_etcd_now_ms() + e->timeout_ms, left;
	int rc = CTL_ETCD_UNREACHABLE, refused = 0, tried = 0;
	const char *ep, *silent = NULL;
	bool no_leader = false;
	unsigned silent_at = 0; /* the endpoints (bits) that took it and said nothing */

	json_decref(body);
	*out = NULL;
	if (!text) {
		snprintf(e->err, sizeof(e->err), "out of memory");
		return CTL_ETCD_ERROR;
	}
	while ((left = deadline - ctl_etcd_now_ms()) > 0) {
		/* a share of the deadline each, so that a silent member leaves
		 * time for the next */
		long share = e->timeout_ms / 3 > 500 ? e->timeout_ms / 3 : 500;

		ep = e->ep[e->cur];
		rc = attempt(e, path, text, left < share ? (long)left : share, first_line, out);
		if (rc != AGAIN && rc != SILENT)
			break;
		if (rc == SILENT) {
			silent = ep;
			silent_at |= 1u << e->cur;
		} else if (strstr(e->err, "no leader"))
			no_leader = true;
		else
			refused++;
		ctl_etcd_next_endpoint(e);
		if (++tried % e->n_ep == 0) { /* a round over every endpoint */
			const struct timespec pause = {0, 100 * 1000000};

			if (refused == e->n_ep)
				break;
			refused = 0;
			nanosleep(&pause, NULL);
		}
	}
	rc = ctl_etcd_conclude(e, rc, silent, silent_at, no_leader);
	free(text);
	return rc;
}

int ctl_etcd_conclude(struct ctl_etcd *e, int rc, const char *silent, unsigned silent_at,
		      bool no_leader)
{
	/* A member that took the request and said nothing may still apply it
	 * (it was paused, or cut off and comes back), unless it has no leader
	 * now: a proposal made without one is dropped. */
	e->maybe_applied = false;
	for (int i = 0; (rc == SILENT || rc == AGAIN) && i < e->n_ep; i++)
		if ((silent_at & (1u << i)) && has_leader(e, e->ep[i]) != 0)
			e->maybe_applied = true;
	if (rc == AGAIN || rc == SILENT) {
		if (silent) /* the member's status tells a lost quorum from a slow one */
			rc = stalled(e, silent, "no answer in time");
		else
			rc = no_leader ? CTL_ETCD_NO_QUORUM : CTL_ETCD_UNREACHABLE;
	}
	return rc;
}

int ctl_etcd_n_endpoints(const struct ctl_etcd *e)
{
	return e->n_ep;
}

int ctl_etcd_cur(const struct ctl_etcd *e)
{
	return e->cur;
}

long ctl_etcd_timeout_ms(const struct ctl_etcd *e)
{
	return e->timeout_ms;
}

static int call(struct ctl_etcd *e, const char *path, json_t *body, json_t **out)
{
	return call_ex(e, path, body, out, false);
}

static int64_t header_rev(json_t *o)
{
	return ctl_etcd_jint(json_object_get(o, "header"), "revision");
}

/* a RangeRequest's key and range_end */
static json_t *key_range(const char *key, bool prefix)
{
	json_t *o = json_object();
	char *end = prefix ? ctl_etcd_prefix_end_b64(key) : NULL;

	if (ctl_etcd_jb64(o, "key", key, strlen(key)) ||
	    (prefix && (!end || json_object_set_new(o, "range_end", json_string(end))))) {
		free(end);
		json_decref(o);
		return NULL;
	}
	free(end);
	return o;
}

static int parse_kvs(struct ctl_etcd *e, json_t *o, struct ctl_etcd_kvs *out)
{
	json_t *kvs = json_object_get(o, "kvs"), *kv;
	size_t i;

	out->revision = header_rev(o);
	out->n = 0;
	out->kv = calloc(json_array_size(kvs) + 1, sizeof(*out->kv));
	if (!out->kv)
		return CTL_ETCD_ERROR;
	json_array_foreach(kvs, i, kv)
	{
		if (ctl_etcd_kv_parse(kv, &out->kv[out->n])) {
			snprintf(e->err, sizeof(e->err), "etcd at %s: a key or value is not base64",
				 ctl_etcd_endpoint(e));
			ctl_etcd_kvs_free(out);
			return CTL_ETCD_ERROR;
		}
		out->n++;
	}
	return CTL_ETCD_OK;
}

int ctl_etcd_get(struct ctl_etcd *e, const char *key, bool prefix, bool serializable,
		 struct ctl_etcd_kvs *out)
{
	json_t *req = key_range(key, prefix), *o;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!req)
		return CTL_ETCD_ERROR;
	if (serializable)
		json_object_set_new(req, "serializable", json_true());
	if ((rc = call(e, "/v3/kv/range", req, &o)))
		return rc;
	rc = parse_kvs(e, o, out);
	json_decref(o);
	return rc;
}

int ctl_etcd_put(struct ctl_etcd *e, const char *key, const void *value, size_t len, int64_t lease,
		 int64_t *rev)
{
	json_t *req = json_object(), *o;
	int rc;

	if (ctl_etcd_jb64(req, "key", key, strlen(key)) ||
	    ctl_etcd_jb64(req, "value", value, len)) {
		json_decref(req);
		return CTL_ETCD_ERROR;
	}
	if (lease)
		json_object_set_new(req, "lease", ctl_etcd_jnum(lease));
	if ((rc = call(e, "/v3/kv/put", req, &o)))
		return rc;
	if (rev)
		*rev = header_rev(o);
	json_decref(o);
	return CTL_ETCD_OK;
}

int ctl_etcd_delete(struct ctl_etcd *e, const char *key, bool prefix, int64_t *deleted)
{
	json_t *req = key_range(key, prefix), *o;
	int rc;

	if (!req)
		return CTL_ETCD_ERROR;
	if ((rc = call(e, "/v3/kv/deleterange", req, &o)))
		return rc;
	if (deleted)
		*deleted = ctl_etcd_jint(o, "deleted");
	json_decref(o);
	return CTL_ETCD_OK;
}

/* ---- transactions ---- */

struct ctl_etcd_txn {
	json_t *req; /* {compare: [], success: [], failure: []} */
	int bad;     /* a part could not be added: the commit refuses */
};

struct ctl_etcd_txn *ctl_etcd_txn_new(void)
{
	struct ctl_etcd_txn *t = calloc(1, sizeof(*t));

	if (t && !(t->req = json_pack("{s:[],s:[],s:[]}", "compare", "success", "failure"))) {
		free(t);
		return NULL;
	}
	return t;
}

void ctl_etcd_txn_free(struct ctl_etcd_txn *t)
{
	if (t)
		json_decref(t->req);
	free(t);
}

static const char *const target_names[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
static const char *const target_fields[] = {"version", "create_revision", "mod_revision", "value",
					    "lease"};
static const char *const result_names[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};

static int add_cmp(struct ctl_etcd_txn *t, const char *key, enum ctl_etcd_target target,
		   enum ctl_etcd_cmp result, json_t *operand)
{
	json_t *c =
	    json_pack("{s:s,s:s}", "target", target_names[target], "result", result_names[result]);

	if (!c || !operand || ctl_etcd_jb64(c, "key", key, strlen(key)) ||
	    json_object_set_new(c, target_fields[target], operand) ||
	    json_array_append_new(json_object_get(t->req, "compare"), c)) {
		json_decref(c);
		t->bad = 1;
		return -1;
	}
	return 0;
}

int ctl_etcd_txn_cmp(struct ctl_etcd_txn *t, const char *key, enum ctl_etcd_target target,
		     enum ctl_etcd_cmp result, int64_t number)
{
	return add_cmp(t, key, target, result,
		       target == CTL_ETCD_VALUE ? NULL : ctl_etcd_jnum(number));
}

int ctl_etcd_txn_cmp_value(struct ctl_etcd_txn *t, const char *key, enum ctl_etcd_cmp result,
			   const void *value, size_t len)
{
	char *b = ctl_etcd_b64(value, len);
	int rc = add_cmp(t, key, CTL_ETCD_VALUE, result, b ? json_string(b) : NULL);

	free(b);
	return rc;
}

static int add_op(struct ctl_etcd_txn *t, bool on_success, const char *kind, json_t *op)
{
	if (!op ||
	    json_array_append_new(json_object_get(t->req, on_success ? "success" : "failure"),
				  json_pack("{s:o}", kind, op))) {
		t->bad = 1;
		return -1;
	}
	return 0;
}

int ctl_etcd_txn_put(struct ctl_etcd_txn *t, bool on_success, const char *key, const void *value,
		     size_t len, int64_t lease)
{
	json_t *op = json_object();

	if (ctl_etcd_jb64(op, "key", key, strlen(key)) || ctl_etcd_jb64(op, "value", value, len)) {
		json_decref(op);
		op = NULL;
	} else if (lease) {
		json_object_set_new(op, "lease", ctl_etcd_jnum(lease));
	}
	return add_op(t, on_success, "request_put", op);
}

int ctl_etcd_txn_delete(struct ctl_etcd_txn *t, bool on_success, const char *key, bool prefix)
{
	return add_op(t, on_success, "request_delete_range", key_range(key, prefix));
}

int ctl_etcd_txn_nest(struct ctl_etcd_txn *t, bool on_success, struct ctl_etcd_txn *inner)
{
	if (inner->bad) {
		t->bad = 1;
		return -1;
	}
	return add_op(t, on_success, "request_txn", json_incref(inner->req));
}

/* the first delete's count, inner transactions included: 1 found */
static int first_delete(json_t *responses, int64_t *deleted)
{
	json_t *r, *d;
	size_t i;

	json_array_foreach(responses, i, r)
	{
		if ((d = json_object_get(r, "response_delete_range"))) {
			*deleted = ctl_etcd_jint(d, "deleted");
			return 1;
		}
		if ((d = json_object_get(r, "response_txn")) &&
		    first_delete(json_object_get(d, "responses"), deleted))
			return 1;
	}
	return 0;
}

int ctl_etcd_txn_commit(struct ctl_etcd *e, struct ctl_etcd_txn *t, bool *succeeded, int64_t *rev,
			int64_t *deleted)
{
	json_t *o;
	int rc;

	if (t->bad) {
		snprintf(e->err, sizeof(e->err),
			 "a transaction could not be built (out of memory)");
		return CTL_ETCD_ERROR;
	}
	if ((rc = call(e, "/v3/kv/txn", json_incref(t->req), &o)))
		return rc;
	*succeeded = json_is_true(json_object_get(o, "succeeded"));
	if (rev)
		*rev = header_rev(o);
	if (deleted) {
		*deleted = 0;
		first_delete(json_object_get(o, "responses"), deleted);
	}
	json_decref(o);
	return CTL_ETCD_OK;
}

const char *ctl_etcd_txn_text(struct ctl_etcd_txn *t, char **text)
{
	*text = t->bad ? NULL : json_dumps(t->req, JSON_COMPACT);
	return *text;
}

void ctl_etcd_txn_result(json_t *o, bool *succeeded, int64_t *rev, int64_t *deleted)
{
	*succeeded = json_is_true(json_object_get(o, "succeeded"));
	if (rev)
		*rev = header_rev(o);
	if (deleted) {
		*deleted = 0;
		first_delete(json_object_get(o, "responses"), deleted);
	}
}

/* ---- leases ---- */

int ctl_etcd_lease_grant(struct ctl_etcd *e, int64_t ttl_s, int64_t *id)
{
	json_t *o;
	int rc = call(e, "/v3/lease/grant", json_pack("{s:o}", "TTL", ctl_etcd_jnum(ttl_s)), &o);

	if (rc)
		return rc;
	*id = ctl_etcd_jint(o, "ID");
	json_decref(o);
	if (!*id) {
		snprintf(e->err, sizeof(e->err), "etcd at %s: a lease grant without an ID",
			 ctl_etcd_endpoint(e));
		return CTL_ETCD_ERROR;
	}
	return CTL_ETCD_OK;
}

int ctl_etcd_lease_keepalive(struct ctl_etcd *e, int64_t id, int64_t *ttl)
{
	json_t *o;
	/* the gateway's keepalive is a stream and reads only its first request
	 * (etcd #8237): one request, its first answer, then the connection goes */
	int rc = call_ex(e, "/v3/lease/keepalive", json_pack("{s:o}", "ID", ctl_etcd_jnum(id)), &o,
			 true);

	if (rc)
		return rc;
	*ttl = ctl_etcd_jint(json_object_get(o, "result"), "TTL");
	json_decref(o);
	return CTL_ETCD_OK;
}

int ctl_etcd_lease_revoke(struct ctl_etcd *e, int64_t id)
{
	json_t *o;
	int rc = call(e, "/v3/lease/revoke", json_pack("{s:o}", "ID", ctl_etcd_jnum(id)), &o);

	json_decref(o);
	return rc;
}

int ctl_etcd_compact(struct ctl_etcd *e, int64_t rev)
{
	json_t *o;
	int rc =
	    call(e, "/v3/kv/compaction", json_pack("{s:o}", "revision", ctl_etcd_jnum(rev)), &o);

	json_decref(o);
	return rc;
}

/* ---- the handle ---- */

struct ctl_etcd *ctl_etcd_new(const struct ctl_etcd_conf *c, char *err, size_t errlen)
{
	struct ctl_etcd *e = calloc(1, sizeof(*e));
	const char *p = c->endpoints ? c->endpoints : "";

	if (!e || !(e->curl = curl_easy_init())) {
		snprintf(err, errlen, "out of memory");
		free(e);
		return NULL;
	}
	while (*p) {
		size_t n = strcspn(p, ", ");

		if (n) {
			if (e->n_ep == CTL_ETCD_MAX_ENDPOINTS) {
				snprintf(err, errlen, "etcd endpoints '%s': more than %d",
					 c->endpoints, CTL_ETCD_MAX_ENDPOINTS);
				goto fail;
			}
			if (n > CTL_ETCD_URL_MAX) {
				snprintf(err, errlen, "etcd endpoint '%.*s...': longer than %d", 40,
					 p, CTL_ETCD_URL_MAX);
				goto fail;
			}
			if (!(e->ep[e->n_ep] = strndup(p, n)))
				goto fail;
			if (strncmp(e->ep[e->n_ep], "http://", 7) &&
			    strncmp(e->ep[e->n_ep], "https://", 8)) {
				snprintf(err, errlen,
					 "etcd endpoint '%s': expected http://HOST:PORT or "
					 "https://HOST:PORT",
					 e->ep[e->n_ep]);
				e->n_ep++;
				goto fail;
			}
			/* a trailing slash would double the one of /v3 */
			if (e->ep[e->n_ep][n - 1] == '/')
				e->ep[e->n_ep][n - 1] = 0;
			e->n_ep++;
		}
		p += n;
		p += strspn(p, ", ");
	}
	if (!e->n_ep) {
		snprintf(err, errlen, "etcd endpoints '%s': none given",
			 c->endpoints ? c->endpoints : "");
		goto fail;
	}
	e->timeout_ms = c->timeout_ms ? (long)c->timeout_ms : 5000;
	if ((c->ca && !(e->ca = strdup(c->ca))) || (c->cert && !(e->cert = strdup(c->cert))) ||
	    (c->key && !(e->key = strdup(c->key)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return e;
fail:
	ctl_etcd_free(e);
	return NULL;
}

void ctl_etcd_free(struct ctl_etcd *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->n_ep; i++)
		free(e->ep[i]);
	free(e->ca);
	free(e->cert);
	free(e->key);
	curl_easy_cleanup(e->curl);
	free(e);
}

int ctl_etcd_answer_parse(struct ctl_etcd *e, const char *path, json_t *o,
			  struct ctl_etcd_answer *out)
{
	memset(out, 0, sizeof(*out));
	if (!strcmp(path, "/v3/kv/range"))
		return parse_kvs(e, o, &out->kvs);
	if (!strcmp(path, "/v3/kv/put")) {
		out->revision = header_rev(o);
	} else if (!strcmp(path, "/v3/kv/deleterange")) {
		out->deleted = ctl_etcd_jint(o, "deleted");
	} else if (!strcmp(path, "/v3/kv/txn")) {
		out->succeeded = json_is_true(json_object_get(o, "succeeded"));
		out->revision = header_rev(o);
		first_delete(json_object_get(o, "responses"), &out->deleted);
	} else if (!strcmp(path, "/v3/lease/grant")) {
		if (!(out->id = ctl_etcd_jint(o, "ID"))) {
			snprintf(e->err, sizeof(e->err), "etcd at %s: a lease grant without an ID",
				 ctl_etcd_endpoint(e));
			return CTL_ETCD_ERROR;
		}
	} else if (!strcmp(path, "/v3/lease/keepalive")) {
		out->ttl = ctl_etcd_jint(json_object_get(o, "result"), "TTL");
	} else {
		snprintf(e->err, sizeof(e->err), "no request %s", path);
		return CTL_ETCD_ERROR;
	}
	return CTL_ETCD_OK;
}
