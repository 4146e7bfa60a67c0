// SPDX-License-Identifier: BSD-2-Clause
/*
 * One peer session's thread: handshake, INFO both ways, our full table,
 * then frames until the hold timer or an error ends it. Which session stays
 * when two with one peer are up at once is decided the same way on both
 * ends (session_up): the one the lower-named gateway dialled.
 * Data-plane keys (DATAKEY) are per session and renewed every RekeyInterval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aead.h"
#include "gwd.h"
#include "msg.h"

/* Handshake and INFO must take less than HANDSHAKE_MS; the peer's first
 * frame after them (its FULL_BEGIN) may take SETUP_MS (or HoldTime if
 * longer): on a loaded machine the peer may wait for its lock to get there,
 * and it sends no keepalive before. */
#define HANDSHAKE_MS 5000
#define SETUP_MS     10000

/* A session thread reads every frame that arrived together (up to these
 * limits) and applies them under one hold of the lock, with one SQLite
 * transaction. The buffer is on the heap: threads have 1 MiB stacks. */
#define BATCH_FRAMES 64
#define BATCH_BYTES  (2 * GW_FRAME_MAX)

struct frame {
	uint8_t type;
	uint32_t off, len;
};

static struct peer *peer_by_key(struct gwd *g, const unsigned char pub[32])
{
	for (int i = 0; i < g->n_peers; i++)
		if (!sodium_memcmp(g->peers[i].conf->public_key, pub, 32))
			return &g->peers[i];
	return NULL;
}

/* The responder read a HELLO: is its static key one of our peers? Keys are
 * immutable (no lock needed). Nothing is proven by a HELLO (anyone can
 * name a public key), so it changes nothing else. */
static int knows(const unsigned char pub[32], void *arg)
{
	struct gwd_start *st = arg;

	return peer_by_key(st->g, pub) != NULL;
}

static int peer_idx(struct gwd *g, struct peer *p)
{
	return (int)(p - g->peers);
}

/* Announce (epoch, id) as our next sending key; used once the peer acks. */
static void announce_key(struct gwd *g, struct peer *p)
{
	struct gw_datakey_msg m = {.epoch = p->tx_epoch, .id = gwd_dp_next_id(g, peer_idx(g, p))};
	uint8_t b[GW_DATAKEY_LEN];

	if (!p->conn)
		return;
	/* a fresh pair per announce: an unanswered one's secret goes now */
	gw_rekey_pair(m.eph, p->tx_eph_sk);
	memcpy(p->tx_eph_pub, m.eph, sizeof(m.eph));
	p->tx_pending_id = m.id;
	p->tx_pending = true;
	p->next_rekey_ms = gwd_now_ms() + (uint64_t)g->conf.rekey_s * 1000;
	gwd_conn_send(p->conn, GW_T_DATAKEY, b, gw_datakey_encode(b, &m));
}

static const char *on_datakey(struct gwd *g, struct peer *p, const uint8_t *b, long n)
{
	struct gw_datakey_msg m;
	const char *why = NULL;
	uint8_t out[GW_DATAKEY_LEN];

	bool aead = p->cipher != 0;
	struct gw_dkey k;
	int bad;

	if (gw_datakey_decode(b, (size_t)n, &m, &why))
		return why;
	if (!(m.flags & GW_DATAKEY_ACK)) {
		unsigned char sk[32], pub[32];

		/* our half of this epoch's exchange, used once and wiped */
		gw_rekey_pair(pub, sk);
		bad = gw_rekey_derive(&p->conn->s, 0, m.epoch, sk, m.eph, pub, aead, &k);
		sodium_memzero(sk, sizeof(sk));
		if (bad)
			return "datakey: small-order ephemeral key";
		bad = gwd_dp_rx_key(g, peer_idx(g, p), &k, m.id);
		if (bad < 0)
			gwd_log(g, "peer %s: cannot install receive key %u: %s", p->conf->name,
				m.id, strerror(errno));
		else if (g->dp.on) { /* the other slot goes once the peer uses this one */
			p->rx_new_slot = bad;
			p->rx_used_ms = 0;
		}
		sodium_memzero(&k, sizeof(k));
		m.flags = GW_DATAKEY_ACK;
		memcpy(m.eph, pub, sizeof(m.eph));
		gwd_conn_send(p->conn, GW_T_DATAKEY, out, gw_datakey_encode(out, &m));
		return NULL;
	}
	if (!p->tx_pending || m.id != p->tx_pending_id || m.epoch != p->tx_epoch)
		return NULL; /* an ack overtaken by a newer announce */
	p->tx_pending = false;
	bad =
	    gw_rekey_derive(&p->conn->s, 1, m.epoch, p->tx_eph_sk, p->tx_eph_pub, m.eph, aead, &k);
	sodium_memzero(p->tx_eph_sk, sizeof(p->tx_eph_sk));
	if (bad)
		return "datakey: small-order ephemeral key";
	bad = gwd_dp_tx_key(g, peer_idx(g, p), &k, m.id, &p->tx_ctr_base);
	sodium_memzero(&k, sizeof(k));
	if (bad) {
		gwd_log(g, "peer %s: cannot install sending key %u: %s", p->conf->name, m.id,
			strerror(errno));
		return NULL;
	}
	p->last_rekey_ms = gwd_now_ms();
	p->tx_wipe_ms = p->last_rekey_ms + (uint64_t)g->conf.rekey_grace_s * 1000;
	if (g->dp.on)
		gwd_log(g, "peer %s: data key %u (epoch %u) in use", p->conf->name, m.id, m.epoch);
	return NULL;
}

/* Replaced keys leave the maps once their grace has passed: the sending key
 * RekeyGrace after the switch (a CPU that read the old slot index is long
 * done), the older receive key RekeyGrace after the peer's first packet with
 * the newer one (what it sent before has arrived by then). */
static void key_wipes(struct gwd *g, int i, uint64_t now)
{
	struct peer *p = &g->peers[i];
	uint64_t grace = (uint64_t)g->conf.rekey_grace_s * 1000, top;

	if (p->tx_wipe_ms && now >= p->tx_wipe_ms) {
		p->tx_wipe_ms = 0;
		if (gwd_dp_wipe_key(g, i, true, 0))
			gwd_log(g, "peer %s: cannot wipe the previous sending key: %s",
				p->conf->name, strerror(errno));
	}
	if (p->rx_new_slot < 0)
		return;
	if (!p->rx_used_ms && (top = gwd_dp_rx_top(g, i, p->rx_new_slot))) {
		p->rx_used_ms = now;
		if (gwd_dp_rx_limit(g, i, p->rx_new_slot, top))
			gwd_log(g, "peer %s: cannot set the receive key's message limit: %s",
				p->conf->name, strerror(errno));
	}
	if (p->rx_used_ms && now >= p->rx_used_ms + grace) {
		if (gwd_dp_wipe_key(g, i, false, p->rx_new_slot ^ 1))
			gwd_log(g, "peer %s: cannot wipe the previous receive key: %s",
				p->conf->name, strerror(errno));
		p->rx_new_slot = -1;
	}
}

void gwd_rekeys(struct gwd *g)
{
	uint64_t now = gwd_now_ms(), last;

	if (!g->dp.on)
		return;
	for (int i = 0; i < g->n_peers; i++) {
		struct peer *p = &g->peers[i];

		key_wipes(g, i, now);

		if (!p->conn)
			continue;
		if (now >= p->next_rekey_ms) {
			p->tx_epoch++;
			announce_key(g, p);
		} else if (gw_rekey_msgs_due(p->tx_pending, last = gwd_dp_tx_last(g, i),
					     p->tx_ctr_base, g->conf.rekey_msgs)) {
			gwd_log(g, "peer %s: %llu packets sent with data key %u: rekeying",
				p->conf->name, (unsigned long long)(last - p->tx_ctr_base),
				(unsigned)(uint8_t)(gwd_dp_next_id(g, i) - 1));
			p->tx_epoch++;
			announce_key(g, p);
		}
	}
}

/* One frame (lock held); NULL or a protocol error. */
static const char *on_frame(struct gwd *g, struct peer *p, struct batch *bt, uint8_t type,
			    const uint8_t *b, long n)
{
	switch (type) {
	case GW_T_KEEPALIVE:
		return n ? "keepalive with a body" : NULL;
	case GW_T_DATAKEY:
		return on_datakey(g, p, b, n);
	default:
		return gwd_sync_frame(g, p, bt, type, b, n);
	}
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
		gwd_log(g, "peer %s: %s session dropped, the one dialled by %s is up",
			p->conf->name, role == GW_INITIATOR ? "dialled" : "accepted",
			p->dial_lower ? "us" : "the peer");
		return false;
	}
	if (p->conn) /* a newer session replaces the old one */
		shutdown(p->conn->s.fd, SHUT_RDWR);
	gwd_set_conn(g, p, c);
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
				fr[nf++] = (struct frame){type, (uint32_t)used, (uint32_t)n};
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
			struct batch b = {0};

			pthread_mutex_lock(&g->lock);
			if (p->conn != c) {
				pthread_mutex_unlock(&g->lock);
				snprintf(err, errlen, "replaced by a newer session");
				return;
			}
			for (int i = 0; i < nf && !why; i++)
				why = on_frame(g, p, &b, fr[i].type, buf + fr[i].off, fr[i].len);
			gwd_sync_batch_end(g, p, &b);
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

/* Handshake and INFO both ways, within GWD_HANDSHAKE_MS in all; p is set
 * to the peer it proved to be. Returns 0, or -1 (logged). */
static int setup(struct gwd_start *st, struct conn *c, uint8_t *buf, struct peer **pp,
		 struct gw_info_msg *theirs, unsigned *cipher)
{
	bool refused = false;
	struct gwd *g = st->g;
	struct gw_info_msg info = {0};
	const char *why = NULL;
	struct peer *p = st->p;
	char err[128] = "";
	bool shaken;
	uint8_t type;
	long n;

	/* per read too: the deadline's watchdog ticks only every 200 ms */
	gw_set_timeouts(st->fd, GWD_HANDSHAKE_MS);
	shaken = !gw_handshake(&c->s, st->fd, st->role, g->conf.private_key,
			       p ? p->conf->public_key : NULL, knows, st, err, sizeof(err));
	if (shaken && !p) {
		p = peer_by_key(g, c->s.peer_static);
		/* authenticated: our own dial to it waits while this one
		 * gets through its INFO (INBOUND_WAIT_MS at most) */
		st->claimed = p;
		__atomic_store_n(&p->inbound_ms, gwd_now_ms() | 1, __ATOMIC_RELAXED);
	}
	*pp = p;
	if (!shaken)
		goto fail;
	snprintf(info.name, sizeof(info.name), "%s", g->conf.name);
	snprintf(info.cluster, sizeof(info.cluster), "%s", g->conf.cluster);
	info.public_ip_be = g->conf.public_addr.sin_addr.s_addr;
	info.public_port_be = g->conf.public_addr.sin_port;
	info.mode = (uint8_t)p->conf->mode;
	info.ciphers = (uint8_t)(p->conf->ciphers & xgt_ciphers_local());
	n = (long)gw_info_encode(buf, &info);
	if (gwd_conn_send(c, GW_T_HELLO_INFO, buf, (size_t)n)) {
		snprintf(err, sizeof(err), "sending info failed");
		goto fail;
	}
	n = gw_recv(&c->s, &type, buf, GW_FRAME_MAX, err, sizeof(err));
	if (n <= 0 || type != GW_T_HELLO_INFO || gw_info_decode(buf, (size_t)n, theirs, &why)) {
		if (why || n >= 0) /* else err says why already (not copied onto itself) */
			snprintf(err, sizeof(err), "%s", why ? why : "expected info");
		else if (errno == EAGAIN)
			snprintf(err, sizeof(err), "no info from the peer in time");
		goto fail;
	}
	if (strcmp(theirs->name, p->conf->name)) {
		snprintf(err, sizeof(err), "key of %s but calls itself %s", p->conf->name,
			 theirs->name);
		goto fail;
	}
	/* Refused, not failed: the peer is who it says, but the two
	 * configurations cannot make a tunnel. Nothing of ours is sent. */
	if (gw_info_agree(&info, theirs, cipher, err, sizeof(err))) {
		refused = true;
		goto fail;
	}
	if (info.mode == GW_MODE_ENCRYPT && !gwd_dp_can_encrypt(g)) {
		/* never fall back to sending the peer's traffic in clear */
		snprintf(
		    err, sizeof(err),
		    "Mode encrypt needs the crypto workers: no xgate-cryptd for instance %.32s",
		    g->conf.instance);
		refused = true;
		goto fail;
	}
	gw_hs_end(&g->hs, st->hs_slot);
	st->hs_slot = -1;
	return 0;
fail:
	if (gw_hs_end(&g->hs, st->hs_slot)) /* the deadline cut it: that is the reason */
		snprintf(err, sizeof(err), "not done within %ums", GWD_HANDSHAKE_MS);
	st->hs_slot = -1;
	if (refused)
		gwd_log(g, "peer %s: session refused: %s", p->conf->name, err);
	else if (shaken)
		gwd_log(g, "peer %s: session failed: %s", p->conf->name, err);
	else
		gwd_log(g, "%s%s: handshake failed: %s", p ? "peer " : "connection from ",
			p ? p->conf->name : st->addr, err);
	return -1;
}

enum gwd_outcome gwd_session(struct gwd_start *st)
{
	struct gwd *g = st->g;
	struct gw_info_msg theirs;
	struct conn *c = calloc(1, sizeof(*c));
	uint8_t *buf = malloc(BATCH_BYTES);
	enum gwd_outcome out = GWD_FAILED;
	struct peer *p = NULL;
	char err[128] = "";
	unsigned cipher = 0;

	if (!c || !buf) {
		free(c);
		free(buf);
		gw_hs_end(&g->hs, st->hs_slot);
		close(st->fd);
		return GWD_FAILED;
	}
	pthread_mutex_init(&c->send_lock, NULL);
	if (setup(st, c, buf, &p, &theirs, &cipher))
		goto out;
	st->p = p;
	if (st->claimed) { /* the handshake is over: our dials may go again */
		__atomic_store_n(&st->claimed->inbound_ms, 0, __ATOMIC_RELAXED);
		st->claimed = NULL;
	}
	pthread_mutex_lock(&g->lock);
	if (!session_up(g, p, c, st->role)) {
		pthread_mutex_unlock(&g->lock);
		out = GWD_UNWANTED;
		goto out;
	}
	p->public_ip_be = theirs.public_ip_be;
	p->public_port_be = theirs.public_port_be;
	p->cipher = cipher;
	p->peer_ciphers = theirs.ciphers;
	gwd_log(g, "peer %s: session up (%s, cluster %s, mode %s%s%s)", p->conf->name,
		st->role == GW_INITIATOR ? "dialled" : "accepted", theirs.cluster,
		p->conf->mode == GW_MODE_ENCRYPT ? "encrypt" : "auth", cipher ? ", " : "",
		cipher ? xgt_cipher_name(cipher) : "");
	p->syncing = false;
	gwd_dp_peer_addr(g, peer_idx(g, p));
	p->tx_epoch = 0; /* keys are per session: a new one starts at epoch 0 */
	if (g->dp.on)
		announce_key(g, p);
	gwd_sync_send_full(g, c);
	pthread_mutex_unlock(&g->lock);

	/* The hold timer starts with the peer's first frame: before it, the
	 * peer may still be getting through its own end of the setup. */
	gw_set_timeouts(st->fd,
			g->conf.hold_s * 1000 > SETUP_MS ? g->conf.hold_s * 1000 : SETUP_MS);
	session_run(g, p, c, buf, err, sizeof(err));

	pthread_mutex_lock(&g->lock);
	if (p->conn == c) {
		int stale;

		gwd_set_conn(g, p, NULL);
		p->state = PEER_IDLE;
		p->tx_pending = false;
		sodium_memzero(p->tx_eph_sk, sizeof(p->tx_eph_sk));
		/* not dialled until the caller says when (gwd_dial_first) */
		p->next_dial_ms = UINT64_MAX;
		stale = gwd_sync_peer_down(g, p);
		gwd_log(g, "peer %s: session down: %s; %d routes stale for %us", p->conf->name, err,
			stale, g->conf.grace_s);
		out = GWD_ENDED;
	} else {
		out = GWD_UNWANTED;
	}
	pthread_mutex_unlock(&g->lock);
out:
	if (st->claimed) /* the handshake is over, one way or the other */
		__atomic_store_n(&st->claimed->inbound_ms, 0, __ATOMIC_RELAXED);
	gwd_conn_end(c, st->fd);
	free(buf);
	return out;
}
