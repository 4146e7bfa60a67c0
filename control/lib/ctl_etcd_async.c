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

#define MAX_ANSWER (64u << 20)
#define PAUSE_MS   100 /* after a round over every endpoint, as the synchronous call */

struct req {
	struct ctl_etcd_async *as;
	struct req *next;
	char *text;
	CURL *easy; /* the attempt in flight, or NULL (a pause) */
	struct curl_slist *hdrs;
	char url[600];
	char ep[CTL_ETCD_URL_MAX + 1];
	char detail[CURL_ERROR_SIZE];
	char *ans;
	size_t n;
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
	CURLM *multi;
	int epfd;
	int efd;	   /* in the epoll set: readable when a request is new (the loop polls) */
	long long curl_at; /* curl's timer, CLOCK_MONOTONIC ms; -1: none */
	struct req *reqs;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t on_data(char *p, size_t sz, size_t nm, void *arg)
{
	struct req *r = arg;
	size_t n = sz * nm;
	char *q;

	if (r->n + n + 1 > MAX_ANSWER || !(q = realloc(r->ans, r->n + n + 1)))
		return 0;
	memcpy(q + r->n, p, n);
	r->ans = q;
	r->n += n;
	q[r->n] = 0;
	return n;
}

static void drop_easy(struct req *r)
{
	if (r->easy) {
		curl_multi_remove_handle(r->as->multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
	}
	curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
	free(r->ans);
	r->ans = NULL;
	r->n = 0;
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
	curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->detail);
	curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	r->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->hdrs);
	return curl_multi_add_handle(r->as->multi, r->easy) ? -1 : 0;
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
	r->rc = ctl_etcd_classify(e, r->ep, "/v3/kv/txn", c, r->detail, r->ans, status, &o);
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
	r->resume_at = now_ms();
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
	long long now = now_ms();

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
	r->deadline = now_ms() + ctl_etcd_timeout_ms(as->e);
	r->resume_at = 0; /* sent from the next poll: done never runs inside this call */
	r->next = as->reqs;
	as->reqs = r;
	eventfd_write(as->efd, 1); /* the loop's poll of the set sends it */
	return 0;
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *arg, void *sockp)
{
	struct ctl_etcd_async *as = arg;
	struct epoll_event ev = {0};

	(void)easy;
	(void)sockp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(as->epfd, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	ev.data.fd = fd;
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (epoll_ctl(as->epfd, EPOLL_CTL_MOD, fd, &ev) && errno == ENOENT)
		return epoll_ctl(as->epfd, EPOLL_CTL_ADD, fd, &ev) ? -1 : 0;
	return 0;
}

static int on_timer(CURLM *multi, long ms, void *arg)
{
	struct ctl_etcd_async *as = arg;

	(void)multi;
	as->curl_at = ms < 0 ? -1 : now_ms() + ms;
	return 0;
}

int ctl_etcd_async_fd(const struct ctl_etcd_async *as)
{
	return as->epfd;
}

int ctl_etcd_async_next_ms(const struct ctl_etcd_async *as)
{
	long long at = as->curl_at, left;

	for (const struct req *r = as->reqs; r; r = r->next)
		if (!r->easy && (at < 0 || r->resume_at < at))
			at = r->resume_at;
	if (at < 0)
		return -1;
	left = at - now_ms();
	return left <= 0 ? 0 : left > 60000 ? 60000 : (int)left;
}

void ctl_etcd_async_poll(struct ctl_etcd_async *as)
{
	struct epoll_event ev[8];
	CURLMsg *m;
	int left, running, n;

	n = epoll_wait(as->epfd, ev, 8, 0);
	resume(as);
	for (int i = 0; i < n; i++)
		if (ev[i].data.fd == as->efd) {
			eventfd_t v;

			eventfd_read(as->efd, &v);
		} else
			curl_multi_socket_action(
			    as->multi, ev[i].data.fd,
			    (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
				(ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				(ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0),
			    &running);
	if (as->curl_at >= 0 && now_ms() >= as->curl_at) {
		as->curl_at = -1;
		curl_multi_socket_action(as->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	while ((m = curl_multi_info_read(as->multi, &left))) {
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

	if (!as || !(as->multi = curl_multi_init()) ||
	    (as->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (as->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (ev.data.fd = as->efd, epoll_ctl(as->epfd, EPOLL_CTL_ADD, as->efd, &ev))) {
		if (as && as->multi)
			curl_multi_cleanup(as->multi);
		if (as && as->epfd > 0)
			close(as->epfd);
		if (as && as->efd > 0)
			close(as->efd);
		free(as);
		return NULL;
	}
	curl_multi_setopt(as->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(as->multi, CURLMOPT_SOCKETDATA, as);
	curl_multi_setopt(as->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(as->multi, CURLMOPT_TIMERDATA, as);
	as->curl_at = -1;
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
	curl_multi_cleanup(as->multi);
	close(as->epfd);
	close(as->efd);
	free(as);
}
