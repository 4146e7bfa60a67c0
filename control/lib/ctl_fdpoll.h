/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An fd that another library owns (an epoll set of its sockets, say:
 * ctl_etcd_watch_fd) waited on in the lws loop, with a deadline: the
 * callback runs on the loop's thread when the fd is readable or the
 * deadline has come, and there steps the library and sets the next
 * deadline. The loop polls a dup of the fd, so the library keeps, and
 * closes, its own.
 */
#ifndef CTL_FDPOLL_H
#define CTL_FDPOLL_H

struct lws_context;
struct ctl_fdpoll;

typedef void (*ctl_fdpoll_fn)(void *arg);

/* NULL on failure (errno). No deadline until ctl_fdpoll_at. */
struct ctl_fdpoll *ctl_fdpoll_new(struct lws_context *ctx, int fd, ctl_fdpoll_fn fn, void *arg);
/* fn also in ms (0: on the next turn of the loop; -1: no deadline). */
void ctl_fdpoll_at(struct ctl_fdpoll *p, int ms);
/* Before the context goes (not from inside fn). */
void ctl_fdpoll_free(struct ctl_fdpoll *p);

#endif
