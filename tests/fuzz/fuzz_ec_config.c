// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd's configuration file (config.c over common/ini.c), as text. */
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
	struct ec_conf *c = calloc(1, sizeof(*c));
	char *text = fz_text(data, size), err[512] = "";

	if (!c)
		abort();
	if (ec_conf_parse("fuzz.conf", text, c, err, sizeof(err)))
		FZ_ASSERT(err[0]);
	free(text);
	free(c);
	return 0;
}
