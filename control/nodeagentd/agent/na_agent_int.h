/* SPDX-License-Identifier: BSD-2-Clause */
/* Inside the agent: its pods and sessions at run time. */
#ifndef NA_AGENT_INT_H
#define NA_AGENT_INT_H

#include <libwebsockets.h>

#include "ctl_exec.h"
#include "ctl_log.h"
#include "na_agent.h"
#include "na_cgroup.h"
#include "na_net.h"
#include "na_proc.h"
#include "na_svc.h"
#include "xg.h"

#define TICK_FAST_MS  10   /* while a pod starts or a session waits for its port */
#define TICK_SLOW_MS  250  /* exits of running pods */
#define TICK_START_MS 3	   /* while a pod starts: a cold open waits on the next look */
#define KILL_GRACE_MS 5000 /* PodTerminate without a grace period */
/* An ended pod whose network is down is still known this long, so that a
 * command the core repeats (its full sync) is answered with the state and
 * reason the pod ended with; its slot is free meanwhile. */
#define ENDED_KEEP_MS 5000
/* No command for this long and nothing in flight: the store's checkpoint
 * may run (na_store.h) without an open waiting behind it. */
#define QUIET_MS 500

struct pod_rt {
	struct pod_rt *next;
	struct na_agent *a;
	struct na_pod p;
	char netns[32], veth[16], cgname[24];
	char dir[256]; /* its log and its session socket */
	/* its network is being made or taken down, on the next turn of the
	 * loop (net_sul) */
	bool net_busy;
	lws_sorted_usec_list_t net_sul;
	struct na_svc *svc;
	bool net_up; /* its network was made (down runs at the end) */
	bool frozen;
	bool gone;	       /* ended: waits for its network to be taken down */
	uint64_t started_ms;   /* spawned */
	uint64_t kill_at_ms;   /* SIGKILL when past (0: none) */
	uint64_t ping_at_ms;   /* the session service's next ping */
	uint64_t evac_end_ms;  /* Evacuating: Terminating when past (0: not known) */
	uint64_t forget_at_ms; /* its network is down: forgotten when past */
};

struct sess_rt {
	struct sess_rt *next;
	struct na_sess s;
	bool entries;	      /* its ingress entries are in place */
	bool open_sent;	      /* told the pod (session service) */
	uint64_t close_at_ms; /* Closing: closed for good when past */
};

struct na_agent {
	const struct na_config *conf;
	struct na_store *store;
	struct lws_context *lws;
	struct ctl_exec *x;
	struct na_agent_events ev;
	struct na_cg cg;
	struct na_svcs *svcs;
	struct na_net *net;
	struct xg_maps maps;
	struct xg_sess_maps smaps;
	bool maps_open;
	/* NodeConfiguration */
	bool configured, net_ready;
	bool fresh; /* started on an empty store: sweep what a lost one named */
	struct ctl_job *node_job;
	uint32_t net_be, gw_be, vni;
	int plen;
	uint16_t port_lo, port_hi, port_next;
	unsigned state_s;
	struct pod_rt *pods;
	struct sess_rt *sess;
	lws_sorted_usec_list_t tick;
	uint64_t last_cmd_ms; /* the core's last command */
	bool stopping;
};

/* na_agent.c */
struct pod_rt *pod_find(struct na_agent *a, const char *id);
void pod_report(struct na_agent *a, struct pod_rt *r, enum na_pod_state st, const char *reason,
		const char *message);
/* it ended (or never started): sessions closed, processes killed, cgroup
 * and network taken down, the pod forgotten */
void pod_end(struct pod_rt *r, enum na_pod_state st, const char *reason, const char *msg);
void pod_terminate(struct pod_rt *r, unsigned grace_ms, const char *reason);
/* back to the pool: frozen, Standby (when no session holds it) */
void pod_to_standby(struct pod_rt *r);
int pod_thaw(struct pod_rt *r);
void pod_svc_connect(struct pod_rt *r);
void agent_tick_soon(struct na_agent *a);
void agent_send(struct na_agent *a, json_t *m);

/* na_podnet.c: a pod's namespace, veth, endpoint entry and `agent`
 * program (0, or -1 with err and nothing left made); and their removal */
int podnet_up(struct na_agent *a, struct pod_rt *r, char *err, size_t errlen);
void podnet_down(struct na_agent *a, struct pod_rt *r);

/* na_sessions.c */
struct sess_rt *sess_find(struct na_agent *a, const char *id);
void sess_report(struct na_agent *a, struct sess_rt *x, enum na_sess_state st, const char *reason);
/* the pod ended: its sessions close (entries removed first) */
void sess_pod_gone(struct na_agent *a, struct pod_rt *r, const char *reason);
/* the tick: sessions waiting for their port, closes past their grace */
bool sess_tick(struct na_agent *a, uint64_t now);
void sess_on_pod_msg(struct pod_rt *r, json_t *m);
/* the pod's session service is connected: what it must be told again */
void sess_on_svc_up(struct pod_rt *r);
int sess_adopt(struct na_agent *a, struct na_sess *s);
void sess_free_all(struct na_agent *a);
bool sess_pod_busy(struct na_agent *a, const char *pod);
/* the pod is to stop: its live sessions are asked to close within grace_s */
void sess_pod_evacuate(struct na_agent *a, struct pod_rt *r, unsigned grace_s);

/* na_ingress.c: the ingress role (its entries live in a->sess, no pod) */
json_t *ing_list_json(const struct na_agent *a);

#endif
