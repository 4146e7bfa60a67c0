/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the parts of tree_probe share (bench/mission_tree.sh; the modes are
 * described in tree_probe.c): the HTTP client (http.c), the clusters file,
 * time, errors and figures (util.c); the modes in latency.c, scale.c and
 * tree_probe.c (ready, main).
 */
#ifndef TREE_PROBE_H
#define TREE_PROBE_H

#include <jansson.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define API "/apis/edge.xgate.io/v1"

extern int verbose;
extern const char *token;   /* $XGATE_TOKEN */
extern const char *ca_file; /* --ca: verifies https; NULL: the system's CAs */

/* ---- a blocking HTTP/1.1 client, keep-alive, http or https (http.c) ---- */

struct hc {
	char url[128], host[64];
	int port;
	bool tls;
	int fd;
	SSL *ssl; /* NULL on http */
	char *in; /* bytes read and not consumed yet */
	size_t in_len, in_cap;
	char *body; /* the last response's body, NUL-terminated */
	size_t body_len, body_cap;
	int status;
	unsigned requests;
};

/* Parse URL (http://HOST[:PORT] or https://...) into c, not connected yet;
 * -1 on a bad URL. */
int hc_init(struct hc *c, const char *url);
/* One request; the status (body in c->body), or -1. A keep-alive connection
 * the server closed meanwhile is opened again once. */
int hc_req(struct hc *c, const char *method, const char *path, const char *body);

/* ---- the clusters file (util.c) ---- */

struct cl {
	char path[256], name[64];
	struct hc hc;
	/* scale */
	double known_lo, known_hi, active_lo, active_hi;
	bool known, active;
	long last_known, last_active;
	unsigned counts;
	pthread_t thread;
	char *error;
};

extern struct cl *cls;
extern int n_cls;

/* Read FILE ("PATH URL" a line, the root first) into cls; exits on errors. */
void read_clusters(const char *file);

/* ---- time, errors, figures (util.c) ---- */

double now_ms(void);
void sleep_us(long us);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xrealloc(void *p, size_t n);
/* the value of nearest rank q (0..1] of v[0..n-1] (sorts v) */
double quant(double *v, int n, double q);
/* "12.3 ms", "12.34 s"; NAN: "not reached" */
void fmt_ms(char *out, size_t len, double ms);

/* ---- the modes ---- */

int cmd_latency(int argc, char **argv);
int cmd_scale(int argc, char **argv);

#endif
