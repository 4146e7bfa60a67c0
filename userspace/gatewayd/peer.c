// SPDX-License-Identifier: BSD-2-Clause
/*
 * Peer sessions: accept and dial, handshake, INFO, full sync, then frames
 * until the hold timer or an error ends the session. The gateway whose
 * name sorts lower dials; a new session from a peer replaces its old one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gwd.h"
#include "msg.h"

struct start {
	struct gwd *g;
	int fd;
	enum gw_role role;
	struct peer *p; /* initiator: the peer dialled */
	char addr[32];
};

static void set_timeout(int fd, unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static struct peer *peer_by_key(struct gwd *g, const unsigned char pub[32])
{
	for (int i = 0; i < g->n_peers; i++)
		if (!sodium_memcmp(g->peers[i].conf->public_key, pub, 32))
			return &g->peers[i];
	return NULL;
}

static int knows(const unsigned char pub[32], void *arg)
{
	return peer_by_key(arg, pub) != NULL; /* keys are immutable: no lock needed */
}

static int conn_send(struct conn *c, uint8_t type, const void *body, size_t len)
{
	int rc;

	pthread_mutex_lock(&c->send_lock);
	rc = gw_send(&c->s, type, body, len);
	c->last_tx_ms = gwd_now_ms();
	pthread_mutex_unlock(&c->send_lock);
	return rc;
}

static int send_own(struct conn *c, uint8_t type, const struct own_subnet *o)
{
	struct gw_route_msg m = { .version = o->version, .key = o->key };
	uint8_t buf[GW_ROUTE_MSG_LEN];

	gw_route_encode(buf, &m);
	return conn_send(c, type, buf, sizeof(buf));
}

void gwd_broadcast(struct gwd *g, uint8_t type, const struct own_subnet *o)
{
	for (int i = 0; i < g->n_peers; i++)
		if (g->peers[i].conn)
			send_own(g->peers[i].conn, type, o);
}

/* Policy: within the peer's AllowedSubnets (if any), and not ours. */
static bool allowed(const char *origin, const struct rt_key *k, void *arg)
{
	struct gwd *g = arg;

	for (int i = 0; i < g->n_own; i++)
		if (!g->own[i].withdrawn && rt_overlap(&g->own[i].key, k))
			return false;
	for (int i = 0; i < g->n_peers; i++) {
		struct gw_peer_conf *pc = g->peers[i].conf;

		if (strcmp(pc->name, origin))
			continue;
		if (!pc->n_allowed)
			return true;
		for (int j = 0; j < pc->n_allowed; j++) {
			struct gw_prefix *a = &pc->allowed[j];
			uint32_t mask = a->plen ? htonl(~0u << (32 - a->plen)) : 0;

			if ((!a->vni || a->vni == k->vni) && k->plen >= a->plen &&
			    (k->ip_be & mask) == a->ip_be)
				return true;
		}
		return false;
	}
	return false;
}

static void log_route(struct gwd *g, struct peer *p, const char *what, const struct rt_key *k,
		      uint64_t v, const char *extra)
{
	char ip[16];

	(void)g;
	inet_ntop(AF_INET, &k->ip_be, ip, sizeof(ip));
	gwd_log("peer %s: %s %u %s/%u v%llu%s", p->conf->name, what, k->vni, ip, k->plen,
		(unsigned long long)v, extra);
}

static int peer_idx(struct gwd *g, struct peer *p)
{
	return (int)(p - g->peers);
}

/* Announce (epoch, id) as our next sending key; used once the peer acks. */
static void announce_key(struct gwd *g, struct peer *p)
{
	struct gw_datakey_msg m = { .epoch = p->tx_epoch, .id = gwd_dp_next_id(g, peer_idx(g, p)) };
	uint8_t b[GW_DATAKEY_LEN];

	if (!p->conn)
		return;
	p->tx_pending_id = m.id;
	p->tx_pending = true;
	p->next_rekey_ms = gwd_now_ms() + (uint64_t)g->conf.rekey_s * 1000;
	conn_send(p->conn, GW_T_DATAKEY, b, gw_datakey_encode(b, &m));
}

static const char *on_datakey(struct gwd *g, struct peer *p, const uint8_t *b, long n)
{
	struct gw_datakey_msg m;
	const char *why = NULL;
	uint8_t out[GW_DATAKEY_LEN];

	if (gw_datakey_decode(b, (size_t)n, &m, &why))
		return why;
	if (!(m.flags & GW_DATAKEY_ACK)) {
		if (gwd_dp_rx_key(g, peer_idx(g, p), &p->conn->s, m.epoch, m.id))
			gwd_log("peer %s: cannot install receive key %u: %s", p->conf->name, m.id,
				strerror(errno));
		m.flags = GW_DATAKEY_ACK;
		conn_send(p->conn, GW_T_DATAKEY, out, gw_datakey_encode(out, &m));
		return NULL;
	}
	if (!p->tx_pending || m.id != p->tx_pending_id || m.epoch != p->tx_epoch)
		return NULL; /* an ack overtaken by a newer announce */
	p->tx_pending = false;
	if (gwd_dp_tx_key(g, peer_idx(g, p), &p->conn->s, m.epoch, m.id)) {
		gwd_log("peer %s: cannot install sending key %u: %s", p->conf->name, m.id,
			strerror(errno));
		return NULL;
	}
	p->last_rekey_ms = gwd_now_ms();
	if (g->dp.on)
		gwd_log("peer %s: data key %u (epoch %u) in use", p->conf->name, m.id, m.epoch);
	return NULL;
}

void gwd_rekeys(struct gwd *g)
{
	uint64_t now = gwd_now_ms();

	if (!g->dp.on)
		return;
	for (int i = 0; i < g->n_peers; i++) {
		struct peer *p = &g->peers[i];

		if (p->conn && now >= p->next_rekey_ms) {
			p->tx_epoch++;
			announce_key(g, p);
		}
	}
}

/* Handle one frame (lock held). Returns NULL or a protocol error. */
static const char *on_frame(struct gwd *g, struct peer *p, uint8_t type, const uint8_t *b,
			    long n)
{
	struct gw_route_msg m;
	const struct route *other = NULL, *r;
	const char *why = NULL;
	uint64_t now = gwd_now_ms();

	switch (type) {
	case GW_T_KEEPALIVE:
		return n ? "keepalive with a body" : NULL;
	case GW_T_FULL_BEGIN:
		rt_sync_begin(&g->routes, p->conf->name);
		p->syncing = true; /* the maps follow once, at the end */
		return n ? "sync marker with a body" : NULL;
	case GW_T_FULL_END: {
		int gone = rt_sync_end(&g->routes, p->conf->name);

		p->syncing = false;

		gw_store_begin(&g->store);
		gw_store_replace_origin(&g->store, &g->routes, p->conf->name);
		gw_store_commit(&g->store);
		gwd_log("peer %s: full sync done (%d stale routes removed)", p->conf->name, gone);
		gwd_dp_sync_routes(g);
		return n ? "sync marker with a body" : NULL;
	}
	case GW_T_ANNOUNCE:
	case GW_T_WITHDRAW:
		if (gw_route_decode(b, (size_t)n, &m, &why))
			return why;
		if (type == GW_T_ANNOUNCE) {
			enum rt_result res = rt_announce(&g->routes, p->conf->name, &m.key, m.version,
							 now, allowed, g, &other);

			if (res == RT_CONFLICT || res == RT_REFUSED) {
				char extra[80];

				p->refused++;
				snprintf(extra, sizeof(extra), " refused: %s%s",
					 res == RT_CONFLICT ? "overlaps a prefix of " : "outside policy",
					 res == RT_CONFLICT ? other->origin : "");
				log_route(g, p, "announce", &m.key, m.version, extra);
				return NULL;
			}
			if (res != RT_APPLIED)
				return NULL;
			log_route(g, p, "announce", &m.key, m.version, "");
		} else {
			if (rt_withdraw(&g->routes, p->conf->name, &m.key, m.version, now, 600000) !=
			    RT_APPLIED)
				return NULL;
			log_route(g, p, "withdraw", &m.key, m.version, "");
		}
		r = rt_find(&g->routes, p->conf->name, &m.key);
		if (r)
			gw_store_put_route(&g->store, r);
		if (!p->syncing)
			gwd_dp_sync_routes(g);
		return NULL;
	case GW_T_DATAKEY:
		return on_datakey(g, p, b, n);
	default:
		return "unknown message type";
	}
}

/* The session's socket closed and its keys wiped. */
static void conn_end(struct conn *c, int fd)
{
	close(fd);
	gw_session_wipe(&c->s);
	pthread_mutex_destroy(&c->send_lock);
	free(c);
}

static void *session_main(void *arg)
{
	struct start st = *(struct start *)arg;
	struct gwd *g = st.g;
	struct gw_info_msg info = { 0 }, theirs;
	uint8_t buf[GW_FRAME_MAX], type;
	struct conn *c = calloc(1, sizeof(*c));
	struct peer *p = st.p;
	const char *why = NULL;
	char err[128] = "";
	long n;

	free(arg);
	if (!c) {
		close(st.fd);
		return NULL;
	}
	pthread_mutex_init(&c->send_lock, NULL);
	set_timeout(st.fd, 5000);
	if (gw_handshake(&c->s, st.fd, st.role, g->conf.private_key,
			 p ? p->conf->public_key : NULL, knows, g, err, sizeof(err))) {
		gwd_log("%s%s: handshake failed: %s", p ? "peer " : "connection from ",
			p ? p->conf->name : st.addr, err);
		goto fail;
	}
	if (!p)
		p = peer_by_key(g, c->s.peer_static);
	snprintf(info.name, sizeof(info.name), "%s", g->conf.name);
	snprintf(info.cluster, sizeof(info.cluster), "%s", g->conf.cluster);
	info.public_ip_be = g->conf.public_addr.sin_addr.s_addr;
	info.public_port_be = g->conf.public_addr.sin_port;
	n = (long)gw_info_encode(buf, &info);
	if (conn_send(c, GW_T_HELLO_INFO, buf, (size_t)n)) {
		snprintf(err, sizeof(err), "sending info failed");
		goto fail_peer;
	}
	n = gw_recv(&c->s, &type, buf, sizeof(buf), err, sizeof(err));
	if (n <= 0 || type != GW_T_HELLO_INFO || gw_info_decode(buf, (size_t)n, &theirs, &why)) {
		snprintf(err, sizeof(err), "%s", why ? why : n < 0 ? err : "expected info");
		goto fail_peer;
	}
	if (strcmp(theirs.name, p->conf->name)) {
		snprintf(err, sizeof(err), "key of %s but calls itself %s", p->conf->name, theirs.name);
		goto fail_peer;
	}

	pthread_mutex_lock(&g->lock);
	if (p->conn) /* a newer session replaces the old one */
		shutdown(p->conn->s.fd, SHUT_RDWR);
	p->conn = c;
	p->state = PEER_UP;
	p->last_handshake_ms = p->last_rx_ms = gwd_now_ms();
	p->backoff_ms = 0;
	p->public_ip_be = theirs.public_ip_be;
	p->public_port_be = theirs.public_port_be;
	gwd_log("peer %s: session up (%s, cluster %s)", p->conf->name,
		st.role == GW_INITIATOR ? "dialled" : "accepted", theirs.cluster);
	p->syncing = false;
	gwd_dp_peer_addr(g, peer_idx(g, p));
	p->tx_epoch = 0; /* keys are per session: a new one starts at epoch 0 */
	if (g->dp.on)
		announce_key(g, p);
	conn_send(c, GW_T_FULL_BEGIN, NULL, 0);
	for (int i = 0; i < g->n_own; i++)
		if (!g->own[i].withdrawn)
			send_own(c, GW_T_ANNOUNCE, &g->own[i]);
	conn_send(c, GW_T_FULL_END, NULL, 0);
	pthread_mutex_unlock(&g->lock);

	set_timeout(st.fd, g->conf.hold_s * 1000);
	for (;;) {
		n = gw_recv(&c->s, &type, buf, sizeof(buf), err, sizeof(err));
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				snprintf(err, sizeof(err), "hold timer expired (%us)", g->conf.hold_s);
			break;
		}
		pthread_mutex_lock(&g->lock);
		if (p->conn != c) {
			pthread_mutex_unlock(&g->lock);
			snprintf(err, sizeof(err), "replaced by a newer session");
			break;
		}
		p->last_rx_ms = gwd_now_ms();
		p->rx_frames++;
		why = on_frame(g, p, type, buf, n);
		pthread_mutex_unlock(&g->lock);
		if (why) {
			snprintf(err, sizeof(err), "protocol error: %s", why);
			break;
		}
	}

	pthread_mutex_lock(&g->lock);
	if (p->conn == c) {
		int stale = rt_origin_down(&g->routes, p->conf->name, gwd_now_ms(),
					   (uint64_t)g->conf.grace_s * 1000);

		p->conn = NULL;
		p->state = PEER_IDLE;
		gw_store_begin(&g->store);
		gw_store_replace_origin(&g->store, &g->routes, p->conf->name);
		gw_store_commit(&g->store);
		gwd_log("peer %s: session down: %s; %d routes stale for %us", p->conf->name, err,
			stale, g->conf.grace_s);
	}
	pthread_mutex_unlock(&g->lock);
	conn_end(c, st.fd);
	return NULL;

fail_peer:
	gwd_log("peer %s: session failed: %s", p->conf->name, err);
fail:
	if (st.role == GW_INITIATOR) {
		pthread_mutex_lock(&g->lock);
		st.p->state = PEER_IDLE;
		pthread_mutex_unlock(&g->lock);
	}
	conn_end(c, st.fd);
	return NULL;
}

/* Sessions run in detached threads; 1 MiB stacks hold their 64 kB frame
 * buffers with room to spare (also under ASan). */
static int start_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	pthread_attr_t a;
	int rc;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 1024 * 1024);
	rc = pthread_create(&t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return rc;
}

static void spawn(struct start *st)
{
	if (start_thread(session_main, st)) {
		close(st->fd);
		free(st);
	}
}

void *gwd_acceptor(void *arg)
{
	struct gwd *g = arg;

	while (!g->stop) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		struct pollfd pfd = { .fd = g->listen_fd, .events = POLLIN };
		struct start *st;
		int fd;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept4(g->listen_fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		st = calloc(1, sizeof(*st));
		if (!st) {
			close(fd);
			continue;
		}
		st->g = g;
		st->fd = fd;
		st->role = GW_RESPONDER;
		snprintf(st->addr, sizeof(st->addr), "%s:%u", inet_ntoa(sa.sin_addr),
			 ntohs(sa.sin_port));
		spawn(st);
	}
	return NULL;
}

static int connect_timeout(const struct sockaddr_in *sa, unsigned ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd pfd = { .events = POLLOUT };
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) && errno != EINPROGRESS)
		goto bad;
	pfd.fd = fd;
	if (poll(&pfd, 1, (int)ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) ||
	    soerr)
		goto bad;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
bad:
	close(fd);
	return -1;
}

static void *dialer(void *arg)
{
	struct start *st = arg;
	struct peer *p = st->p;
	int fd = connect_timeout(&p->conf->endpoint, 2000);

	if (fd < 0) {
		pthread_mutex_lock(&st->g->lock);
		p->state = PEER_IDLE;
		pthread_mutex_unlock(&st->g->lock);
		free(st);
		return NULL;
	}
	st->fd = fd;
	return session_main(st);
}

void gwd_dial_due(struct gwd *g)
{
	uint64_t now = gwd_now_ms();

	for (int i = 0; i < g->n_peers; i++) {
		struct peer *p = &g->peers[i];
		struct start *st;

		if (p->state != PEER_IDLE || !p->conf->endpoint.sin_port ||
		    strcmp(g->conf.name, p->conf->name) > 0 || now < p->next_dial_ms)
			continue;
		/* backoff with jitter: 100 ms doubling to 5 s */
		p->backoff_ms = p->backoff_ms ? (p->backoff_ms * 2 > 5000 ? 5000 : p->backoff_ms * 2) : 100;
		p->next_dial_ms = now + p->backoff_ms + randombytes_uniform(p->backoff_ms / 2 + 1);
		st = calloc(1, sizeof(*st));
		if (!st)
			continue;
		st->g = g;
		st->role = GW_INITIATOR;
		st->p = p;
		p->state = PEER_CONNECTING;
		if (start_thread(dialer, st)) {
			p->state = PEER_IDLE;
			free(st);
		}
	}
}

void gwd_keepalives(struct gwd *g)
{
	uint64_t now = gwd_now_ms();

	for (int i = 0; i < g->n_peers; i++) {
		struct conn *c = g->peers[i].conn;

		if (c && now - c->last_tx_ms >= (uint64_t)g->conf.keepalive_s * 1000)
			conn_send(c, GW_T_KEEPALIVE, NULL, 0);
	}
}
