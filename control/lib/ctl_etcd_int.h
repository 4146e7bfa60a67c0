/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the etcd client's files only: the gateway's encodings
 * (ctl_etcd_json.c), curl's answers and multi interface (ctl_etcd_multi.c). */
#ifndef CTL_ETCD_INT_H
#define CTL_ETCD_INT_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

/* o[name] as an int64: the gateway sends a string, other gateways a number;
 * 0 when absent */
int64_t ctl_etcd_jint(json_t *o, const char *name);
/* an int64 as the gateway takes it (a decimal string) */
json_t *ctl_etcd_jnum(int64_t v);
/* set o[name] to the base64 of (p, len); -1 when out of memory */
int ctl_etcd_jb64(json_t *o, const char *name, const void *p, size_t len);

/* An answer kept whole (at most 64 MiB), NUL-terminated: p, freed by the
 * caller. first_line: a stream (keepalive), ended after its first object
 * with done set (curl then says CURLE_WRITE_ERROR). */
struct ctl_etcd_body {
	char *p;
	size_t n;
	bool first_line;
	bool done;
};
/* CURLOPT_WRITEFUNCTION, with an answer as CURLOPT_WRITEDATA */
size_t ctl_etcd_body_data(char *p, size_t sz, size_t nm, void *arg);

/* CLOCK_MONOTONIC in ms: the clock of every deadline */
long long ctl_etcd_now_ms(void);

/* curl's multi interface on its socket API: its sockets in epfd, each with
 * what curl waits for, so that a loop polls one fd; its timer as curl_at. */
struct ctl_etcd_multi {
	CURLM *multi;
	int epfd;
	long long curl_at; /* CLOCK_MONOTONIC ms; -1: none */
};
/* -1 when it cannot: nothing is then held */
int ctl_etcd_multi_init(struct ctl_etcd_multi *m);
void ctl_etcd_multi_fini(struct ctl_etcd_multi *m);
/* curl's work on the ready fds ev[0..n) of epfd, but other_fd (one of the
 * owner's in the set, or -1) */
void ctl_etcd_multi_sockets(struct ctl_etcd_multi *m, const struct epoll_event *ev, int n,
			    int other_fd);
/* curl's timer, if it is due */
void ctl_etcd_multi_timer(struct ctl_etcd_multi *m);

#endif
