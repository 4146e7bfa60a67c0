// SPDX-License-Identifier: BSD-2-Clause
/*
 * Accepting and dialling peers, and when to dial. The gateway whose name
 * sorts lower dials; the other one dials too, as a fallback, when no
 * session came from the lower one within FALLBACK_MS of its start or of
 * the last session's end (a peer that cannot reach us, e.g. one with no
 * Endpoint for us, or one that dials seldom). Every session runs in a
 * thread of its own (peer_session.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gwd.h"

/* Dial timing, ms. A refused connection (nothing listens there yet) costs
 * both ends next to nothing, so the lower-named gateway retries it soon,
 * with 75-125 % jitter, and only a peer unreachable for LONG_DOWN_MS gets the
 * long cap. Any other failure (timeout, handshake, INFO) costs a handshake
 * and backs off further. The higher-named gateway's dial is the fallback,
 * FALLBACK_MS after its start or the last session's end and then every
 * FALLBACK_MS: late enough that the lower one's dial (retried at most
 * REFUSED_CAP + 25 % apart) comes first when it can, also on a machine busy
 * with a mass start, since two sessions dialled at once both cost a
 * handshake and one of them is torn down again. */
#define REFUSED_FIRST 100
#define REFUSED_CAP   1000
#define FAIL_FIRST    500
#define FALLBACK_MS   10000
#define LONG_CAP      5000
#define LONG_DOWN_MS  30000
/* Neither end dials while a handshake from the peer is under way (begun
 * less than this ago): the two sessions would both come up and one would
 * be torn down again. */
#define INBOUND_WAIT_MS 2000

/* A dial of p failed (lock held): when to try again. */
static void dial_failed(struct peer *p, bool refused)
{
	uint64_t now = gwd_now_ms();
	unsigned first = refused ? REFUSED_FIRST : FAIL_FIRST, cap = LONG_CAP, d;

	p->dialing = false;
	if (p->state == PEER_CONNECTING)
		p->state = PEER_IDLE;
	if (!p->unreachable_ms)
		p->unreachable_ms = now;
	if (!p->dial_lower)
		first = FALLBACK_MS;
	else if (refused && now - p->unreachable_ms < LONG_DOWN_MS)
		cap = REFUSED_CAP;
	d = p->backoff_ms ? p->backoff_ms * 2 : first;
	d = d < first ? first : d > cap ? cap : d;
	p->backoff_ms = d;
	p->next_dial_ms = now + d - d / 4 + randombytes_uniform(d / 2 + 1);
}

/* A session thread's end: the next dial is scheduled by how it went. */
static void *session_thread(void *arg)
{
	struct gwd_start *st = arg;
	struct gwd *g = st->g;
	enum gwd_outcome out = gwd_session(st);

	if (out == GWD_ENDED || (out == GWD_FAILED && st->role == GW_INITIATOR)) {
		pthread_mutex_lock(&g->lock);
		if (out == GWD_ENDED) /* the lower-named end redials at once, the other one later */
			gwd_dial_first(st->p);
		else
			dial_failed(st->p, false);
		pthread_mutex_unlock(&g->lock);
	}
	free(st);
	__atomic_sub_fetch(&g->threads, 1, __ATOMIC_RELEASE); /* the last use of g */
	return NULL;
}

/* Sessions run in detached threads with 1 MiB stacks; frame buffers are
 * on the heap. */
static int start_thread(struct gwd *g, void *(*fn)(void *), void *arg)
{
	pthread_t t;
	pthread_attr_t a;
	int rc;

	__atomic_add_fetch(&g->threads, 1, __ATOMIC_RELAXED);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 1024 * 1024);
	rc = pthread_create(&t, &a, fn, arg);
	pthread_attr_destroy(&a);
	if (rc)
		__atomic_sub_fetch(&g->threads, 1, __ATOMIC_RELAXED);
	return rc;
}

/* Out of file descriptors (or memory) for a new connection: it stays in
 * the listen queue, and poll would report it again at once. */
static bool accept_starved(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

/* A line about refused connections at most every LOG_EVERY_MS, with how
 * many there were since the last one. */
#define LOG_EVERY_MS	 10000
#define STARVED_PAUSE_MS 250

struct acceptor_log {
	uint64_t last_ms;
	unsigned n;
};

/* Counts one; true when a line is due, with the count in *n. */
static bool log_due(struct acceptor_log *l, unsigned *n)
{
	uint64_t now = gwd_now_ms();

	l->n++;
	if (l->last_ms && now - l->last_ms < LOG_EVERY_MS)
		return false;
	*n = l->n;
	l->last_ms = now;
	l->n = 0;
	return true;
}

/* Accepts peers' connections and is the handshake deadlines' watchdog (a
 * pass every 200 ms at most). Past GW_HS_INBOUND_MAX accepted handshakes at
 * once, new connections are closed at once; when the process is out of
 * file descriptors, accepting pauses STARVED_PAUSE_MS at a time. */
void *gwd_acceptor(void *arg)
{
	struct gwd *g = arg;
	struct acceptor_log full = {0}, starved = {0};

	while (!g->stop) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		struct pollfd pfd = {.fd = g->listen_fd, .events = POLLIN};
		struct gwd_start *st;
		char addr[32];
		int fd, slot, n;
		unsigned logged;

		n = gw_hs_expire(&g->hs, gwd_now_ms());
		if (n)
			gwd_log(g, "%d handshake%s cut at the %ums deadline", n, n > 1 ? "s" : "",
				GWD_HANDSHAKE_MS);
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept4(g->listen_fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);
		if (fd < 0) {
			if (accept_starved(errno)) {
				if (log_due(&starved, &logged))
					gwd_log(
					    g,
					    "accepting paused: %s (%u times since the last line)",
					    strerror(errno), logged);
				poll(NULL, 0, STARVED_PAUSE_MS);
			}
			continue;
		}
		snprintf(addr, sizeof(addr), "%s:%u", inet_ntoa(sa.sin_addr), ntohs(sa.sin_port));
		slot = gw_hs_begin(&g->hs, fd, true, sa.sin_addr.s_addr,
				   gwd_now_ms() + GWD_HANDSHAKE_MS);
		if (slot < 0) {
			if (log_due(&full, &logged))
				gwd_log(
				    g,
				    "connection from %s closed: %u handshakes under way already "
				    "(%u refused since the last line)",
				    addr, gw_hs_inbound(&g->hs), logged);
			close(fd);
			continue;
		}
		st = calloc(1, sizeof(*st));
		if (!st) {
			gw_hs_end(&g->hs, slot);
			close(fd);
			continue;
		}
		st->g = g;
		st->fd = fd;
		st->role = GW_RESPONDER;
		st->hs_slot = slot;
		memcpy(st->addr, addr, sizeof(addr));
		if (start_thread(g, session_thread, st)) {
			gw_hs_end(&g->hs, slot);
			close(fd);
			free(st);
		}
	}
	return NULL;
}

/* Is a session with p up already (an inbound one completed while this
 * dial waited)? Then the dial is cancelled: nothing was sent yet. */
static bool dial_moot(struct gwd *g, struct peer *p)
{
	bool up;

	pthread_mutex_lock(&g->lock);
	up = p->conn != NULL;
	if (up)
		p->dialing = false;
	pthread_mutex_unlock(&g->lock);
	return up;
}

static void *dialer(void *arg)
{
	struct gwd_start *st = arg;
	struct gwd *g = st->g;
	struct peer *p = st->p;
	int fd;

	if (dial_moot(g, p))
		goto out;
	fd = gw_connect(&p->conf->endpoint, 2000);
	if (fd >= 0 && dial_moot(g, p)) {
		close(fd);
		goto out;
	}
	if (fd < 0) {
		bool refused = errno == ECONNREFUSED;

		pthread_mutex_lock(&g->lock);
		dial_failed(p, refused);
		pthread_mutex_unlock(&g->lock);
		goto out;
	}
	st->fd = fd;
	st->hs_slot = gw_hs_begin(&g->hs, fd, false, 0, gwd_now_ms() + GWD_HANDSHAKE_MS);
	return session_thread(st);
out:
	free(st);
	__atomic_sub_fetch(&g->threads, 1, __ATOMIC_RELEASE);
	return NULL;
}

void gwd_dial_first(struct peer *p)
{
	p->next_dial_ms =
	    gwd_now_ms() + (p->dial_lower ? 0 : FALLBACK_MS + randombytes_uniform(FALLBACK_MS / 2));
}

int gwd_dial_due(struct gwd *g, int *idx)
{
	uint64_t now = gwd_now_ms();
	int n = 0;

	for (int i = 0; i < g->n_peers; i++) {
		struct peer *p = &g->peers[i];
		uint64_t ib = __atomic_load_n(&p->inbound_ms, __ATOMIC_RELAXED);

		if (p->conn || p->dialing || !p->conf->endpoint.sin_port || now < p->next_dial_ms ||
		    (ib && now - ib < INBOUND_WAIT_MS))
			continue;
		p->dialing = true;
		p->state = PEER_CONNECTING;
		idx[n++] = i;
	}
	return n;
}

/* Thread creation (mmap of a stack, clone) is the slow part of a dial: it
 * runs without the lock, so 99 dials at a mesh start hold up nobody. */
void gwd_dial(struct gwd *g, const int *idx, int n)
{
	for (int i = 0; i < n; i++) {
		struct peer *p = &g->peers[idx[i]];
		struct gwd_start *st = calloc(1, sizeof(*st));

		if (st) {
			st->g = g;
			st->role = GW_INITIATOR;
			st->p = p;
			st->hs_slot = -1;
			if (!start_thread(g, dialer, st))
				continue;
			free(st);
		}
		pthread_mutex_lock(&g->lock);
		dial_failed(p, false);
		pthread_mutex_unlock(&g->lock);
	}
}
