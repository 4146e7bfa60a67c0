// SPDX-License-Identifier: BSD-2-Clause
/*
 * mesh_probe: make one change in a gatewayd mesh, then wait until every
 * gatewayd shows it, and say when the last one did. For
 * bench/mesh_converge.sh (docs/bench.md, "mesh_converge").
 *
 *   mesh_probe [options] COND SOCKET...
 *
 * COND, on the control sockets of userspace/gatewayd/ctl.c:
 *   up=K                  K peers up and K routes learned from peers, active
 *   has=ORIGIN,PREFIX     the route ORIGIN announced for PREFIX is active
 *                         (PREFIX must be new to the tables: see below)
 *   gone=ORIGIN           ORIGIN's routes were removed; also when its session
 *                         was seen down (detect_ms), for a gateway that died
 *   lacks=ORIGIN,PREFIX   no such route, in any state (a withdrawal)
 * The change, at time 0 (without one: time 0 is when mesh_probe starts):
 *   --ctl SOCKET REQUEST  a control request, e.g. "subnet add 300 10.9.0.0/24"
 *                         (the line `xgate gw subnet add` sends); must be ok
 *   --signal KILL|STOP PID
 *   --since NS            time 0 was NS, CLOCK_REALTIME in ns (`date +%s%N`)
 * Options: --interval MS least time between two queries to one gatewayd
 * (default 5), --timeout S (default 30), -v (each socket on stderr).
 *
 * Why a program, not `xgate gw routes` in a loop: a process per query and
 * a sweep over 100 daemons one after the other would take longer than what
 * is measured. Here every gatewayd has a query in flight all the time, all
 * in parallel (non-blocking unix sockets, one poll()).
 *
 * What is polled. A `routes` reply costs gatewayd ~5 us of JSON per route
 * (0.5 ms at 100 routes): asking 99 gateways once takes ~30-50 ms of the
 * whole machine. `status` costs ~0.1 ms; it counts the route table
 * ("routes", withdrawn entries included) and the sessions up ("peers_up").
 * So up, has and gone watch those counts against a baseline taken before
 * the change (nothing else changes in the mesh meanwhile: a new prefix adds
 * an entry, a removed stale route takes one away), and each gateway where
 * the count says yes is then asked for its `routes` once, to check the
 * route itself; if it is not there, polling goes on. A withdrawal leaves a
 * tombstone (the count does not move): lacks polls `routes`, at the
 * coarser resolution that gives.
 *
 * Accuracy: a gatewayd that answered "not yet" to a query sent at s, then
 * "yes" in a reply received at r, got there in (s, r]. The last one got
 * there in (max s, max r]: last_ms is max r (the figure, an upper bound),
 * last_lo_ms max s. Same for detect_ms. For up, r is the check's reply.
 *
 * Output, one line on stdout: ok=1|0 n= done= last_ms= last_lo_ms=
 * first_ms= median_ms= period_ms= queries= change_ms= [detect_ms=
 * detect_lo_ms=] [missing=SOCKET,...]; change_ms: how long the change took
 * (the --ctl reply: the origin has told its peers by then).
 * Exit 0 when it held everywhere, 3 on timeout, 4 when the change failed,
 * 2 on usage, 1 on other errors.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum cond { C_UP, C_HAS, C_GONE, C_LACKS };

struct gw {
	const char *path;
	int fd;              /* query in flight, or -1 */
	int checking;        /* the query in flight is the `routes` check */
	double sent, next;   /* when it was sent; earliest next query */
	char *buf;
	size_t len, cap;
	long base_routes, base_up, origin_routes; /* before the change */
	double lo, hi;       /* the condition began to hold in (lo, hi] */
	double dlo, dhi;     /* gone: the session was seen down in (dlo, dhi] */
	int seen, done, ddone; /* seen: the counts say yes; done: checked too */
	unsigned queries;
	double first_q, last_rx; /* for the mean time between queries */
};

static enum cond cond;
static long want_up;
static char origin[64], prefix[32];
static int verbose;

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: mesh_probe [--interval MS] [--timeout S] [-v]\n"
			"         [--ctl SOCKET REQUEST | --signal KILL|STOP PID | --since NS]\n"
			"         up=K|has=ORIGIN,PREFIX|gone=ORIGIN|lacks=ORIGIN,PREFIX SOCKET...\n");
	exit(2);
}

static int parse_cond(const char *s)
{
	static const char *const names[] = { "up=", "has=", "gone=", "lacks=" };
	const char *comma;
	char *end;

	for (cond = C_UP; cond <= C_LACKS; cond++)
		if (!strncmp(s, names[cond], strlen(names[cond])))
			break;
	if (cond > C_LACKS)
		return -1;
	s += strlen(names[cond]);
	if (cond == C_UP) {
		want_up = strtol(s, &end, 10);
		return *end || end == s || want_up < 0 ? -1 : 0;
	}
	comma = strchr(s, ',');
	snprintf(origin, sizeof(origin), "%.*s", comma ? (int)(comma - s) : (int)strlen(s), s);
	if (comma)
		snprintf(prefix, sizeof(prefix), "%s", comma + 1);
	return !origin[0] || (cond != C_GONE) != (prefix[0] != 0) ? -1 : 0;
}

static void append(struct gw *g, const char *data, size_t n)
{
	if (g->len + n + 1 > g->cap) {
		g->cap = (g->len + n + 1) * 2;
		g->buf = realloc(g->buf, g->cap);
		if (!g->buf) {
			perror("mesh_probe");
			exit(1);
		}
	}
	memcpy(g->buf + g->len, data, n);
	g->len += n;
}

/* One request, blocking (the baseline, the change). */
static json_t *ask(struct gw *g, const char *path, const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char chunk[65536];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		fprintf(stderr, "mesh_probe: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	shutdown(fd, SHUT_WR);
	g->len = 0;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		append(g, chunk, (size_t)n);
	close(fd);
	return json_loadb(g->buf, g->len, 0, NULL);
}

static long num(json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key);

	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* Routes in a `routes` reply from ORIGIN (and for PREFIX, if given), and
 * how many of them are active; with orig NULL, those learned from peers.
 * -1 when the reply is not a route list. */
static long count_routes(json_t *doc, const char *orig, const char *pfx, long *active)
{
	json_t *a = json_object_get(doc, "routes"), *e;
	long n = 0;
	size_t i;

	*active = 0;
	if (!json_is_array(a))
		return -1;
	json_array_foreach(a, i, e) {
		const char *o = json_string_value(json_object_get(e, "origin"));
		const char *p = json_string_value(json_object_get(e, "prefix"));
		const char *st = json_string_value(json_object_get(e, "state"));

		if (!o || !p || (orig ? strcmp(o, orig) : !strcmp(o, "local")) ||
		    (pfx && strcmp(p, pfx)))
			continue;
		n++;
		*active += st && !strcmp(st, "active");
	}
	return n;
}

/* The route table itself: does it show the condition? */
static int routes_hold(json_t *doc)
{
	long n, act;

	if (cond == C_UP)
		return count_routes(doc, NULL, NULL, &act) >= 0 && act >= want_up;
	n = count_routes(doc, origin, prefix[0] ? prefix : NULL, &act);
	return cond == C_HAS ? act == 1 : n == 0;
}

/* Evaluate a reply: 1 the condition holds, 0 not yet. *det (gone only): the
 * session was seen down. A reply that is not what we asked for counts as
 * "not yet". */
static int eval(struct gw *g, int *det)
{
	json_t *doc = json_loadb(g->buf, g->len, 0, NULL);
	long up, routes;
	int ok = 0;

	*det = 0;
	if (!doc)
		return 0;
	up = num(doc, "peers_up");
	routes = num(doc, "routes");
	if (g->checking || cond == C_LACKS)
		ok = routes_hold(doc);
	else if (cond == C_UP)
		ok = up >= want_up && routes >= want_up;
	else if (cond == C_HAS)
		ok = routes > g->base_routes;
	else if (cond == C_GONE) {
		ok = routes >= 0 && routes <= g->base_routes - g->origin_routes;
		*det = ok || (up >= 0 && up < g->base_up);
	}
	json_decref(doc);
	return ok;
}

static int baseline(struct gw *g)
{
	json_t *doc = ask(g, g->path, "status\n");
	long act;

	if (!doc)
		return -1;
	g->base_routes = num(doc, "routes");
	g->base_up = num(doc, "peers_up");
	json_decref(doc);
	if (cond == C_GONE) {
		doc = ask(g, g->path, "routes\n");
		g->origin_routes = doc ? count_routes(doc, origin, NULL, &act) : -1;
		json_decref(doc);
	}
	return g->base_routes < 0 || g->base_up < 0 || g->origin_routes < 0 ? -1 : 0;
}

static void query(struct gw *g, double now, double interval)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *r;

	g->checking = g->seen && !g->done;
	r = g->checking || cond == C_LACKS ? "routes\n" : "status\n";
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g->path);
	g->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	g->sent = now;
	g->len = 0;
	/* Not there yet (a daemon starting) or backlog full: a "not yet" too. */
	if (g->fd < 0 || connect(g->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(g->fd, r, strlen(r)) != (ssize_t)strlen(r)) {
		if (g->fd >= 0)
			close(g->fd);
		g->fd = -1;
		if (!g->seen)
			g->lo = now;
		if (!g->ddone)
			g->dlo = now;
		g->next = now + (interval > 0.001 ? interval : 0.001);
		return;
	}
	shutdown(g->fd, SHUT_WR);
	if (!g->queries++)
		g->first_q = now;
}

/* Read what is there; at EOF evaluate the reply. */
static void receive(struct gw *g, double interval)
{
	char chunk[65536];
	double now;
	ssize_t n;
	int det, ok;

	while ((n = read(g->fd, chunk, sizeof(chunk))) > 0)
		append(g, chunk, (size_t)n);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	now = mono();
	ok = eval(g, &det);
	close(g->fd);
	g->fd = -1;
	g->last_rx = now;
	if (g->checking) { /* the counts said yes: the routes decide */
		g->done = ok;
		g->seen = ok;
		if (ok && cond == C_UP)
			g->hi = now; /* counts may include stale routes: not a bound */
		if (!ok)
			g->lo = g->sent;
		g->next = now; /* a check goes out at once, a poll after it too */
		return;
	}
	g->next = g->sent + interval;
	if (ok && !g->seen) {
		g->seen = 1;
		g->hi = now;
		g->done = cond == C_LACKS; /* polled the routes themselves */
		g->next = now;
	} else if (!ok) {
		g->lo = g->sent;
	}
	if (det && !g->ddone)
		g->ddone = 1, g->dhi = now;
	else if (!det && !g->ddone)
		g->dlo = g->sent;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Poll every gatewayd until the condition holds on all, or time is up. */
static void poll_all(struct gw *gws, int n, double t0, double interval, double timeout)
{
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	struct gw **pg = calloc((size_t)n, sizeof(*pg));

	if (!pfd || !pg) {
		perror("mesh_probe");
		exit(1);
	}
	for (;;) {
		double now = mono(), wake = now + 0.05;
		int np = 0, pending = 0;

		for (int i = 0; i < n; i++) {
			struct gw *g = &gws[i];

			if (g->done && (cond != C_GONE || g->ddone))
				continue;
			pending++;
			if (g->fd < 0 && now >= g->next)
				query(g, now, interval);
			if (g->fd >= 0) {
				pfd[np] = (struct pollfd){ .fd = g->fd, .events = POLLIN };
				pg[np++] = g;
			} else if (g->next < wake) {
				wake = g->next;
			}
		}
		if (!pending || now - t0 > timeout)
			break;
		int ms = (int)((wake - now) * 1000 + 0.999);

		if (poll(pfd, (nfds_t)np, ms < 0 ? 0 : ms) < 0 && errno != EINTR) {
			perror("mesh_probe: poll");
			exit(1);
		}
		for (int i = 0; i < np; i++)
			if (pfd[i].revents)
				receive(pg[i], interval);
	}
	free(pfd);
	free(pg);
}

static double change_s; /* how long the change took */

/* The change at time 0; returns t0, or exits when it failed. */
static double change(const char *ctl_sock, const char *ctl_req, int sig, pid_t pid,
		     long long since_ns)
{
	double t0 = mono();

	if (ctl_sock) {
		struct gw tmp = { 0 };
		char req[256];
		json_t *res;

		snprintf(req, sizeof(req), "%s\n", ctl_req);
		res = ask(&tmp, ctl_sock, req);
		if (!res || !json_is_true(json_object_get(res, "ok"))) {
			fprintf(stderr, "mesh_probe: '%s' refused: %.*s\n", ctl_req, (int)tmp.len,
				tmp.buf ? tmp.buf : "");
			exit(4);
		}
		json_decref(res);
		free(tmp.buf);
		change_s = mono() - t0;
	} else if (pid > 0) {
		if (kill(pid, sig)) {
			perror("mesh_probe: kill");
			exit(4);
		}
	} else if (since_ns) {
		struct timespec rt;

		clock_gettime(CLOCK_REALTIME, &rt);
		t0 -= ((double)rt.tv_sec + (double)rt.tv_nsec / 1e9) - (double)since_ns / 1e9;
	}
	return t0;
}

static void report(struct gw *gws, int n, double t0)
{
	double *his = calloc((size_t)n + 1, sizeof(double)), last = 0, last_lo = 0, dlast = 0,
	       dlast_lo = 0, busy = 0;
	unsigned queries = 0;
	int done = 0;

	for (int i = 0; i < n; i++) {
		struct gw *g = &gws[i];

		queries += g->queries;
		busy += (g->last_rx ? g->last_rx : g->first_q) - g->first_q;
		if (g->done) {
			his[done++] = g->hi - t0;
			last = g->hi - t0 > last ? g->hi - t0 : last;
			last_lo = g->lo - t0 > last_lo ? g->lo - t0 : last_lo;
		}
		if (g->ddone) {
			dlast = g->dhi - t0 > dlast ? g->dhi - t0 : dlast;
			dlast_lo = g->dlo - t0 > dlast_lo ? g->dlo - t0 : dlast_lo;
		}
		if (verbose)
			fprintf(stderr, "%s: %s in (%.1f, %.1f] ms, %u queries\n", g->path,
				g->done ? "yes" : "NOT yet", (g->lo - t0) * 1000,
				((g->done ? g->hi : mono()) - t0) * 1000, g->queries);
	}
	qsort(his, (size_t)done, sizeof(double), cmp_double);
	printf("ok=%d n=%d done=%d last_ms=%.1f last_lo_ms=%.1f first_ms=%.1f median_ms=%.1f "
	       "period_ms=%.1f queries=%u change_ms=%.1f",
	       done == n, n, done, last * 1000, last_lo * 1000, done ? his[0] * 1000 : 0,
	       done ? his[done / 2] * 1000 : 0, queries ? busy / queries * 1000 : 0, queries,
	       change_s * 1000);
	if (cond == C_GONE)
		printf(" detect_ms=%.1f detect_lo_ms=%.1f", dlast * 1000, dlast_lo * 1000);
	if (done < n) {
		printf(" missing=");
		for (int i = 0, k = 0; i < n; i++)
			if (!gws[i].done)
				printf("%s%s", k++ ? "," : "", gws[i].path);
	}
	printf("\n");
	free(his);
}

int main(int argc, char **argv)
{
	double interval = 0.005, timeout = 30, t0;
	const char *ctl_sock = NULL, *ctl_req = NULL;
	long long since_ns = 0;
	int n = 0, a, sig = 0, done = 0;
	pid_t pid = 0;
	struct gw *gws;

	signal(SIGPIPE, SIG_IGN);
	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "-v"))
			verbose = 1;
		else if (a + 1 < argc && !strcmp(argv[a], "--interval"))
			interval = atof(argv[++a]) / 1000;
		else if (a + 1 < argc && !strcmp(argv[a], "--timeout"))
			timeout = atof(argv[++a]);
		else if (a + 1 < argc && !strcmp(argv[a], "--since"))
			since_ns = atoll(argv[++a]);
		else if (a + 2 < argc && !strcmp(argv[a], "--ctl"))
			ctl_sock = argv[a + 1], ctl_req = argv[a + 2], a += 2;
		else if (a + 2 < argc && !strcmp(argv[a], "--signal")) {
			sig = !strcmp(argv[a + 1], "KILL") ? SIGKILL :
			      !strcmp(argv[a + 1], "STOP") ? SIGSTOP : 0;
			pid = atoi(argv[a + 2]);
			a += 2;
			if (!sig || pid <= 0)
				usage();
		} else
			usage();
	}
	if (a >= argc || parse_cond(argv[a++]) || timeout <= 0 || interval < 0)
		usage();
	gws = calloc((size_t)argc, sizeof(*gws));
	if (!gws)
		return 1;
	for (; a < argc; a++) {
		gws[n].path = argv[a];
		gws[n++].fd = -1;
	}
	if (!n)
		usage();
	/* has and gone compare the counts with the state before the change */
	for (int i = 0; i < n && (cond == C_HAS || cond == C_GONE); i++)
		if (baseline(&gws[i])) {
			fprintf(stderr, "mesh_probe: %s: no baseline\n", gws[i].path);
			return 1;
		}

	t0 = change(ctl_sock, ctl_req, sig, pid, since_ns);
	for (int i = 0; i < n; i++)
		gws[i].lo = gws[i].dlo = t0; /* nothing happens before time 0 */
	poll_all(gws, n, t0, interval, timeout);
	report(gws, n, t0);
	for (int i = 0; i < n; i++)
		done += gws[i].done;
	return done == n ? 0 : 3;
}
