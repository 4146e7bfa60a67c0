// SPDX-License-Identifier: BSD-2-Clause
/*
 * tree_probe latency: the lines of CLUSTERS are a chain, root first, leaf
 * last (depth = lines - 1). Per repetition one mission is POSTed at the root
 * whose placement is the leaf's name, with a stateCheck that prints "ok
 * NAME"; then every level is polled (GET missions/NAME, one level after the
 * other, --interval-us between sweeps) until each has the mission (down) and
 * its state map shows the leaf's key with "ok NAME" (up: "c4" at c4, "c3/c4"
 * at c2, ..., "c1/c2/c3/c4" at the root). Time 0 is just before the POST is
 * written. A level that answered "not yet" to a query sent at s and "yes" in
 * a reply received at r got there in (s, r]: the figures are r (an upper
 * bound), the resolution column the largest r - s. Between repetitions a
 * random pause of 0..--pause-ms decorrelates the create from the hubs' 200 ms
 * revision polls. Missions stay (the script's teardown removes the tree).
 *
 * Rows: | what | median | p90 | max | target | met? | resolution |; --raw
 * FILE: one line per repetition.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tree_probe.h"

/* | what | median | p90 | max | target | met? | resolution | */
static void stat_row(const char *what, double *v, int n, int missing, double target, double res)
{
	char med[32], p90[32], mx[32], tg[32] = "", ok[8] = "", rs[32];

	if (n == 0) {
		printf("| %s | - | - | not reached | | | |\n", what);
		return;
	}
	fmt_ms(med, sizeof(med), quant(v, n, 0.5));
	fmt_ms(p90, sizeof(p90), quant(v, n, 0.9));
	fmt_ms(mx, sizeof(mx), missing ? NAN : quant(v, n, 1.0));
	if (target > 0) {
		snprintf(tg, sizeof(tg), "<= %.0f ms", target);
		snprintf(ok, sizeof(ok), "%s",
			 !missing && quant(v, n, 1.0) <= target ? "yes" : "NO");
	}
	snprintf(rs, sizeof(rs), "%.1f ms", res);
	printf("| %s | %s | %s | %s | %s | %s | %s |\n", what, med, p90, mx, tg, ok,
	       res >= 0 ? rs : "");
}

/* ---- latency ---- */

#define MAXD 32

struct lvl {
	double down_lo, down_hi, up_lo, up_hi;
	bool down, up;
};

static const char *key_at(int k, int d)
{
	/* the leaf's state key at level k: root-relative path at the root, its
	 * name at itself, the path below k's in between */
	if (k == 0)
		return cls[d].path;
	if (k == d)
		return cls[d].name;
	return cls[d].path + strlen(cls[k].path) + 1;
}

int cmd_latency(int argc, char **argv)
{
	int repeat = 20, pause_ms = 250, d, done_reps = 0, timeouts = 0;
	long interval_us = 500;
	double target = 100, rep_timeout = 60000;
	const char *prefix = "lat", *raw = NULL;
	FILE *rawf = NULL;
	double *create, *down[MAXD], *up[MAXD], res_down[MAXD] = {0}, res_up[MAXD] = {0};

	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (!strcmp(argv[1], "--repeat") && argc > 2)
			repeat = atoi(argv[2]);
		else if (!strcmp(argv[1], "--interval-us") && argc > 2)
			interval_us = atol(argv[2]);
		else if (!strcmp(argv[1], "--pause-ms") && argc > 2)
			pause_ms = atoi(argv[2]);
		else if (!strcmp(argv[1], "--prefix") && argc > 2)
			prefix = argv[2];
		else if (!strcmp(argv[1], "--target-ms") && argc > 2)
			target = atof(argv[2]);
		else if (!strcmp(argv[1], "--timeout") && argc > 2)
			rep_timeout = atof(argv[2]) * 1000;
		else if (!strcmp(argv[1], "--raw") && argc > 2)
			raw = argv[2];
		else if (!strcmp(argv[1], "--ca") && argc > 2)
			ca_file = argv[2];
		else if (!strcmp(argv[1], "-v")) {
			verbose = 1;
			continue;
		} else
			return 2;
		argc--, argv++;
	}
	if (argc != 2 || repeat < 1 || pause_ms < 0 || interval_us < 0)
		return 2;
	read_clusters(argv[1]);
	d = n_cls - 1;
	if (d < 1)
		die("latency needs a chain: the root and at least one cluster");
	if (d >= MAXD)
		die("a chain of at most %d", MAXD - 1);
	for (int k = 1; k <= d; k++)
		if (strncmp(cls[d].path, cls[k].path, strlen(cls[k].path)) ||
		    (k < d && cls[d].path[strlen(cls[k].path)] != '/'))
			die("%s is not below %s: the clusters must be a chain", cls[d].path,
			    cls[k].path);
	if (raw && !(rawf = fopen(raw, "w")))
		die("%s: %s", raw, strerror(errno));
	if (rawf) {
		fprintf(rawf, "# rep create_ms");
		for (int k = 1; k <= d; k++)
			fprintf(rawf, " down_%s", cls[k].name);
		for (int k = d; k >= 0; k--)
			fprintf(rawf, " up_%s", cls[k].name);
		fprintf(rawf, "   (ms after the POST was sent; down: the mission is there, up: the "
			      "leaf's state is)\n");
	}
	create = calloc((size_t)repeat, sizeof(double));
	for (int k = 0; k <= d; k++) {
		down[k] = calloc((size_t)repeat, sizeof(double));
		up[k] = calloc((size_t)repeat, sizeof(double));
	}
	srand((unsigned)getpid());
	for (int r = 0; r < repeat; r++) {
		struct lvl L[MAXD];
		char name[128], want[160], path[256], *body;
		json_t *mj;
		double t0, t1;
		int st, left = 2 * d + 1;

		snprintf(name, sizeof(name), "%s-%d", prefix, r + 1);
		snprintf(want, sizeof(want), "ok %s", name);
		mj = json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:{s:[s]},s:{s:[s]},s:{s:[s,s]}}}",
			       "apiVersion", "edge.xgate.io/v1", "kind", "Mission", "metadata",
			       "name", name, "spec", "content", "bench: a mission for the leaf\n",
			       "command", "command", "/bin/true", "placement", "clusters",
			       cls[d].name, "stateCheck", "command", "/bin/echo", want);
		body = json_dumps(mj, JSON_COMPACT);
		json_decref(mj);
		memset(L, 0, sizeof(L));
		if (pause_ms)
			sleep_us((long)(rand() % (pause_ms + 1)) * 1000);
		t0 = now_ms();
		st = hc_req(&cls[0].hc, "POST", API "/missions", body);
		t1 = now_ms();
		free(body);
		if (st != 201)
			die("POST %s at %s: %d %s", name, cls[0].hc.url, st,
			    st > 0 ? cls[0].hc.body : "(no answer)");
		create[r] = t1 - t0;
		L[0].down = true;
		L[0].down_hi = t1 - t0;
		snprintf(path, sizeof(path), API "/missions/%s", name);
		while (left > 0) {
			if (now_ms() - t0 > rep_timeout)
				break;
			for (int k = 0; k <= d; k++) {
				json_t *doc, *v;
				double s, e;

				if (L[k].down && L[k].up)
					continue;
				s = now_ms() - t0;
				st = hc_req(&cls[k].hc, "GET", path, NULL);
				e = now_ms() - t0;
				if (st == 404 && !L[k].down) {
					L[k].down_lo = s;
					continue;
				}
				if (st != 200)
					die("GET %s at %s: %d", path, cls[k].hc.url, st);
				if (!L[k].down) {
					L[k].down = true;
					L[k].down_hi = e;
					left--;
				}
				doc = json_loadb(cls[k].hc.body, cls[k].hc.body_len, 0, NULL);
				v = json_object_get(json_object_get(doc, "state"), key_at(k, d));
				if (json_is_string(v) && !strcmp(json_string_value(v), want)) {
					L[k].up = true;
					L[k].up_hi = e;
					left--;
				} else {
					L[k].up_lo = s;
				}
				json_decref(doc);
			}
			if (interval_us)
				sleep_us(interval_us);
		}
		if (left > 0) {
			fprintf(stderr, "tree_probe: %s: not everywhere after %.0f s\n", name,
				rep_timeout / 1000);
			timeouts++;
			continue;
		}
		if (rawf)
			fprintf(rawf, "%d %.2f", r + 1, create[r]);
		for (int k = 1; k <= d; k++) {
			down[k][done_reps] = L[k].down_hi;
			if (L[k].down_hi - L[k].down_lo > res_down[k])
				res_down[k] = L[k].down_hi - L[k].down_lo;
			if (rawf)
				fprintf(rawf, " %.2f", L[k].down_hi);
		}
		for (int k = d; k >= 0; k--) {
			up[k][done_reps] = L[k].up_hi;
			if (L[k].up_hi - L[k].up_lo > res_up[k])
				res_up[k] = L[k].up_hi - L[k].up_lo;
			if (rawf)
				fprintf(rawf, " %.2f", L[k].up_hi);
		}
		if (rawf)
			fprintf(rawf, "\n");
		create[done_reps] = create[r];
		if (verbose)
			fprintf(stderr, "  %s: leaf applied %.1f ms, root has the state %.1f ms\n",
				name, L[d].up_hi, L[0].up_hi);
		done_reps++;
	}
	if (rawf)
		fclose(rawf);

	/* cumulative: ms after the POST */
	{
		char what[512];

		stat_row("POST at the root answered (201)", create, done_reps, timeouts, -1, -1);
		for (int k = 1; k <= d; k++) {
			snprintf(what, sizeof(what), "mission stored at %s (depth %d)", cls[k].name,
				 k);
			stat_row(what, down[k], done_reps, timeouts, -1, res_down[k]);
		}
		snprintf(what, sizeof(what),
			 "**applied at the leaf**: %s's own API shows \"%s\" = ok", cls[d].name,
			 cls[d].name);
		stat_row(what, up[d], done_reps, timeouts, -1, res_up[d]);
		for (int k = d - 1; k >= 1; k--) {
			snprintf(what, sizeof(what), "state at %s (key %s)", cls[k].name,
				 key_at(k, d));
			stat_row(what, up[k], done_reps, timeouts, -1, res_up[k]);
		}
		snprintf(what, sizeof(what), "**state at the root**: key %s = ok", key_at(0, d));
		stat_row(what, up[0], done_reps, timeouts, target, res_up[0]);
		/* per hop: differences of the upper bounds (each within the resolutions) */
		printf("||||||||\n");
		for (int k = 1; k <= d; k++) {
			double *v = calloc((size_t)done_reps + 1, sizeof(double));

			for (int r = 0; r < done_reps; r++)
				v[r] = down[k][r] - (k == 1 ? 0 : down[k - 1][r]);
			snprintf(what, sizeof(what), "hop down %s -> %s", cls[k - 1].name,
				 cls[k].name);
			stat_row(what, v, done_reps, 0, -1, -1);
			free(v);
		}
		{
			double *v = calloc((size_t)done_reps + 1, sizeof(double));

			for (int r = 0; r < done_reps; r++)
				v[r] = up[d][r] - down[d][r];
			snprintf(what, sizeof(what), "at %s: stored -> applied and checked",
				 cls[d].name);
			stat_row(what, v, done_reps, 0, -1, -1);
			free(v);
		}
		for (int k = d; k >= 1; k--) {
			double *v = calloc((size_t)done_reps + 1, sizeof(double));

			for (int r = 0; r < done_reps; r++)
				v[r] = up[k - 1][r] - up[k][r];
			snprintf(what, sizeof(what), "hop up %s -> %s", cls[k].name,
				 cls[k - 1].name);
			stat_row(what, v, done_reps, 0, -1, -1);
			free(v);
		}
	}
	fprintf(stderr, "tree_probe: %d repetitions, %d timed out; queries:", done_reps, timeouts);
	for (int k = 0; k <= d; k++)
		fprintf(stderr, " %s %u", cls[k].name, cls[k].hc.requests);
	fprintf(stderr, "\n");
	return timeouts ? 3 : 0;
}
