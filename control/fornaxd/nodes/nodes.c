// SPDX-License-Identifier: BSD-2-Clause
/*
 * The node link's server side, in the hub's manner: one struct fx_link per
 * WebSocket; NodeRegister first (within FX_REGISTER_SECS, at most
 * FX_REGISTER_MAX bytes), then the node's reports to the core. A join
 * issues the node's credential and stores only its digest, with the
 * node's pod subnet; a join for a name that already holds a credential is
 * refused (a node cannot take another's name); a new authenticated link
 * for a name replaces the old one. Bad input closes that link only, with
 * an error naming the field and one log line.
 */
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_k8s.h"
#include "ctl_log.h"
#include "ctl_wslink.h"
#include "nodes.h"

struct fx_link {
	struct fx_nodes *ns; /* NULL once the server stopped */
	struct ctl_wslink l;
	struct fx_link *next;
	char peer[64];
	char name[FX_NS_MAX + 1]; /* once authenticated */
	bool authed, dead;
};

struct fx_nodes {
	struct fx_core *core;
	struct fx_store *st;
	struct fx_nodes_conf cf;
	struct fx_nodes **slot; /* the vhost's pointer to us */
	struct fx_link *links;
	bool standby; /* refuse joins (the leader writes credentials) */
};

static void link_log(struct fx_link *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void link_log(struct fx_link *c, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctl_log("nodes: %s%s(%s): %s", c->name, c->name[0] ? " " : "", c->peer, msg);
}

static int refuse(struct fx_link *c, int close_code, const char *code, const char *why)
{
	link_log(c, "%s; link closed", why);
	ctl_ws_fail(&c->l, close_code, code, why);
	c->dead = true;
	return 0;
}

/* ---- registration ---- */

struct used {
	int max;
	unsigned char *taken;
};

static int mark_used(void *arg, const char *name, int subnet)
{
	struct used *u = arg;

	(void)name;
	if (subnet >= 0 && subnet < u->max)
		u->taken[subnet] = 1;
	return 0;
}

/* the lowest subnet no node holds; -1 if none is free */
static int free_subnet(struct fx_nodes *ns)
{
	struct used u = {ns->cf.max_subnets, calloc((size_t)ns->cf.max_subnets + 1, 1)};
	int i = -1;

	if (u.taken && !ns->st->ops->node_each(ns->st, mark_used, &u))
		for (i = 0; i < u.max && u.taken[i]; i++)
			;
	if (i >= u.max)
		i = -1;
	free(u.taken);
	return i;
}

static int on_register(struct fx_link *c, json_t *m)
{
	struct fx_nodes *ns = c->ns;
	const char *t = ctl_ws_type(m), *name, *join, *cred;
	json_t *auth = json_object_get(m, "auth"), *extra = NULL;
	unsigned char have[CTL_TOKEN_HASH_LEN], got[CTL_TOKEN_HASH_LEN];
	char why[400], text[FX_CREDENTIAL_LEN + 8];
	struct fx_err e;
	void *old = NULL;
	int subnet = -1, found;

	if (strcmp(t, "NodeRegister"))
		return refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
			      "the first message must be a NodeRegister");
	if (json_integer_value(json_object_get(m, "v")) != 1)
		return refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "bad-message",
			      "v: this server speaks version 1");
	name = json_string_value(json_object_get(json_object_get(m, "node"), "name"));
	if (!name || ctl_k8s_dns_label(name))
		return refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "bad-message",
			      "node.name: required, a DNS-1123 label");
	snprintf(c->name, sizeof(c->name), "%s", name);
	if (fx_link_register_check(m, &e))
		return refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "bad-message", e.msg);
	join = json_string_value(json_object_get(auth, "join"));
	cred = json_string_value(json_object_get(auth, "credential"));
	if (!json_is_object(auth) || !!join == !!cred)
		return refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unauthorized",
			      "auth: a join token or a credential");
	found = ns->st->ops->node_get(ns->st, name, have, &subnet);
	if (found < 0)
		return refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
			      "the store failed");
	ctl_token_digest(join ? join : cred, strlen(join ? join : cred), got);
	if (join) {
		unsigned char raw[32];

		/* a join writes the node's credential: the leader's write; the node
		 * links to this standby with it afterwards */
		if (ns->standby)
			return refuse(c, LWS_CLOSE_STATUS_GOINGAWAY, "standby",
				      "this fornaxd is a standby: join through the leader");
		if (!ctl_token_match(got, ns->cf.join_tokens, ns->cf.n_join_tokens))
			return refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unauthorized",
				      "join token refused");
		if (found) {
			snprintf(why, sizeof(why),
				 "a node named %s already holds a credential (delete the node to "
				 "register it again)",
				 name);
			return refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "conflict", why);
		}
		if ((subnet = free_subnet(ns)) < 0)
			return refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "full",
				      "no pod subnet is free for another node");
		randombytes_buf(raw, sizeof(raw));
		sodium_bin2base64(text, sizeof(text), raw, sizeof(raw),
				  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
		sodium_memzero(raw, sizeof(raw));
		ctl_token_digest(text, strlen(text), have);
		if (ns->st->ops->node_put(ns->st, name, have, subnet))
			return refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
				      "the store failed");
		extra = json_pack("{s:s}", "credential", text);
		sodium_memzero(text, sizeof(text));
	} else if (!found) {
		snprintf(why, sizeof(why),
			 "no credential was issued to %s: register with a join "
			 "token",
			 name);
		return refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unauthorized", why);
	} else if (!ctl_token_match(got, (const unsigned char(*)[CTL_TOKEN_HASH_LEN])have, 1)) {
		return refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unauthorized",
			      "credential refused");
	}
	c->authed = true; /* before the core sends on it */
	if (fx_core_node_register(ns->core, c, m, subnet, extra, &old, &e)) {
		c->authed = false;
		json_decref(extra);
		return refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "bad-message", e.msg);
	}
	json_decref(extra);
	if (c->l.wsi)
		lws_set_timeout(c->l.wsi, NO_PENDING_TIMEOUT, 0);
	if (old) {
		struct fx_link *o = old;

		link_log(o, "replaced by a new link from %s", c->peer);
		o->dead = true;
		o->l.close_after = true;
		o->l.close_code = LWS_CLOSE_STATUS_GOINGAWAY;
		if (o->l.wsi)
			lws_callback_on_writable(o->l.wsi);
	}
	link_log(c, "registered at revision %" JSON_INTEGER_FORMAT "%s",
		 json_integer_value(json_object_get(m, "nodeRevision")),
		 join ? " with a join token (credential issued)" : "");
	return 0;
}

static int on_message(struct fx_link *c, json_t *m)
{
	struct fx_err e;
	int rc;

	if (!c->authed)
		return on_register(c, m);
	if (!strcmp(ctl_ws_type(m), "NodeRegister"))
		return refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
			      "a second NodeRegister");
	rc = fx_core_node_message(c->ns->core, c->name, c, m, &e);
	if (rc < 0)
		return refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR,
			      e.code == 500 ? "internal" : "bad-message", e.msg);
	if (rc > 0)
		return refuse(c, LWS_CLOSE_STATUS_GOINGAWAY, "replaced",
			      "this link is not the node's any more");
	return 0;
}

/* ---- lws ---- */

static bool path_is_ours(struct lws *wsi)
{
	char uri[256];

	return lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) > 0 &&
	       !strcmp(uri, FX_NODES_PATH);
}

static void link_gone(struct fx_link *c)
{
	struct fx_nodes *ns = c->ns;

	if (ns) {
		if (c->authed) {
			if (c->l.overflowed)
				link_log(c,
					 "not reading: over SendQueueMax (%zu bytes queued); "
					 "link closed, it resyncs when it comes back",
					 c->l.queued);
			else if (!c->dead)
				link_log(c, "link closed");
			fx_core_node_unlinked(ns->core, c->name, c);
		}
		for (struct fx_link **p = &ns->links; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
	}
	ctl_ws_reset(&c->l);
	free(c);
}

static struct fx_nodes *nodes_of(struct lws *wsi)
{
	struct lws_vhost *vh = wsi ? lws_get_vhost(wsi) : NULL;
	struct fx_nodes **slot =
	    vh ? lws_protocol_vh_priv_get(vh, lws_vhost_name_to_protocol(vh, FX_NODES_PROTOCOL))
	       : NULL;

	return slot ? *slot : NULL;
}

int fx_nodes_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		      size_t len)
{
	struct fx_nodes *ns = nodes_of(wsi);
	struct fx_nodes_sess *s = user;
	struct fx_link *c = s ? s->c : NULL;
	const char *why;
	json_t *m;
	int code, r;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return ns && path_is_ours(wsi) ? 0 : 1;
	case LWS_CALLBACK_ESTABLISHED:
		c = ns ? calloc(1, sizeof(*c)) : NULL;
		if (!c)
			return -1;
		s->c = c;
		c->ns = ns;
		c->l.wsi = wsi;
		c->l.max_queued = ns->cf.queue_max;
		if (!lws_get_peer_simple(wsi, c->peer, sizeof(c->peer)))
			snprintf(c->peer, sizeof(c->peer), "?");
		c->next = ns->links;
		ns->links = c;
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, FX_REGISTER_SECS);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		if (!c || c->dead || !c->ns)
			return 0; /* refused: the rest is not read */
		r = ctl_ws_receive(&c->l, in, len, c->authed ? FX_MSG_MAX : FX_REGISTER_MAX, &m,
				   &why, &code);
		if (r < 0)
			return refuse(c, code,
				      code == LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE ? "too-big"
										 : "bad-message",
				      why);
		if (r > 0) {
			on_message(c, m);
			json_decref(m);
		}
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c ? ctl_ws_writable(&c->l) : 0;
	case LWS_CALLBACK_CLOSED:
		if (c)
			link_gone(c);
		s->c = NULL;
		return 0;
	default:
		return 0;
	}
}

struct fx_nodes *fx_nodes_start(struct fx_core *core, struct fx_store *st,
				const struct fx_nodes_conf *cf, struct lws_vhost *vh)
{
	const struct lws_protocols *prot = lws_vhost_name_to_protocol(vh, FX_NODES_PROTOCOL);
	struct fx_nodes *ns = calloc(1, sizeof(*ns));

	if (!ns)
		return NULL;
	ns->core = core;
	ns->st = st;
	ns->cf = *cf;
	ns->slot = prot ? lws_protocol_vh_priv_zalloc(vh, prot, sizeof(*ns->slot)) : NULL;
	if (!ns->slot) {
		ctl_log("nodes: the protocol %s is not on the API's vhost", FX_NODES_PROTOCOL);
		free(ns);
		return NULL;
	}
	*ns->slot = ns;
	ctl_log("nodes: %s on %s (%d join token%s)", FX_NODES_PROTOCOL, FX_NODES_PATH,
		cf->n_join_tokens, cf->n_join_tokens == 1 ? "" : "s");
	return ns;
}

void fx_nodes_set_standby(struct fx_nodes *ns, bool standby)
{
	ns->standby = standby;
}

void fx_nodes_stop(struct fx_nodes *ns)
{
	if (!ns)
		return;
	*ns->slot = NULL;
	for (struct fx_link *c = ns->links; c; c = c->next)
		c->ns = NULL; /* they go with the context and only free themselves */
	free(ns);
}

void fx_nodes_send(struct fx_nodes *ns, void *link, json_t *msg)
{
	struct fx_link *c = link;

	(void)ns;
	if (!c || c->dead) {
		json_decref(msg);
		return;
	}
	ctl_ws_send(&c->l, msg);
}

void fx_nodes_close(struct fx_nodes *ns, void *link, const char *why)
{
	struct fx_link *c = link;

	(void)ns;
	if (c && !c->dead)
		refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "deleted", why);
}
