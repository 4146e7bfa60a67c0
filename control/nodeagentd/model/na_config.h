/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nodeagentd's file: [Node] [Core] [Store] [Pods] (docs/serverless.md,
 * "nodeagentd"). One parser: every error names the line and quotes the value.
 */
#ifndef NA_CONFIG_H
#define NA_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define NA_NAME_MAX  63
#define NA_MAX_CORES 4 /* [Core] URL: fornaxd of an active/standby set */

enum na_cgroup_mode { NA_CG_AUTO, NA_CG_V1, NA_CG_V2, NA_CG_NONE };
/* pod: runs pods (form 1 endpoints on its PublicIp, the pod side of form 2);
 * ingress: runs no pod, holds form 2 endpoints on its PublicIp */
enum na_role { NA_ROLE_POD, NA_ROLE_INGRESS };

struct na_config {
	/* [Node] */
	char name[NA_NAME_MAX + 1];
	uint32_t ip_be, public_ip_be;
	char instance[64]; /* the xgate instance the node's programs use */
	char netns[64];	   /* "": this one; else the daemon enters /run/netns/NAME */
	int64_t cpu_milli, mem_bytes;
	unsigned max_pods;
	enum na_role role; /* Role, default pod */
	/* [Core] */
	char url[NA_MAX_CORES * 256]; /* [Core] URL: one, or several comma-separated */
	char ca[PATH_MAX];
	char join_token[128];
	unsigned reconnect_max_s;
	/* [Store] */
	char database[PATH_MAX];
	/* [Pods] */
	char run_dir[200];     /* pods' logs and session sockets */
	char netns_prefix[16]; /* + slot: the pod's network namespace */
	char veth_prefix[11];  /* + slot: the host side of its veth (15 chars at most) */
	enum na_cgroup_mode cgroup;
	char cgroup_parent[128]; /* under each hierarchy */
	char net_script[PATH_MAX];
	char xgate[PATH_MAX];
	unsigned start_timeout_s; /* the app's port must accept within it */
	unsigned mtu;
	/* the session service's ping: every ping_s (0: none); a pod that
	 * answers none of ping_misses in a row has failed */
	unsigned ping_s, ping_misses;
	/* a container's log past log_max_bytes is rotated on the tick,
	 * log_files rotated copies kept (NAME.log.1 the newest) */
	unsigned log_max_bytes, log_files;
};

/* Read and check the whole file: 0, or -1 with "FILE:LINE: what" in err. */
int na_conf_load(const char *path, struct na_config *c, char *err, size_t errlen);
/* The same on text (the unit tests). */
int na_conf_parse(const char *file, const char *text, void *conf, char *err, size_t errlen);
const char *na_cgroup_mode_name(enum na_cgroup_mode m);

#endif
