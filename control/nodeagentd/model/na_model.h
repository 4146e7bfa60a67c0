/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nodeagentd's vocabulary: the pod and session states of the node link
 * (proto/fornax.md "The node link"), the records the store keeps and the
 * agent works on, and the configuration. No I/O here: the unit tests and
 * every layer above link it.
 */
#ifndef NA_MODEL_H
#define NA_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define NA_ID_MAX     254 /* NS/NAME */
#define NA_REASON_MAX 64
#define NA_MSG_MAX    256
#define NA_PORTS_MAX  8	 /* container ports per pod */
#define NA_CTRS_MAX   4	 /* containers per pod */
#define NA_OWNER_MAX  64 /* a session's owner id (opaque; fornaxd's is 32) */

enum na_pod_state {
	NA_POD_CREATING,
	NA_POD_STANDBY,
	NA_POD_ACTIVATING,
	NA_POD_RUNNING,
	NA_POD_EVACUATING,
	NA_POD_TERMINATING,
	NA_POD_TERMINATED,
	NA_POD_FAILED,
};
enum na_sess_state {
	NA_SESS_STARTING,
	NA_SESS_AVAILABLE,
	NA_SESS_INUSE,
	NA_SESS_CLOSING,
	NA_SESS_CLOSED,
	NA_SESS_TIMEOUT,
};

const char *na_pod_state_name(enum na_pod_state s);
const char *na_sess_state_name(enum na_sess_state s);
int na_pod_state_parse(const char *s, enum na_pod_state *out);
int na_sess_state_parse(const char *s, enum na_sess_state *out);
/* Terminated or Failed: the pod is gone for good. */
bool na_pod_final(enum na_pod_state s);
/* Closed or Timeout. */
bool na_sess_final(enum na_sess_state s);
/*
 * The session state machine on the node: Starting -> Available -> InUse ->
 * Closing -> Closed, InUse <-> Available as clients come and go, Closing
 * or Closed from any live state; a final state never changes. Whether
 * from -> to is allowed (to == from is not a change).
 */
bool na_sess_may(enum na_sess_state from, enum na_sess_state to);

struct na_port {
	uint16_t port;
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
};

/* One container's process tree: watched by pid and /proc start time. */
struct na_ctr {
	pid_t pid;
	uint64_t start;
};

struct na_pod {
	char id[NA_ID_MAX + 1];
	char app[NA_ID_MAX + 1];
	enum na_pod_state state;
	char reason[NA_REASON_MAX], message[NA_MSG_MAX];
	int slot;	/* names its netns, veth and address; -1 before placement */
	uint32_t ip_be; /* pod address (0 before placement) */
	pid_t pid;	/* containers[0]'s leader (0 before start): the pod's netns */
	uint64_t start; /* its /proc starttime: tells a reused pid apart */
	/* every container's tree, [0] the same as pid/start */
	struct na_ctr ctrs[NA_CTRS_MAX];
	int n_ctrs;
	bool standby;	  /* frozen once started, until a session opens */
	bool svc;	  /* usingNodeSessionService */
	bool terminating; /* asked to stop: its exit is Terminated, not Failed */
	json_t *spec;	  /* the PodCreate "pod" object (owned) */
	struct na_port ports[NA_PORTS_MAX];
	int n_ports;
};

struct na_endpoint {
	uint8_t proto;
	uint32_t ip_be; /* public */
	uint16_t port;	/* public */
	uint16_t pod_port;
};

struct na_sess {
	char id[NA_ID_MAX + 1];
	char pod[NA_ID_MAX + 1];
	enum na_sess_state state;
	char reason[NA_REASON_MAX];
	int clients;
	unsigned grace_s;   /* close grace period */
	bool kill_on_close; /* killInstanceWhenSessionClosed */
	char *data;	    /* sessionData, base64 as sent (owned) */
	/* SessionOpen's session.owner, kept and echoed in every report so that
	 * a core that rebuilds the session counts it for its client; "": none */
	char owner[NA_OWNER_MAX + 1];
	struct na_endpoint eps[NA_PORTS_MAX];
	int n_eps;
	/* form 2: on a pod's node the ingress host, on the ingress host the
	 * pod's node (underlay addresses); 0 for form 1 */
	uint32_t peer_be;
	uint32_t pod_ip_be; /* on the ingress host: the pod's address */
};

/* An IngressOpen (proto/fornax.md "Form 2"), as the ingress host takes it. */
struct na_ing_req {
	struct na_sess s; /* id, pod, pod_ip_be, peer_be (the pod's node) */
	uint32_t vni;
	struct na_port ports[NA_PORTS_MAX];
	int n_ports;
};

/* Fill p->ports from the ports of all the spec's containers (the pod's
 * ports, containerPort+protocol unique among them, one at least): 0, or -1
 * with the field path in err. */
int na_pod_ports_from_spec(struct na_pod *p, char *err, size_t errlen);
/* A PodCreate's pod spec as the node runs it: 1..NA_CTRS_MAX containers,
 * each with a command (strings), args and env (strings, names without
 * '='), limits that are quantities, ports; names unique (a file name).
 * 0, or -1 with "pod.containers[I].FIELD: what" in err. */
int na_pod_check_spec(json_t *pod, char *err, size_t errlen);
/* The name of container i (its log file's): its name, else "c<i>". */
void na_ctr_name(json_t *c, int i, char *out, size_t len);
/* ctrs as the store keeps them, "PID:START PID:START ..." (malloc'd) and
 * back: 0, or -1 when s is not one. */
char *na_ctrs_str(const struct na_pod *p);
int na_ctrs_parse(struct na_pod *p, const char *s);
/* A SessionOpen's session.owner: 1..NA_OWNER_MAX of [0-9A-Za-z_-] (opaque
 * to the node, kept tame for the store and the logs): NULL, or what is wrong. */
const char *na_owner_check(const char *s);
/* session.owner of a SessionOpen's session object into out ("" when absent
 * or null): 0, or -1 with "session.owner 'VALUE': what" in err. */
int na_owner_parse(json_t *session, char out[NA_OWNER_MAX + 1], char *err, size_t errlen);
/* The Pod and Session objects of the link. */
json_t *na_pod_json(const struct na_pod *p);
json_t *na_sess_json(const struct na_sess *s);
/* eps <-> [{protocol, ipAddress, port, podPort}] */
json_t *na_eps_json(const struct na_sess *s);
int na_eps_from_json(struct na_sess *s, json_t *a);

/* IngressOpen's fields: 0, or -1 with "FIELD 'VALUE': what" in err. */
int na_ing_open_parse(json_t *m, struct na_ing_req *r, char *err, size_t errlen);
/* SessionOpen's `ingress` (form 2) onto s: the endpoints the ingress host
 * chose, one per port of the pod, and the host: 0, or -1 with err. */
int na_ing_pod_side_parse(json_t *ing, const struct na_pod *p, struct na_sess *s, char *err,
			  size_t errlen);
/* The Ingress object of the link: state Open (an entry in place) or Closed. */
json_t *na_ing_json(const struct na_sess *s);

/* How much of s an error quotes ("%.*s"): at most max bytes, not cutting a
 * UTF-8 character. Errors and reports go out as JSON, and jansson refuses
 * text that is not UTF-8: the whole message would be lost. */
int na_quote_len(const char *s, int max);

/* Kubernetes quantities: "500m" / "0.5" / "2" cpu -> millicores;
 * "64Mi" / "1G" / "1000" memory -> bytes. -1 when not one. */
int na_cpu_milli(const char *q, int64_t *out);
int na_mem_bytes(const char *q, int64_t *out);

/* The address of slot n of cidr (network ip_be, prefix plen): slots start
 * at .2 (.1 is the pods' gateway); 0 when the slot is past the range. */
uint32_t na_slot_ip(uint32_t net_be, int plen, int slot);
/* A locally administered MAC derived from the pod address. */
void na_pod_mac(uint32_t ip_be, uint8_t mac[6]);

#endif
