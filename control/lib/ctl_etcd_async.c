// SPDX-License-Identifier: BSD-2-Clause
/*
 * Requests to etcd without waiting (ctl_etcd.h "requests without
 * waiting"): each one an easy handle on a multi handle of its own, curl's
 * sockets in an epoll set (the watch's arrangement), so that the owner's
 * loop polls one fd. A request walks the endpoints as the synchronous call
 * does: an attempt that cannot have been applied (refused, "no leader") or
 * drew no answer in time moves to the next endpoint, a pause after every
 * round, until the request's deadline; the outcome is named by the same
 * code (ctl_etcd_classify, ctl_etcd_conclude).
 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ctl_etcd.h"
#include "ctl_etcd_int.h"

#define PAUSE_MS 100 /* after a round over every endpoint, as the synchronous call */

struct req {
	struct ctl_etcd_async *as;
	struct req *next;
	char *text;
	CURL *easy; /* the attempt in flight, or NULL (a pause) */
	struct curl_slist *hdrs;
	char url[600];
	char ep[CTL_ETCD_URL_MAX + 1];
	char detail[CURL_ERROR_SIZE];
	struct ctl_etcd_body ans;
	long long deadline, resume_at;
	int tried, refused, rc;
	unsigned silent_at;
	bool no_leader;
	char silent[CTL_ETCD_URL_MAX + 1];
	ctl_etcd_done done;
	void *arg;
};

struct ctl_etcd_async {
	struct ctl_etcd *e;
	struct ctl_etcd_multi m;
	int efd; /* in the epoll set: readable when a request is new (the loop polls) */
	struct req *reqs;
};

static void drop_easy(struct req *r)
{
	if (r->easy) {
		curl_multi_remove_handle(r->as->m.multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
	}
	curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
	free(r->ans.p);
	r->ans = (struct ctl_etcd_body){0};
}

static void req_free(struct req *r)
{
	drop_easy(r);
	free(r->text);
	free(r);
}

/* the next attempt, on the current endpoint, within what is left */
static int send_attempt(struct req *r, long long left)
{
	struct ctl_etcd *e = r->as->e;
	long tmo = ctl_etcd_timeout_ms(e), share = tmo / 3 > 500 ? tmo / 3 : 500;

	snprintf(r->ep, sizeof(r->ep), "%s", ctl_etcd_endpoint(e));
	snprintf(r->url, sizeof(r->url), "%s/v3/kv/txn", r->ep);
	if (!(r->easy = curl_easy_init()))
		return -1;
	ctl_etcd_curl_setup(e, r->easy);
	r->detail[0] = 0;
	curl_easy_setopt(r->easy, CURLOPT_URL, r->url);
	curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->text);
	curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, left < share ? (long)left : share);
	curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, ctl_etcd_body_data);
	curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, &r->ans);
	curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->detail);
	curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	r->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->hdrs);
	return curl_multi_add_handle(r->as->m.multi, r->easy) ? -1 : 0;
}

static void unlink_req(struct req *r)
{
	for (struct req **p = &r->as->reqs; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			return;
		}
}

static void finish(struct req *r, int rc, json_t *o)
{
	struct ctl_etcd_result res = {.rc = rc};

	if (!rc)
		ctl_etcd_txn_result(o, &res.succeeded, &res.rev, &res.deleted);
	else {
		res.err = ctl_etcd_errmsg(r->as->e);
		res.maybe_applied = ctl_etcd_maybe_applied(r->as->e);
	}
	json_decref(o);
	unlink_req(r);
	r->done(r->arg, &res);
	req_free(r);
}

/* the request's deadline passed, or every endpoint refused: name why */
static void give_up(struct req *r)
{
	finish(r,
	       ctl_etcd_conclude(r->as->e, r->rc, r->silent[0] ? r->silent : NULL, r->silent_at,
				 r->no_leader),
	       NULL);
}

/* an attempt ended with curl's code c */
static void attempt_done(struct req *r, int c)
{
	struct ctl_etcd *e = r->as->e;
	int n_ep = ctl_etcd_n_endpoints(e), idx = ctl_etcd_cur(e);
	long status = 0;
	json_t *o = NULL;
	long long left;

	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	r->rc = ctl_etcd_classify(e, r->ep, "/v3/kv/txn", c, r->detail, r->ans.p, status, &o);
	drop_easy(r);
	if (r->rc == CTL_ETCD_OK)
		return finish(r, CTL_ETCD_OK, o);
	if (r->rc != CTL_ETCD_AGAIN && r->rc != CTL_ETCD_SILENT) /* maybe_applied as the call's */
		return finish(r, ctl_etcd_conclude(e, r->rc, NULL, 0, false), o);
	if (r->rc == CTL_ETCD_SILENT) {
		snprintf(r->silent, sizeof(r->silent), "%s", r->ep);
		if (!strcmp(r->ep, ctl_etcd_endpoint(e)))
			r->silent_at |= 1u << idx;
	} else if (strstr(ctl_etcd_errmsg(e), "no leader"))
		r->no_leader = true;
	else
		r->refused++;
	if (!strcmp(r->ep, ctl_etcd_endpoint(e)))
		ctl_etcd_next_endpoint(e);
	r->resume_at = ctl_etcd_now_ms();
	if (++r->tried % n_ep == 0) {
		if (r->refused == n_ep)
			return give_up(r);
		r->refused = 0;
		r->resume_at += PAUSE_MS;
	}
	left = r->deadline - r->resume_at;
	if (left <= 0)
		give_up(r);
}

/* requests between attempts whose pause is over: the next attempt */
static void resume(struct ctl_etcd_async *as)
{
	long long now = ctl_etcd_now_ms();

	for (struct req *r = as->reqs, *next; r; r = next) {
		next = r->next;
		if (r->easy || now < r->resume_at)
			continue;
		if (r->deadline - now <= 0)
			give_up(r);
		else if (send_attempt(r, r->deadline - now)) {
			drop_easy(r);
			r->rc = CTL_ETCD_ERROR;
			finish(r, CTL_ETCD_ERROR, NULL);
		}
	}
}

int ctl_etcd_txn_commit_async(struct ctl_etcd_async *as, struct ctl_etcd_txn *t, ctl_etcd_done done,
			      void *arg)
{
	struct req *r = calloc(1, sizeof(*r));

	if (!r || !ctl_etcd_txn_text(t, &r->text)) {
		free(r);
		return -1;
	}
	r->as = as;
	r->done = done;
	r->arg = arg;
	r->deadline = ctl_etcd_now_ms() + ctl_etcd_timeout_ms(as->e);
	r->resume_at = 0; /* sent from the next poll: done never runs inside this call */
	r->next = as->reqs;
	as->reqs = r;
	eventfd_write(as->efd, 1); /* the loop's poll of the set sends it */
	return 0;
}

int ctl_etcd_async_fd(const struct ctl_etcd_async *as)
{
	return as->m.epfd;
}

int ctl_etcd_async_next_ms(const struct ctl_etcd_async *as)
{
	long long at = as->m.curl_at, left;

	for (const struct req *r = as->reqs; r; r = r->next)
		if (!r->easy && (at < 0 || r->resume_at < at))
			at = r->resume_at;
	if (at < 0)
		return -1;
	left = at - ctl_etcd_now_ms();
	return left <= 0 ? 0 : left > 60000 ? 60000 : (int)left;
}

void ctl_etcd_async_poll(struct ctl_etcd_async *as)
{
	struct epoll_event ev[8];
	CURLMsg *m;
	int left, n;

	n = epoll_wait(as->m.epfd, ev, 8, 0);
	resume(as);
	for (int i = 0; i < n; i++)
		if (ev[i].data.fd == as->efd) {
			eventfd_t v;

			eventfd_read(as->efd, &v);
		}
	ctl_etcd_multi_sockets(&as->m, ev, n, as->efd);
	ctl_etcd_multi_timer(&as->m);
	while ((m = curl_multi_info_read(as->m.multi, &left))) {
		struct req *r = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (r)
			attempt_done(r, m->data.result);
	}
}

struct ctl_etcd_async *ctl_etcd_async_new(struct ctl_etcd *e)
{
	struct ctl_etcd_async *as = calloc(1, sizeof(*as));

	struct epoll_event ev = {.events = EPOLLIN};

	if (!as || ctl_etcd_multi_init(&as->m)) {
		free(as);
		return NULL;
	}
	if ((as->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (ev.data.fd = as->efd, epoll_ctl(as->m.epfd, EPOLL_CTL_ADD, as->efd, &ev))) {
		if (as->efd >= 0)
			close(as->efd);
		ctl_etcd_multi_fini(&as->m);
		free(as);
		return NULL;
	}
	as->e = e;
	return as;
}

void ctl_etcd_async_free(struct ctl_etcd_async *as)
{
	if (!as)
		return;
	while (as->reqs) {
		struct req *r = as->reqs;

		as->reqs = r->next;
		req_free(r);
	}
	ctl_etcd_multi_fini(&as->m);
	close(as->efd);
	free(as);
}
