// SPDX-License-Identifier: BSD-2-Clause
/*
 * gatewayd's session frames after the handshake (session.c gw_recv and
 * gw_recv_ready over the read-ahead buffer), then the bodies by type as the
 * peer code decodes them (msg.c). An authenticated stream cannot be forged,
 * so the input is a script of what the peer writes:
 *   [t < 0x80][len u16 BE][body]  a frame of type t, sealed by gw_send with
 *                                 the stream key both sides share;
 *   [0x80..0xff][len u16 BE][raw] bytes written as they are (lengths,
 *                                 truncations, forgeries, garbage).
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "msg.h"
#include "session.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return sodium_init() < 0;
}

static void decode(uint8_t type, const uint8_t *b, size_t n)
{
	struct gw_route_msg r;
	struct gw_info_msg info;
	struct gw_datakey_msg k;
	const char *why;

	if (type == GW_T_ANNOUNCE || type == GW_T_WITHDRAW)
		(void)gw_route_decode(b, n, &r, &why);
	else if (type == GW_T_HELLO_INFO)
		(void)gw_info_decode(b, n, &info, &why);
	else if (type == GW_T_DATAKEY)
		(void)gw_datakey_decode(b, n, &k, &why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char key[32] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
	unsigned char hdr[crypto_secretstream_xchacha20poly1305_HEADERBYTES];
	static uint8_t buf[GW_FRAME_MAX];
	struct gw_session *tx = calloc(1, sizeof(*tx)), *rx = calloc(1, sizeof(*rx));
	char err[256];
	size_t i = 0;
	int sv[2];

	if (!tx || !rx || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	tx->fd = sv[1];
	rx->fd = sv[0];
	crypto_secretstream_xchacha20poly1305_init_push(&tx->tx, hdr, key);
	if (crypto_secretstream_xchacha20poly1305_init_pull(&rx->rx, hdr, key))
		abort();
	while (i + 3 <= size) {
		uint8_t op = data[i];
		size_t len = (size_t)data[i + 1] << 8 | data[i + 2];

		i += 3;
		if (len > size - i)
			len = size - i;
		if (op < 0x80) {
			if (gw_send(tx, op, data + i, len))
				break; /* the socket is full: the peer stops there */
		} else if (len && write(sv[1], data + i, len) < 0) {
			break;
		}
		i += len;
	}
	shutdown(sv[1], SHUT_WR);
	for (;;) {
		uint8_t type;
		long ready = gw_recv_ready(rx), n;

		n = gw_recv(rx, &type, buf, sizeof(buf), err, sizeof(err));
		/* a whole frame read ahead is taken without waiting, at its length */
		if (ready > 0 && n >= 0)
			FZ_ASSERT(n <= ready);
		if (n < 0)
			break;
		decode(type, buf, (size_t)n);
	}
	gw_session_wipe(tx);
	gw_session_wipe(rx);
	free(tx);
	free(rx);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
