/* SPDX-License-Identifier: BSD-2-Clause */
/* gatewayd peer sessions: the handshake and encrypted framing of
 * proto/gatewayd.md, over a connected stream socket. */
#ifndef GWD_SESSION_H
#define GWD_SESSION_H

#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_HELLO_LEN 72
#define GW_FRAME_MAX 65536

enum gw_role { GW_INITIATOR = 0, GW_RESPONDER = 1 };

struct gw_session {
	int fd;
	enum gw_role role;
	unsigned char peer_static[32];
	unsigned char hash[32];	  /* transcript h */
	unsigned char master[32]; /* session master secret (data-plane keys derive from it) */
	crypto_secretstream_xchacha20poly1305_state tx, rx;
	/* frames read ahead: one read() takes every frame that has arrived */
	unsigned char rbuf[16384];
	size_t roff, rlen;
};

struct sockaddr_in;
/* A connected blocking TCP socket within ms, or -1 with errno
 * (ECONNREFUSED: nothing listens there; ETIMEDOUT). */
int gw_connect(const struct sockaddr_in *sa, unsigned ms);
/* Receive and send timeouts of a session socket (EAGAIN once they pass). */
void gw_set_timeouts(int fd, unsigned ms);

/* Callback for the responder: is this static key a configured peer? */
typedef int (*gw_peer_lookup)(const unsigned char pub[32], void *arg);

/* Run the handshake on a connected blocking fd (caller sets timeouts).
 * Initiator: expected_peer is the key it dialled. Responder: lookup decides.
 * Returns 0, or -1 with a reason in err (nothing is sent after a failure). */
int gw_handshake(struct gw_session *s, int fd, enum gw_role role, const unsigned char my_sk[32],
		 const unsigned char *expected_peer, gw_peer_lookup lookup, void *arg, char *err,
		 size_t errlen);

int gw_send(struct gw_session *s, uint8_t type, const void *body, size_t len);
/* Receives one frame into buf (at least GW_FRAME_MAX); returns the body
 * length, or -1 with err on close, timeout (errno EAGAIN), malformed or
 * forged input. */
long gw_recv(struct gw_session *s, uint8_t *type, void *buf, size_t cap, char *err, size_t errlen);
/* Without blocking or a system call: is a whole frame read ahead already?
 * Returns -1 if not, else an upper bound of its body length (0 for a
 * malformed length, which the next gw_recv then reports without waiting).
 * Lets a reader take every frame that arrived together as one batch. */
long gw_recv_ready(struct gw_session *s);

/* A data-plane key of one direction and epoch (proto/gatewayd.md, "Data-plane
 * keys"): 16 bytes for the SipHash tag (auth), 32 and a 4-byte salt for the
 * AEAD (encrypt). */
struct gw_dkey {
	unsigned char k[32];
	unsigned char salt[4];
	unsigned len; /* 16 or 32 */
};

/* A fresh X25519 pair for one DATAKEY exchange (sk: wipe it after use). */
void gw_rekey_pair(unsigned char pub[32], unsigned char sk[32]);
/* The key of (direction, epoch) from a DATAKEY exchange: to_peer says whose
 * sending direction (ours: 1); e_s and e_r are the announcer's and the
 * acker's ephemeral public keys, my_sk our ephemeral secret (matching one of
 * them), aead the encrypt mode's 32-byte key and salt rather than the auth
 * mode's 16 bytes. Returns 0, or -1 if the exchange gives the all-zero
 * point (a small-order key: the session must end). */
int gw_rekey_derive(const struct gw_session *s, int to_peer, uint32_t epoch,
		    const unsigned char my_sk[32], const unsigned char e_s[32],
		    const unsigned char e_r[32], bool aead, struct gw_dkey *out);
/* RekeyAfterMessages: is a new sending key due, the peer's reserved
 * counter at last and at base when the current key took over? Not while an
 * announce waits for its ack (pending): one rekey per limit reached. */
bool gw_rekey_msgs_due(bool pending, uint64_t last, uint64_t base, uint64_t limit);
void gw_session_wipe(struct gw_session *s);

#endif
