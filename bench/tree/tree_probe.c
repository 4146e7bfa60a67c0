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
 * latency: the lines are a chain, root first, leaf last (depth = lines - 1).
 *   Per repetition one mission is POSTed at the root whose placement is the
 *   leaf's name, with a stateCheck that prints "ok NAME"; then every level is
 *   polled (GET missions/NAME, one level after the other, --interval-us
 *   between sweeps) until each has the mission (down) and its state map
 *   shows the leaf's key with "ok NAME" (up: "c4" at c4, "c3/c4" at c2, ...,
 *   "c1/c2/c3/c4" at the root). Time 0 is just before the POST is written.
 *   A level that answered "not yet" to a query sent at s and "yes" in a reply
 *   received at r got there in (s, r]: the figures are r (an upper bound),
 *   the resolution column the largest r - s. Between repetitions a random
 *   pause of 0..--pause-ms decorrelates the create from the hubs' 200 ms
 *   revision polls. Missions stay (the script's teardown removes the tree).
 *
 * scale: every line is a cluster of the tree. --missions M missions without
 *   placement (every cluster applies every one) are POSTed at the root, one
 *   after the other on one keep-alive connection (time 0: before the first).
 *   Then each cluster's own API, one thread per cluster (a daemon busy with
 *   a batch holds up only its own queries), at most every --interval-ms:
 *   GET missions/LAST (the last one created: missions travel
 *   and are applied in order), and when that is there (and its own state
 *   says applied), the exact counts: GET edgeclusters/NAME, missions.known
 *   (received) and missions.active (applied and reported) must reach M.
 *   Once every cluster has applied all, the root: GET missions/NAME for each
 *   mission not complete yet, until every one's state map holds every
 *   cluster's path with the expected value (clusters x M keys). (Not the
 *   list: 2.5 MB of JSON the root would build in memory, and the RSS figures
 *   would show our query.) The lower bound of a "yes" is the send time of the
 *   last "not yet", and never before the last mission was created.
 *   --kind: content (default: a content-only mission, the local driver writes
 *   one file; state "applied"), command (and a command, /bin/true), check
 *   (and a stateCheck printing "ok": state "ok"). --create-only: create and
 *   exit; --no-create: they exist already, time 0 is the probe's start.
 *
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
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define API "/apis/edge.xgate.io/v1"

static int verbose;
static const char *token, *ca_file;
static SSL_CTX *ssl_ctx;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	while (us > 0 && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tree_probe: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* ---- a blocking HTTP/1.1 client, keep-alive, http or https ---- */

struct hc {
	char url[128], host[64];
	int port;
	bool tls;
	int fd;
	SSL *ssl;
	char *in; /* bytes read and not consumed yet */
	size_t in_len, in_cap;
	char *body; /* the last response's body, NUL-terminated */
	size_t body_len, body_cap;
	int status;
	unsigned requests;
};

static void hc_close(struct hc *c)
{
	if (c->ssl) {
		SSL_free(c->ssl);
		c->ssl = NULL;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->in_len = 0;
}

static int hc_init(struct hc *c, const char *url)
{
	const char *p;
	char *end;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	snprintf(c->url, sizeof(c->url), "%s", url);
	if (!strncmp(url, "http://", 7)) {
		p = url + 7;
	} else if (!strncmp(url, "https://", 8)) {
		p = url + 8;
		c->tls = true;
	} else {
		return -1;
	}
	snprintf(c->host, sizeof(c->host), "%.*s", (int)strcspn(p, ":/"), p);
	p += strcspn(p, ":/");
	c->port = c->tls ? 443 : 80;
	if (*p == ':') {
		c->port = (int)strtol(p + 1, &end, 10);
		if (end == p + 1 || (*end && *end != '/') || c->port <= 0 || c->port > 65535)
			return -1;
	}
	if (c->tls && !ssl_ctx) {
		ssl_ctx = SSL_CTX_new(TLS_client_method());
		if (!ssl_ctx)
			die("SSL_CTX_new failed");
		SSL_CTX_set_verify(ssl_ctx, SSL_VERIFY_PEER, NULL);
		if (ca_file ? SSL_CTX_load_verify_locations(ssl_ctx, ca_file, NULL) != 1
			    : SSL_CTX_set_default_verify_paths(ssl_ctx) != 1)
			die("cannot load the CA %s", ca_file ? ca_file : "(system)");
	}
	return 0;
}

static int hc_connect(struct hc *c)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
	struct timeval tv = {30, 0};
	char port[8];
	int one = 1;

	snprintf(port, sizeof(port), "%d", c->port);
	if (getaddrinfo(c->host, port, &hints, &ai))
		return -1;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, ai->ai_addr, ai->ai_addrlen)) {
		freeaddrinfo(ai);
		hc_close(c);
		return -1;
	}
	freeaddrinfo(ai);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (c->tls) {
		c->ssl = SSL_new(ssl_ctx);
		if (!c->ssl || !SSL_set_tlsext_host_name(c->ssl, c->host) ||
		    !SSL_set1_host(c->ssl, c->host) || !SSL_set_fd(c->ssl, c->fd) ||
		    SSL_connect(c->ssl) != 1) {
			if (verbose)
				ERR_print_errors_fp(stderr);
			hc_close(c);
			return -1;
		}
	}
	return 0;
}

static ssize_t hc_io(struct hc *c, bool wr, void *buf, size_t n)
{
	ssize_t r;

	if (c->ssl) {
		r = wr ? SSL_write(c->ssl, buf, (int)n) : SSL_read(c->ssl, buf, (int)n);
		return r > 0 ? r : -1;
	}
	do
		r = wr ? write(c->fd, buf, n) : read(c->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r > 0 ? r : -1;
}

/* Read more into c->in; -1 on EOF or error. */
static int fill(struct hc *c)
{
	ssize_t r;

	if (c->in_cap - c->in_len < 65536) {
		c->in_cap = c->in_cap * 2 + 65536;
		c->in = xrealloc(c->in, c->in_cap + 1);
	}
	r = hc_io(c, false, c->in + c->in_len, c->in_cap - c->in_len);
	if (r <= 0)
		return -1;
	c->in_len += (size_t)r;
	c->in[c->in_len] = 0;
	return 0;
}

static void consume(struct hc *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
	c->in[c->in_len] = 0;
}

static void body_add(struct hc *c, const char *p, size_t n)
{
	if (c->body_len + n + 1 > c->body_cap) {
		c->body_cap = (c->body_len + n + 1) * 2;
		c->body = xrealloc(c->body, c->body_cap);
	}
	memcpy(c->body + c->body_len, p, n);
	c->body_len += n;
	c->body[c->body_len] = 0;
}

/* The value of header NAME in the header block HDR (ends at "\r\n\r\n"). */
static const char *header(const char *hdr, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name);

	for (const char *l = strstr(hdr, "\r\n"); l && l[2] != '\r'; l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, name, nl) || l[2 + nl] != ':')
			continue;
		l += 3 + nl;
		l += strspn(l, " \t");
		snprintf(out, len, "%.*s", (int)strcspn(l, "\r"), l);
		return out;
	}
	return NULL;
}

static int read_response(struct hc *c)
{
	char *eoh, v[64];
	size_t hlen, need;
	bool chunked, close_after;
	long cl = -1;

	while (!(eoh = strstr(c->in ? c->in : "", "\r\n\r\n")))
		if (fill(c))
			return -1;
	hlen = (size_t)(eoh - c->in) + 4;
	eoh[2] = 0; /* the header block, for header() */
	if (sscanf(c->in, "HTTP/1.%*d %d", &c->status) != 1)
		return -1;
	chunked = header(c->in, "transfer-encoding", v, sizeof(v)) && strcasestr(v, "chunked");
	close_after = header(c->in, "connection", v, sizeof(v)) && strcasestr(v, "close");
	if (header(c->in, "content-length", v, sizeof(v)))
		cl = strtol(v, NULL, 10);
	consume(c, hlen);
	c->body_len = 0;
	body_add(c, "", 0);
	if (chunked) {
		for (;;) {
			char *eol;
			unsigned long n;

			while (!(eol = strstr(c->in ? c->in : "", "\r\n")))
				if (fill(c))
					return -1;
			n = strtoul(c->in, NULL, 16);
			need = (size_t)(eol - c->in) + 2 + n + 2;
			while (c->in_len < need)
				if (fill(c))
					return -1;
			body_add(c, eol + 2, n);
			consume(c, need);
			if (!n)
				break; /* (no trailers from edgeclusterd) */
		}
	} else if (cl >= 0) {
		while (c->in_len < (size_t)cl)
			if (fill(c))
				return -1;
		body_add(c, c->in, (size_t)cl);
		consume(c, (size_t)cl);
	} else {
		while (!fill(c))
			;
		body_add(c, c->in ? c->in : "", c->in_len);
		close_after = true;
	}
	if (close_after)
		hc_close(c);
	return 0;
}

/* One request; the status (body in c->body), or -1. A keep-alive connection
 * the server closed meanwhile is opened again once. */
static int hc_req(struct hc *c, const char *method, const char *path, const char *body)
{
	size_t blen = body ? strlen(body) : 0;
	char *req = NULL, clen[80] = "";
	int n;

	if (body)
		snprintf(clen, sizeof(clen),
			 "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
	n = asprintf(&req,
		     "%s %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
		     "Accept: application/json\r\n%s\r\n",
		     method, path, c->host, c->port, token, clen);
	if (n < 0)
		die("out of memory");
	for (int attempt = 0; attempt < 2; attempt++) {
		bool fresh = c->fd < 0;

		if (fresh && hc_connect(c))
			break;
		if (hc_io(c, true, req, (size_t)n) == n &&
		    (!blen || hc_io(c, true, (void *)body, blen) == (ssize_t)blen) &&
		    !read_response(c)) {
			free(req);
			c->requests++;
			return c->status;
		}
		hc_close(c);
		if (fresh)
			break;
	}
	free(req);
	return -1;
}

/* ---- the clusters file ---- */

struct cl {
	char path[256], name[64];
	struct hc hc;
	/* scale */
	double next, known_lo, known_hi, active_lo, active_hi;
	bool known, active;
	long last_known, last_active;
	unsigned counts;
	pthread_t thread;
	char *error;
};

static struct cl *cls;
static int n_cls;

static void read_clusters(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[512], path[256], url[128];

	if (!f)
		die("%s: %s", file, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct cl *c;
		const char *slash;

		if (line[0] == '#' || sscanf(line, "%255s %127s", path, url) != 2)
			continue;
		cls = xrealloc(cls, (size_t)(n_cls + 1) * sizeof(*cls));
		c = &cls[n_cls++];
		memset(c, 0, sizeof(*c));
		c->last_known = c->last_active = -1; /* not asked */
		snprintf(c->path, sizeof(c->path), "%s", path);
		slash = strrchr(path, '/');
		snprintf(c->name, sizeof(c->name), "%.63s", slash ? slash + 1 : path);
		if (hc_init(&c->hc, url))
			die("%s: bad URL '%s'", file, url);
	}
	fclose(f);
	if (n_cls < 1)
		die("%s: no cluster in it", file);
}

/* ---- statistics and rows ---- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank: the smallest value with at least q of them at or below it */
static double quant(double *v, int n, double q)
{
	int k = (int)(q * n + 0.999999);

	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

/* NAN: not reached (differences of two upper bounds may be negative) */
static void fmt_ms(char *out, size_t len, double ms)
{
	if (isnan(ms))
		snprintf(out, len, "not reached");
	else if (fabs(ms) < 10000)
		snprintf(out, len, "%.1f ms", ms);
	else
		snprintf(out, len, "%.2f s", ms / 1000);
}

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

static int cmd_latency(int argc, char **argv)
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

/* ---- scale ---- */

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

static int cmd_scale(int argc, char **argv)
{
	int missions = 1000, interval_ms = 200;
	double timeout = 600000, t0, t_created, root_lo = -1, root_hi = -1;
	const char *prefix = "scale", *raw = NULL, *kind = "content";
	const char *want = "applied";
	bool create = true, watch = true;
	long root_have = 0, total;
	double *done_at = NULL;
	unsigned root_polls = 0;
	json_t *paths = json_object();
	FILE *rawf = NULL;
	int left, st;

	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (!strcmp(argv[1], "--missions") && argc > 2)
			missions = atoi(argv[2]);
		else if (!strcmp(argv[1], "--interval-ms") && argc > 2)
			interval_ms = atoi(argv[2]);
		else if (!strcmp(argv[1], "--timeout") && argc > 2)
			timeout = atof(argv[2]) * 1000;
		else if (!strcmp(argv[1], "--prefix") && argc > 2)
			prefix = argv[2];
		else if (!strcmp(argv[1], "--kind") && argc > 2)
			kind = argv[2];
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
	if (argc != 2 || missions < 1 || interval_ms < 1 || (!create && !watch))
		return 2;
	if (strcmp(kind, "content") && strcmp(kind, "command") && strcmp(kind, "check"))
		return 2;
	if (!strcmp(kind, "check"))
		want = "ok";
	read_clusters(argv[1]);
	for (int i = 0; i < n_cls; i++)
		json_object_set_new(paths, cls[i].path, json_true());
	total = (long)n_cls * missions;

	/* create, one after the other on one connection */
	json_object_seed(0); /* before any thread: jansson's hash seed */
	t0 = now_ms();
	for (int i = 0; create && i < missions; i++) {
		char name[128];
		json_t *spec = json_pack("{s:s}", "content", "bench: one of many missions\n");
		char *body;

		snprintf(name, sizeof(name), "%s-%05d", prefix, i + 1);
		if (strcmp(kind, "content"))
			json_object_set_new(spec, "command",
					    json_pack("{s:[s]}", "command", "/bin/true"));
		if (!strcmp(kind, "check"))
			json_object_set_new(spec, "stateCheck",
					    json_pack("{s:[s,s]}", "command", "/bin/echo", "ok"));
		json_t *mj = json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", "edge.xgate.io/v1",
				       "kind", "Mission", "metadata", "name", name, "spec", spec);

		body = json_dumps(mj, JSON_COMPACT);
		json_decref(mj);
		st = hc_req(&cls[0].hc, "POST", API "/missions", body);
		free(body);
		if (st != 201)
			die("POST %s at %s: %d %s", name, cls[0].hc.url, st,
			    st > 0 ? cls[0].hc.body : "(no answer)");
	}
	t_created = now_ms() - t0;
	if (!create)
		t_created = 0; /* they were there before time 0 */
	else
		fprintf(stderr, "tree_probe: %d missions created at the root in %.2f s\n", missions,
			t_created / 1000);
	if (!watch) {
		printf("| %d missions created at the root (POST, one by one), the other clusters "
		       "not started | %.2f s | | | | |\n",
		       missions, t_created / 1000);
		return 0;
	}

	/* watch: one thread per cluster (watch_one), so that a daemon whose
	 * loop is busy (a batch of applies runs in one callback) holds up only
	 * its own queries */
	W.missions = missions;
	W.want = want;
	W.interval_ms = interval_ms;
	W.t0 = t0;
	W.t_created = t_created;
	W.timeout = timeout;
	W.tolerate = !create;
	W.next_report = 5000;
	root_lo = t_created;
	snprintf(W.last, sizeof(W.last), API "/missions/%s-%05d", prefix, missions);
	for (int i = 0; i < n_cls; i++)
		if (pthread_create(&cls[i].thread, NULL, watch_one, &cls[i]))
			die("pthread_create: %s", strerror(errno));
	for (;;) {
		int done = __atomic_load_n(&W.done, __ATOMIC_ACQUIRE), kn = 0;

		if (done == n_cls)
			break;
		sleep_us(100000);
		if (now_ms() - t0 > W.next_report) {
			for (int i = 0; i < n_cls; i++)
				kn += __atomic_load_n(&cls[i].known, __ATOMIC_RELAXED);
			fprintf(stderr,
				"tree_probe: %.0f s: %d/%d clusters have all, %d/%d applied all\n",
				(now_ms() - t0) / 1000, kn, n_cls, done, n_cls);
			W.next_report = now_ms() - t0 + 5000;
		}
	}
	for (int i = 0; i < n_cls; i++) {
		pthread_join(cls[i].thread, NULL);
		if (cls[i].error)
			die("%s", cls[i].error);
	}
	left = 1;
	for (int i = 0; i < n_cls; i++)
		if (!cls[i].active)
			left++;
	if (left == 1) {
		/* the root: every mission not complete yet, GET missions/NAME one
		 * after the other (not the list: 2.5 MB of JSON that the root builds
		 * in memory, its RSS would show our query); no state can be at the
		 * root before the cluster that reports it applied */
		int rounds = 0;

		for (int i = 0; i < n_cls; i++)
			if (cls[i].active_lo > root_lo)
				root_lo = cls[i].active_lo;
		done_at = calloc((size_t)missions, sizeof(*done_at));
		while (root_hi < 0 && now_ms() - t0 < timeout) {
			double s = now_ms();
			long have = 0;
			int complete = 0;

			rounds++;
			for (int m = 0; m < missions; m++) {
				char path[256];
				json_t *doc;
				long n;

				if (done_at[m] > 0) {
					complete++;
					have += n_cls;
					continue;
				}
				snprintf(path, sizeof(path), API "/missions/%s-%05d", prefix,
					 m + 1);
				st = hc_req(&cls[0].hc, "GET", path, NULL);
				if (st != 200)
					die("GET %s at %s: %d", path, cls[0].hc.url, st);
				root_polls++;
				doc = json_loadb(cls[0].hc.body, cls[0].hc.body_len, 0, NULL);
				n = state_count(doc, want, paths);
				json_decref(doc);
				have += n;
				if (n >= n_cls) {
					done_at[m] = now_ms() - t0;
					complete++;
				}
			}
			root_have = have;
			if (complete == missions) {
				root_hi = now_ms() - t0;
			} else {
				root_lo = s - t0; /* something was missing after s */
				sleep_us((long)interval_ms * 1000);
			}
		}
		free(done_at);
		if (verbose)
			fprintf(stderr, "tree_probe: %d sweeps of the root\n", rounds);
	}

	/* results */
	{
		double known_hi = 0, known_lo = 0, act_hi = 0, act_lo = 0, *v;
		double cr = create ? t_created : -1;
		int nk = 0, na = 0;
		char what[256];

		v = calloc((size_t)n_cls, sizeof(double));
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
		if (raw && (rawf = fopen(raw, "w"))) {
			fprintf(rawf, "# path known_ms active_ms (after the first POST; -1: not "
				      "reached) last_known last_active queries count_queries\n");
			for (int i = 0; i < n_cls; i++)
				fprintf(rawf, "%s %.1f %.1f %ld %ld %u %u\n", cls[i].path,
					cls[i].known ? cls[i].known_hi : -1,
					cls[i].active ? cls[i].active_hi : -1, cls[i].last_known,
					cls[i].last_active, cls[i].hc.requests, cls[i].counts);
			fclose(rawf);
		}
		snprintf(what, sizeof(what), "%d missions created at the root (POST, one by one)",
			 missions);
		if (create)
			scale_row(what, t_created, -1, -1, -1);
		snprintf(what, sizeof(what), "every cluster (%d) has all %d missions", n_cls,
			 missions);
		scale_row(what, nk == n_cls ? known_hi : -1, known_lo, cr, -1);
		snprintf(what, sizeof(what), "half the clusters have applied all (median cluster)");
		scale_row(what, na == n_cls ? quant(v, na, 0.5) : -1, -1, cr, -1);
		snprintf(what, sizeof(what), "**every cluster has applied all %d** (%ld applies)",
			 missions, total);
		scale_row(what, na == n_cls ? act_hi : -1, act_lo, cr, 5000);
		snprintf(what, sizeof(what),
			 "**the root has every (mission, path) state** (%ld keys = \"%s\")", total,
			 want);
		scale_row(what, root_hi, root_lo, cr, 5000);
		free(v);
		fprintf(stderr,
			"tree_probe: %u GETs of a mission at the root; it holds %ld/%ld states\n",
			root_polls, root_have, total);
		for (int i = 0; i < n_cls; i++)
			if (!cls[i].active)
				fprintf(
				    stderr,
				    "tree_probe: %s (%s) did not get there (its last counts: %ld "
				    "missions, %ld active; -1: the last one never arrived)\n",
				    cls[i].path, cls[i].hc.url, cls[i].last_known,
				    cls[i].last_active);
		return nk == n_cls && na == n_cls && root_hi >= 0 ? 0 : 3;
	}
}

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
		    "       tree_probe scale [--missions M] [--kind content|command|check]\n"
		    "                  [--create-only | --no-create]\n"
		    "                  [--interval-ms MS] [--timeout S]\n"
		    "                  [--prefix P] [--raw FILE] [--ca FILE] [-v] CLUSTERS\n"
		    "       tree_probe ready [--tree] [--timeout S] [--ca FILE] CLUSTERS\n"
		    "CLUSTERS: lines \"PATH URL\", the root first; token in $XGATE_TOKEN\n");
	return rc;
}
