// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd sessions over socketpairs: mutual authentication, forward-secret
 * keys, encrypted frames, and refusal of strangers, forgeries and garbage. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit.h"
#include "session.h"

static unsigned char sk_a[32], pk_a[32], sk_b[32], pk_b[32], sk_x[32], pk_x[32];

struct side {
	int fd, rc;
	const unsigned char *sk, *expect;
	struct gw_session s;
	char err[128];
};

static int knows_a(const unsigned char pub[32], void *arg)
{
	(void)arg;
	return !memcmp(pub, pk_a, 32);
}

static void *responder(void *p)
{
	struct side *r = p;

	r->rc = gw_handshake(&r->s, r->fd, GW_RESPONDER, r->sk, NULL, knows_a, NULL, r->err,
			     sizeof(r->err));
	if (r->rc)
		close(r->fd); /* a refused peer gets nothing but the close */
	return NULL;
}

static int pair(struct side *i, struct side *r)
{
	int sv[2];
	pthread_t t;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	i->fd = sv[0];
	r->fd = sv[1];
	pthread_create(&t, NULL, responder, r);
	i->rc = gw_handshake(&i->s, i->fd, GW_INITIATOR, i->sk, i->expect, NULL, NULL, i->err,
			     sizeof(i->err));
	if (i->rc)
		close(i->fd);
	pthread_join(t, NULL);
	return 0;
}

/* DATAKEY's exchange (proto/gatewayd.md): the announcer (a, sending) and
 * the acker (b, receiving) reach the same key from their own ephemeral
 * secrets; directions, epochs, fresh ephemerals and modes give different
 * keys; the master alone does not give it; a small-order key is refused. */
static void rekey_checks(struct gw_session *a, struct gw_session *b)
{
	unsigned char es[32], ss[32], er[32], sr[32], er2[32], sr2[32], zero[32] = {0};
	struct gw_dkey ka, kb, kx;
	int ra, rb;

	gw_rekey_pair(es, ss);
	gw_rekey_pair(er, sr);
	ra = gw_rekey_derive(a, 1, 7, ss, es, er, false, &ka);
	rb = gw_rekey_derive(b, 0, 7, sr, es, er, false, &kb);
	CHECK(ra == 0 && rb == 0 && ka.len == 16 && !memcmp(ka.k, kb.k, 16),
	      "auth-mode key of epoch 7: both ends agree (16 bytes)");
	gw_rekey_derive(a, 1, 7, ss, es, er, true, &ka);
	gw_rekey_derive(b, 0, 7, sr, es, er, true, &kb);
	CHECK(ka.len == 32 && !memcmp(ka.k, kb.k, 32) && !memcmp(ka.salt, kb.salt, 4),
	      "encrypt-mode key and salt of epoch 7: both ends agree");
	gw_rekey_derive(a, 1, 7, ss, es, er, false, &kx);
	CHECK(memcmp(ka.k, kx.k, 16), "auth and encrypt keys differ");
	gw_rekey_derive(b, 1, 7, sr, es, er, true, &kx);
	CHECK(memcmp(ka.k, kx.k, 32), "the two directions have different keys");
	gw_rekey_derive(a, 1, 8, ss, es, er, true, &kx);
	CHECK(memcmp(ka.k, kx.k, 32), "the next epoch has a different key");
	gw_rekey_pair(er2, sr2);
	gw_rekey_derive(a, 1, 7, ss, es, er2, true, &kx);
	CHECK(memcmp(ka.k, kx.k, 32), "another acker ephemeral: another key (same master, epoch)");
	/* whoever holds only the master and the public keys: the derivation
	 * with a secret that is not one of the two ephemerals differs */
	gw_rekey_derive(a, 1, 7, sr2, es, er, true, &kx);
	CHECK(memcmp(ka.k, kx.k, 32), "without an ephemeral secret the key is not reached");
	zero[0] = 1; /* order 1 point u = 1: the X25519 result is all zero */
	CHECK(gw_rekey_derive(a, 1, 7, ss, es, zero, true, &kx) < 0,
	      "a small-order ephemeral key is refused");
}

/* RekeyAfterMessages: a new sending key once the peer's reserved counter
 * is the limit above where the current key took over, once per announce. */
static void rekey_msgs_checks(void)
{
	uint64_t base = 5000, lim = 1000;

	CHECK(!gw_rekey_msgs_due(false, base + lim - 1, base, lim), "limit - 1 counters: not due");
	CHECK(gw_rekey_msgs_due(false, base + lim, base, lim), "limit counters: due");
	CHECK(gw_rekey_msgs_due(false, base + 10 * lim, base, lim), "past it: due");
	CHECK(!gw_rekey_msgs_due(true, base + 10 * lim, base, lim),
	      "not again while the announce waits for its ack");
	CHECK(!gw_rekey_msgs_due(false, base - 1, base, lim),
	      "counter below the base (its map re-created): not due");
	CHECK(gw_rekey_msgs_due(false, UINT64_MAX, 0, 1ULL << 60), "WireGuard's 2^60 is reached");
	CHECK(!gw_rekey_msgs_due(false, (1ULL << 52) - 1, 0, 1ULL << 60),
	      "and not before: the 52-bit counters end first (proto/xgtun.md)");
}

int main(void)
{
	struct side i = {.sk = sk_a, .expect = pk_b}, r = {.sk = sk_b};
	unsigned char buf[GW_FRAME_MAX], m1[32];
	uint8_t type;
	long n;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (sodium_init() < 0)
		return 1;
	crypto_box_keypair(pk_a, sk_a);
	crypto_box_keypair(pk_b, sk_b);
	crypto_box_keypair(pk_x, sk_x);

	/* 1. known peers authenticate each other */
	pair(&i, &r);
	CHECK(i.rc == 0 && r.rc == 0, "handshake between configured peers (%s%s)", i.err, r.err);
	CHECK(!memcmp(i.s.master, r.s.master, 32), "both sides derive the same master secret");
	CHECK(!memcmp(r.s.peer_static, pk_a, 32), "responder learned the initiator's key");
	gw_send(&i.s, 3, "announce 100 10.1.0.0/16", 24);
	n = gw_recv(&r.s, &type, buf, sizeof(buf), r.err, sizeof(r.err));
	CHECK(n == 24 && type == 3 && !memcmp(buf, "announce 100 10.1.0.0/16", 24), "frame i->r");
	memset(buf, 0x5a, 60000);
	gw_send(&r.s, 4, buf, 60000);
	memset(buf, 0, 60000);
	n = gw_recv(&i.s, &type, buf, sizeof(buf), i.err, sizeof(i.err));
	CHECK(n == 60000 && type == 4 && buf[59999] == 0x5a, "60 kB frame r->i");
	rekey_checks(&i.s, &r.s);
	rekey_msgs_checks();
	memcpy(m1, i.s.master, 32);

	/* 2. tampering with a frame on the wire is detected */
	{
		unsigned char raw[64];
		ssize_t got;

		gw_send(&i.s, 3, "hello", 5);
		got = read(r.fd, raw, sizeof(raw));
		if (got < 4 + 1 + 17) {
			printf("not ok - read %zd bytes of the frame\n", got);
			return 1;
		}
		raw[got - 1] ^= 1;
		int sv[2];

		socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		if (write(sv[0], raw, (size_t)got) != got)
			return 1;
		int keep = r.s.fd;

		r.s.fd = sv[1];
		n = gw_recv(&r.s, &type, buf, sizeof(buf), r.err, sizeof(r.err));
		CHECK(n < 0 && strstr(r.err, "failed authentication"), "flipped bit refused (%s)",
		      r.err);
		/* an absurd length is refused before reading it */
		const unsigned char big[4] = {0x7f, 0xff, 0xff, 0xff};

		if (write(sv[0], big, 4) != 4)
			return 1;
		n = gw_recv(&r.s, &type, buf, sizeof(buf), r.err, sizeof(r.err));
		CHECK(n < 0 && strstr(r.err, "malformed frame"), "oversized length refused (%s)",
		      r.err);
		close(sv[0]);
		close(sv[1]);
		r.s.fd = keep;
	}
	close(i.fd);
	close(r.fd);

	/* 3. a fresh session has fresh keys (ephemeral keys: forward secrecy) */
	pair(&i, &r);
	CHECK(i.rc == 0 && r.rc == 0 && memcmp(m1, i.s.master, 32), "new session, new master");
	close(i.fd);
	close(r.fd);

	/* 4. a stranger (key not configured) is refused and learns nothing */
	struct side x = {.sk = sk_x, .expect = pk_b}, r2 = {.sk = sk_b};

	pair(&x, &r2);
	CHECK(x.rc != 0 && r2.rc != 0 && strstr(r2.err, "unknown public key"),
	      "stranger refused (%s / %s)", r2.err, x.err);
	CHECK(strstr(x.err, "closed during the handshake") != NULL,
	      "stranger got no hello back (%s)", x.err);

	/* 5. the initiator refuses a responder with the wrong key */
	struct side i3 = {.sk = sk_a, .expect = pk_x}, r3 = {.sk = sk_b};

	pair(&i3, &r3);
	CHECK(i3.rc != 0 && strstr(i3.err, "different public key"),
	      "impostor responder refused (%s)", i3.err);

	/* 6. garbage on the socket */
	{
		int sv[2];
		struct side g = {.sk = sk_b};
		pthread_t t;
		char junk[200];

		socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		g.fd = sv[1];
		memset(junk, 'G', sizeof(junk));
		pthread_create(&t, NULL, responder, &g);
		if (write(sv[0], junk, sizeof(junk)) < 0)
			return 1;
		pthread_join(t, NULL);
		CHECK(g.rc != 0 && strstr(g.err, "bad magic"), "garbage refused (%s)", g.err);
		close(sv[0]);
	}
	/* 7. a replayed initiator hello cannot complete without its ephemeral key */
	{
		int sv[2];
		struct side g = {.sk = sk_b};
		pthread_t t;
		unsigned char hello[GW_HELLO_LEN], e_pub[32], e_sk[32];

		crypto_box_keypair(e_pub, e_sk);
		memcpy(hello, "XGW1\x01\x00\x00\x00", 8);
		memcpy(hello + 8, pk_a, 32); /* claims to be A without A's private key */
		memcpy(hello + 40, e_pub, 32);
		socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		g.fd = sv[1];
		pthread_create(&t, NULL, responder, &g);
		if (write(sv[0], hello, sizeof(hello)) < 0)
			return 1;
		unsigned char junk[24 + 4 + 49];

		randombytes_buf(junk, sizeof(junk));
		junk[24] = 0;
		junk[25] = 0;
		junk[26] = 0;
		junk[27] = 49;
		if (write(sv[0], junk, sizeof(junk)) < 0)
			return 1;
		pthread_join(t, NULL);
		CHECK(g.rc != 0, "impersonation without the private key fails (%s)", g.err);
		close(sv[0]);
	}
	/* a silent peer: the socket timeout is reported as one, not as a close */
	{
		struct side t = {.sk = sk_b};
		int sv[2];

		socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		gw_set_timeouts(sv[1], 100);
		t.rc = gw_handshake(&t.s, sv[1], GW_RESPONDER, t.sk, NULL, knows_a, NULL, t.err,
				    sizeof(t.err));
		CHECK(t.rc && strstr(t.err, "timed out waiting for the peer's hello"),
		      "silent peer: '%s'", t.err);
		shutdown(sv[0], SHUT_WR);
		t.rc = gw_handshake(&t.s, sv[1], GW_RESPONDER, t.sk, NULL, knows_a, NULL, t.err,
				    sizeof(t.err));
		CHECK(t.rc && strstr(t.err, "connection closed"), "closed peer: '%s'", t.err);
		close(sv[0]);
		close(sv[1]);
	}

	return unit_summary();
}
