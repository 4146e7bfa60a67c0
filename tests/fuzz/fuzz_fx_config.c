// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's configuration file (model/config.c over common/ini.c), as text:
 * a refusal says why, an accepted file holds what the daemon relies on. */
#include <arpa/inet.h>
#include <sodium.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return sodium_init() < 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fx_conf *c = calloc(1, sizeof(*c));
	char *text = fz_text(data, size), err[512] = "";

	if (!c)
		abort();
	if (fx_conf_parse("fuzz.conf", text, c, err, sizeof(err))) {
		FZ_ASSERT(err[0]);
	} else { /* what the daemon relies on in an accepted file */
		uint32_t host_mask = c->pod_net_bits ? 0xffffffffu >> c->pod_net_bits : 0;

		FZ_ASSERT(c->n_tokens >= 1 && c->n_tokens <= FX_MAX_TOKENS);
		FZ_ASSERT(c->n_join_tokens >= 0 && c->n_join_tokens <= FX_MAX_TOKENS);
		FZ_ASSERT(c->max_body && c->queue_max && c->state_s >= 1);
		/* the node subnets are carved out of the pod network */
		FZ_ASSERT(c->pod_net_bits >= 8 && c->pod_net_bits <= 28 &&
			  c->node_bits > c->pod_net_bits && c->node_bits <= 30);
		FZ_ASSERT(!(c->pod_net & host_mask));
		FZ_ASSERT(c->vni >= 1 && c->vni <= 0xffffff);
		FZ_ASSERT(c->port_lo >= 1024 && c->port_lo <= c->port_hi && c->port_hi <= 65535);
		FZ_ASSERT(c->database[0] && memchr(c->database, 0, sizeof(c->database)));
		/* TLS on every address but loopback, and both files or neither */
		FZ_ASSERT(!c->tls_cert[0] == !c->tls_key[0]);
		FZ_ASSERT(c->tls_cert[0] || (ntohl(c->listen.sin_addr.s_addr) >> 24) == 127);
	}
	free(text);
	free(c);
	return 0;
}
