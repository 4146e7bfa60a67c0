// SPDX-License-Identifier: BSD-2-Clause
/* Sending on a session, and the keepalive thread (see gwd.h for the locks). */
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "gwd.h"
#include "msg.h"

int gwd_conn_send(struct conn *c, uint8_t type, const void *body, size_t len)
{
	int rc;

	pthread_mutex_lock(&c->send_lock);
	rc = gw_send(&c->s, type, body, len);
	__atomic_store_n(&c->last_tx_ms, gwd_now_ms(), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->send_lock);
	return rc;
}

void gwd_set_conn(struct gwd *g, struct peer *p, struct conn *c)
{
	pthread_mutex_lock(&g->conn_lock);
	p->conn = c;
	pthread_mutex_unlock(&g->conn_lock);
}

void gwd_conn_end(struct conn *c, int fd)
{
	close(fd);
	gw_session_wipe(&c->s);
	pthread_mutex_destroy(&c->send_lock);
	free(c);
}

/* Keepalives from their own thread. It takes conn_lock only (held for a
 * pass over the peers, a few microseconds each) and never waits: a session
 * whose send_lock is taken is sending right now, which does a keepalive's
 * job; one whose socket has no room does not need one (the peer has
 * unread data), and a keepalive there could block. One pass every tick
 * (Keepalive / 4, at most 200 ms) sends those due within half a tick, so
 * they go every Keepalive +- half a tick, never later. */
void *gwd_keepalive_thread(void *arg)
{
	struct gwd *g = arg;
	const uint64_t every = (uint64_t)g->conf.keepalive_s * 1000;
	const uint64_t tick = every / 4 < 200 ? every / 4 : 200;
	const struct timespec ts = {0, (long)tick * 1000000};

	while (!g->stop) {
		uint64_t now = gwd_now_ms();

		pthread_mutex_lock(&g->conn_lock);
		for (int i = 0; i < g->n_peers; i++) {
			struct conn *c = g->peers[i].conn;
			uint64_t last = c ? __atomic_load_n(&c->last_tx_ms, __ATOMIC_RELAXED) : now;
			struct pollfd pfd;

			if (last > now || now - last < every - tick / 2 ||
			    pthread_mutex_trylock(&c->send_lock))
				continue;
			pfd = (struct pollfd){.fd = c->s.fd, .events = POLLOUT};
			if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT)) {
				gw_send(&c->s, GW_T_KEEPALIVE, NULL, 0);
				__atomic_store_n(&c->last_tx_ms, now, __ATOMIC_RELAXED);
			}
			pthread_mutex_unlock(&c->send_lock);
		}
		pthread_mutex_unlock(&g->conn_lock);
		nanosleep(&ts, NULL);
	}
	return NULL;
}
