// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd's configuration file (config.c over common/ini.c), as text: a
 * refusal says why, an accepted file holds what the daemon relies on. */
#include <sodium.h>

#include "config.h"
#include "fuzz.h"
#include "resource.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return sodium_init() < 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ec_conf *c = calloc(1, sizeof(*c));
	char *text = fz_text(data, size), err[512] = "";

	if (!c)
		abort();
	if (ec_conf_parse("fuzz.conf", text, c, err, sizeof(err))) {
		FZ_ASSERT(err[0]);
	} else { /* what the daemon relies on in an accepted file */
		FZ_ASSERT(!ec_check_dns_label(c->name) && c->n_tokens >= 1 && c->max_body);
		for (int i = 0; i < c->n_labels; i++)
			FZ_ASSERT(!ec_check_label_key(c->labels[i].key) &&
				  !ec_check_label_value(c->labels[i].value));
	}
	free(text);
	free(c);
	return 0;
}
