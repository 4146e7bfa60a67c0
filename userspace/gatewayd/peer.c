// SPDX-License-Identifier: BSD-2-Clause
/*
 * Peer sessions: accept and dial, handshake, INFO, full sync, then frames
 * until the hold timer or an error ends the session. The gateway whose
 * name sorts lower dials; the other one dials too, as a fallback, when no
 * session came from the lower one within FALLBACK_MS of its start or of
 * the last session's end (a peer that cannot reach us, e.g. one with no
 * Endpoint for us, or one that dials seldom).
 * Which session stays when two are up at once is decided the same way on
 * both ends (session_up): the one the lower-named gateway dialled.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gwd.h"
#include "msg.h"

struct start {
	struct gwd *g;
	int fd;
	enum gw_role role;
	struct peer *p; /* initiator: the peer dialled */
	struct peer *claimed; /* responder: the peer whose key its HELLO named */
	char addr[32];
};

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
#define REFUSED_CAP 1000
#define FAIL_FIRST 500
#define FALLBACK_MS 10000
#define LONG_CAP 5000
#define LONG_DOWN_MS 30000
/* Neither end dials while a handshake from the peer is under way (begun
 * less than this ago): the two sessions would both come up and one would
 * be torn down again. */
#define INBOUND_WAIT_MS 2000
/* Handshake and INFO must take less than HANDSHAKE_MS; the peer's first
 * frame after them (its FULL_BEGIN) may take SETUP_MS (or HoldTime if
 * longer): on a loaded machine the peer may wait for its lock to get there,
 * and it sends no keepalive before. */
#define HANDSHAKE_MS 5000
#define SETUP_MS 10000

/* A session thread reads every frame that arrived together (up to these
 * limits) and applies them under one hold of the lock, with one SQLite
 * transaction. The buffer is on the heap: threads have 1 MiB stacks. */
#define BATCH_FRAMES 64
#define BATCH_BYTES (2 * GW_FRAME_MAX)

struct frame {
	uint8_t type;
	uint32_t off, len;
};

/* What a batch did to the store and the table (lock held throughout). */
struct batch {
	bool txn;    /* a store transaction is open */
	bool routes; /* the route table changed: the data plane follows after the commit */
	bool failed; /* a write failed: roll back, rewrite the origin next time */
};

static struct peer *peer_by_key(struct gwd *g, const unsigned char pub[32])
{
	for (int i = 0; i < g->n_peers; i++)
		if (!sodium_memcmp(g->peers[i].conf->public_key, pub, 32))
			return &g->peers[i];
	return NULL;
}

/* The responder read a HELLO: is its static key one of our peers? Keys are
 * immutable (no lock needed); the time goes in inbound_ms, which holds our
 * own dial to that peer back. Nothing is proven yet at this point, so that
 * is all it does, and only for INBOUND_WAIT_MS. */
static int knows(const unsigned char pub[32], void *arg)
{
	struct start *st = arg;

	st->claimed = peer_by_key(st->g, pub);
	if (st->claimed)
		__atomic_store_n(&st->claimed->inbound_ms, gwd_now_ms() | 1, __ATOMIC_RELAXED);
	return st->claimed != NULL;
}

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

/* Open a store transaction for this batch if there is none yet. */
static bool batch_txn(struct gwd *g, struct batch *b)
{
	if (!b->txn)
		b->txn = !gw_store_begin(&g->store);
	return b->txn;
}

/* End of a batch (lock held): its changes are committed before the data
 * plane is programmed and before the lock is released, i.e. before anyone
 * (data path, control socket, the next frame) can act on them. A failed
 * write rolls the whole batch back and marks the origin for a rewrite. */
static void batch_end(struct gwd *g, struct peer *p, struct batch *b)
{
	bool rewrite = p->store_dirty && !p->syncing;

	if (rewrite && batch_txn(g, b) &&
	    gw_store_replace_origin(&g->store, &g->routes, p->conf->name))
		b->failed = true;
	if (b->txn) {
		if (b->failed)
			gw_store_rollback(&g->store);
		if (b->failed || gw_store_commit(&g->store)) {
			gwd_log("peer %s: database write failed; its routes are rewritten later",
				p->conf->name);
			p->store_dirty = true;
		} else if (rewrite) {
			p->store_dirty = false;
		}
	}
	if (b->routes && !p->syncing)
		gwd_dp_sync_routes(g);
}

/* The origin's stored routes made those of the table, in a transaction of
 * its own (lock held). */
static void store_origin(struct gwd *g, struct peer *p)
{
	if (gw_store_begin(&g->store)) {
		p->store_dirty = true;
	} else if (gw_store_replace_origin(&g->store, &g->routes, p->conf->name)) {
		gw_store_rollback(&g->store);
		p->store_dirty = true;
	} else {
		p->store_dirty = gw_store_commit(&g->store) != 0;
	}
}

static int conn_send(struct conn *c, uint8_t type, const void *body, size_t len)
{
	int rc;

	pthread_mutex_lock(&c->send_lock);
	rc = gw_send(&c->s, type, body, len);
	__atomic_store_n(&c->last_tx_ms, gwd_now_ms(), __ATOMIC_RELAXED);
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

/* Handle one frame (lock held). Route changes go into the batch's
 * transaction; inside a full sync nothing is written per message, FULL_END
 * rewrites the origin's routes at once. Returns NULL or a protocol error. */
static const char *on_frame(struct gwd *g, struct peer *p, struct batch *bt, uint8_t type,
			    const uint8_t *b, long n)
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
		p->store_dirty = true; /* batch_end rewrites the origin, then the maps */
		bt->routes = true;
		gwd_log("peer %s: full sync done (%d stale routes removed)", p->conf->name, gone);
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
		if (r && !p->syncing) {
			if (!batch_txn(g, bt))
				p->store_dirty = true;
			else if (gw_store_put_route(&g->store, r))
				bt->failed = true;
		}
		bt->routes = true;
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

static void set_conn(struct gwd *g, struct peer *p, struct conn *c)
{
	pthread_mutex_lock(&g->conn_lock);
	p->conn = c;
	pthread_mutex_unlock(&g->conn_lock);
}

/* The new session c with p is authenticated and both INFOs are exchanged
 * (lock held). Two sessions with one peer can be up at once (each end
 * dialled, or a restarted peer's new one while its old one is not yet found
 * dead): the new one replaces the old one unless only the old one was
 * dialled by the lower-named gateway. Both ends apply the same rule, so
 * they keep the same session. Returns false if c is not wanted. */
static bool session_up(struct gwd *g, struct peer *p, struct conn *c, enum gw_role role)
{
	c->dialled_by_lower = (role == GW_INITIATOR) == p->dial_lower;
	if (role == GW_INITIATOR)
		p->dialing = false;
	if (p->conn && p->conn->dialled_by_lower && !c->dialled_by_lower) {
		gwd_log("peer %s: %s session dropped, the one dialled by %s is up", p->conf->name,
			role == GW_INITIATOR ? "dialled" : "accepted",
			p->dial_lower ? "us" : "the peer");
		return false;
	}
	if (p->conn) /* a newer session replaces the old one */
		shutdown(p->conn->s.fd, SHUT_RDWR);
	set_conn(g, p, c);
	p->state = PEER_UP;
	p->last_handshake_ms = gwd_now_ms();
	__atomic_store_n(&p->last_rx_ms, p->last_handshake_ms, __ATOMIC_RELAXED);
	p->backoff_ms = 0;
	p->unreachable_ms = 0;
	return true;
}

/* Frames until the session ends, err says why. Every frame that arrived
 * together is one batch: keepalives only update the peer's receive time
 * (atomics: nothing else needs the lock for them); the rest is applied
 * under one hold of the lock with one store transaction. */
static void session_run(struct gwd *g, struct peer *p, struct conn *c, uint8_t *buf, char *err,
			size_t errlen)
{
	struct frame fr[BATCH_FRAMES];
	bool first = true;

	for (;;) {
		const char *why = NULL;
		bool rx_failed = false;
		size_t used = 0;
		int nf = 0, ka = 0;
		uint8_t type;
		long n, next;

		errno = 0; /* EAGAIN after a failed read: the hold timer */
		n = gw_recv(&c->s, &type, buf, GW_FRAME_MAX, err, errlen);
		if (n < 0) {
			if ((errno == EAGAIN || errno == EWOULDBLOCK) && first)
				snprintf(err, errlen, "no frame %ums after the setup", SETUP_MS);
			else if (errno == EAGAIN || errno == EWOULDBLOCK)
				snprintf(err, errlen, "hold timer expired (%us)", g->conf.hold_s);
			return;
		}
		if (first)
			gw_set_timeouts(c->s.fd, g->conf.hold_s * 1000);
		first = false;
		for (;;) {
			if (type == GW_T_KEEPALIVE && !n) {
				ka++;
			} else {
				fr[nf++] = (struct frame){ type, (uint32_t)used, (uint32_t)n };
				used += (size_t)n;
			}
			if (nf == BATCH_FRAMES || (next = gw_recv_ready(&c->s)) < 0 ||
			    used + (size_t)next > BATCH_BYTES)
				break;
			n = gw_recv(&c->s, &type, buf + used, BATCH_BYTES - used, err, errlen);
			if (n < 0) {
				rx_failed = true; /* apply what came before it, then end */
				break;
			}
		}
		__atomic_store_n(&p->last_rx_ms, gwd_now_ms(), __ATOMIC_RELAXED);
		__atomic_add_fetch(&p->rx_frames, (uint64_t)(ka + nf), __ATOMIC_RELAXED);
		if (nf) {
			struct batch b = { 0 };

			pthread_mutex_lock(&g->lock);
			if (p->conn != c) {
				pthread_mutex_unlock(&g->lock);
				snprintf(err, errlen, "replaced by a newer session");
				return;
			}
			for (int i = 0; i < nf && !why; i++)
				why = on_frame(g, p, &b, fr[i].type, buf + fr[i].off, fr[i].len);
			batch_end(g, p, &b);
			pthread_mutex_unlock(&g->lock);
		}
		if (why) {
			snprintf(err, errlen, "protocol error: %s", why);
			return;
		}
		if (rx_failed)
			return;
	}
}

static void *session_main(void *arg)
{
	struct start st = *(struct start *)arg;
	struct gwd *g = st.g;
	struct gw_info_msg info = { 0 }, theirs;
	struct conn *c = calloc(1, sizeof(*c));
	uint8_t *buf = malloc(BATCH_BYTES), type;
	struct peer *p = st.p;
	const char *why = NULL;
	char err[128] = "";
	long n;

	free(arg);
	if (!c || !buf) {
		free(c);
		free(buf);
		close(st.fd);
		if (p) {
			pthread_mutex_lock(&g->lock);
			dial_failed(p, false);
			pthread_mutex_unlock(&g->lock);
		}
		return NULL;
	}
	pthread_mutex_init(&c->send_lock, NULL);
	gw_set_timeouts(st.fd, HANDSHAKE_MS);
	if (gw_handshake(&c->s, st.fd, st.role, g->conf.private_key,
			 p ? p->conf->public_key : NULL, knows, &st, err, sizeof(err))) {
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
	n = gw_recv(&c->s, &type, buf, GW_FRAME_MAX, err, sizeof(err));
	if (n <= 0 || type != GW_T_HELLO_INFO || gw_info_decode(buf, (size_t)n, &theirs, &why)) {
		snprintf(err, sizeof(err), "%s", why ? why : n < 0 ? err : "expected info");
		goto fail_peer;
	}
	if (strcmp(theirs.name, p->conf->name)) {
		snprintf(err, sizeof(err), "key of %s but calls itself %s", p->conf->name, theirs.name);
		goto fail_peer;
	}

	if (st.claimed) { /* the handshake is over: our dials may go again */
		__atomic_store_n(&st.claimed->inbound_ms, 0, __ATOMIC_RELAXED);
		st.claimed = NULL;
	}
	pthread_mutex_lock(&g->lock);
	if (!session_up(g, p, c, st.role)) {
		pthread_mutex_unlock(&g->lock);
		goto out;
	}
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

	/* The hold timer starts with the peer's first frame: before it, the
	 * peer may still be getting through its own end of the setup. */
	gw_set_timeouts(st.fd, g->conf.hold_s * 1000 > SETUP_MS ? g->conf.hold_s * 1000 : SETUP_MS);
	session_run(g, p, c, buf, err, sizeof(err));

	pthread_mutex_lock(&g->lock);
	if (p->conn == c) {
		int stale = rt_origin_down(&g->routes, p->conf->name, gwd_now_ms(),
					   (uint64_t)g->conf.grace_s * 1000);

		set_conn(g, p, NULL);
		p->state = PEER_IDLE;
		p->syncing = false; /* a sync cut short: the table keeps what came */
		/* the lower-named end redials at once, the other one later */
		gwd_dial_first(p);
		store_origin(g, p);
		gwd_log("peer %s: session down: %s; %d routes stale for %us", p->conf->name, err,
			stale, g->conf.grace_s);
	}
	pthread_mutex_unlock(&g->lock);
	goto out;

fail_peer:
	gwd_log("peer %s: session failed: %s", p->conf->name, err);
fail:
	if (st.role == GW_INITIATOR) {
		pthread_mutex_lock(&g->lock);
		dial_failed(st.p, false);
		pthread_mutex_unlock(&g->lock);
	}
out:
	if (st.claimed) /* the handshake is over, one way or the other */
		__atomic_store_n(&st.claimed->inbound_ms, 0, __ATOMIC_RELAXED);
	conn_end(c, st.fd);
	free(buf);
	return NULL;
}

/* Sessions run in detached threads with 1 MiB stacks; frame buffers are
 * on the heap. */
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
	struct start *st = arg;
	struct gwd *g = st->g;
	struct peer *p = st->p;
	int fd;

	if (dial_moot(g, p)) {
		free(st);
		return NULL;
	}
	fd = gw_connect(&p->conf->endpoint, 2000);
	if (fd >= 0 && dial_moot(g, p)) {
		close(fd);
		free(st);
		return NULL;
	}
	if (fd < 0) {
		bool refused = errno == ECONNREFUSED;

		pthread_mutex_lock(&g->lock);
		dial_failed(p, refused);
		pthread_mutex_unlock(&g->lock);
		free(st);
		return NULL;
	}
	st->fd = fd;
	return session_main(st);
}

void gwd_dial_first(struct peer *p)
{
	p->next_dial_ms = gwd_now_ms() +
			  (p->dial_lower ? 0 : FALLBACK_MS + randombytes_uniform(FALLBACK_MS / 2));
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
		struct start *st = calloc(1, sizeof(*st));

		if (st) {
			st->g = g;
			st->role = GW_INITIATOR;
			st->p = p;
			if (!start_thread(dialer, st))
				continue;
			free(st);
		}
		pthread_mutex_lock(&g->lock);
		dial_failed(p, false);
		pthread_mutex_unlock(&g->lock);
	}
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
	const struct timespec ts = { 0, (long)tick * 1000000 };

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
			pfd = (struct pollfd){ .fd = c->s.fd, .events = POLLOUT };
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
