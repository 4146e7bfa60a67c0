/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An edgeclusterd as the API, the hub and the uplink see it, on a fresh
 * SQLite store per input (a crash reproduces from its input alone): this
 * cluster "edge-a" with one mission "web" stored. The store is a file, as
 * in the daemon (lists read a snapshot through a second connection), under
 * $TMPDIR, else in /dev/shm when there is one: fsync there costs nothing.
 */
#ifndef XG_FUZZ_EC_FIXTURE_H
#define XG_FUZZ_EC_FIXTURE_H

#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "ctl_log.h"
#include "ecd.h"
#include "tree.h"

/* The daemon's log lines are not the harness's business. */
static void fz_log_discard(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* The directory of the store: libFuzzer's entry points take no handle, so
 * the harness keeps it from LLVMFuzzerInitialize to the exit. */
static char fz_dir[256];

static void fz_db_files(const char *db, void (*fn)(const char *))
{
	static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
	char p[EC_PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", db, ext[i]);
		fn(p);
	}
}

static void fz_unlink(const char *p)
{
	unlink(p);
}

static void fz_dir_remove(void)
{
	char db[EC_PATH_MAX];

	snprintf(db, sizeof(db), "%s/ecd.db", fz_dir);
	fz_db_files(db, fz_unlink);
	rmdir(fz_dir);
}

static inline void fz_ecd_close(struct ecd *d);

/* The store every input starts from, made once (ecd.db's bytes after its
 * last connection closed: SQLite checkpoints the WAL into it then). A copy
 * per input costs a write to tmpfs instead of a schema, a tree record and a
 * mission written through SQLite (and its allocator, under ASan) again. */
static unsigned char *fz_template;
static size_t fz_template_len;

static void fz_ecd_conf(struct ecd *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->conf.name, sizeof(d->conf.name), "edge-a");
	snprintf(d->conf.database, sizeof(d->conf.database), "%s/ecd.db", fz_dir);
	d->conf.max_body = 64 << 10;
	d->conf.max_list_body = 1 << 20;
	d->conf.credential_s = 3600;
	d->conf.heartbeat_s = 5;
	d->conf.heartbeat_timeout_s = 15;
	d->self_labels = json_pack("{s:s}", "zone", "east");
}

static void fz_ecd_reopen(struct ecd *d)
{
	char err[256] = "";

	if (ec_store_open(&d->store, d->conf.database, err, sizeof(err)) || tree_prepare(d) ||
	    api_self_sync(d)) {
		fprintf(stderr, "fuzz fixture: %s\n", err);
		abort();
	}
}

/* This cluster "edge-a" with one mission "web", written the daemon's way. */
static void fz_template_make(void)
{
	struct ec_row r = {0};
	struct ecd d;
	FILE *f;
	long n;

	fz_ecd_conf(&d);
	fz_db_files(d.conf.database, fz_unlink);
	fz_ecd_reopen(&d);
	snprintf(r.name, sizeof(r.name), "web");
	snprintf(r.uid, sizeof(r.uid), "0c2b4f3e-8a51-4d1b-9c63-2f7d8e9a0b1c");
	snprintf(r.created, sizeof(r.created), "2025-01-31T12:00:00Z");
	r.labels = strdup("{\"app\":\"web\"}");
	r.spec = strdup("{\"content\":\"kind: Pod\"}");
	if (ec_store_create(&d.store, EC_T_MISSIONS, &r))
		abort();
	ec_row_free(&r);
	fz_ecd_close(&d);
	f = fopen(d.conf.database, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
		abort();
	fz_template_len = (size_t)n;
	fz_template = malloc(fz_template_len);
	if (!fz_template || fread(fz_template, 1, fz_template_len, f) != fz_template_len)
		abort();
	fclose(f);
}

static void fz_template_free(void)
{
	free(fz_template);
	fz_dir_remove();
}

/* A harness that includes this gets its LLVMFuzzerInitialize from here. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	snprintf(fz_dir, sizeof(fz_dir), "%s/xgate-fuzz-XXXXXX", tmp);
	if (sodium_init() < 0 || !mkdtemp(fz_dir))
		abort();
	ctl_log_set_sink(fz_log_discard, NULL);
	atexit(fz_template_free);
	fz_template_make();
	return 0;
}

/* The template's store, fresh for every input: a crash reproduces from its
 * input alone. */
static inline void fz_ecd_open(struct ecd *d)
{
	FILE *f;

	fz_ecd_conf(d);
	fz_db_files(d->conf.database, fz_unlink);
	f = fopen(d->conf.database, "wb");
	if (!f || fwrite(fz_template, 1, fz_template_len, f) != fz_template_len || fclose(f))
		abort();
	fz_ecd_reopen(d);
}

static inline void fz_ecd_close(struct ecd *d)
{
	ec_store_close(&d->store);
	json_decref(d->self_labels);
}

#endif
