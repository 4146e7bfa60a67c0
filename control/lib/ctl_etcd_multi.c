// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the etcd client's files share about curl: an answer read whole, the
 * clock of their deadlines, and curl's multi interface on its socket API
 * (its sockets in an epoll set, its timer a deadline), which the watch and
 * the requests without waiting both poll; see ctl_etcd_int.h.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "ctl_etcd_int.h"

#define MAX_ANSWER (64u << 20) /* a range of every application fits many times */

size_t ctl_etcd_body_data(char *p, size_t sz, size_t nm, void *arg)
{
	struct ctl_etcd_body *a = arg;
	size_t n = sz * nm;
	char *q;

	if (a->n + n + 1 > MAX_ANSWER || !(q = realloc(a->p, a->n + n + 1)))
		return 0;
	memcpy(q + a->n, p, n);
	a->p = q;
	a->n += n;
	q[a->n] = 0;
	if (a->first_line && memchr(p, '\n', n)) {
		a->done = true;
		return 0; /* enough: the rest of the stream is not wanted */
	}
	return n;
}

long long ctl_etcd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* curl: what to wait for on socket fd (CURL_POLL_*) */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *arg, void *sockp)
{
	struct ctl_etcd_multi *m = arg;
	struct epoll_event ev = {0};

	(void)easy;
	(void)sockp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(m->epfd, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	ev.data.fd = fd;
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (epoll_ctl(m->epfd, EPOLL_CTL_MOD, fd, &ev) && errno == ENOENT)
		return epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) ? -1 : 0;
	return 0;
}

/* curl: call back after ms (-1: no timer) */
static int on_timer(CURLM *multi, long ms, void *arg)
{
	struct ctl_etcd_multi *m = arg;

	(void)multi;
	m->curl_at = ms < 0 ? -1 : ctl_etcd_now_ms() + ms;
	return 0;
}

int ctl_etcd_multi_init(struct ctl_etcd_multi *m)
{
	m->curl_at = -1;
	if (!(m->multi = curl_multi_init()))
		return -1;
	if ((m->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		curl_multi_cleanup(m->multi);
		return -1;
	}
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
	return 0;
}

void ctl_etcd_multi_fini(struct ctl_etcd_multi *m)
{
	curl_multi_cleanup(m->multi);
	close(m->epfd);
}

void ctl_etcd_multi_sockets(struct ctl_etcd_multi *m, const struct epoll_event *ev, int n,
			    int other_fd)
{
	int running;

	for (int i = 0; i < n; i++)
		if (ev[i].data.fd != other_fd)
			curl_multi_socket_action(
			    m->multi, ev[i].data.fd,
			    (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
				(ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				(ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0),
			    &running);
}

void ctl_etcd_multi_timer(struct ctl_etcd_multi *m)
{
	int running;

	if (m->curl_at >= 0 && ctl_etcd_now_ms() >= m->curl_at) {
		m->curl_at = -1;
		curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
}
