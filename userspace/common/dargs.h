/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The daemons' command line (gatewayd's, edgeclusterd's): options that each
 * take an argument, the first of them required (-c/--config FILE), and
 * -h/--help; nothing else. One parser, so that both refuse and help alike.
 */
#ifndef XG_DARGS_H
#define XG_DARGS_H

#include <stdio.h>

#define DARGS_MAX 8 /* options in a table, -h not counted */

struct darg {
	const char *name;   /* long name */
	char letter;	    /* short name */
	const char **value; /* its argument lands here; left alone if not given */
};

/* Read argv by opts (ended by a zeroed one). -1: go on; else usage is
 * printed (on stdout for -h, else stderr) and this is the exit code: 0 for
 * -h, 2 for a bad command line (an unknown option, a missing argument,
 * anything after the options, no opts[0]). */
int dargs_parse(int argc, char **argv, const struct darg *opts, void (*usage)(FILE *f));

#endif
