// SPDX-License-Identifier: BSD-2-Clause
/*
 * Active/standby on etcd (lead.h). The view follows the store's watch of
 * the applications on every core, the leader's too: a write of its own
 * that timed out but was applied after all comes back that way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ctl_etcd.h"
#include "ctl_log.h"
#include "lead.h"

/* When a standby campaigns is ctl_etcd_elect's to say (ctl_etcd_pace: as
 * soon as the election's watch sees the dead leader's key go, a fallback
 * period, a back-off after a campaign etcd did not answer); it is stepped
 * on every tick. Who leads, for the 503's, is what that watch last saw of
 * the key (ctl_etcd_elect_leader): never a read of our own, which would
 * hold the loop for up to Timeout per member while etcd is in trouble. */

struct fx_lead {
	struct fx_store *st;
	struct fx_core *core;
	struct fx_lead_hooks h;
	struct ctl_etcd_elect *election; /* NULL: Election = off, always leading */
	struct fx_store_watch *watch;	 /* the applications as etcd has them */
	json_t *rereading;		 /* "NS/NAME" put since the watch's reset, or NULL */
	bool leading, deposed;
	char told[320]; /* the leader the hook was told of last (a standby's) */
	char key[FX_PATH_MAX + 8];
};

static const char *etcd_err(struct fx_lead *l)
{
	return ctl_etcd_errmsg(fx_store_etcd_client(l->st));
}

/* who leads, as the election's watch says (shown to clients a standby
 * refuses): the hook is told when it changes, or always with force */
static void tell_leader(struct fx_lead *l, bool force)
{
	const char *who = ctl_etcd_elect_leader(l->election);

	if (!force && !strncmp(who, l->told, sizeof(l->told) - 1))
		return;
	snprintf(l->told, sizeof(l->told), "%s", who);
	l->h.standby(l->h.arg, true, l->told);
}

struct reread {
	struct fx_core *core;
	json_t *seen; /* "NS/NAME" -> true */
};

static int reread_app(void *arg, const char *text, uint64_t rv)
{
	struct reread *r = arg;
	json_t *o = json_loads(text, 0, NULL), *md = json_object_get(o, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	char id[FX_ID_MAX + 1];

	if (ns && name) {
		fx_core_app_stored(r->core, ns, name, rv, text);
		snprintf(id, sizeof(id), "%s/%s", ns, name);
		json_object_set_new(r->seen, id, json_true());
	}
	json_decref(o);
	return 0;
}

/* what the view holds and the store does not (deleted while the watch
 * could not tell: a compacted gap) goes */
static void sweep(struct reread *r)
{
	uint64_t rev;
	json_t *all = fx_core_list(r->core, FX_K_APP, NULL, &rev), *a;
	char id[FX_ID_MAX + 1];
	size_t i;

	json_array_foreach(all, i, a)
	{
		json_t *md = json_object_get(a, "metadata");
		const char *ns = json_string_value(json_object_get(md, "namespace"));
		const char *name = json_string_value(json_object_get(md, "name"));

		if (!ns || !name)
			continue;
		snprintf(id, sizeof(id), "%s/%s", ns, name);
		if (!json_object_get(r->seen, id))
			fx_core_app_unstored(r->core, ns, name);
	}
	json_decref(all);
}

/* the lead is ours: fence the store's writes on it, read the applications
 * once more (the watch may lag), then writes and nodes */
static int take_over(struct fx_lead *l)
{
	struct reread r = {l->core, NULL};

	if (fx_store_etcd_fence(l->st, l->election))
		return -1;
	r.seen = json_object();
	if (!r.seen || l->st->ops->app_each(l->st, reread_app, &r))
		ctl_log("election: rereading the applications: %s; the watch's view stands",
			l->st->ops->errmsg(l->st));
	else
		sweep(&r);
	json_decref(r.seen);
	l->leading = true;
	l->h.standby(l->h.arg, false, NULL);
	ctl_log("election: this fornaxd leads now: serving writes and nodes");
	return 0;
}

static int step_election(struct fx_lead *l)
{
	bool leader = false;
	int rc;

	if (!l->leading) {
		/* campaigns when one is due, else renews the lease when due
		 * (a failure is logged there, with when the next is due) */
		ctl_etcd_elect_step(l->election, &leader);
		if (!leader) {
			tell_leader(l, false);
			return 0;
		}
		return take_over(l);
	}
	/* renews the lease when due (a request every TTL/3), else nothing */
	rc = ctl_etcd_elect_step(l->election, &leader);
	if (leader)
		return 0;
	/* the store's fence already refuses our writes: stop serving, a standby
	 * takes over (restart this one as the next standby) */
	ctl_log("election: no longer the leader%s%s: stopping", rc ? ": " : "",
		rc ? etcd_err(l) : "");
	l->deposed = true;
	return -1;
}

/* every application follows as a put, then synced: what the view holds
 * and was not put since was deleted in a gap the watch could not read (a
 * compaction), and goes */
static void w_reset(void *arg)
{
	struct fx_lead *l = arg;

	json_decref(l->rereading);
	l->rereading = json_object();
}

static void w_put(void *arg, const char *ns, const char *name, uint64_t rv, const char *json)
{
	struct fx_lead *l = arg;
	char id[FX_ID_MAX + 1];

	fx_core_app_stored(l->core, ns, name, rv, json);
	if (l->rereading) {
		snprintf(id, sizeof(id), "%s/%s", ns, name);
		json_object_set_new(l->rereading, id, json_true());
	}
}

static void w_synced(void *arg)
{
	struct fx_lead *l = arg;
	struct reread r = {l->core, l->rereading};

	if (r.seen) /* NULL (out of memory): kept; a takeover's reread sweeps */
		sweep(&r);
	json_decref(l->rereading);
	l->rereading = NULL;
}

static void w_del(void *arg, const char *ns, const char *name)
{
	struct fx_lead *l = arg;

	fx_core_app_unstored(l->core, ns, name);
}

struct fx_lead *fx_lead_new(struct fx_store *st, const char *prefix, const char *id, unsigned ttl_s)
{
	struct fx_lead *l = calloc(1, sizeof(*l));
	bool won = false;

	if (!l)
		return NULL;
	l->st = st;
	l->leading = true;
	if (!ttl_s)
		return l;
	snprintf(l->key, sizeof(l->key), "%sleader", prefix);
	if (!(l->election = ctl_etcd_elect_new(fx_store_etcd_client(st), l->key, id, ttl_s))) {
		ctl_log("election: cannot campaign on %s", l->key);
		free(l);
		return NULL;
	}
	ctl_etcd_elect_step(l->election, &won); /* the first campaign (logged if it failed) */
	if (won && fx_store_etcd_fence(st, l->election)) {
		fx_lead_free(l);
		return NULL;
	}
	if (!won)
		ctl_log("election: standby as %s; another fornaxd leads (%s): serving reads only",
			id, l->key);
	l->leading = won;
	return l;
}

int fx_lead_start(struct fx_lead *l, struct fx_core *core, const struct fx_lead_hooks *h)
{
	const struct fx_store_app_hooks wh = {l, w_reset, w_put, w_del, w_synced};

	l->core = core;
	l->h = *h;
	if (!(l->watch = fx_store_etcd_watch_apps(l->st, &wh)))
		return -1;
	if (!l->leading) {
		/* the election's watch reads the key without holding the loop,
		 * an answer later: waited for here, once, before the loop
		 * serves, so that the standby names the leader from its first
		 * answer (a campaign due, when the key is absent, is the tick's) */
		ctl_etcd_elect_wait(l->election);
		tell_leader(l, true);
	}
	return 0;
}

int fx_lead_step(struct fx_lead *l)
{
	return l->election ? step_election(l) : 0;
}

int fx_lead_elect_step(struct fx_lead *l, int *next_ms)
{
	bool vacant;
	int rc = 0;

	if (!l->election) {
		*next_ms = -1;
		return 0;
	}
	vacant = ctl_etcd_elect_poll(l->election);
	if (vacant && !l->leading)
		rc = step_election(l); /* the key is gone: a campaign is due now */
	else if (!l->leading)
		tell_leader(l, false); /* the key changed hands, maybe */
	*next_ms = ctl_etcd_elect_next_ms(l->election);
	return rc;
}

int fx_lead_elect_fd(const struct fx_lead *l)
{
	return l->election ? ctl_etcd_elect_fd(l->election) : -1;
}

int fx_lead_watch_fd(const struct fx_lead *l)
{
	return fx_store_watch_fd(l->watch);
}

int fx_lead_watch_step(struct fx_lead *l)
{
	fx_store_watch_poll(l->watch, 0);
	return fx_store_watch_next_ms(l->watch);
}

bool fx_lead_deposed(const struct fx_lead *l)
{
	return l && l->deposed;
}

int64_t fx_lead_term(const struct fx_lead *l)
{
	if (!l->leading || l->deposed)
		return -1;
	return l->election ? ctl_etcd_elect_revision(l->election) : 0;
}

void fx_lead_free(struct fx_lead *l)
{
	if (!l)
		return;
	fx_store_watch_stop(l->watch);
	json_decref(l->rereading);
	ctl_etcd_elect_free(l->election, l->leading && !l->deposed);
	free(l);
}
