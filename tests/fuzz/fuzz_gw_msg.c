// SPDX-License-Identifier: BSD-2-Clause
/*
 * gatewayd's sync message bodies, as a peer's decrypted frame carries them
 * (proto/gatewayd.md): the first byte picks the decoder, the rest is the
 * body. A body that decodes must encode back to the same bytes.
 */
#include "fuzz.h"
#include "msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[2 + 2 * 32 + 6 + GW_ROUTE_MSG_LEN];
	const char *why = NULL;

	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0: {
		struct gw_route_msg m;

		if (!gw_route_decode(data + 1, size - 1, &m, &why))
			FZ_ASSERT(gw_route_encode(out, &m) == size - 1 &&
				  !memcmp(out, data + 1, size - 1));
		break;
	}
	case 1: {
		struct gw_info_msg m;

		if (!gw_info_decode(data + 1, size - 1, &m, &why))
			FZ_ASSERT(gw_info_encode(out, &m) == size - 1 &&
				  !memcmp(out, data + 1, size - 1));
		break;
	}
	default: {
		struct gw_datakey_msg m;

		if (!gw_datakey_decode(data + 1, size - 1, &m, &why))
			FZ_ASSERT(gw_datakey_encode(out, &m) == size - 1 &&
				  !memcmp(out, data + 1, size - 1));
		break;
	}
	}
	return 0;
}
