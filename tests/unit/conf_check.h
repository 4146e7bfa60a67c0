/* SPDX-License-Identifier: BSD-2-Clause */
/* What the daemons' config parser tests share: a bad file must be refused,
 * and its error ("FILE:LINE: what is wrong") must hold the expected part. */
#ifndef XG_CONF_CHECK_H
#define XG_CONF_CHECK_H

#include <stdio.h>
#include <string.h>

#include "unit.h"

/* The parser under test, on text: 0, or -1 with the error in err. */
typedef int (*conf_parse_fn)(const char *text, char *err, size_t errlen);

static inline void conf_expect_err(conf_parse_fn parse, const char *text, const char *want)
{
	char err[512] = "";

	if (parse(text, err, sizeof(err)) == 0) {
		printf("not ok - parsed, wanted error '%s'\n", want);
		failed++;
	} else if (!strstr(err, want)) {
		printf("not ok - error '%s', wanted '%s'\n", err, want);
		failed++;
	} else {
		printf("ok - %s\n", err);
		passed++;
	}
}

#endif
