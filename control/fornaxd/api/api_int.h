// SPDX-License-Identifier: BSD-2-Clause
/*
 * Inside the API: the handle, a routed request, the resource table's row,
 * and the answers api.c and api_watch.c (lists, watches, their streams)
 * both give.
 */
#ifndef FXD_API_INT_H
#define FXD_API_INT_H

#include "api.h"
#include "ctl_http.h"
#include "ctl_watch.h"

#define PREFIX	     "/apis/" FX_API_VERSION
#define WATCH_RING   1024
#define WATCH_BUF    (4u << 20)
#define NS_WATCH_MAX 256 /* namespaces watched separately at most */

struct ns_watch {
	enum fx_kind k;
	char ns[FX_NS_MAX + 1];
	struct ctl_watch *w;
};

struct fx_api {
	struct fx_core *core;
	struct fx_store *st;
	struct fx_api_hooks h;
	struct ctl_watch *all[FX_K_COUNT];
	struct ns_watch *nsw;
	size_t n_nsw;
	bool standby;	  /* reads only: another fornaxd leads */
	char leader[320]; /* who leads, as its election key says ("" unknown) */
};

struct fx_stream {
	struct ctl_list *list;
	struct ctl_watcher *watcher;
	void (*wake)(void *conn);
	void *conn;
};

/* What a request names, once routed. */
struct route {
	const struct resource *r;
	char ns[FX_NS_MAX + 1]; /* "" : all namespaces (or a cluster resource) */
	char name[FX_NAME_MAX + 1];
	const unsigned char *client; /* the request's (ctl_http_req) */
};

typedef int (*op_fn)(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		     struct fx_err *e);

/* The resource table: what discovery lists and what routing follows. */
struct resource {
	const char *name, *singular, *kind;
	enum fx_kind k;
	bool namespaced;
	const char *verbs[8];
	const char *short_names[3];
	op_fn create, update, remove, patch; /* NULL: not served */
};

void api_respond(struct ctl_http_resp *rs, int code, json_t *v);
void api_err(struct ctl_http_resp *rs, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void api_fail(struct ctl_http_resp *rs, const struct fx_err *e);
void api_list(struct fx_api *a, const struct route *rt, const char *query,
	      struct ctl_http_resp *rs);
void api_watch(struct fx_api *a, const struct route *rt, const char *query,
	       struct ctl_http_resp *rs);
bool api_want_watch(const char *query);
/* a new watch of kind k (in ns, or NULL: all) learns every object's labels */
int api_labels_known(struct fx_api *a, struct ctl_watch *w, enum fx_kind k, const char *ns);

#endif
