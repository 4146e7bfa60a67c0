/* SPDX-License-Identifier: BSD-2-Clause */
/* edgeclusterd configuration: an ini file, [Cluster] [API] [Hub] [Store] [Intervals]. */
#ifndef ECD_CONFIG_H
#define ECD_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#include "ctl_conf.h"
#include "ctl_token.h"
#include "ctl_url.h"

#define EC_NAME_MAX	   63  /* cluster names are DNS-1123 labels */
#define EC_LABEL_KEY_MAX   317 /* prefix (253) + '/' + name (63) */
#define EC_LABEL_VALUE_MAX 63
#define EC_MAX_LABELS	   64
#define EC_MAX_TOKENS	   64
#define EC_TOKEN_MIN	   16
#define EC_TOKEN_MAX	   256
#define EC_HASH_LEN	   CTL_TOKEN_HASH_LEN
#define EC_PATH_MAX	   256

enum ec_driver { EC_DRIVER_LOCAL, EC_DRIVER_KUBECTL };
enum ec_distro { EC_DISTRO_NONE, EC_DISTRO_K8S, EC_DISTRO_K3S, EC_DISTRO_ARKTOS };

struct ec_label {
	char key[EC_LABEL_KEY_MAX + 1];
	char value[EC_LABEL_VALUE_MAX + 1];
};

struct ec_conf {
	char name[EC_NAME_MAX + 1];
	struct ec_label labels[EC_MAX_LABELS];
	int n_labels;
	enum ec_driver driver;
	enum ec_distro distro;
	char kubectl[EC_PATH_MAX];
	char kubeconfig[EC_PATH_MAX];
	/* as written: one URL, or several (roots on etcd, active/standby) separated
	 * by commas; the first parsed into parent_url */
	char parent[EC_PATH_MAX];
	struct ctl_url parent_url;
	char join_token[EC_TOKEN_MAX + 1];

	struct sockaddr_in listen;
	char tls_cert[EC_PATH_MAX], tls_key[EC_PATH_MAX], ca[EC_PATH_MAX];
	/* Only digests of the API tokens are kept (BLAKE2b-256): see ec_token_digest. */
	unsigned char tokens[EC_MAX_TOKENS][EC_HASH_LEN];
	int n_tokens;
	size_t max_body;
	size_t max_list_body; /* [API] MaxListBody: a MissionList POST (max_body if larger) */

	char database[EC_PATH_MAX]; /* SQLite; with etcd, the local view of etcd's rows */
	/* [Store] Backend = etcd: the root's state in etcd (store_etcd.h) */
	bool etcd;
	struct ctl_conf_etcd etcd_conf; /* its keys; Prefix by default /xgate/edge/NAME/ */

	unsigned heartbeat_s, heartbeat_timeout_s, statecheck_s, command_timeout_s;

	/* ---- the tree ---- */
	/* [Hub] JoinToken: digests of the tokens children may attach with */
	unsigned char join_tokens[EC_MAX_TOKENS][EC_HASH_LEN];
	int n_join_tokens;
	unsigned credential_s;	  /* [Hub] CredentialLifetime */
	size_t hub_queue_max;	  /* [Hub] SendQueueMax: bytes queued to one child at most */
	unsigned reconnect_max_s; /* [Intervals] ReconnectMax: the backoff's ceiling */
	/* [Intervals] ConnectTimeout: a link not up (welcome received) by then is dropped */
	unsigned connect_timeout_s;
	/* [Cluster] InstallScript/UninstallScript: run by the attach state machine */
	char install_script[EC_PATH_MAX], uninstall_script[EC_PATH_MAX];
};

/* Parse; on error returns -1 and writes "FILE:LINE: what is wrong" to err. */
int ec_conf_load(const char *path, struct ec_conf *c, char *err, size_t errlen);
int ec_conf_parse(const char *file, const char *text, struct ec_conf *c, char *err, size_t errlen);
/* The digest the daemon compares presented tokens by. */
static inline void ec_token_digest(const char *token, size_t len, unsigned char out[EC_HASH_LEN])
{
	ctl_token_digest(token, len, out);
}
const char *ec_driver_name(enum ec_driver d);
const char *ec_distro_name(enum ec_distro d);

#endif
