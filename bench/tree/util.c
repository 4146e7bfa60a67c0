// SPDX-License-Identifier: BSD-2-Clause
/*
 * What every mode of tree_probe uses: the clusters file, time, errors, and
 * the figures' statistics and formats.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tree_probe.h"

struct cl *cls;
int n_cls;

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	while (us > 0 && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tree_probe: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* ---- the clusters file ---- */

void read_clusters(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[512], path[256], url[128];

	if (!f)
		die("%s: %s", file, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct cl *c;
		const char *slash;

		if (line[0] == '#' || sscanf(line, "%255s %127s", path, url) != 2)
			continue;
		cls = xrealloc(cls, (size_t)(n_cls + 1) * sizeof(*cls));
		c = &cls[n_cls++];
		memset(c, 0, sizeof(*c));
		c->last_known = c->last_active = -1; /* not asked */
		snprintf(c->path, sizeof(c->path), "%s", path);
		slash = strrchr(path, '/');
		snprintf(c->name, sizeof(c->name), "%.63s", slash ? slash + 1 : path);
		if (hc_init(&c->hc, url))
			die("%s: bad URL '%s'", file, url);
	}
	fclose(f);
	if (n_cls < 1)
		die("%s: no cluster in it", file);
}

/* ---- statistics and rows ---- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank: the smallest value with at least q of them at or below it */
double quant(double *v, int n, double q)
{
	int k = (int)(q * n + 0.999999);

	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

/* NAN: not reached (differences of two upper bounds may be negative) */
void fmt_ms(char *out, size_t len, double ms)
{
	if (isnan(ms))
		snprintf(out, len, "not reached");
	else if (fabs(ms) < 10000)
		snprintf(out, len, "%.1f ms", ms);
	else
		snprintf(out, len, "%.2f s", ms / 1000);
}
