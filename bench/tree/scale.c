// SPDX-License-Identifier: BSD-2-Clause
/*
 * tree_probe scale: every line of CLUSTERS is a cluster of the tree.
 * --missions M missions without placement (every cluster applies every one)
 * are POSTed at the root, one after the other on one keep-alive connection
 * (time 0: before the first); with --bulk N, N at a time, as a MissionList
 * (one request, and one transaction at the root, for N). Then each cluster's
 * own API, one thread per cluster (a daemon busy with a batch holds up only
 * its own queries), at most every --interval-ms: GET missions/LAST (the last
 * one created: missions travel and are applied in order), and when that is
 * there (and its own state says applied), the exact counts: GET
 * edgeclusters/NAME, missions.known (received) and missions.active (applied
 * and reported) must reach M. Once every cluster has applied all, the root
 * (sweep_root): the mission list, then only the missions still incomplete,
 * until every state map holds every cluster's path with the expected value
 * (clusters x M keys). The lower bound of a "yes" is the
 * send time of the last "not yet", and never before the last mission was
 * created.
 *
 * --kind: content (default: a content-only mission, the local driver writes
 * one file; state "applied"), command (and a command, /bin/true), check (and
 * a stateCheck printing "ok": state "ok"). --create-only: create and exit;
 * --no-create: they exist already, time 0 is the probe's start.
 *
 * Rows: | what | after the first POST | after the last POST | target | met? |
 * resolution |; --raw FILE: one line per cluster.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree_probe.h"

static long count_at(json_t *doc, const char *key)
{
	json_t *v =
	    json_object_get(json_object_get(json_object_get(doc, "state"), "missions"), key);

	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* keys of one mission's state map that say `want`, for paths of the tree */
static long state_count(json_t *doc, const char *want, json_t *paths)
{
	json_t *v;
	const char *k;
	long n = 0;

	json_object_foreach(json_object_get(doc, "state"), k, v)
	{
		if (json_is_string(v) && !strcmp(json_string_value(v), want) &&
		    json_object_get(paths, k))
			n++;
	}
	return n;
}

/* | what | after the first POST | after the last POST | target | met? | resolution |
 * (met? on the first: the user's wait) */
static void scale_row(const char *what, double hi, double lo, double created, double target)
{
	char v[32], v2[32] = "", tg[32] = "", ok[8] = "";

	fmt_ms(v, sizeof(v), hi >= 0 ? hi : NAN);
	if (hi >= 0 && created >= 0)
		fmt_ms(v2, sizeof(v2), hi - created);
	if (target > 0) {
		snprintf(tg, sizeof(tg), "<= %.0f s", target / 1000);
		snprintf(ok, sizeof(ok), "%s", hi >= 0 && hi <= target ? "yes" : "NO");
	}
	if (hi >= 0 && lo >= 0)
		printf("| %s | %s | %s | %s | %s | %.0f ms |\n", what, v, v2, tg, ok, hi - lo);
	else
		printf("| %s | %s | %s | %s | %s | |\n", what, v, v2, tg, ok);
}

/* what every watcher thread shares (read-only, but for done) */
static struct {
	int missions, interval_ms, done;
	const char *want;
	double t0, t_created, timeout, next_report;
	bool tolerate; /* --no-create: daemons may not listen yet */
	char last[256];
} W;

/* One cluster. A cheap query first: GET missions/LAST (the last mission
 * created; missions travel in order and batches are applied in order, so it
 * is the last to arrive; content-only missions are applied in order too).
 * Only when it says "there" (and, for active, "its own state is the wanted
 * one") the counts are asked for: GET edgeclusters/NAME (missions.known,
 * missions.active, counted over every mission: ~2 ms of the daemon's time at
 * 1000). A count short of M just means polling goes on. Nothing is
 * everywhere before the last mission exists: lower bounds start there. */
static void *watch_one(void *arg)
{
	struct cl *c = arg;
	char cpath[256];

	c->known_lo = c->active_lo = W.t_created;
	snprintf(cpath, sizeof(cpath), API "/edgeclusters/%s", c->name);
	while (!c->active && now_ms() - W.t0 < W.timeout) {
		double s, e, wait;
		json_t *doc, *v;
		bool there, applied;
		int st;

		s = now_ms();
		st = hc_req(&c->hc, "GET", W.last, NULL);
		if (st < 0 && W.tolerate)
			st = 404; /* starting: not listening yet */
		if (st != 200 && st != 404) {
			if (asprintf(&c->error, "GET %s at %s: %d", W.last, c->hc.url, st) < 0)
				c->error = "GET failed";
			break;
		}
		there = st == 200;
		doc = there ? json_loadb(c->hc.body, c->hc.body_len, 0, NULL) : NULL;
		v = json_object_get(json_object_get(doc, "state"), c->name);
		applied = json_is_string(v) && !strcmp(json_string_value(v), W.want);
		json_decref(doc);
		if ((there && !c->known) || applied) {
			st = hc_req(&c->hc, "GET", cpath, NULL);
			e = now_ms();
			if (st != 200) {
				if (asprintf(&c->error, "GET %s at %s: %d", cpath, c->hc.url, st) <
				    0)
					c->error = "GET failed";
				break;
			}
			c->counts++;
			doc = json_loadb(c->hc.body, c->hc.body_len, 0, NULL);
			c->last_known = count_at(doc, "known");
			c->last_active = count_at(doc, "active");
			json_decref(doc);
			if (!c->known && c->last_known >= W.missions) {
				c->known_hi = e - W.t0;
				__atomic_store_n(&c->known, true, __ATOMIC_RELEASE);
			}
			if (c->last_active >= W.missions) {
				c->active_hi = e - W.t0;
				c->active = true;
				break;
			}
		}
		if (!c->known)
			c->known_lo = s - W.t0;
		c->active_lo = s - W.t0;
		wait = s + W.interval_ms - now_ms();
		if (wait > 0)
			sleep_us((long)(wait * 1000));
	}
	__atomic_add_fetch(&W.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- create ---- */

/* --prefix, --kind, --bulk: what the missions are and how they are sent */
static struct {
	const char *prefix, *kind;
	int bulk; /* 0: a Mission per POST; N: a MissionList of up to N per POST */
	int posts;
} C;

/* mission i (0-based) of --missions: C.prefix-00001 ... */
static json_t *mission(int i)
{
	json_t *spec = json_pack("{s:s}", "content", "bench: one of many missions\n");
	char name[128];

	snprintf(name, sizeof(name), "%s-%05d", C.prefix, i + 1);
	if (strcmp(C.kind, "content"))
		json_object_set_new(spec, "command", json_pack("{s:[s]}", "command", "/bin/true"));
	if (!strcmp(C.kind, "check"))
		json_object_set_new(spec, "stateCheck",
				    json_pack("{s:[s,s]}", "command", "/bin/echo", "ok"));
	return json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", "edge.xgate.io/v1", "kind",
			 "Mission", "metadata", "name", name, "spec", spec);
}

/* POST DOC (a Mission, or a MissionList of n) at the root; exits unless it
 * was created whole: 201 and, for a list, as many items back as sent (the
 * contract: 409/422 with a Status, nothing created, on any problem) */
static void post(json_t *doc, int first, int n)
{
	char *body = json_dumps(doc, JSON_COMPACT), what[160];
	struct hc *c = &cls[0].hc;
	json_t *ans;
	size_t got;
	int st;

	if (!body)
		die("out of memory");
	st = hc_req(c, "POST", API "/missions", body);
	free(body);
	C.posts++;
	if (C.bulk)
		snprintf(what, sizeof(what), "a MissionList of %d (%s-%05d .. %s-%05d)", n,
			 C.prefix, first + 1, C.prefix, first + n);
	else
		snprintf(what, sizeof(what), "%s-%05d", C.prefix, first + 1);
	if (st != 201)
		die("POST %s at %s: %d %s", what, c->url, st, st > 0 ? c->body : "(no answer)");
	if (!C.bulk)
		return;
	ans = json_loadb(c->body, c->body_len, 0, NULL);
	got = json_array_size(json_object_get(ans, "items"));
	json_decref(ans);
	if (got != (size_t)n)
		die("POST %s at %s: 201 with %zu items, not %d: %.200s", what, c->url, got, n,
		    c->body);
}

/* Every mission, one request after the other on one connection: a Mission
 * each, or MissionLists of --bulk (the last one shorter). */
static void create_all(int missions)
{
	json_t *list = NULL, *items = NULL;
	int first = 0;

	for (int i = 0; i < missions; i++) {
		if (!C.bulk) {
			json_t *m = mission(i);

			post(m, i, 1);
			json_decref(m);
			continue;
		}
		if (!list) {
			items = json_array();
			list = json_pack("{s:s,s:s,s:o}", "apiVersion", "edge.xgate.io/v1", "kind",
					 "MissionList", "items", items);
			first = i;
		}
		json_array_append_new(items, mission(i));
		if (i - first + 1 == C.bulk || i == missions - 1) {
			post(list, first, i - first + 1);
			json_decref(list);
			list = NULL;
		}
	}
}

/* "POST, one by one" or "2 POSTs of a MissionList of up to 500" */
static void create_how(char *out, size_t len)
{
	if (C.bulk)
		snprintf(out, len, "%d POST%s of a MissionList of up to %d", C.posts,
			 C.posts == 1 ? "" : "s", C.bulk);
	else
		snprintf(out, len, "POST, one by one");
}

/* ---- watch ---- */

/* Start one watch_one thread per cluster, so that a daemon whose loop is
 * busy (a batch of applies runs in one callback) holds up only its own
 * queries; progress on stderr every 5 s; exits on a thread's error. */
static void watch_all(void)
{
	for (int i = 0; i < n_cls; i++)
		if (pthread_create(&cls[i].thread, NULL, watch_one, &cls[i]))
			die("pthread_create: %s", strerror(errno));
	for (;;) {
		int done = __atomic_load_n(&W.done, __ATOMIC_ACQUIRE), kn = 0;

		if (done == n_cls)
			break;
		sleep_us(100000);
		if (now_ms() - W.t0 > W.next_report) {
			for (int i = 0; i < n_cls; i++)
				kn += __atomic_load_n(&cls[i].known, __ATOMIC_RELAXED);
			fprintf(stderr,
				"tree_probe: %.0f s: %d/%d clusters have all, %d/%d applied all\n",
				(now_ms() - W.t0) / 1000, kn, n_cls, done, n_cls);
			W.next_report = now_ms() - W.t0 + 5000;
		}
	}
	for (int i = 0; i < n_cls; i++) {
		pthread_join(cls[i].thread, NULL);
		if (cls[i].error)
			die("%s", cls[i].error);
	}
}

/* what the root holds: (lo, hi] when it had every state, -1: not reached */
static struct {
	double lo, hi;
	long have;
	unsigned polls;
} R = {-1, -1, 0, 0};

/* One GET at the root; the number of complete missions (states of all
 * clusters), the states counted into *have, done[] marked. */
static int root_list(json_t *paths, char *done, long *have)
{
	json_t *doc, *it;
	int complete = 0, st;
	size_t i;

	st = hc_req(&cls[0].hc, "GET", API "/missions", NULL);
	if (st != 200)
		die("GET missions at %s: %d", cls[0].hc.url, st);
	R.polls++;
	doc = json_loadb(cls[0].hc.body, cls[0].hc.body_len, 0, NULL);
	json_array_foreach(json_object_get(doc, "items"), i, it)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
		size_t pl = strlen(C.prefix);
		long n = state_count(it, W.want, paths);
		int m = name && !strncmp(name, C.prefix, pl) && name[pl] == '-'
			    ? atoi(name + pl + 1) - 1
			    : -1;

		*have += n;
		if (n >= n_cls && m >= 0 && m < W.missions && !done[m]) {
			done[m] = 1;
			complete++;
		}
	}
	json_decref(doc);
	return complete;
}

/* GET missions/NAME for the few not complete yet: 1 if m is complete now. */
static int root_one(json_t *paths, int m, long *have)
{
	char path[256];
	json_t *doc;
	long n;
	int st;

	snprintf(path, sizeof(path), API "/missions/%s-%05d", C.prefix, m + 1);
	st = hc_req(&cls[0].hc, "GET", path, NULL);
	if (st != 200)
		die("GET %s at %s: %d", path, cls[0].hc.url, st);
	R.polls++;
	doc = json_loadb(cls[0].hc.body, cls[0].hc.body_len, 0, NULL);
	n = state_count(doc, W.want, paths);
	json_decref(doc);
	*have += n;
	return n >= n_cls;
}

/* The root, once every cluster applied all, until every state map holds every
 * cluster's path with the expected value (clusters x M keys). While many
 * missions are incomplete, one GET of the list per sweep (the root streams it
 * from a snapshot: its RSS does not show our query); once at most
 * ROOT_FEW are, only those, one by one (a 2.5 MB list per sweep would make
 * the resolution ~1 s on a busy host). Before the first list, only the last
 * mission, until it is complete: states travel up in about the order the
 * missions were applied, and a list sweep while most are incomplete costs
 * the root (and us) CPU the tree needs. No state can be at the root before
 * the cluster that reports it applied. */
#define ROOT_FEW 64
static void sweep_root(json_t *paths)
{
	char *done = calloc((size_t)W.missions, 1);
	int rounds = 0, complete = 0;

	if (!done)
		die("out of memory");
	R.lo = W.t_created;
	for (int i = 0; i < n_cls; i++)
		if (cls[i].active_lo > R.lo)
			R.lo = cls[i].active_lo;
	while (now_ms() - W.t0 < W.timeout) {
		double s = now_ms();
		long have = 0;

		rounds++;
		if (root_one(paths, W.missions - 1, &have))
			break;
		R.lo = s - W.t0;
		/* one mission's GET: cheap enough to ask 4x as often */
		sleep_us((long)W.interval_ms * 250);
	}
	while (R.hi < 0 && now_ms() - W.t0 < W.timeout) {
		double s = now_ms();
		long have = 0;

		rounds++;
		if (W.missions - complete > ROOT_FEW) {
			memset(done, 0, (size_t)W.missions);
			complete = root_list(paths, done, &have);
		} else {
			have = (long)complete * n_cls;
			for (int m = 0; m < W.missions; m++)
				if (!done[m] && root_one(paths, m, &have)) {
					done[m] = 1;
					complete++;
				}
		}
		R.have = have;
		if (complete == W.missions) {
			R.hi = now_ms() - W.t0;
		} else {
			R.lo = s - W.t0; /* something was missing after s */
			sleep_us((long)W.interval_ms * 1000);
		}
	}
	free(done);
	if (verbose)
		fprintf(stderr, "tree_probe: %d sweeps of the root\n", rounds);
}

/* ---- results ---- */

static void write_raw(const char *raw)
{
	FILE *f = fopen(raw, "w");

	if (!f) {
		fprintf(stderr, "tree_probe: %s: %s\n", raw, strerror(errno));
		return;
	}
	fprintf(f, "# path known_ms active_ms (after the first POST; -1: not "
		   "reached) last_known last_active queries count_queries\n");
	for (int i = 0; i < n_cls; i++)
		fprintf(f, "%s %.1f %.1f %ld %ld %u %u\n", cls[i].path,
			cls[i].known ? cls[i].known_hi : -1, cls[i].active ? cls[i].active_hi : -1,
			cls[i].last_known, cls[i].last_active, cls[i].hc.requests, cls[i].counts);
	fclose(f);
}

/* the rows; 0 when everything got there, 3 if not */
static int report(bool create, const char *raw)
{
	double known_hi = 0, known_lo = 0, act_hi = 0, act_lo = 0, *v;
	double cr = create ? W.t_created : -1;
	long total = (long)n_cls * W.missions;
	int nk = 0, na = 0;
	char what[256], how[96];

	v = calloc((size_t)n_cls, sizeof(double));
	if (!v)
		die("out of memory");
	for (int i = 0; i < n_cls; i++) {
		struct cl *c = &cls[i];

		if (c->known && c->known_hi > known_hi)
			known_hi = c->known_hi, known_lo = c->known_lo;
		if (c->active && c->active_hi > act_hi)
			act_hi = c->active_hi, act_lo = c->active_lo;
		nk += c->known;
		if (c->active)
			v[na++] = c->active_hi;
	}
	if (raw)
		write_raw(raw);
	create_how(how, sizeof(how));
	snprintf(what, sizeof(what), "%d missions created at the root (%s)", W.missions, how);
	if (create)
		scale_row(what, W.t_created, -1, -1, -1);
	snprintf(what, sizeof(what), "every cluster (%d) has all %d missions", n_cls, W.missions);
	scale_row(what, nk == n_cls ? known_hi : -1, known_lo, cr, -1);
	snprintf(what, sizeof(what), "half the clusters have applied all (median cluster)");
	scale_row(what, na == n_cls ? quant(v, na, 0.5) : -1, -1, cr, -1);
	snprintf(what, sizeof(what), "**every cluster has applied all %d** (%ld applies)",
		 W.missions, total);
	scale_row(what, na == n_cls ? act_hi : -1, act_lo, cr, 5000);
	snprintf(what, sizeof(what),
		 "**the root has every (mission, path) state** (%ld keys = \"%s\")", total, W.want);
	scale_row(what, R.hi, R.lo, cr, 5000);
	free(v);
	fprintf(stderr,
		"tree_probe: %u GETs of the mission list at the root; it holds %ld/%ld states\n",
		R.polls, R.have, total);
	for (int i = 0; i < n_cls; i++)
		if (!cls[i].active)
			fprintf(stderr,
				"tree_probe: %s (%s) did not get there (its last counts: %ld "
				"missions, %ld active; -1: the last one never arrived)\n",
				cls[i].path, cls[i].hc.url, cls[i].last_known, cls[i].last_active);
	return nk == n_cls && na == n_cls && R.hi >= 0 ? 0 : 3;
}

int cmd_scale(int argc, char **argv)
{
	int missions = 1000, interval_ms = 200;
	double timeout = 600000, t0, t_created;
	const char *raw = NULL, *want = "applied";
	bool create = true, watch = true;
	json_t *paths = json_object();
	char how[96];

	C.prefix = "scale";
	C.kind = "content";
	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (!strcmp(argv[1], "--missions") && argc > 2)
			missions = atoi(argv[2]);
		else if (!strcmp(argv[1], "--bulk") && argc > 2)
			C.bulk = atoi(argv[2]);
		else if (!strcmp(argv[1], "--interval-ms") && argc > 2)
			interval_ms = atoi(argv[2]);
		else if (!strcmp(argv[1], "--timeout") && argc > 2)
			timeout = atof(argv[2]) * 1000;
		else if (!strcmp(argv[1], "--prefix") && argc > 2)
			C.prefix = argv[2];
		else if (!strcmp(argv[1], "--kind") && argc > 2)
			C.kind = argv[2];
		else if (!strcmp(argv[1], "--raw") && argc > 2)
			raw = argv[2];
		else if (!strcmp(argv[1], "--ca") && argc > 2)
			ca_file = argv[2];
		else if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--create-only") ||
			 !strcmp(argv[1], "--no-create")) {
			verbose |= !strcmp(argv[1], "-v");
			watch &= strcmp(argv[1], "--create-only") != 0;
			create &= strcmp(argv[1], "--no-create") != 0;
			continue;
		} else
			return 2;
		argc--, argv++;
	}
	if (argc != 2 || missions < 1 || interval_ms < 1 || C.bulk < 0 || (!create && !watch))
		return 2;
	if (strcmp(C.kind, "content") && strcmp(C.kind, "command") && strcmp(C.kind, "check"))
		return 2;
	if (!strcmp(C.kind, "check"))
		want = "ok";
	read_clusters(argv[1]);
	for (int i = 0; i < n_cls; i++)
		json_object_set_new(paths, cls[i].path, json_true());

	json_object_seed(0); /* before any thread: jansson's hash seed */
	t0 = now_ms();
	if (create)
		create_all(missions);
	t_created = now_ms() - t0;
	create_how(how, sizeof(how));
	if (!create)
		t_created = 0; /* they were there before time 0 */
	else
		fprintf(stderr, "tree_probe: %d missions created at the root in %.2f s (%s)\n",
			missions, t_created / 1000, how);
	if (!watch) {
		printf("| %d missions created at the root (%s), the other clusters "
		       "not started | %.2f s | | | | |\n",
		       missions, how, t_created / 1000);
		return 0;
	}

	W.missions = missions;
	W.want = want;
	W.interval_ms = interval_ms;
	W.t0 = t0;
	W.t_created = t_created;
	W.timeout = timeout;
	W.tolerate = !create;
	W.next_report = 5000;
	snprintf(W.last, sizeof(W.last), API "/missions/%s-%05d", C.prefix, missions);
	watch_all();
	for (int i = 0; i < n_cls; i++)
		if (!cls[i].active)
			return report(create, raw); /* the root's states can't be complete */
	sweep_root(paths);
	return report(create, raw);
}
