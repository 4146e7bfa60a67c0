// SPDX-License-Identifier: BSD-2-Clause
/* The daemons' config line reader; see ini.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ini.h"

void ini_init(struct ini *r, const char *file, const char *text, const char *first, char *err,
	      size_t errlen)
{
	*r = (struct ini){.file = file, .next = text, .first = first, .err = err, .errlen = errlen};
}

void ini_wipe(struct ini *r)
{
	/* explicit_bzero: a plain memset of a dying buffer may be optimised out */
	explicit_bzero(r->buf, sizeof(r->buf));
}

static int verr(struct ini *r, int line, const char *fmt, va_list ap)
{
	int n = snprintf(r->err, r->errlen, "%s:%d: ", r->file, line);

	if (n > 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - n, fmt, ap);
	return -1;
}

int ini_err(struct ini *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(r, r->line, fmt, ap);
	va_end(ap);
	return -1;
}

int ini_err_at(struct ini *r, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(r, line, fmt, ap);
	va_end(ap);
	return -1;
}

char *ini_trim(char *p)
{
	char *e;

	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strlen(p);
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return p;
}

enum ini_item ini_next(struct ini *r, char **key, char **value)
{
	while (*r->next) {
		const char *nl = strchr(r->next, '\n');
		size_t len = nl ? (size_t)(nl - r->next) : strlen(r->next);
		char *l, *eq;

		r->line++;
		if (len >= sizeof(r->buf))
			return ini_err(r, "line longer than %zu characters", sizeof(r->buf) - 1);
		memcpy(r->buf, r->next, len);
		r->buf[len] = 0;
		r->next += len + (nl ? 1 : 0);
		if ((l = strchr(r->buf, '#')))
			*l = 0;
		l = ini_trim(r->buf);
		if (!*l)
			continue;
		if (*l == '[') {
			r->in_section = true;
			*key = l;
			*value = NULL;
			return INI_SECTION;
		}
		if (!r->in_section)
			return ini_err(r, "'%s' outside a section: start with %s", l, r->first);
		eq = strchr(l, '=');
		if (!eq)
			return ini_err(r, "expected Key = Value");
		*eq = 0;
		*key = ini_trim(l);
		*value = ini_trim(eq + 1);
		return INI_KEY;
	}
	ini_wipe(r);
	return INI_END;
}

int ini_addr(struct ini *r, const char *key, const char *v, struct sockaddr_in *out)
{
	char host[64];
	const char *colon = strrchr(v, ':');
	char *end;
	long port;

	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(host))
		return ini_err(r, "%s '%s': expected A.B.C.D:PORT", key, v);
	memcpy(host, v, colon - v);
	host[colon - v] = 0;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
		return ini_err(r, "%s '%s': '%s' is not an IPv4 address", key, v, host);
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port < 1 || port > 65535)
		return ini_err(r, "%s '%s': port must be 1-65535", key, v);
	out->sin_port = htons((unsigned short)port);
	return 0;
}

int ini_seconds(struct ini *r, const char *key, const char *v, unsigned min, unsigned max,
		unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || (*end && strcmp(end, "s")) || n < min || n > max || *v == '-')
		return ini_err(r, "%s '%s': expected seconds %u-%u (e.g. 30 or 30s)", key, v, min,
			       max);
	*out = (unsigned)n;
	return 0;
}

int ini_load(const char *path, ini_parse_fn parse, void *conf, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text;
	long n;
	int rc;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		snprintf(err, errlen, "%s: unreadable or larger than 1 MiB", path);
		return -1;
	}
	text = calloc(1, (size_t)n + 1);
	if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
		free(text);
		fclose(f);
		snprintf(err, errlen, "%s: read error", path);
		return -1;
	}
	fclose(f);
	/* the parser reads a C string: a NUL would silently end the file early */
	if (memchr(text, 0, (size_t)n)) {
		free(text);
		snprintf(err, errlen, "%s: binary data in a text file", path);
		return -1;
	}
	rc = parse(path, text, conf, err, errlen);
	/* the file holds private keys or tokens: do not leave them in freed memory */
	explicit_bzero(text, (size_t)n);
	free(text);
	return rc;
}

int ini_size(struct ini *r, const char *key, const char *v, size_t *out)
{
	unsigned long long n, mul = 1;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!strcasecmp(end, "k") || !strcasecmp(end, "kib"))
		mul = 1024;
	else if (!strcasecmp(end, "m") || !strcasecmp(end, "mib"))
		mul = 1024 * 1024;
	else if (*end)
		end = NULL;
	if (errno || !end || end == v || *v == '-' || n > (64ull << 20) || n * mul < 1024 ||
	    n * mul > (64ull << 20))
		return ini_err(r, "%s '%s': expected a size from 1K to 64M (e.g. 1M, 65536)", key,
			       v);
	*out = (size_t)(n * mul);
	return 0;
}

int ini_str(struct ini *r, const char *key, const char *v, char *out, size_t len)
{
	size_t n = strlen(v);

	if (n >= len)
		return ini_err(r, "%s is longer than %zu characters", key, len - 1);
	memcpy(out, v, n + 1);
	return 0;
}

int ini_readable(struct ini *r, const char *key, const char *v, char *out, size_t len)
{
	if (ini_str(r, key, v, out, len))
		return -1;
	if (access(v, R_OK))
		return ini_err(r, "%s %s: %s", key, v, strerror(errno));
	return 0;
}

static int table_key(struct ini *r, const struct ini_table *t, int sec, const char *k)
{
	int i;

	for (i = 0; i < t->n_keys && (t->keys[i].sec != sec || strcasecmp(k, t->keys[i].name)); i++)
		;
	if (i == t->n_keys)
		return ini_err(r, "unknown key '%s' in %s", k,
			       sec < 0 ? "(no section)" : t->sections[sec]);
	if (!t->keys[i].repeat && t->key_line[i])
		return ini_err(r, "%s given twice (first on line %d)", t->keys[i].name,
			       t->key_line[i]);
	if (!t->key_line[i])
		t->key_line[i] = r->line;
	return i;
}

int ini_table_read(struct ini *r, const struct ini_table *t,
		   int (*key)(void *arg, int index, char *value), void *arg)
{
	enum ini_item item;
	int rc = 0, sec = -1, i;
	char *k, *v;

	while (!rc && (item = ini_next(r, &k, &v)) != INI_END) {
		if (item == INI_ERROR) {
			rc = -1;
		} else if (item == INI_SECTION) {
			for (i = 0; i < t->n_sections && strcasecmp(k, t->sections[i]); i++)
				;
			if (i == t->n_sections)
				rc = ini_err(r, "unknown section %s: %s", k, t->sections_hint);
			else if (t->sec_line[i])
				rc = ini_err(r, "%s given twice (first on line %d)", t->sections[i],
					     t->sec_line[i]);
			else
				t->sec_line[i] = r->line;
			sec = i;
		} else if (!*k) {
			rc = ini_err(r, "expected Key = Value");
		} else if (!*v) {
			rc = ini_err(r, "%s has no value", k);
		} else if ((i = table_key(r, t, sec, k)) < 0) {
			rc = -1;
		} else {
			rc = key(arg, i, v);
		}
	}
	/* ini_next wipes at the end only, not when a line is refused */
	ini_wipe(r);
	return rc;
}
