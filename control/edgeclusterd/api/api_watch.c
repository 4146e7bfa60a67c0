// SPDX-License-Identifier: BSD-2-Clause
/*
 * Watches of the missions collection (GET .../missions?watch=1), on the
 * base's ctl_watch. Every write that changes a mission bumps the store's
 * revision; after the callback that wrote has ended (the transport's timer,
 * http.c) api_watch_scan compares the store with what it last saw and
 * publishes the differences in revision order: ADDED (a name it did not
 * know), MODIFIED (a known name at a newer resourceVersion), DELETED (a
 * known name gone, with its last object and the revision of the scan).
 * Whoever wrote (the API, the sync from the parent) the watches see it.
 *
 * The last object of every mission is kept in memory, for the DELETED
 * event's body (the store keeps nothing of a deleted row). A mission's
 * state reports do not change its resourceVersion and are not events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ctl_watch.h"

#define RING	1024	   /* events kept for a watch from a recent resourceVersion */
#define BUF_MAX (4u << 20) /* a watcher further behind than this is ended */

struct ec_watch {
	struct ecd *d;
	struct ctl_watch *w;
	json_t *known; /* name -> the object as last seen */
	uint64_t seen; /* the revision scanned up to */
};

struct scan {
	struct ec_watch *aw;
	json_t *present; /* names in the store now */
	json_t *changed; /* [rv, type, name, object] of the rows newer than seen */
};

static int scan_row(void *arg, struct ec_row *r)
{
	struct scan *sc = arg;
	json_t *old = json_object_get(sc->aw->known, r->name), *o;

	if (json_object_set_new(sc->present, r->name, json_true()))
		return -1;
	if (old && r->rv <= sc->aw->seen)
		return 0;
	if (!(o = ec_object_json("Mission", r)))
		return -1;
	return json_array_append_new(sc->changed, json_pack("[I,s,s,o]", (json_int_t)r->rv,
							    old ? "MODIFIED" : "ADDED", r->name, o))
		   ? -1
		   : 0;
}

static int by_rv(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_array_get(*(json_t *const *)a, 0));
	json_int_t y = json_integer_value(json_array_get(*(json_t *const *)b, 0));

	return x < y ? -1 : x > y;
}

/* known and seen from the store as it is; publish=false at the start. */
static int scan(struct ec_watch *aw, bool publish)
{
	struct scan sc = {aw, json_object(), json_array()};
	uint64_t rev;
	json_t **v = NULL, *o;
	size_t n, i;
	const char *name;
	void *tmp;
	int rc = -1;

	if (!sc.present || !sc.changed || ec_store_revision(&aw->d->store, &rev))
		goto out;
	if (rev == aw->seen && publish)
		goto done;
	if (ec_store_list(&aw->d->store, EC_T_MISSIONS, scan_row, &sc) < 0)
		goto out;
	n = json_array_size(sc.changed);
	if (n && !(v = calloc(n, sizeof(*v))))
		goto out;
	for (i = 0; i < n; i++)
		v[i] = json_array_get(sc.changed, i);
	if (n)
		qsort(v, n, sizeof(*v), by_rv);
	for (i = 0; i < n; i++) {
		o = json_array_get(v[i], 3);
		json_object_set(aw->known, json_string_value(json_array_get(v[i], 2)), o);
		if (publish)
			ctl_watch_event(aw->w,
					(uint64_t)json_integer_value(json_array_get(v[i], 0)),
					json_string_value(json_array_get(v[i], 1)), o);
	}
	json_object_foreach_safe(aw->known, tmp, name, o)
	{
		if (json_object_get(sc.present, name))
			continue;
		if (publish) {
			/* as Kubernetes: the last state at the deletion's revision */
			json_t *last = json_deep_copy(o);
			char rvs[24];

			snprintf(rvs, sizeof(rvs), "%" PRIu64, rev);
			if (!last ||
			    json_object_set_new(json_object_get(last, "metadata"),
						"resourceVersion", json_string(rvs)) ||
			    ctl_watch_event(aw->w, rev, "DELETED", last))
				ctl_log("watch: cannot publish the deletion of %s", name);
			json_decref(last);
		}
		json_object_del(aw->known, name);
	}
	aw->seen = rev;
done:
	rc = 0;
out:
	if (rc)
		ctl_log("watch: cannot read the missions: %s", ec_store_errmsg(&aw->d->store));
	free(v);
	json_decref(sc.present);
	json_decref(sc.changed);
	return rc;
}

struct ec_watch *api_watch_new(struct ecd *d)
{
	struct ec_watch *aw = calloc(1, sizeof(*aw));

	if (!aw)
		return NULL;
	aw->d = d;
	if (!(aw->known = json_object()) || scan(aw, false) ||
	    !(aw->w = ctl_watch_new(aw->seen, RING, BUF_MAX))) {
		api_watch_free(aw);
		return NULL;
	}
	{ /* the labels the missions have now: a change later is judged against them */
		const char *k;
		json_t *o;

		json_object_foreach(aw->known, k, o) if (ctl_watch_known(aw->w, o))
		{
			api_watch_free(aw);
			return NULL;
		}
	}
	return aw;
}

uint64_t api_watch_floor(const struct ec_watch *aw)
{
	return ctl_watch_floor(aw->w);
}

void api_watch_free(struct ec_watch *aw)
{
	if (!aw)
		return;
	ctl_watch_free(aw->w);
	json_decref(aw->known);
	free(aw);
}

int api_watch_scan(struct ec_watch *aw)
{
	return scan(aw, true);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A watch from resourceVersion 0 starts, as Kubernetes', with ADDED for
 * every current mission (of name only, if given) in name order: kubectl
 * get NAME -w drops the first event as the object it has just printed. */
static int initial(struct ec_watch *aw, struct api_stream *st, const char *name)
{
	size_t n = json_object_size(aw->known), i = 0;
	const char **names, *k;
	json_t *o;
	int rc = 0;

	if (name)
		return (o = json_object_get(aw->known, name)) ? api_stream_added(st, o) : 0;
	if (!n)
		return 0;
	if (!(names = calloc(n, sizeof(*names))))
		return -1;
	json_object_foreach(aw->known, k, o) names[i++] = k;
	qsort(names, n, sizeof(*names), by_name);
	for (i = 0; !rc && i < n; i++)
		rc = api_stream_added(st, json_object_get(aw->known, names[i]));
	free(names);
	return rc;
}

int api_mission_watch(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	char buf[32], fbuf[1024], lbuf[4096], name[EC_MISSION_NAME_MAX + 1], why[300], *end;
	const char *v = api_query(rq->query, "resourceVersion", buf, sizeof(buf));
	const char *fsel = api_query(rq->query, "fieldSelector", fbuf, sizeof(fbuf));
	const char *lsel = api_query(rq->query, "labelSelector", lbuf, sizeof(lbuf));
	struct ctl_k8s_selector *sel = NULL;
	uint64_t from = 0;
	bool expired;
	struct api_stream *st;

	if (!d->watch)
		return api_errorf(rs, 501, NULL, "watch", "watch is not served here");
	if (fsel && ctl_k8s_field_selector(fsel, name, sizeof(name), why, sizeof(why)))
		return api_errorf(rs, 400, NULL, "fieldSelector", "%s", why);
	if (v && strcmp(v, "0")) {
		errno = 0;
		from = strtoull(v, &end, 10);
		if (*v < '1' || *v > '9' || *end || errno)
			return api_errorf(rs, 400, NULL, "resourceVersion",
					  "resourceVersion: '%s' is not a resourceVersion (0, or a "
					  "decimal number without leading zeros)",
					  v);
	}
	if (lsel && *lsel) {
		if (!(sel = malloc(sizeof(*sel))))
			return api_errorf(rs, 500, NULL, NULL, "out of memory");
		if (ctl_k8s_selector_parse(lsel, sel, why, sizeof(why))) {
			free(sel);
			return api_errorf(rs, 400, NULL, "labelSelector",
					  "labelSelector '%.200s': %s", lsel, why);
		}
	}
	/* what is written and not yet scanned goes to the ring first, so that
	 * a watch from the revision of a list just read misses nothing */
	scan(d->watch, true);
	st = api_stream_watch(d->watch->w, from, fsel && *name ? name : NULL, sel, &expired);
	free(sel); /* the watcher has its copy */
	if (!st)
		return api_errorf(rs, 500, NULL, NULL, "out of memory");
	if (expired)
		ctl_log("watch from %s: resourceVersion %" PRIu64 " expired", rq->peer, from);
	if (v && !strcmp(v, "0") && initial(d->watch, st, fsel && *name ? name : NULL)) {
		api_stream_free(st);
		return api_errorf(rs, 500, NULL, NULL, "out of memory");
	}
	rs->stream = st;
	rs->code = 200;
	rs->content_type = "application/json";
	return 0;
}
