// SPDX-License-Identifier: BSD-2-Clause
/*
 * The rules the core applies, as pure functions: the scaling round, the
 * session state machine and its clock, the node revision rules, and the
 * node link's Pod and Session objects.
 */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "ctl_k8s.h"
#include "ctl_token.h"
#include "model.h"

/* ---- the session owner id ---- */

/* versioned: another derivation would be another label (and another length
 * or alphabet, so that fx_check_owner tells the two apart) */
static const char owner_label[] = "xgate fornax session owner v1";

void fx_owner_id(const unsigned char digest[CTL_TOKEN_HASH_LEN], char out[FX_OWNER_LEN + 1])
{
	crypto_generichash_state h;
	unsigned char id[FX_OWNER_BYTES];

	crypto_generichash_init(&h, NULL, 0, sizeof(id));
	crypto_generichash_update(&h, (const unsigned char *)owner_label, sizeof(owner_label) - 1);
	crypto_generichash_update(&h, digest, CTL_TOKEN_HASH_LEN);
	crypto_generichash_final(&h, id, sizeof(id));
	sodium_bin2hex(out, FX_OWNER_LEN + 1, id, sizeof(id));
}

/* how much of s to quote in an error, at most max bytes: a character cut in
 * two would make the error text no UTF-8, which the link cannot send */
static int quote_len(const char *s, int max)
{
	int n = (int)strnlen(s, (size_t)max);

	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

const char *fx_check_owner(const char *s)
{
	size_t n = strlen(s);

	if (n != FX_OWNER_LEN)
		return "must be 32 lowercase hex digits";
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return "must be 32 lowercase hex digits";
	return NULL;
}

/* ---- the scaling policy ---- */

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

struct fx_scale fx_scale_round(const struct fx_policy *p, const struct fx_pool_counts *c)
{
	int unalloc = c->pending + c->idle, total = unalloc + c->allocated;
	int capacity = unalloc - c->pending_sessions, low = p->low, high = p->high, want;
	struct fx_scale s = {total, 0, 0};

	if (p->type == FX_IDLE_PERCENT) { /* of the pods holding sessions */
		low = (c->allocated * p->low + 99) / 100;
		high = c->allocated * p->high / 100;
		if (high < low)
			high = low;
	}
	want = total;
	if (capacity < low)
		want = total + (low - capacity);
	else if (capacity > high)
		want = total - (capacity - high);
	want = clamp(want, p->min, p->max);
	if (want < c->allocated) /* only unallocated pods go, whatever max says */
		want = c->allocated;
	if (want > total)
		s.create = clamp(want - total, 0, p->burst);
	else if (want < total)
		s.remove = clamp(total - want, 0, p->burst < unalloc ? p->burst : unalloc);
	s.desired = want;
	return s;
}

/* ---- sessions ---- */

static const char *const sess_names[FX_S_COUNT] = {"Pending", "Starting", "Available", "InUse",
						   "Closing", "Closed",	  "Timeout"};

const char *fx_sess_state_name(enum fx_sess_state s)
{
	return (unsigned)s < FX_S_COUNT ? sess_names[s] : "?";
}

int fx_sess_state_parse(const char *s)
{
	for (int i = 0; s && i < FX_S_COUNT; i++)
		if (!strcmp(s, sess_names[i]))
			return i;
	return -1;
}

bool fx_sess_final(enum fx_sess_state s)
{
	return s == FX_S_CLOSED || s == FX_S_TIMEOUT;
}

bool fx_sess_can(enum fx_sess_state from, enum fx_sess_state to)
{
	/* rows: from; bits: to */
#define B(s) (1u << (s))
	static const unsigned legal[FX_S_COUNT] = {
	    [FX_S_PENDING] = B(FX_S_STARTING) | B(FX_S_CLOSED) | B(FX_S_TIMEOUT),
	    [FX_S_STARTING] = B(FX_S_AVAILABLE) | B(FX_S_INUSE) | B(FX_S_CLOSING) | B(FX_S_CLOSED) |
			      B(FX_S_TIMEOUT),
	    [FX_S_AVAILABLE] = B(FX_S_INUSE) | B(FX_S_CLOSING) | B(FX_S_CLOSED),
	    [FX_S_INUSE] = B(FX_S_AVAILABLE) | B(FX_S_CLOSING) | B(FX_S_CLOSED),
	    [FX_S_CLOSING] = B(FX_S_CLOSED),
	};
#undef B
	if ((unsigned)from >= FX_S_COUNT || (unsigned)to >= FX_S_COUNT)
		return false;
	return legal[from] & (1u << to);
}

enum fx_sess_due fx_sess_due(enum fx_sess_state s, const struct fx_sess_clock *c, uint64_t now,
			     uint64_t *next_ms)
{
	uint64_t at = UINT64_MAX;
	enum fx_sess_due due = FX_DUE_NONE;

	switch (s) {
	case FX_S_PENDING:
	case FX_S_STARTING:
		at = c->created_ms + (uint64_t)c->open_timeout_s * 1000;
		due = FX_DUE_TIMEOUT;
		break;
	case FX_S_CLOSING:
		at = c->closing_ms + (uint64_t)c->close_grace_s * 1000 + FX_CLOSE_SLACK_MS;
		due = FX_DUE_CLOSED;
		break;
	case FX_S_CLOSED:
	case FX_S_TIMEOUT:
		at = c->final_ms + FX_FINAL_KEEP_MS;
		due = FX_DUE_FORGET;
		break;
	default:
		break;
	}
	if (next_ms)
		*next_ms = at;
	return at != UINT64_MAX && now >= at ? due : FX_DUE_NONE;
}

/* ---- node revisions ---- */

void fx_rev_register(struct fx_rev *r, int64_t rev)
{
	r->reg_rev = rev;
	r->awaiting_full = true;
	r->low_ok = true;
}

enum fx_rev_verdict fx_rev_delta(struct fx_rev *r, int64_t rev)
{
	if (r->awaiting_full)
		return FX_REV_DROP;
	if (rev <= r->cur)
		return FX_REV_DROP;
	if (r->cur >= 0 && rev > r->cur + 1) {
		r->awaiting_full = true;
		return FX_REV_FULLSYNC;
	}
	r->cur = rev;
	return FX_REV_APPLY;
}

enum fx_rev_verdict fx_rev_full(struct fx_rev *r, int64_t rev)
{
	if (rev >= r->cur || (r->low_ok && rev == r->reg_rev)) {
		r->cur = rev;
		r->awaiting_full = false;
		r->low_ok = false;
		return FX_REV_APPLY;
	}
	return FX_REV_DROP;
}

/* ---- the node link's objects ---- */

static const char *const pod_names[FX_P_COUNT] = {"Creating",	"Standby",    "Activating",
						  "Running",	"Evacuating", "Terminating",
						  "Terminated", "Failed"};

const char *fx_pod_state_name(enum fx_pod_state s)
{
	return (unsigned)s < FX_P_COUNT ? pod_names[s] : "?";
}

const char *fx_check_id(const char *id)
{
	const char *slash = id ? strchr(id, '/') : NULL;
	char ns[FX_NS_MAX + 2];

	if (!slash || (size_t)(slash - id) > FX_NS_MAX)
		return "must be NAMESPACE/NAME";
	memcpy(ns, id, (size_t)(slash - id));
	ns[slash - id] = 0;
	if (ctl_k8s_dns_label(ns) || ctl_k8s_dns_subdomain(slash + 1))
		return "must be NAMESPACE/NAME (a DNS-1123 label and subdomain)";
	return NULL;
}

static const char *opt_str(json_t *o, const char *k, const char *field, struct fx_err *e, int *bad)
{
	json_t *v = json_object_get(o, k);

	if (!v || json_is_null(v))
		return "";
	if (!json_is_string(v)) {
		char f[200];

		snprintf(f, sizeof(f), "%s.%s", field, k);
		*bad = fx_errf(e, 400, f, "%s: must be a string", f);
		return "";
	}
	return json_string_value(v);
}

static int id_field(json_t *o, const char *k, const char *field, const char **out, struct fx_err *e)
{
	const char *v = json_string_value(json_object_get(o, k)), *why;
	char f[200];

	snprintf(f, sizeof(f), "%s.%s", field, k);
	if (!v)
		return fx_errf(e, 400, f, "%s: required (a string NS/NAME)", f);
	if ((why = fx_check_id(v)))
		return fx_errf(e, 400, f, "%s '%.200s': %s", f, v, why);
	*out = v;
	return 0;
}

int fx_link_pod_parse(json_t *o, const char *field, struct fx_link_pod *p, struct fx_err *e)
{
	const char *st;
	char f[200];
	int bad = 0, i;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(o))
		return fx_errf(e, 400, field, "%s: must be an object", field);
	if (id_field(o, "podIdentifier", field, &p->id, e) ||
	    id_field(o, "application", field, &p->app, e))
		return -1;
	st = json_string_value(json_object_get(o, "state"));
	for (i = 0; st && i < FX_P_COUNT && strcmp(st, pod_names[i]); i++)
		;
	snprintf(f, sizeof(f), "%s.state", field);
	if (!st || i == FX_P_COUNT)
		return fx_errf(e, 400, f, "%s '%.40s': not a pod state", f, st ? st : "");
	p->state = (enum fx_pod_state)i;
	p->ip = opt_str(o, "podIP", field, e, &bad);
	p->reason = opt_str(o, "reason", field, e, &bad);
	p->message = opt_str(o, "message", field, e, &bad);
	return bad;
}

/* o.accessEndPoints: absent/null (*out NULL) or an array of endpoints */
static int eps_parse(json_t *o, const char *field, json_t **out, struct fx_err *e)
{
	json_t *eps = json_object_get(o, "accessEndPoints"), *v;
	char f[200];
	size_t k;

	*out = NULL;
	snprintf(f, sizeof(f), "%s.accessEndPoints", field);
	if (eps && !json_is_null(eps) && !json_is_array(eps))
		return fx_errf(e, 400, f, "%s: must be an array", f);
	json_array_foreach(eps, k, v)
	{
		json_t *port = json_object_get(v, "port");

		snprintf(f, sizeof(f), "%s.accessEndPoints[%zu]", field, k);
		if (!json_is_string(json_object_get(v, "ipAddress")) ||
		    !json_is_string(json_object_get(v, "protocol")) || !json_is_integer(port) ||
		    json_integer_value(port) < 1 || json_integer_value(port) > 65535)
			return fx_errf(e, 400, f,
				       "%s: {\"protocol\":P,\"ipAddress\":A,\"port\":1..65535}", f);
	}
	*out = json_is_array(eps) ? eps : NULL;
	return 0;
}

int fx_link_ing_parse(json_t *o, const char *field, struct fx_link_ing *g, struct fx_err *e)
{
	const char *st;
	char f[200];
	int bad = 0;

	memset(g, 0, sizeof(*g));
	if (!json_is_object(o))
		return fx_errf(e, 400, field, "%s: must be an object", field);
	if (id_field(o, "sessionIdentifier", field, &g->id, e) ||
	    id_field(o, "podIdentifier", field, &g->pod, e))
		return -1;
	st = json_string_value(json_object_get(o, "state"));
	snprintf(f, sizeof(f), "%s.state", field);
	if (!st || (strcmp(st, "Open") && strcmp(st, "Closed")))
		return fx_errf(e, 400, f, "%s '%.40s': Open or Closed", f, st ? st : "");
	g->open = !strcmp(st, "Open");
	if (eps_parse(o, field, &g->endpoints, e))
		return -1;
	snprintf(f, sizeof(f), "%s.accessEndPoints", field);
	if (g->open && !json_array_size(g->endpoints))
		return fx_errf(e, 400, f, "%s: an open entry has its endpoints", f);
	g->reason = opt_str(o, "reason", field, e, &bad);
	return bad;
}

int fx_link_sess_parse(json_t *o, const char *field, struct fx_link_sess *s, struct fx_err *e)
{
	const char *st;
	json_t *cs;
	char f[200];
	int bad = 0, i;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o))
		return fx_errf(e, 400, field, "%s: must be an object", field);
	if (id_field(o, "sessionIdentifier", field, &s->id, e) ||
	    id_field(o, "podIdentifier", field, &s->pod, e))
		return -1;
	st = json_string_value(json_object_get(o, "state"));
	snprintf(f, sizeof(f), "%s.state", field);
	if ((i = fx_sess_state_parse(st)) < 0 || i == FX_S_PENDING)
		return fx_errf(e, 400, f, "%s '%.40s': not a session state", f, st ? st : "");
	s->state = (enum fx_sess_state)i;
	if (eps_parse(o, field, &s->endpoints, e))
		return -1;
	cs = json_object_get(o, "clientSessions");
	snprintf(f, sizeof(f), "%s.clientSessions", field);
	if (cs && !json_is_null(cs) && !json_is_integer(cs))
		return fx_errf(e, 400, f, "%s: must be an integer", f);
	s->client_sessions = json_integer_value(cs);
	s->reason = opt_str(o, "reason", field, e, &bad);
	s->owner = opt_str(o, "owner", field, e, &bad);
	if (!bad && json_is_string(json_object_get(o, "owner")) && fx_check_owner(s->owner)) {
		snprintf(f, sizeof(f), "%s.owner", field);
		return fx_errf(e, 400, f, "%s '%.*s': %s", f, quote_len(s->owner, 40), s->owner,
			       fx_check_owner(s->owner));
	}
	return bad;
}

int fx_link_register_check(json_t *m, struct fx_err *e)
{
	json_t *node = json_object_get(m, "node"), *cap = json_object_get(node, "capacity");
	json_t *rv = json_object_get(m, "nodeRevision");
	static const char *const caps[] = {"cpu", "memory", "pods"};
	static const char *const strs[] = {"ip", "publicIp"};

	if (!json_is_integer(rv) || json_integer_value(rv) < 0)
		return fx_errf(e, 400, "nodeRevision", "nodeRevision: required, an integer >= 0");
	if (!json_is_object(node))
		return fx_errf(e, 400, "node", "node: required (an object)");
	if (ctl_k8s_dns_label(json_string_value(json_object_get(node, "name")) ?: ""))
		return fx_errf(e, 400, "node.name", "node.name: required, a DNS-1123 label");
	if (!json_is_object(cap))
		return fx_errf(e, 400, "node.capacity", "node.capacity: required (an object)");
	for (int i = 0; i < 3; i++) {
		json_t *v = json_object_get(cap, caps[i]);
		char f[40];

		snprintf(f, sizeof(f), "node.capacity.%s", caps[i]);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return fx_errf(e, 400, f, "%s: required, an integer >= 0", f);
	}
	for (int i = 0; i < 2; i++) {
		json_t *v = json_object_get(node, strs[i]);
		char f[40];

		snprintf(f, sizeof(f), "node.%s", strs[i]);
		if (v && !json_is_null(v) && !json_is_string(v))
			return fx_errf(e, 400, f, "%s: must be a string", f);
	}
	if (json_object_get(node, "role") &&
	    (!json_is_string(json_object_get(node, "role")) ||
	     (strcmp(json_string_value(json_object_get(node, "role")), "pod") &&
	      strcmp(json_string_value(json_object_get(node, "role")), "ingress"))))
		return fx_errf(e, 400, "node.role", "node.role '%.40s': pod or ingress",
			       json_string_value(json_object_get(node, "role"))
				   ?: "(not a string)");
	if (json_object_get(node, "labels") && !json_is_object(json_object_get(node, "labels")))
		return fx_errf(e, 400, "node.labels", "node.labels: must be an object");
	return 0;
}
