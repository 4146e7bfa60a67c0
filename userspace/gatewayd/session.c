// SPDX-License-Identifier: BSD-2-Clause
/*
 * Peer sessions: X25519 static + ephemeral handshake (four DH terms,
 * BLAKE2b key schedule), then libsodium secretstream both ways. Built
 * only from libsodium primitives; see proto/gatewayd.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msg.h"
#include "session.h"

#define MAGIC	"XGW1"
#define VERSION 1

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		/* a peer that hung up must not kill the daemon with SIGPIPE */
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 1 read, 0 EOF before anything, -1 error or short read */
static int read_all(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = 0; /* closed, not timed out */
			return got ? -1 : 0;
		}
		got += (size_t)n;
	}
	return 1;
}

/* Why a handshake read (read_all's r) failed: a socket timeout (EAGAIN)
 * is not a closed connection. */
static int read_fail(char *err, size_t len, int r, const char *what)
{
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return fail(err, len, "timed out waiting for the peer's %s", what);
	if (r < 0 && errno)
		return fail(err, len, "reading the peer's %s: %s", what, strerror(errno));
	return fail(err, len, "connection closed during the handshake (before the peer's %s)",
		    what);
}

int gw_connect(const struct sockaddr_in *sa, unsigned ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd pfd = {.events = POLLOUT};
	int soerr = 0, rc;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) && errno != EINPROGRESS)
		goto bad;
	pfd.fd = fd;
	rc = poll(&pfd, 1, (int)ms);
	if (rc != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
		errno = rc == 0 ? ETIMEDOUT : soerr ? soerr : errno;
		goto bad;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
bad:
	rc = errno;
	close(fd);
	errno = rc;
	return -1;
}

void gw_set_timeouts(int fd, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* read_all through the session's read-ahead buffer (after the handshake):
 * the buffer is refilled with whatever one read() returns. */
static int read_buffered(struct gw_session *s, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t got = 0;

	while (got < len) {
		size_t take = s->rlen - s->roff;
		ssize_t n;

		if (take) {
			take = take < len - got ? take : len - got;
			memcpy(p + got, s->rbuf + s->roff, take);
			s->roff += take;
			got += take;
			continue;
		}
		if (len - got >= sizeof(s->rbuf)) /* big: straight into place */
			return read_all(s->fd, p + got, len - got) == 1 ? 1 : -1;
		n = read(s->fd, s->rbuf, sizeof(s->rbuf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = 0; /* closed, not timed out */
			return got ? -1 : 0;
		}
		s->roff = 0;
		s->rlen = (size_t)n;
	}
	return 1;
}

static void hello_build(unsigned char h[GW_HELLO_LEN], enum gw_role role,
			const unsigned char s_pub[32], const unsigned char e_pub[32])
{
	memcpy(h, MAGIC, 4);
	h[4] = VERSION;
	h[5] = (unsigned char)role;
	h[6] = h[7] = 0;
	memcpy(h + 8, s_pub, 32);
	memcpy(h + 40, e_pub, 32);
}

static int hello_check(const unsigned char h[GW_HELLO_LEN], enum gw_role want, char *err,
		       size_t len)
{
	if (memcmp(h, MAGIC, 4))
		return fail(err, len, "not an xgate gateway (bad magic)");
	if (h[4] != VERSION)
		return fail(err, len, "unsupported protocol version %u", h[4]);
	if (h[5] != want || h[6] || h[7])
		return fail(err, len, "malformed hello");
	return 0;
}

static int dh(unsigned char out[32], const unsigned char sk[32], const unsigned char pk[32])
{
	return crypto_scalarmult(out, sk, pk); /* -1 on an all-zero (small-order) result */
}

int gw_handshake(struct gw_session *s, int fd, enum gw_role role, const unsigned char my_sk[32],
		 const unsigned char *expected_peer, gw_peer_lookup lookup, void *arg, char *err,
		 size_t errlen)
{
	unsigned char s_pub[32], e_sk[32], e_pub[32], mine[GW_HELLO_LEN], theirs[GW_HELLO_LEN];
	unsigned char ikm[128], hdr[crypto_secretstream_xchacha20poly1305_HEADERBYTES];
	unsigned char k_i2r[32], k_r2i[32], got[64];
	const unsigned char *hi, *hr, *pe;
	crypto_generichash_state st;
	uint8_t type;
	long n;
	int rc = -1, r;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->role = role;
	crypto_scalarmult_base(s_pub, my_sk);
	randombytes_buf(e_sk, sizeof(e_sk));
	crypto_scalarmult_base(e_pub, e_sk);
	hello_build(mine, role, s_pub, e_pub);

	if (role == GW_INITIATOR && write_all(fd, mine, sizeof(mine))) {
		fail(err, errlen, "sending hello: %s", strerror(errno));
		goto out;
	}
	if ((r = read_all(fd, theirs, sizeof(theirs))) != 1) {
		read_fail(err, errlen, r, "hello");
		goto out;
	}
	if (hello_check(theirs, role == GW_INITIATOR ? GW_RESPONDER : GW_INITIATOR, err, errlen))
		goto out;
	memcpy(s->peer_static, theirs + 8, 32);
	pe = theirs + 40;
	if (role == GW_INITIATOR) {
		if (sodium_memcmp(s->peer_static, expected_peer, 32)) {
			fail(err, errlen, "peer answered with a different public key");
			goto out;
		}
	} else {
		if (!lookup || !lookup(s->peer_static, arg)) {
			fail(err, errlen, "unknown public key");
			goto out;
		}
		if (write_all(fd, mine, sizeof(mine))) {
			fail(err, errlen, "sending hello: %s", strerror(errno));
			goto out;
		}
	}

	/* ee | es | se | ss, always in initiator/responder order */
	if (role == GW_INITIATOR) {
		rc = dh(ikm, e_sk, pe) | dh(ikm + 32, e_sk, s->peer_static) |
		     dh(ikm + 64, my_sk, pe) | dh(ikm + 96, my_sk, s->peer_static);
		hi = mine;
		hr = theirs;
	} else {
		rc = dh(ikm, e_sk, pe) | dh(ikm + 32, my_sk, pe) |
		     dh(ikm + 64, e_sk, s->peer_static) | dh(ikm + 96, my_sk, s->peer_static);
		hi = theirs;
		hr = mine;
	}
	if (rc) {
		fail(err, errlen, "weak public key");
		rc = -1;
		goto out;
	}
	rc = -1;
	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, hi, GW_HELLO_LEN);
	crypto_generichash_update(&st, hr, GW_HELLO_LEN);
	crypto_generichash_final(&st, s->hash, 32);
	crypto_generichash(s->master, 32, ikm, sizeof(ikm), s->hash, 32);
	crypto_kdf_derive_from_key(k_i2r, 32, 1, "xgw-sess", s->master);
	crypto_kdf_derive_from_key(k_r2i, 32, 2, "xgw-sess", s->master);

	crypto_secretstream_xchacha20poly1305_init_push(&s->tx, hdr,
							role == GW_INITIATOR ? k_i2r : k_r2i);
	if (write_all(fd, hdr, sizeof(hdr)) || gw_send(s, GW_T_AUTH, s->hash, 32)) {
		fail(err, errlen, "sending auth: %s", strerror(errno));
		goto out;
	}
	if ((r = read_all(fd, hdr, sizeof(hdr))) != 1) {
		read_fail(err, errlen, r, "stream header");
		goto out;
	}
	if (crypto_secretstream_xchacha20poly1305_init_pull(&s->rx, hdr,
							    role == GW_INITIATOR ? k_r2i : k_i2r)) {
		fail(err, errlen, "bad stream header");
		goto out;
	}
	n = gw_recv(s, &type, got, sizeof(got), err, errlen);
	if (n < 0)
		goto out;
	if (n != 32 || type != GW_T_AUTH || sodium_memcmp(got, s->hash, 32)) {
		fail(err, errlen, "authentication failed");
		goto out;
	}
	rc = 0;
out:
	sodium_memzero(e_sk, sizeof(e_sk));
	sodium_memzero(ikm, sizeof(ikm));
	sodium_memzero(k_i2r, sizeof(k_i2r));
	sodium_memzero(k_r2i, sizeof(k_r2i));
	if (rc)
		gw_session_wipe(s);
	return rc;
}

/* Buffers come from the heap per frame: sessions run in threads with small
 * stacks, and this is the control plane, not a hot path. */
int gw_send(struct gw_session *s, uint8_t type, const void *body, size_t len)
{
	unsigned char *plain, *frame;
	unsigned long long clen;
	int rc;

	if (len > GW_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	plain = malloc(len + 1);
	frame = malloc(4 + len + 1 + crypto_secretstream_xchacha20poly1305_ABYTES);
	if (!plain || !frame) {
		free(plain);
		free(frame);
		errno = ENOMEM;
		return -1;
	}
	plain[0] = type;
	if (len)
		memcpy(plain + 1, body, len);
	crypto_secretstream_xchacha20poly1305_push(&s->tx, frame + 4, &clen, plain, len + 1, NULL,
						   0, 0);
	sodium_memzero(plain, len + 1);
	frame[0] = (unsigned char)(clen >> 24);
	frame[1] = (unsigned char)(clen >> 16);
	frame[2] = (unsigned char)(clen >> 8);
	frame[3] = (unsigned char)clen;
	rc = write_all(s->fd, frame, 4 + (size_t)clen);
	free(plain);
	free(frame);
	return rc;
}

long gw_recv(struct gw_session *s, uint8_t *type, void *buf, size_t cap, char *err, size_t errlen)
{
	unsigned char lenb[4], tag, *cipher, *plain;
	unsigned long long plen;
	uint32_t clen;
	long rc;
	int r = read_buffered(s, lenb, 4);

	if (r == 0)
		return fail(err, errlen, "closed by peer");
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return fail(err, errlen, "timed out");
	if (r < 0)
		return fail(err, errlen, "connection lost");
	clen = (uint32_t)lenb[0] << 24 | (uint32_t)lenb[1] << 16 | (uint32_t)lenb[2] << 8 | lenb[3];
	if (clen < 1 + crypto_secretstream_xchacha20poly1305_ABYTES ||
	    clen > GW_FRAME_MAX + 1 + crypto_secretstream_xchacha20poly1305_ABYTES)
		return fail(err, errlen, "malformed frame: length %u", clen);
	cipher = malloc(clen);
	plain = malloc(clen);
	if (!cipher || !plain)
		rc = fail(err, errlen, "out of memory");
	else if (read_buffered(s, cipher, clen) != 1)
		rc = fail(err, errlen, "connection lost mid-frame");
	else if (crypto_secretstream_xchacha20poly1305_pull(&s->rx, plain, &plen, &tag, cipher,
							    clen, NULL, 0))
		rc = fail(err, errlen, "frame failed authentication");
	else if (plen - 1 > cap)
		rc = fail(err, errlen, "frame too large");
	else {
		*type = plain[0];
		memcpy(buf, plain + 1, plen - 1);
		sodium_memzero(plain, plen);
		rc = (long)(plen - 1);
	}
	free(cipher);
	free(plain);
	return rc;
}

long gw_recv_ready(struct gw_session *s)
{
	const size_t over = 1 + crypto_secretstream_xchacha20poly1305_ABYTES;
	const unsigned char *b = s->rbuf + s->roff;
	size_t have = s->rlen - s->roff;
	uint32_t clen;

	if (have < 4)
		return -1;
	clen = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	if (clen < over || clen > GW_FRAME_MAX + over)
		return 0;
	return have >= 4 + (size_t)clen ? (long)(clen - over) : -1;
}

bool gw_rekey_msgs_due(bool pending, uint64_t last, uint64_t base, uint64_t limit)
{
	/* last below base: the counter map was re-created; the next switch
	 * takes a new base */
	return !pending && last >= base && last - base >= limit;
}

void gw_rekey_pair(unsigned char pub[32], unsigned char sk[32])
{
	randombytes_buf(sk, 32);
	crypto_scalarmult_base(pub, sk);
}

int gw_rekey_derive(const struct gw_session *s, int to_peer, uint32_t epoch,
		    const unsigned char my_sk[32], const unsigned char e_s[32],
		    const unsigned char e_r[32], bool aead, struct gw_dkey *out)
{
	/* d = 0: the initiator's sending direction */
	int i2r = (s->role == GW_INITIATOR) == (to_peer != 0);
	const unsigned char *theirs;
	unsigned char dh[32], seed[32], pre[11] = "xgw-rk", salt[16];
	crypto_generichash_state h;
	unsigned char mine[32];

	/* ours is whichever of the two public keys my_sk makes */
	crypto_scalarmult_base(mine, my_sk);
	theirs = sodium_memcmp(mine, e_s, 32) ? e_s : e_r;
	sodium_memzero(mine, sizeof(mine));
	if (crypto_scalarmult(dh, my_sk, theirs)) /* all zero: a small-order key */
		return -1;
	pre[6] = i2r ? 0 : 1;
	pre[7] = (unsigned char)(epoch >> 24);
	pre[8] = (unsigned char)(epoch >> 16);
	pre[9] = (unsigned char)(epoch >> 8);
	pre[10] = (unsigned char)epoch;
	crypto_generichash_init(&h, s->master, sizeof(s->master), sizeof(seed));
	crypto_generichash_update(&h, pre, sizeof(pre));
	crypto_generichash_update(&h, e_s, 32);
	crypto_generichash_update(&h, e_r, 32);
	crypto_generichash_update(&h, dh, sizeof(dh));
	crypto_generichash_final(&h, seed, sizeof(seed));
	sodium_memzero(dh, sizeof(dh));
	sodium_memzero(&h, sizeof(h));
	memset(out, 0, sizeof(*out));
	if (aead) {
		out->len = 32;
		crypto_kdf_derive_from_key(out->k, 32, 1, "xgw-aead", seed);
		crypto_kdf_derive_from_key(salt, sizeof(salt), 2, "xgw-salt", seed);
		memcpy(out->salt, salt, sizeof(out->salt));
		sodium_memzero(salt, sizeof(salt));
	} else {
		out->len = 16;
		crypto_kdf_derive_from_key(out->k, 16, 1, "xgw-data", seed);
	}
	sodium_memzero(seed, sizeof(seed));
	return 0;
}

void gw_session_wipe(struct gw_session *s)
{
	sodium_memzero(s, sizeof(*s));
	s->fd = -1;
}
