// SPDX-License-Identifier: BSD-2-Clause
/* The daemons' command line; see dargs.h. */
#include <getopt.h>
#include <stddef.h>

#include "dargs.h"

int dargs_parse(int argc, char **argv, const struct darg *opts, void (*usage)(FILE *f))
{
	struct option lo[DARGS_MAX + 2] = {{0}};
	char so[2 * DARGS_MAX + 2], *s = so;
	int n, o;

	for (n = 0; n < DARGS_MAX && opts[n].name; n++) {
		lo[n] = (struct option){opts[n].name, required_argument, NULL, opts[n].letter};
		*s++ = opts[n].letter;
		*s++ = ':';
	}
	lo[n] = (struct option){"help", no_argument, NULL, 'h'};
	*s++ = 'h';
	*s = 0;
	while ((o = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		int i = 0;

		while (i < n && o != opts[i].letter)
			i++;
		if (o == 'h' || i == n) {
			usage(o == 'h' ? stdout : stderr);
			return o == 'h' ? 0 : 2;
		}
		*opts[i].value = optarg;
	}
	if (!n || !*opts[0].value || optind != argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}
