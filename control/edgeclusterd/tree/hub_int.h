/* SPDX-License-Identifier: BSD-2-Clause */
/* What hub.c (links, auth, missions down) and hub_reports.c (state reports
 * and heartbeats from the children) share; nothing outside the hub includes it. */
#ifndef ECD_HUB_INT_H
#define ECD_HUB_INT_H

#include "links.h"

struct hub_child { /* a child that holds a credential from us */
	char name[EC_NAME_MAX + 1];
	uint64_t last_rx_ms;
	bool marked; /* its subtree's state says unreachable */
	/* linked since this hub started: its state reports commit without fsync
	 * (repairable), so its first link after a start asks for all of it again */
	bool synced;
	struct hub_conn *conn;
	int clashes; /* names in its heartbeats used elsewhere in the tree (last count logged) */
};

struct hub_conn {
	struct hub *h; /* NULL once the hub stopped */
	struct ctl_wslink l;
	struct hub_conn *next;
	char peer[64];
	char name[EC_NAME_MAX + 1]; /* once authenticated */
	bool authed, registering, dead;
	int64_t sent_seq; /* of the last list/missions message */
	/* fetched names not sent yet (from fetch_i): one batch goes each time the
	 * queue is empty, so that a whole sync never sits in SendQueueMax */
	json_t *fetch;
	size_t fetch_i;
};

struct hub {
	struct ecd *d;
	struct lws_context *lws;
	struct hub **slot; /* the API vhost's pointer to us (hub_of) */
	struct hub_conn *conns;
	struct hub_child *kids;
	size_t n_kids;
	json_t *index; /* name -> [uid, rv]: what the children were last told */
	uint64_t rev;
	bool scanned;
	char digest[TREE_DIGEST_HEX + 1];
	lws_sorted_usec_list_t tick, scan;
};

void hub_log(struct hub_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Refuse this link: one log line, an error message, the close. */
int hub_refuse(struct hub_conn *c, int close_code, const char *code, const char *why);
struct hub_child *hub_child_find(struct hub *h, const char *name);
/* This cluster reports up (attached), and asking it to flush what it owes. */
bool hub_owes_up(const struct hub *h);
void hub_owe_kick(struct hub *h);
/* Bring the mission index and digest up to the store; tell children what changed. */
void hub_scan_now(struct hub *h);
/* The full list to one child (its digest differs). */
void hub_send_list(struct hub_conn *c);
/* A credential for cr's child (a new one, or the rotation of the current). */
void hub_issue(struct hub *h, struct ec_cred *cr, json_t **out, bool rotate);

/* One whole message from a child (wslink.c parsed it): the hello first, then
 * anything else by type. Bad input refuses the link (hub_refuse). */
int hub_on_message(struct hub_conn *c, json_t *m);

/* hub_reports.c */
int hub_on_state(struct hub_conn *c, json_t *m);
int hub_on_heartbeat(struct hub_conn *c, json_t *m);

#endif
