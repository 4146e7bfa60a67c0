// SPDX-License-Identifier: BSD-2-Clause
/*
 * edgeclusterd: one per cluster. Serves the edge.xgate.io/v1 API (missions,
 * edge clusters) over HTTP(S) from SQLite; the tree links (hub downward,
 * uplink to the parent) come with slice 2 (docs/edgecluster.md).
 *   edgeclusterd -c FILE
 */
#include <errno.h>
#include <inttypes.h>
#include <libwebsockets.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dargs.h"
#include "dlog.h"
#include "ecd.h"
#include "links.h"

static struct ecd D;
static const char *log_name = "edgeclusterd";

uint64_t ecd_now_ms(void)
{
	return dlog_now_ms();
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dlog_v("edgeclusterd", log_name, 1024, fmt, ap);
	va_end(ap);
}

/* Log lines quote what clients sent (paths, names, messages), also before
 * any token was checked: a control byte is written as \xNN, so that no
 * request can end a line and forge the next one, or drive a terminal. */
void ecd_log(const char *fmt, ...)
{
	char raw[1024], out[1024];
	size_t o = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	for (const unsigned char *p = (const unsigned char *)raw; *p && o + 5 < sizeof(out); p++)
		if (*p < 0x20 || *p == 0x7f)
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", *p);
		else
			out[o++] = (char)*p;
	out[o] = 0;
	log_line("%s", out);
}

/* mkdir -p of the database's directory (the default is /var/lib/xgate). */
static int mkdir_parent(const char *path)
{
	char dir[EC_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(dir, 0755) && errno != EEXIST ? -1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: edgeclusterd -c FILE\n"
		   "  -c, --config FILE   configuration ([Cluster] [API] [Store] [Intervals]);\n"
		   "                      see docs/user-guide.md, \"Edge cluster tree\"\n"
		   "  -h, --help          this text\n"
		   "SIGTERM or SIGINT stop it cleanly.\n");
}

/* Housekeeping tick; slice 2 hangs heartbeats and timeouts here. */
static lws_sorted_usec_list_t tick;
static void on_tick(lws_sorted_usec_list_t *sul)
{
	lws_sul_schedule(D.lws, 0, sul, on_tick, LWS_US_PER_SEC);
}

static int start(struct ecd *d)
{
	uint64_t rev = 0;
	char err[512];

	d->self_labels = json_object();
	for (int i = 0; i < d->conf.n_labels; i++)
		json_object_set_new(d->self_labels, d->conf.labels[i].key,
				    json_string(d->conf.labels[i].value));
	if (mkdir_parent(d->conf.database)) {
		ecd_log("database directory for %s: %s", d->conf.database, strerror(errno));
		return -1;
	}
	if (ec_store_open(&d->store, d->conf.database, err, sizeof(err))) {
		ecd_log("database: %s", err);
		return -1;
	}
	/* slice 2: the attach record decides conf.parent before this cluster's row is synced */
	if (tree_prepare(d) || api_self_sync(d) || ec_store_revision(&d->store, &rev)) {
		ecd_log("database %s: %s", d->conf.database, ec_store_errmsg(&d->store));
		return -1;
	}
	if (http_start(d))
		return -1;
	/* slice 3: after http_start, which made the lws context the commands run in */
	if (mission_start(d))
		return -1;
	/* slice 2: the hub children attach to, the link to the parent */
	if (links_start(d))
		return -1;
	lws_sul_schedule(d->lws, 0, &tick, on_tick, LWS_US_PER_SEC);
	ecd_log("cluster %s: distro %s, driver %s, %s%s; database %s at revision %" PRIu64,
		d->conf.name, ec_distro_name(d->conf.distro), ec_driver_name(d->conf.driver),
		d->conf.parent[0] ? "parent " : "root of its tree", d->conf.parent,
		d->conf.database, rev);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cfg = NULL;
	const struct darg opts[] = {{"config", 'c', &cfg}, {0}};
	char err[512];
	int o, rc = 0;

	if ((o = dargs_parse(argc, argv, opts, usage)) >= 0)
		return o;
	if (sodium_init() < 0)
		return 1;
	if (ec_conf_load(cfg, &D.conf, err, sizeof(err))) {
		fprintf(stderr, "edgeclusterd: %s\n", err);
		return 2;
	}
	log_name = D.conf.name;
	signal(SIGPIPE, SIG_IGN);
	D.started_ms = ecd_now_ms();
	if (start(&D))
		rc = 1;
	while (!rc && !D.stop && lws_service(D.lws, 0) >= 0)
		;
	if (!rc)
		ecd_log("stopped");
	lws_sul_cancel(&tick);
	links_stop(&D);	  /* slice 2: before the context its links live in goes */
	mission_stop(&D); /* slice 3: before the context its pipes live in goes */
	http_stop(&D);
	ec_store_close(&D.store);
	json_decref(D.self_labels);
	sodium_memzero(&D.conf, sizeof(D.conf));
	return rc;
}
