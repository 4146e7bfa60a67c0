/* SPDX-License-Identifier: BSD-2-Clause */
/* fornaxd configuration: an ini file, [API] [Store] [Nodes]. */
#ifndef FX_CONFIG_H
#define FX_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_conf.h"
#include "ctl_token.h"

#define FX_MAX_TOKENS 64
#define FX_TOKEN_MIN  16
#define FX_TOKEN_MAX  256
#define FX_PATH_MAX   256

enum { FX_STORE_SQLITE, FX_STORE_ETCD };

struct fx_conf {
	struct sockaddr_in listen; /* [API] Listen, default 127.0.0.1:8470 */
	char tls_cert[FX_PATH_MAX], tls_key[FX_PATH_MAX];
	unsigned char tokens[FX_MAX_TOKENS][CTL_TOKEN_HASH_LEN]; /* digests only */
	int n_tokens;
	size_t max_body; /* [API] MaxBody */
	/* [API] MaxSessionsPerClient: sessions not Closed (nor Timeout) one
	 * token may hold; 0: no limit */
	unsigned max_sess_client;

	int store; /* [Store] Backend: FX_STORE_SQLITE (default) or FX_STORE_ETCD */
	char database[FX_PATH_MAX]; /* [Store] Database (sqlite) */
	/* [Store] etcd's keys (Endpoints, ..., ElectionTTL); Prefix by default /xgate/fornaxd/ */
	struct ctl_conf_etcd etcd_conf;
	bool election; /* [Store] Election = on: active/standby on etcd */

	unsigned char join_tokens[FX_MAX_TOKENS][CTL_TOKEN_HASH_LEN]; /* [Nodes] JoinToken */
	int n_join_tokens;
	uint32_t pod_net;	   /* [Nodes] PodCIDR (host order), split into per-node subnets */
	int pod_net_bits;	   /* its prefix length */
	int node_bits;		   /* [Nodes] NodePrefix: each node's subnet prefix length */
	uint32_t vni;		   /* [Nodes] VNI */
	unsigned port_lo, port_hi; /* [Nodes] PortRange: form 1 endpoint ports */
	unsigned state_s;	   /* [Nodes] StateSeconds */
	size_t queue_max;	   /* [Nodes] SendQueueMax */
	int endpoint_form;	   /* [Nodes] EndpointForm: 1 (the node's), 2 (an ingress host's) */
};

/* Parse; on error -1 and "FILE:LINE: what is wrong" in err. */
int fx_conf_load(const char *path, struct fx_conf *c, char *err, size_t errlen);
int fx_conf_parse(const char *file, const char *text, struct fx_conf *c, char *err, size_t errlen);

#endif
