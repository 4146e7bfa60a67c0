// SPDX-License-Identifier: BSD-2-Clause
/*
 * gatewayd's handshake (session.c) against whatever a peer sends: the input
 * is the peer's side of the TCP stream, fed through a socketpair. The first
 * byte picks the role this gateway plays; as initiator it expects the static
 * key the input's hello claims, so that the fuzzer gets past that check.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "session.h"

static int accept_any(const unsigned char pub[32], void *arg)
{
	(void)pub;
	(void)arg;
	return 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return sodium_init() < 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char my_sk[32] = {1, 2,  3,  4,  5,  6,  7,  8,
						9, 10, 11, 12, 13, 14, 15, 16};
	unsigned char expected[32] = {0};
	enum gw_role role;
	struct gw_session *s;
	char err[256];
	int sv[2];

	if (!size)
		return 0;
	role = data[0] & 1 ? GW_INITIATOR : GW_RESPONDER;
	if (size >= 1 + 40)
		memcpy(expected, data + 1 + 8, 32);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	/* the peer's bytes wait in the socket; what does not fit is not sent */
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if (size > 1 && write(sv[1], data + 1, size - 1) < 0)
		abort();
	shutdown(sv[1], SHUT_WR);
	s = malloc(sizeof(*s));
	if (!s)
		abort();
	if (!gw_handshake(s, sv[0], role, my_sk, expected, accept_any, NULL, err, sizeof(err)))
		gw_session_wipe(s);
	free(s);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
