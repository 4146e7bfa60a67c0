// SPDX-License-Identifier: BSD-2-Clause
/*
 * fx_probe MODE [options] — see fx_probe.h and docs/bench.md "session_open".
 *
 *   cp     the control plane alone: --nodes N simulated node agents join
 *          fornaxd; --apps A applications of --pods P pods in all are
 *          created (min = max = P/A each, burst P/A): pod placements per
 *          second, from the first create to the last PodCreate a node
 *          received; then --sessions S opens, --concurrency C at a time:
 *          opens per second and the time from the POST to the watch event
 *          that says Available (p50, p99).
 *   opens  the same opens against an application that real nodes serve
 *          (--app NAME): warm when it has standby pods, cold when not.
 *
 * Common: --server HOST:PORT (http on loopback; https with --ca FILE, the
 * CA that signed fornaxd's certificate: the API's requests only, cp's
 * simulated nodes still dial ws://), --token T (the API's),
 * --join J (cp: the nodes' join token), --namespace NS (default "default"),
 * --prefix P (sessions are named P-0, P-1, ...; default "fx": runs against
 * one fornaxd need prefixes of their own), --gap MS (opens: the next one is
 * posted MS after the last one ended, to within the 5 ms tick; default 0).
 * Prints one "RESULT key=value ..." line per figure for the script, and a
 * line a person reads. Exit 1 when anything failed (a refused request, a
 * node link closed, a session that did not open).
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fx_probe.h"

#define TICK_US	  (5 * 1000)
#define LIMIT_S	  300	  /* the whole run, whatever happens */
#define OPEN_WAIT 30000.0 /* ms: a session not Available by then failed */

enum phase { PH_NODES, PH_APPS, PH_PODS, PH_OPENS, PH_DONE };

struct run {
	struct fx fx;
	enum phase phase;
	bool cp;
	int apps, pods, sessions;
	double t0, t_apps, t_opens;
	lws_sorted_usec_list_t tick;
};

double fx_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void fx_fail(struct fx *fx, const char *fmt, ...)
{
	va_list ap;

	fx->errors++;
	if (fx->errors > 20)
		return;
	fprintf(stderr, "fx_probe: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

static void on_tick(lws_sorted_usec_list_t *sul);

/* An open ended: the next one starts now, not at the next tick (the tick
 * would cap a one-at-a-time run at one open per TICK_US). */
static void fx_kick(struct fx *fx)
{
	struct run *r = lws_container_of(fx, struct run, fx);

	lws_sul_schedule(fx->ctx, 0, &r->tick, on_tick, 1);
}

/* PREFIX-N: the N of this run's sessions, else -1 */
static int open_index(const struct fx *fx, const char *name)
{
	size_t n = strlen(fx->prefix);
	char *end;
	long i;

	if (!name || strncmp(name, fx->prefix, n) || name[n] != '-' || !name[n + 1])
		return -1;
	i = strtol(name + n + 1, &end, 10);
	return *end || i < 0 || i > 1000000 ? -1 : (int)i;
}

void fx_on_event(struct fx *fx, json_t *ev)
{
	json_t *o = json_object_get(ev, "object");
	const char *st =
	    json_string_value(json_object_get(json_object_get(o, "status"), "sessionStatus"));
	int i = open_index(
	    fx, json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));

	if (i < 0 || i >= fx->n_opens || !st || fx->opens[i].seen)
		return;
	if (!strcmp(st, "Available") || !strcmp(st, "InUse")) {
		fx->opens[i].t_avail = fx_now_ms();
		fx->opens[i].seen = true;
		fx->t_last_end = fx->opens[i].t_avail;
		fx->n_avail++;
		fx->in_flight--; /* the open ends here, not at the POST's answer */
		fx_kick(fx);
	} else if (!strcmp(st, "Timeout") || !strcmp(st, "Closed")) {
		fx_fail(fx, "session %s-%d: %s", fx->prefix, i, st);
		fx->opens[i].seen = true;
		fx->n_failed++;
		fx->in_flight--;
		fx_kick(fx);
	}
}

static void on_created(struct fx_req *r)
{
	if (r->status != 201 && r->status != 200)
		fx_fail(r->fx, "%s %s: HTTP %d %.300s", r->method, r->path, r->status,
			r->resp.p ? r->resp.p : "");
}

/* A POST's answer: the open goes on until the watch says Available, so it
 * counts as in flight again until then. */
static void on_open_posted(struct fx_req *r)
{
	struct fx_open *o = r->arg;

	on_created(r);
	if (r->status == 201 || r->status == 200) {
		r->fx->in_flight++;
	} else if (!o->seen) {
		o->seen = true;
		r->fx->n_failed++;
	}
}

static void post_json(struct fx *fx, const char *path, json_t *obj, void (*done)(struct fx_req *),
		      void *arg)
{
	char *body = json_dumps(obj, JSON_COMPACT);

	json_decref(obj);
	if (!body || fx_request(fx, "POST", path, body, done, arg, false))
		fx_fail(fx, "cannot send POST %s", path);
	free(body);
}

static void create_apps(struct run *r)
{
	char path[256];
	int per = r->pods / r->apps;

	snprintf(path, sizeof(path), FX_GROUP "/namespaces/%s/applications", r->fx.ns);
	for (int a = 0; a < r->apps; a++) {
		char name[32];

		snprintf(name, sizeof(name), "bench-%d", a);
		post_json(&r->fx, path,
			  json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:[s],s:[{s:i,s:s}],"
				    "s:{s:{s:s,s:s}}}],s:b,s:{s:i,s:i,s:i,s:s,s:{s:i,s:i}}}}",
				    "apiVersion", "core.fornax-serverless.centaurusinfra.io/v1",
				    "kind", "Application", "metadata", "name", name, "spec",
				    "containers", "name", "app", "command", "/bin/true", "ports",
				    "containerPort", 8080, "protocol", "TCP", "resources",
				    "requests", "cpu", "10m", "memory", "1Mi",
				    "usingNodeSessionService", 0, "scalingPolicy",
				    "minimumInstance", per, "maximumInstance", per, "burst", per,
				    "scalingPolicyType", "idle_session_number",
				    "idleSessionNumThreshold", "high", per, "low", 0),
			  on_created, NULL);
	}
}

static void open_next(struct run *r)
{
	struct fx *fx = &r->fx;
	char path[256];

	snprintf(path, sizeof(path), FX_GROUP "/namespaces/%s/applicationsessions", fx->ns);
	while (fx->next_open < fx->n_opens && fx->in_flight < fx->concurrency) {
		struct fx_open *o = &fx->opens[fx->next_open];
		char app[64];

		if (fx->gap_ms > 0 && fx->t_last_end > 0 &&
		    fx_now_ms() < fx->t_last_end + fx->gap_ms)
			break; /* the tick comes back */

		snprintf(o->name, sizeof(o->name), "%s-%d", fx->prefix, fx->next_open);
		if (fx->app)
			snprintf(app, sizeof(app), "%s", fx->app);
		else
			snprintf(app, sizeof(app), "bench-%d", fx->next_open % r->apps);
		fx->next_open++;
		o->t_post = fx_now_ms();
		post_json(fx, path,
			  json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:s,s:i}}", "apiVersion",
				    "core.fornax-serverless.centaurusinfra.io/v1", "kind",
				    "ApplicationSession", "metadata", "name", o->name, "spec",
				    "applicationName", app, "sessionData",
				    "YmVuY2g=", "openTimeoutSeconds", 30),
			  on_open_posted, o);
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double quant(double *v, int n, double q)
{
	int k = (int)ceil(q * n) - 1;

	return n ? v[k < 0 ? 0 : k] : NAN;
}

static void report(struct run *r)
{
	struct fx *fx = &r->fx;
	double *lat = calloc((size_t)fx->n_opens + 1, sizeof(*lat)), span;
	int n = 0;

	if (r->cp && fx->pod_creates) {
		span = fx->t_last_pod - r->t_apps;
		printf("placements: %u pods on %d nodes in %.1f ms: %.0f/s\n", fx->pod_creates,
		       fx->n_nodes, span, span > 0 ? fx->pod_creates * 1e3 / span : NAN);
		printf("RESULT placements=%u nodes=%d ms=%.1f per_s=%.0f\n", fx->pod_creates,
		       fx->n_nodes, span, span > 0 ? fx->pod_creates * 1e3 / span : NAN);
	}
	for (int i = 0; lat && i < fx->n_opens; i++)
		if (fx->opens[i].t_avail > 0)
			lat[n++] = fx->opens[i].t_avail - fx->opens[i].t_post;
	if (n) {
		double last = 0;

		for (int i = 0; i < fx->n_opens; i++)
			if (fx->opens[i].t_avail > last)
				last = fx->opens[i].t_avail;
		span = last - r->t_opens;
		qsort(lat, (size_t)n, sizeof(*lat), cmp_d);
		printf("opens: %d of %d sessions (concurrency %d) in %.1f ms: %.0f/s, "
		       "p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		       n, fx->n_opens, fx->concurrency, span, n * 1e3 / span, quant(lat, n, 0.5),
		       quant(lat, n, 0.99), lat[n - 1]);
		printf("RESULT opens=%d of=%d concurrency=%d per_s=%.0f p50_ms=%.3f p99_ms=%.3f "
		       "max_ms=%.3f\n",
		       n, fx->n_opens, fx->concurrency, n * 1e3 / span, quant(lat, n, 0.5),
		       quant(lat, n, 0.99), lat[n - 1]);
	}
	free(lat);
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
	struct run *r = lws_container_of(sul, struct run, tick);
	struct fx *fx = &r->fx;
	double now = fx_now_ms();

	if (now - r->t0 > LIMIT_S * 1e3) {
		fx_fail(fx, "not done after %d s (phase %d)", LIMIT_S, r->phase);
		r->phase = PH_DONE;
	}
	switch (r->phase) {
	case PH_NODES:
		if (fx->n_configured < fx->n_nodes)
			break;
		r->phase = r->cp ? PH_APPS : PH_OPENS;
		break;
	case PH_APPS:
		r->t_apps = fx_now_ms();
		create_apps(r);
		r->phase = PH_PODS;
		break;
	case PH_PODS:
		if (fx->pod_creates < (unsigned)r->pods)
			break;
		r->phase = PH_OPENS;
		break;
	case PH_OPENS:
		if (!r->t_opens)
			r->t_opens = fx_now_ms();
		open_next(r);
		for (int i = 0; i < fx->next_open; i++)
			if (!fx->opens[i].seen && now - fx->opens[i].t_post > OPEN_WAIT) {
				fx_fail(fx, "session %s-%d not Available after %.0f ms", fx->prefix,
					i, OPEN_WAIT);
				fx->opens[i].seen = true;
				fx->n_failed++;
				fx->in_flight--;
			}
		if (fx->n_avail + fx->n_failed >= fx->n_opens)
			r->phase = PH_DONE;
		break;
	case PH_DONE:
		break;
	}
	if (fx->errors > 20 || r->phase == PH_DONE) {
		fx->stop = true;
		lws_cancel_service(fx->ctx);
		return;
	}
	lws_sul_schedule(fx->ctx, 0, &r->tick, on_tick, TICK_US);
}

static int usage(void)
{
	fprintf(stderr, "usage: fx_probe cp|opens --server HOST:PORT --token T [--join J] "
			"[--nodes N] [--apps A] [--pods P] [--sessions S] [--concurrency C] "
			"[--app NAME] [--namespace NS] [--ca FILE] [--prefix P] [--gap MS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct lws_protocols protocols[3] = {fx_api_protocol, sim_node_protocol, {0}};
	struct lws_context_creation_info info;
	struct run r = {.apps = 10, .pods = 1000, .sessions = 1000};
	struct fx *fx = &r.fx;
	const char *ca = NULL;
	int nodes = 0;
	char *colon;

	if (argc < 2 || (strcmp(argv[1], "cp") && strcmp(argv[1], "opens")))
		return usage();
	r.cp = !strcmp(argv[1], "cp");
	fx->ns = "default";
	fx->prefix = "fx";
	fx->concurrency = 8;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			return usage();
		i++;
		if (!strcmp(o, "--server")) {
			snprintf(fx->host, sizeof(fx->host), "%s", v);
			if (!(colon = strrchr(fx->host, ':')))
				return usage();
			*colon = 0;
			fx->port = atoi(colon + 1);
		} else if (!strcmp(o, "--token")) {
			snprintf(fx->token, sizeof(fx->token), "%s", v);
		} else if (!strcmp(o, "--join")) {
			snprintf(fx->join, sizeof(fx->join), "%s", v);
		} else if (!strcmp(o, "--nodes")) {
			nodes = atoi(v);
		} else if (!strcmp(o, "--apps")) {
			r.apps = atoi(v);
		} else if (!strcmp(o, "--pods")) {
			r.pods = atoi(v);
		} else if (!strcmp(o, "--sessions")) {
			r.sessions = atoi(v);
		} else if (!strcmp(o, "--concurrency")) {
			fx->concurrency = atoi(v);
		} else if (!strcmp(o, "--app")) {
			fx->app = v;
		} else if (!strcmp(o, "--namespace")) {
			fx->ns = v;
		} else if (!strcmp(o, "--prefix")) {
			fx->prefix = v;
		} else if (!strcmp(o, "--gap")) {
			fx->gap_ms = atof(v);
		} else if (!strcmp(o, "--ca")) {
			ca = v;
			fx->tls = true;
		} else {
			return usage();
		}
	}
	if (!fx->port || r.apps < 1 || r.pods < r.apps || r.sessions < 0 || fx->concurrency < 1 ||
	    fx->gap_ms < 0 || (r.cp && (nodes < 1 || !fx->join[0])) || (!r.cp && !fx->app))
		return usage();
	if (r.cp && r.sessions > r.pods) {
		fprintf(stderr,
			"fx_probe: --sessions %d > --pods %d: a session needs an idle pod\n",
			r.sessions, r.pods);
		return 2;
	}
	fx->n_opens = r.sessions;
	fx->opens = calloc((size_t)r.sessions + 1, sizeof(*fx->opens));
	signal(SIGPIPE, SIG_IGN);
	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.fd_limit_per_thread = (unsigned)(nodes + fx->concurrency * 2 + 64);
	info.timeout_secs = 60;
	if (ca) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.client_ssl_ca_filepath = ca;
	}
	fx->ctx = lws_create_context(&info);
	if (!fx->ctx || !fx->opens)
		return 1;
	r.t0 = fx_now_ms();
	{
		char path[256];

		snprintf(path, sizeof(path), FX_GROUP "/namespaces/%s/applicationsessions?watch=1",
			 fx->ns);
		fx_request(fx, "GET", path, NULL, NULL, NULL, true);
	}
	if (r.cp && sim_nodes_start(fx, nodes))
		fx_fail(fx, "cannot start the simulated nodes");
	lws_sul_schedule(fx->ctx, 0, &r.tick, on_tick, TICK_US);
	while (!fx->stop && lws_service(fx->ctx, 0) >= 0)
		;
	report(&r);
	lws_context_destroy(fx->ctx);
	free(fx->nodes);
	free(fx->opens);
	xg_buf_free(&fx->events);
	if (fx->errors || fx->n_failed)
		fprintf(stderr, "fx_probe: %d errors, %d sessions failed\n", fx->errors,
			fx->n_failed);
	return fx->errors || fx->n_failed ? 1 : 0;
}
