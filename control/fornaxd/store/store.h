/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What fornaxd keeps durably, behind an interface so that another backend
 * (etcd) can stand in for SQLite: the applications (each with the
 * resourceVersion of its last write, and the highest one ever written) and
 * the node credentials (a name, the BLAKE2b digest of its credential, the
 * index of its pod subnet). Pods and sessions are never here: they live in
 * the core's memory and are rebuilt from the nodes, so nothing on the
 * session-open path waits for a disk (or etcd) write. Two backends: SQLite
 * (the default) and etcd; the same unit test runs on both.
 */
#ifndef FX_STORE_H
#define FX_STORE_H

#include <stdint.h>

#include "ctl_token.h"

struct fx_store;

/* A write that failed but may still be applied (etcd took it and did not
 * answer in time): its outcome is unknown until it is read back. */
#define FX_STORE_UNKNOWN (-2)

/* How a write without waiting ended: rc as the waiting one returns it;
 * err the store's words when rc < 0 (valid during the call). */
typedef void (*fx_store_done)(void *arg, int rc, const char *err);

struct fx_store_ops {
	/* Create or replace one application ("NS", "NAME", its JSON) at rv;
	 * durable when it returns 0; -1 not written, FX_STORE_UNKNOWN. */
	int (*app_put)(struct fx_store *s, const char *ns, const char *name, uint64_t rv,
		       const char *json);
	/* Delete it (the revision rv is remembered): 0, 1 if absent, -1,
	 * FX_STORE_UNKNOWN. */
	int (*app_del)(struct fx_store *s, const char *ns, const char *name, uint64_t rv);
	/* app_put and app_del without waiting: done(arg, rc, err) is called
	 * exactly once with what they would have returned (the write durable
	 * when rc >= 0). SQLite writes at once (a local fsync) and calls done
	 * before it returns; etcd sends the txn and calls done from
	 * fx_store_async_poll once etcd has answered (or the deadline passed),
	 * the caller's loop serving meanwhile. -1: not started, done is not
	 * called (errmsg says why). Writes in flight when the store closes
	 * are dropped without their done. */
	int (*app_put_async)(struct fx_store *s, const char *ns, const char *name, uint64_t rv,
			     const char *json, fx_store_done done, void *arg);
	int (*app_del_async)(struct fx_store *s, const char *ns, const char *name, uint64_t rv,
			     fx_store_done done, void *arg);
	/* Every application, fn(arg, json, rv); a nonzero fn stops and is returned. */
	int (*app_each)(struct fx_store *s, int (*fn)(void *arg, const char *json, uint64_t rv),
			void *arg);
	/* The highest revision written (0 for a new store). */
	int (*revision)(struct fx_store *s, uint64_t *rv);
	/* A node's credential digest and subnet: 1 found, 0 not, -1 error. */
	int (*node_get)(struct fx_store *s, const char *name,
			unsigned char digest[CTL_TOKEN_HASH_LEN], int *subnet);
	int (*node_put)(struct fx_store *s, const char *name,
			const unsigned char digest[CTL_TOKEN_HASH_LEN], int subnet);
	int (*node_del)(struct fx_store *s, const char *name); /* 0, 1 if absent, -1 */
	int (*node_each)(struct fx_store *s, int (*fn)(void *arg, const char *name, int subnet),
			 void *arg);
	const char *(*errmsg)(struct fx_store *s);
	void (*close)(struct fx_store *s);
};

struct fx_store {
	const struct fx_store_ops *ops;
};

/* SQLite (WAL) at path, created if absent. NULL with err filled. */
struct fx_store *fx_store_sqlite_open(const char *path, char *err, size_t errlen);

/* etcd v3 (store_etcd.c, docs/serverless.md "fornaxd on etcd"). */
struct fx_store_etcd_conf {
	const char *endpoints;	     /* "http(s)://HOST:PORT[,...]" */
	const char *prefix;	     /* every key under it; NULL: "/xgate/fornaxd/" */
	const char *ca, *cert, *key; /* TLS to etcd, or NULL */
	unsigned timeout_ms;	     /* per request; 0: the client's default */
};
/* Connects and makes the revision key; NULL with err filled when etcd
 * cannot be reached (without a quorum it opens: reads still work). */
struct fx_store *fx_store_etcd_open(const struct fx_store_etcd_conf *c, char *err, size_t errlen);
/* The etcd store's client (for an election on the same cluster), NULL for
 * another backend. */
struct ctl_etcd *fx_store_etcd_client(struct fx_store *s);
/* From now on every write holds only while leader is the leader (its
 * fence in the same txn); NULL: unfenced. -1 on another backend. */
struct ctl_etcd_elect;
int fx_store_etcd_fence(struct fx_store *s, struct ctl_etcd_elect *leader);

/* The writes without waiting in an event loop (etcd; -1 on another
 * backend, whose done is called at once): an fd readable when one has
 * news, and fx_store_async_poll (never waits) on it or when the ms it
 * returns have passed (-1: only on the fd). */
int fx_store_async_fd(struct fx_store *s);
int fx_store_async_poll(struct fx_store *s);

/* A standby's view of the applications (etcd only): every application
 * (after reset) at the start and again whenever etcd compacted the history
 * the watch would resume from, then each change as it is written. The
 * reads behind a reset never hold the loop: a poll sends one, a later one
 * hands it over (fornaxd's view is loaded before, by fx_core_new). Stepped
 * by fx_store_watch_poll (0: never waits); an event loop waits on
 * fx_store_watch_fd and fx_store_watch_next_ms (ctl_etcd_watch_fd). */
struct fx_store_app_hooks {
	void *arg;
	void (*reset)(void *arg); /* forget every application: all of them follow */
	void (*put)(void *arg, const char *ns, const char *name, uint64_t rv, const char *json);
	void (*del)(void *arg, const char *ns, const char *name);
	/* after a reset's puts: every application is there again (those not
	 * put since the reset are gone); may be NULL */
	void (*synced)(void *arg);
};
struct fx_store_watch;
struct fx_store_watch *fx_store_etcd_watch_apps(struct fx_store *s,
						const struct fx_store_app_hooks *h);
int fx_store_watch_poll(struct fx_store_watch *sw, int timeout_ms);
int fx_store_watch_fd(const struct fx_store_watch *sw);
int fx_store_watch_next_ms(const struct fx_store_watch *sw);
void fx_store_watch_stop(struct fx_store_watch *sw);

#endif
