/* SPDX-License-Identifier: BSD-2-Clause */
/* gatewayd peer sessions: the handshake and encrypted framing of
 * proto/gatewayd.md, over a connected stream socket. */
#ifndef GWD_SESSION_H
#define GWD_SESSION_H

#include <sodium.h>
#include <stddef.h>
#include <stdint.h>

#define GW_HELLO_LEN 72
#define GW_FRAME_MAX 65536

enum gw_role { GW_INITIATOR = 0, GW_RESPONDER = 1 };

struct gw_session {
	int fd;
	enum gw_role role;
	unsigned char peer_static[32];
	unsigned char hash[32];     /* transcript h */
	unsigned char master[32];   /* session master secret (data-plane keys derive from it) */
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

/* Data-plane MAC key for a direction and epoch (16 bytes). */
void gw_data_key(const struct gw_session *s, int to_peer, uint32_t epoch, unsigned char key[16]);
void gw_session_wipe(struct gw_session *s);

#endif
