// SPDX-License-Identifier: BSD-2-Clause
/*
 * The node as a whole: its start (the store read, the pods that still run
 * adopted, the others reported ended), its configuration from the core
 * (the pod CIDR, the VNI, the endpoint ports; the node's part of the pod
 * network made by the script's `node` step, then NodeReady), and its
 * state as the link sends it.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na_agent_int.h"

static int load_pod(void *arg, struct na_pod *p)
{
	struct na_agent *a = arg;
	struct pod_rt *r = calloc(1, sizeof(*r));

	if (!r) {
		json_decref(p->spec);
		return -1;
	}
	r->a = a;
	r->p = *p;
	snprintf(r->netns, sizeof(r->netns), "%s%d", a->conf->netns_prefix, r->p.slot);
	snprintf(r->veth, sizeof(r->veth), "%s%d", a->conf->veth_prefix, r->p.slot);
	snprintf(r->cgname, sizeof(r->cgname), "slot%d", r->p.slot);
	snprintf(r->dir, sizeof(r->dir), "%s/pods/slot%d", a->conf->run_dir, r->p.slot);
	r->next = a->pods;
	a->pods = r;
	return 0;
}

static int load_sess(void *arg, struct na_sess *s)
{
	return sess_adopt(arg, s);
}

/* The configuration the core gave last time: the VNI and ports the
 * adopted pods and sessions use until it speaks again. */
static int apply_conf(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	const char *cidr = json_string_value(json_object_get(m, "podCIDR"));
	const char *gw = json_string_value(json_object_get(m, "gateway"));
	json_t *ep = json_object_get(m, "endpoints");
	json_t *range = json_object_get(ep, "portRange");
	json_int_t vni = json_integer_value(json_object_get(m, "vni"));
	json_int_t lo = json_integer_value(json_array_get(range, 0));
	json_int_t hi = json_integer_value(json_array_get(range, 1));
	json_int_t ss = json_integer_value(json_object_get(m, "stateSeconds"));
	bool ingress = a->conf->role == NA_ROLE_INGRESS;
	json_int_t form = json_integer_value(json_object_get(ep, "form"));
	uint32_t net = 0, g = 0;
	int plen = 0;

	/* an ingress host runs no pod: the pod network is not its business */
	if (!ingress && (!cidr || xg_parse_cidr(cidr, &net, &plen) || plen > 30))
		return snprintf(err, errlen, "podCIDR"), -1;
	if (vni < 1 || vni > 0xffffff)
		return snprintf(err, errlen, "vni"), -1;
	if (!ingress && (!gw || inet_pton(AF_INET, gw, &g) != 1))
		return snprintf(err, errlen, "gateway"), -1;
	if (form != (ingress ? 2 : 1))
		return snprintf(err, errlen, "endpoints.form %" JSON_INTEGER_FORMAT ": %d on a%s",
				form, ingress ? 2 : 1, ingress ? "n ingress host" : " pod node"),
		       -1;
	if (lo < 1 || hi > 65535 || lo > hi)
		return snprintf(err, errlen, "endpoints.portRange"), -1;
	a->net_be = net;
	a->plen = plen;
	a->vni = (uint32_t)vni;
	a->gw_be = g;
	a->port_lo = (uint16_t)lo;
	a->port_hi = (uint16_t)hi;
	if (a->port_next < lo || a->port_next > hi)
		a->port_next = (uint16_t)lo;
	a->state_s = ss >= 1 && ss <= 3600 ? (unsigned)ss : 60;
	a->configured = true;
	return 0;
}

static void open_maps(struct na_agent *a)
{
	if (a->maps_open)
		return;
	if (xg_maps_open(a->conf->instance, false, &a->maps))
		return;
	if (xg_sess_open(&a->maps, &a->smaps)) {
		xg_maps_close(&a->maps);
		return;
	}
	a->maps_open = true;
}

struct na_agent *na_agent_start(const struct na_config *conf, struct na_store *store,
				struct lws_context *lws, struct ctl_exec *x,
				const struct na_agent_events *ev)
{
	struct na_agent *a = calloc(1, sizeof(*a));
	char err[256], buf[4096];
	struct pod_rt *r, *next;

	if (!a)
		return NULL;
	a->conf = conf;
	a->store = store;
	a->lws = lws;
	a->x = x;
	a->ev = *ev;
	if (na_cg_init(&a->cg, conf->cgroup, NULL, conf->cgroup_parent, err, sizeof(err))) {
		ctl_log("%s", err);
		free(a);
		return NULL;
	}
	if (!(a->net = na_net_new(err, sizeof(err)))) {
		ctl_log("the pods' network: %s", err);
		free(a);
		return NULL;
	}
	if (!(a->svcs = na_svcs_new(lws))) {
		na_net_free(a->net);
		ctl_log("cannot make the session service's vhost");
		free(a);
		return NULL;
	}
	if (na_store_meta_get(store, "configuration", buf, sizeof(buf)) == 0) {
		json_t *m = json_loads(buf, 0, NULL);

		apply_conf(a, m, err, sizeof(err));
		json_decref(m);
		a->configured = false; /* until the core confirms it */
	}
	open_maps(a);
	if (na_store_load(store, load_pod, load_sess, a)) {
		ctl_log("store: %s", na_store_errmsg(store));
		na_agent_stop(a);
		return NULL;
	}
	for (r = a->pods; r; r = next) {
		next = r->next;
		if (na_pod_final(r->p.state)) { /* ended before the last stop: finish it */
			char reason[NA_REASON_MAX], msg[NA_MSG_MAX];

			snprintf(reason, sizeof(reason), "%s", r->p.reason);
			snprintf(msg, sizeof(msg), "%s", r->p.message);
			r->p.pid = 0;
			pod_end(r, r->p.state, reason, msg);
			continue;
		}
		if (r->p.pid > 0 && na_proc_alive(r->p.pid, r->p.start)) {
			json_decref(r->p.spec); /* it runs: the store keeps its spec */
			r->p.spec = NULL;
			r->net_up = true;
			r->frozen = na_cg_frozen(&a->cg, r->cgname, r->p.pid);
			r->started_ms = ctl_now_ms();
			ctl_log("pod %s: adopted (pid %d, %s%s)", r->p.id, (int)r->p.pid,
				na_pod_state_name(r->p.state), r->frozen ? ", frozen" : "");
			pod_svc_connect(r);
			continue;
		}
		ctl_log("pod %s: its process ended while nodeagentd was down", r->p.id);
		r->net_up = true;
		r->p.pid = 0; /* its pid may be another process's by now */
		pod_end(r, r->p.terminating ? NA_POD_TERMINATED : NA_POD_FAILED, "ExitedWhileDown",
			"the pod's process ended while the agent was down");
	}
	/* an empty store on a node that ran pods: they are nobody's now */
	a->fresh = na_store_revision(store) == 0 && !a->pods;
	if (a->fresh) {
		int n = na_cg_sweep(&a->cg);

		if (n)
			ctl_log("a new store: %d pod cgroup(s) of a lost one killed and removed",
				n);
	}
	agent_tick_soon(a);
	return a;
}

void na_agent_stop(struct na_agent *a)
{
	struct pod_rt *r;

	if (!a)
		return;
	/* the pods stay: the next start adopts them */
	a->stopping = true;
	lws_sul_cancel(&a->tick);
	if (a->node_job)
		ctl_job_cancel(a->node_job);
	while ((r = a->pods)) {
		a->pods = r->next;
		lws_sul_cancel(&r->net_sul);
		na_svc_free(r->svc);
		json_decref(r->p.spec);
		free(r);
	}
	sess_free_all(a);
	if (a->maps_open) {
		xg_sess_close(&a->smaps);
		xg_maps_close(&a->maps);
	}
	na_svcs_free(a->svcs);
	na_net_free(a->net);
	free(a);
}

/* A new store: the ingress entries of the node's public address and port
 * range are a lost store's sessions, and so is every pod side of a form 2
 * session (the pods they gate are gone with the lost store). */
static void sweep_ingress(struct na_agent *a)
{
	struct xg_sess_key k, next, *prev, gone[256];
	unsigned n;

	do {
		n = 0;
		prev = NULL;
		while (n < 256 && !bpf_map_get_next_key(a->smaps.fwd, prev, &next)) {
			uint16_t port = ntohs(next.port_be);
			struct xg_sess v;

			k = next;
			prev = &k;
			if ((next.ip_be == a->conf->public_ip_be && port >= a->port_lo &&
			     port <= a->port_hi) ||
			    (!bpf_map_lookup_elem(a->smaps.fwd, &next, &v) &&
			     (v.flags & XG_SESS_POD_SIDE)))
				gone[n++] = next;
		}
		for (unsigned i = 0; i < n; i++)
			xg_sess_del(&a->smaps, &gone[i]);
		if (n)
			ctl_log("a new store: %u ingress entries of a lost one removed", n);
	} while (n == 256);
}

static void node_done(void *arg, const struct ctl_job_result *res)
{
	struct na_agent *a = arg;

	a->node_job = NULL;
	if (a->stopping)
		return;
	/* the ingress role's `vpc add` exits 4 when the VPC is there already */
	if (res->end != CTL_JOB_EXITED ||
	    (res->code && !(a->conf->role == NA_ROLE_INGRESS && res->code == 4))) {
		ctl_log("the node's pod network: %.300s", res->err ? res->err : "failed");
		return; /* not ready: the next configuration tries again */
	}
	open_maps(a);
	if (!a->maps_open) {
		ctl_log("the node's pod network: cannot open xgate instance '%s'",
			a->conf->instance);
		return;
	}
	if (a->fresh)
		sweep_ingress(a);
	a->fresh = false;
	a->net_ready = true;
	if (a->ev.ready)
		a->ev.ready(a->ev.arg);
}

int na_agent_configure(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	char vni[16], cidr[40], ip[INET_ADDRSTRLEN], *dump;
	char *argv[] = {(char *)a->conf->net_script, "node", (char *)a->conf->instance,
			(char *)a->conf->xgate, vni, cidr, ip,
			/* a new store: the namespaces and veths of a lost one go too */
			a->fresh ? (char *)a->conf->netns_prefix : NULL,
			(char *)a->conf->veth_prefix, NULL};
	/* the ingress host needs only the VPC its entries name */
	char *ing_argv[] = {
	    (char *)a->conf->xgate, "-n", (char *)a->conf->instance, "vpc", "add", vni, NULL};
	struct ctl_job_spec s;
	uint32_t old_net = a->net_be;
	int old_plen = a->plen;

	if (apply_conf(a, m, err, errlen))
		return -1;
	if (a->pods && (old_net != a->net_be || old_plen != a->plen))
		ctl_log("the core moved the pod CIDR: the pods keep their addresses");
	dump = json_dumps(m, JSON_COMPACT);
	if (dump) {
		/* the credential is kept on its own, not in every copy */
		json_t *c = json_deep_copy(m);

		json_object_del(c, "credential");
		free(dump);
		dump = json_dumps(c, JSON_COMPACT);
		json_decref(c);
		na_store_meta_put(a->store, "configuration", dump ? dump : "{}");
		free(dump);
	}
	snprintf(vni, sizeof(vni), "%u", a->vni);
	inet_ntop(AF_INET, &a->net_be, ip, sizeof(ip));
	snprintf(cidr, sizeof(cidr), "%s/%d", ip, a->plen);
	inet_ntop(AF_INET, &a->conf->ip_be, ip, sizeof(ip));
	if (a->node_job)
		return 0; /* the one running makes the same network */
	memset(&s, 0, sizeof(s));
	s.argv = a->conf->role == NA_ROLE_INGRESS ? ing_argv : argv;
	s.timeout_ms = 60000;
	s.done = node_done;
	s.arg = a;
	a->node_job = ctl_exec_run(a->x, &s);
	return 0;
}

bool na_agent_ready(const struct na_agent *a)
{
	return a->configured && a->net_ready;
}

json_t *na_agent_node_json(const struct na_agent *a)
{
	char ip[INET_ADDRSTRLEN], pub[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a->conf->ip_be, ip, sizeof(ip));
	inet_ntop(AF_INET, &a->conf->public_ip_be, pub, sizeof(pub));
	bool ingress = a->conf->role == NA_ROLE_INGRESS;

	return json_pack("{s:s,s:s,s:s,s:s,s:{},s:{s:I,s:I,s:i}}", "name", a->conf->name, "ip", ip,
			 "publicIp", pub, "role", ingress ? "ingress" : "pod", "labels", "capacity",
			 "cpu", (json_int_t)a->conf->cpu_milli, "memory",
			 (json_int_t)a->conf->mem_bytes, "pods",
			 ingress ? 0 : (int)a->conf->max_pods);
}

json_t *na_agent_state_msg(const struct na_agent *a, const char *type)
{
	json_t *pods = json_array(), *sess = json_array(), *m;

	if (a->conf->role == NA_ROLE_INGRESS) {
		m = json_pack("{s:s,s:I,s:o,s:o,s:o,s:o}", "type", type, "nodeRevision",
			      (json_int_t)na_store_revision(a->store), "node",
			      na_agent_node_json(a), "pods", pods, "sessions", sess, "ingress",
			      ing_list_json(a));
		return m;
	}
	for (struct pod_rt *r = a->pods; r; r = r->next)
		json_array_append_new(pods, na_pod_json(&r->p));
	for (struct sess_rt *x = a->sess; x; x = x->next)
		if (!na_sess_final(x->s.state))
			json_array_append_new(sess, na_sess_json(&x->s));
	return json_pack("{s:s,s:I,s:o,s:o,s:o}", "type", type, "nodeRevision",
			 (json_int_t)na_store_revision(a->store), "node", na_agent_node_json(a),
			 "pods", pods, "sessions", sess);
}
