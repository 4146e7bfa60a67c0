// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd's configuration file (config.c over common/ini.c), as text: a
 * refusal says why, an accepted file holds what the daemon relies on. */
#include <arpa/inet.h>
#include <sodium.h>

#include "config.h"
#include "fuzz.h"

/* One configuration for the whole run: it is ~250 KB (peers with their
 * allowed prefixes), and a fresh allocation per input costs page faults that
 * dwarf the parse. gw_conf_parse clears what it fills, so an input sees no
 * trace of the one before. */
static struct gw_conf *conf;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	conf = malloc(sizeof(*conf));
	return sodium_init() < 0 || !conf;
}

static bool prefix_ok(const struct gw_prefix *p, bool need_vni)
{
	uint32_t mask = p->plen ? htonl(~0u << (32 - p->plen)) : 0;

	return p->plen <= 32 && !(p->ip_be & ~mask) && p->vni <= 0xffffff && (p->vni || !need_vni);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_conf *c = conf;
	char *text = fz_text(data, size), err[512] = "";

	/* a refused file always says why */
	if (gw_conf_parse("fuzz.conf", text, c, err, sizeof(err))) {
		FZ_ASSERT(err[0]);
	} else { /* what the daemon relies on in an accepted file */
		FZ_ASSERT(c->name[0] && c->n_subnets <= GW_MAX_SUBNETS &&
			  c->n_peers <= GW_MAX_PEERS);
		for (int i = 0; i < c->n_subnets; i++)
			FZ_ASSERT(prefix_ok(&c->subnets[i], true));
		for (int i = 0; i < c->n_peers; i++)
			for (int j = 0; j < c->peers[i].n_allowed; j++)
				FZ_ASSERT(prefix_ok(&c->peers[i].allowed[j], false));
	}
	free(text);
	return 0;
}
