/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the libFuzzer harnesses share (docs/fuzzing.md). Each harness feeds
 * one input surface to the parser the daemon or CLI uses for it; the fuzz
 * tree builds those parsers from the same sources with coverage, ASan and
 * UBSan, so any memory error, leak or undefined behaviour is a crash.
 */
#ifndef XG_FUZZ_H
#define XG_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The input as a NUL-terminated string (the parsers take C strings; an
 * embedded NUL ends the text early, as it would in a file read with fgets). */
static inline char *fz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* A property of the parser's output that must hold: a violation is a
 * crash like any sanitizer report. */
#define FZ_ASSERT(cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: property does not hold: %s\n", __FILE__, __LINE__, \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
