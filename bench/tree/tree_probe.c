// SPDX-License-Identifier: BSD-2-Clause
/*
 * tree_probe: create missions at the root of an edgeclusterd tree and watch,
 * through every cluster's own HTTP API, when they got where they go. For
 * bench/mission_tree.sh (docs/bench.md, "mission_tree").
 *
 *   tree_probe latency [options] CLUSTERS
 *   tree_probe scale   [options] CLUSTERS
 *
 * CLUSTERS is a file, one cluster a line: "PATH URL", PATH relative to the
 * root (the root's line first, its PATH is its name; then e.g. "c1",
 * "c1/c2"), URL its API (http://127.0.0.1:PORT or https://localhost:PORT).
 * The API token is $XGATE_TOKEN; --ca FILE verifies https.
 *
 * latency (latency.c): one mission at a time, from the root to the leaf of a
 *   chain, and its state back up: when it got to each level.
 * scale (scale.c): M missions for every cluster of a tree: when every
 *   cluster applied all, when the root holds all their states.
 * ready: every cluster but the root is attached (its Attach: active, link
 *   up); with --tree also the root lists every path, health ok. Prints
 *   "linked_ms= tree_ms=".
 *
 * Output: markdown table rows on stdout (| what | median | p90 | max |
 * target | met? | resolution | for latency; | what | after the first POST |
 * after the last POST | target | met? | resolution | for scale); --raw FILE:
 * one line per repetition or cluster. Progress and errors on stderr.
 * Exit 0 when it measured everything, 3 on a timeout (rows say "not
 * reached"), 1 on errors (a request refused, a cluster unreachable), 2 usage.
 *
 * The parts: tree_probe.h (what they share), http.c (the HTTP client),
 * util.c (the clusters file, time, figures), latency.c, scale.c, and here
 * ready and main.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree_probe.h"

int verbose;
const char *token, *ca_file;

/* ---- ready ---- */

/* Every cluster but the root attached (its own Attach: phase active, link
 * up); with --tree, also the root's EdgeCluster list holding every path of
 * the file, health ok (descendants' rows travel up with heartbeats). */
static int cmd_ready(int argc, char **argv)
{
	double timeout = 60000, t0 = now_ms(), t_linked = -1;
	bool tree = false;
	int linked = 0;

	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (!strcmp(argv[1], "--timeout") && argc > 2)
			timeout = atof(argv[2]) * 1000;
		else if (!strcmp(argv[1], "--ca") && argc > 2)
			ca_file = argv[2];
		else if (!strcmp(argv[1], "--tree")) {
			tree = true;
			continue;
		} else
			return 2;
		argc--, argv++;
	}
	if (argc != 2)
		return 2;
	read_clusters(argv[1]);
	while (now_ms() - t0 < timeout) {
		linked = 0;
		if (hc_req(&cls[0].hc, "GET", "/healthz", NULL) != 200) {
			sleep_us(100000);
			continue;
		}
		for (int i = 1; i < n_cls; i++) {
			struct cl *c = &cls[i];
			json_t *doc, *st;

			if (c->active) {
				linked++;
				continue;
			}
			if (hc_req(&c->hc, "GET", API "/attach", NULL) != 200)
				continue; /* not listening yet */
			doc = json_loadb(c->hc.body, c->hc.body_len, 0, NULL);
			st = json_object_get(doc, "state");
			c->active =
			    json_is_string(json_object_get(st, "phase")) &&
			    !strcmp(json_string_value(json_object_get(st, "phase")), "active") &&
			    json_is_string(json_object_get(st, "link")) &&
			    !strcmp(json_string_value(json_object_get(st, "link")), "up");
			linked += c->active;
			json_decref(doc);
		}
		if (linked == n_cls - 1 && t_linked < 0)
			t_linked = now_ms() - t0;
		if (linked == n_cls - 1 && !tree)
			break;
		if (linked == n_cls - 1) {
			json_t *doc, *items, *it;
			size_t i;
			int seen = 0;

			if (hc_req(&cls[0].hc, "GET", API "/edgeclusters", NULL) == 200) {
				doc = json_loadb(cls[0].hc.body, cls[0].hc.body_len, 0, NULL);
				items = json_object_get(doc, "items");
				json_array_foreach(items, i, it)
				{
					json_t *st = json_object_get(it, "state");
					const char *p =
					    json_string_value(json_object_get(st, "path"));
					const char *h =
					    json_string_value(json_object_get(st, "health"));

					for (int k = 0; p && h && !strcmp(h, "ok") && k < n_cls;
					     k++)
						seen += !strcmp(cls[k].path, p);
				}
				json_decref(doc);
				if (seen == n_cls)
					break;
			}
		}
		sleep_us(100000);
	}
	if (linked < n_cls - 1) {
		for (int i = 1; i < n_cls; i++)
			if (!cls[i].active)
				fprintf(stderr, "tree_probe: %s (%s) is not attached\n",
					cls[i].path, cls[i].hc.url);
		return 3;
	}
	printf("linked_ms=%.0f tree_ms=%.0f\n", t_linked, now_ms() - t0);
	return now_ms() - t0 < timeout ? 0 : 3;
}

int main(int argc, char **argv)
{
	int rc = 2;

	token = getenv("XGATE_TOKEN");
	if (argc >= 2 && (!token || !*token)) {
		fprintf(stderr, "tree_probe: set XGATE_TOKEN\n");
		return 2;
	}
	if (argc >= 2 && !strcmp(argv[1], "latency"))
		rc = cmd_latency(argc - 1, argv + 1);
	else if (argc >= 2 && !strcmp(argv[1], "scale"))
		rc = cmd_scale(argc - 1, argv + 1);
	else if (argc >= 2 && !strcmp(argv[1], "ready"))
		rc = cmd_ready(argc - 1, argv + 1);
	if (rc == 2)
		fprintf(
		    stderr,
		    "usage: tree_probe latency [--repeat N] [--interval-us US] [--pause-ms MS]\n"
		    "                  [--prefix P] [--target-ms MS] [--timeout S] [--raw FILE]\n"
		    "                  [--ca FILE] [-v] CLUSTERS\n"
		    "       tree_probe scale [--missions M] [--bulk N]\n"
		    "                  [--kind content|command|check]\n"
		    "                  [--create-only | --no-create]\n"
		    "                  [--interval-ms MS] [--timeout S]\n"
		    "                  [--prefix P] [--raw FILE] [--ca FILE] [-v] CLUSTERS\n"
		    "       tree_probe ready [--tree] [--timeout S] [--ca FILE] CLUSTERS\n"
		    "CLUSTERS: lines \"PATH URL\", the root first; token in $XGATE_TOKEN\n");
	return rc;
}
