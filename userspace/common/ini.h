/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The line reader under the daemons' wg-quick-style files (gatewayd's,
 * edgeclusterd's): [Section] lines, "Key = Value" lines, '#' comments and
 * blank lines, and every error as "FILE:LINE: what is wrong". What a
 * section or key means, and which are allowed, stays with each daemon's
 * config.c: this only cuts the text into items, so that both files read
 * (and fail) the same way.
 */
#ifndef XG_INI_H
#define XG_INI_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#define INI_LINE_MAX 1024 /* longest line, with its NUL */

struct ini {
	const char *file; /* names the file in every error */
	int line;	  /* of the item just read (1-based; 0 before the first) */
	char *err;	  /* where errors are written */
	size_t errlen;
	const char *next;	/* the text not read yet */
	const char *first;	/* the section a file starts with, for the error */
	bool in_section;	/* a [Section] line was read */
	char buf[INI_LINE_MAX]; /* the current line, cut in place */
};

enum ini_item { INI_ERROR = -1, INI_END = 0, INI_SECTION, INI_KEY };

/* Read text (NUL-terminated, kept by the caller) as FILE. first ("[Gateway]")
 * is what a key line before any section is told to start with. */
void ini_init(struct ini *r, const char *file, const char *text, const char *first, char *err,
	      size_t errlen);
/*
 * The next item, past blank lines and comments:
 *  INI_SECTION  *key is the trimmed line, brackets included ("[Peer]");
 *  INI_KEY      *key and *value, trimmed; either may be empty (what that
 *               means is the caller's);
 *  INI_END      the text is read; the line buffer is wiped;
 *  INI_ERROR    a line too long, a key line before any section, or one
 *               without '=': the error is written.
 * The strings live in r until the next call.
 */
enum ini_item ini_next(struct ini *r, char **key, char **value);
/* Wipe the line buffer (the files hold keys and tokens). */
void ini_wipe(struct ini *r);

/* Write "FILE:LINE: message" to the error buffer; returns -1. */
int ini_err(struct ini *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same about another line (a section's, a key's; 0: the whole file). */
int ini_err_at(struct ini *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Strip blanks (and a CR) at both ends, in place. */
char *ini_trim(char *p);

/* ---- values both daemons use; errors name the key and the value ---- */
/* "A.B.C.D:PORT" (port 1-65535). */
int ini_addr(struct ini *r, const char *key, const char *v, struct sockaddr_in *out);
/* Seconds from min to max, with or without an 's' ("30", "30s"). */
int ini_seconds(struct ini *r, const char *key, const char *v, unsigned min, unsigned max,
		unsigned *out);
/* Bytes from 1K to 64M, with an optional K/KiB/M/MiB suffix (powers of 1024). */
int ini_size(struct ini *r, const char *key, const char *v, size_t *out);
/* v into out (len bytes with the NUL), or an error when it does not fit. */
int ini_str(struct ini *r, const char *key, const char *v, char *out, size_t len);
/* ini_str of a path that must be readable now (a certificate, a key). */
int ini_readable(struct ini *r, const char *key, const char *v, char *out, size_t len);

/* ---- a file read against tables of its sections and keys ----
 * Each section at most once, each key only in its section and, unless it
 * repeats, at most once; every refusal names the line ("unknown key 'X'
 * in [S]", "X given twice (first on line N)", "X has no value"). */
struct ini_key {
	int sec; /* index into the sections */
	const char *name;
	bool repeat;
};
struct ini_table {
	const char *const *sections; /* "[API]", ... */
	int n_sections;
	const char *sections_hint; /* what an unknown one is told: "[API], [Store] or [Nodes]" */
	const struct ini_key *keys;
	int n_keys;
	int *sec_line, *key_line; /* filled: the line of each section and key (0: absent) */
};
/* Read r's items against t, calling key(arg, index in t->keys, value) for
 * every key line: 0, or the first nonzero return (-1 after an error
 * written to r). The line buffer is wiped either way. */
int ini_table_read(struct ini *r, const struct ini_table *t,
		   int (*key)(void *arg, int index, char *value), void *arg);

/* Read a file of at most 1 MiB and hand its text to parse; the text is
 * wiped before it is freed. Errors before parse are "PATH: what". */
typedef int (*ini_parse_fn)(const char *file, const char *text, void *conf, char *err,
			    size_t errlen);
int ini_load(const char *path, ini_parse_fn parse, void *conf, char *err, size_t errlen);

#endif
