/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_probe: drives a fornaxd for bench/session_open.sh (docs/bench.md
 * "session_open"). One libwebsockets context, one thread, everything event
 * driven: simulated node agents (sim_nodes.c: the node link of
 * proto/fornax.md, answering at once, so that what is measured is fornaxd),
 * and an API client (api.c) that creates applications, opens sessions and
 * watches them become Available. A mode of the probe, not of fornaxd: the
 * daemon under test is the one users run.
 */
#ifndef FX_PROBE_H
#define FX_PROBE_H

#include <jansson.h>
#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "ctl_wslink.h"

#define FX_GROUP	 "/apis/core.fornax-serverless.centaurusinfra.io/v1"
#define FX_NODE_PROTOCOL "node.fornax.xgate.io.v1"

struct fx;

/* ---- simulated node agents (sim_nodes.c) ---- */
struct sim_node {
	struct fx *fx;
	char name[32];
	struct ctl_wslink link;
	int64_t rev;
	bool configured, ready;
	char credential[64];
	unsigned pods, next_port;
	bool closed;
};

/* ---- one API request in flight (api.c) ---- */
struct fx_req {
	struct fx *fx;
	char method[8];
	char path[512];
	unsigned char *body; /* LWS_PRE before it */
	size_t body_len;
	int status;
	struct xg_buf resp;
	void (*done)(struct fx_req *r); /* then freed */
	void *arg;
	bool watch; /* a watch: events go to fx_on_event as they come */
};

struct fx_open {
	char name[64];
	double t_post, t_avail; /* ms on the probe's clock */
	bool seen;
};

struct fx {
	struct lws_context *ctx;
	char host[64];
	int port;
	char token[256], join[256];
	const char *ns, *prefix;
	bool tls; /* https, verified against --ca (a fornaxd off loopback) */
	bool stop;
	/* simulated nodes */
	struct sim_node *nodes;
	int n_nodes, n_configured;
	unsigned pod_creates, session_opens;
	double t_first_pod, t_last_pod;
	/* opens */
	struct fx_open *opens;
	int n_opens, next_open, in_flight, concurrency, n_avail, n_failed;
	/* --gap: the next open is posted no sooner than this after the last
	 * one ended (0: at once) */
	double gap_ms, t_last_end;
	const char *app;
	bool watching;
	struct xg_buf events; /* a watch's partial line */
	int errors;
	unsigned long ended; /* requests ended so far */
};

double fx_now_ms(void);
void fx_fail(struct fx *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int sim_nodes_start(struct fx *fx, int n);
extern const struct lws_protocols sim_node_protocol;

/* Send a request (body NULL or JSON text); done runs when it is answered. */
int fx_request(struct fx *fx, const char *method, const char *path, const char *body,
	       void (*done)(struct fx_req *r), void *arg, bool watch);
extern const struct lws_protocols fx_api_protocol;
/* A watch event (one JSON line). */
void fx_on_event(struct fx *fx, json_t *ev);

#endif
