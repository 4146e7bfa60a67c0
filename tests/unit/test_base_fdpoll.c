// SPDX-License-Identifier: BSD-2-Clause
/* Another library's fd in a real lws loop (ctl_fdpoll): an epoll set over a
 * pipe, as the etcd watch keeps one over curl's sockets. Input on the pipe
 * makes the set readable and reaches the callback from the loop; a deadline
 * calls it with no input; a cancelled deadline does not; after the free the
 * library's own fd is still open and usable (the loop polled a dup). */
#include <fcntl.h>
#include <libwebsockets.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ctl_fdpoll.h"
#include "unit.h"

struct lib {
	int epfd, pipe[2];
	int calls, read; /* callbacks, bytes drained */
};

static void on_ready(void *arg)
{
	struct lib *l = arg;
	struct epoll_event ev;
	char buf[64];
	ssize_t n;

	l->calls++;
	if (epoll_wait(l->epfd, &ev, 1, 0) == 1)
		while ((n = read(l->pipe[0], buf, sizeof(buf))) > 0)
			l->read += (int)n;
}

static int woke;

static void on_wake(void *arg)
{
	(void)arg;
	woke = 1;
}

/* run the loop for ms: lws_service waits for its own events whatever
 * timeout it is given, so a second ctl_fdpoll, on an fd that never has
 * input, ends the wait with its deadline */
static void turn(struct lws_context *ctx, struct ctl_fdpoll *clock, int ms)
{
	(void)ctx;
	woke = 0;
	ctl_fdpoll_at(clock, ms);
	while (!woke)
		lws_service(ctx, 0);
}

int main(void)
{
	struct lws_context_creation_info info;
	struct lws_context *ctx;
	struct ctl_fdpoll *p, *clock;
	int idle = eventfd(0, EFD_CLOEXEC);
	struct lib l = {0};
	struct epoll_event ev = {.events = EPOLLIN};

	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	ctx = lws_create_context(&info);
	if (!ctx || pipe2(l.pipe, O_NONBLOCK) || (l.epfd = epoll_create1(0)) < 0)
		return 1;
	ev.data.fd = l.pipe[0];
	epoll_ctl(l.epfd, EPOLL_CTL_ADD, l.pipe[0], &ev);
	p = ctl_fdpoll_new(ctx, l.epfd, on_ready, &l);
	clock = ctl_fdpoll_new(ctx, idle, on_wake, NULL);
	CHECK(p != NULL && clock != NULL, "the epoll set in the loop");
	if (!p || !clock)
		return unit_summary();
	turn(ctx, clock, 100);
	CHECK(l.calls == 0, "nothing to read, no deadline: not called (%d)", l.calls);
	CHECK(write(l.pipe[1], "abc", 3) == 3, "input on the pipe");
	for (int i = 0; i < 50 && !l.calls; i++)
		turn(ctx, clock, 20);
	CHECK(l.calls == 1 && l.read == 3,
	      "reaches the callback from the loop (%d calls, %d bytes)", l.calls, l.read);
	turn(ctx, clock, 100);
	CHECK(l.calls == 1, "drained: not called again (%d)", l.calls);
	ctl_fdpoll_at(p, 30);
	for (int i = 0; i < 50 && l.calls < 2; i++)
		turn(ctx, clock, 20);
	CHECK(l.calls == 2 && l.read == 3, "a deadline calls it with nothing to read (%d)",
	      l.calls);
	ctl_fdpoll_at(p, 50);
	ctl_fdpoll_at(p, -1);
	turn(ctx, clock, 150);
	CHECK(l.calls == 2, "a cancelled deadline does not (%d)", l.calls);
	ctl_fdpoll_free(p);
	ctl_fdpoll_free(clock);
	lws_context_destroy(ctx);
	CHECK(write(l.pipe[1], "d", 1) == 1 && epoll_wait(l.epfd, &ev, 1, 100) == 1,
	      "after the free the library's epoll fd still works");
	close(idle);
	close(l.epfd);
	close(l.pipe[0]);
	close(l.pipe[1]);
	return unit_summary();
}
