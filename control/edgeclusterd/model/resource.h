/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The edge.xgate.io/v1 resources: Mission validation with the path of the
 * first bad field, serialisation of stored rows into objects, label
 * selectors, placement; names, labels and Status errors by the Kubernetes
 * rules are the base's (ctl_k8s.h).
 * Nothing here does I/O, so all of it is unit-tested directly.
 */
#ifndef ECD_RESOURCE_H
#define ECD_RESOURCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ctl_k8s.h"

#define EC_GROUP	    "edge.xgate.io"
#define EC_API_VERSION	    "edge.xgate.io/v1"
#define EC_MISSION_NAME_MAX 253
#define EC_UID_LEN	    CTL_K8S_UID_LEN
#define EC_TS_LEN	    CTL_K8S_TS_LEN /* 2025-01-31T12:00:00Z */

/* Validators: NULL if valid, else what is wrong ("must be ..."): the
 * base's (ctl_k8s.h), under the names this daemon's code and tests use. */
static inline const char *ec_check_dns_label(const char *s)
{
	return ctl_k8s_dns_label(s);
}
static inline const char *ec_check_dns_subdomain(const char *s)
{
	return ctl_k8s_dns_subdomain(s);
}
static inline const char *ec_check_label_key(const char *s)
{
	return ctl_k8s_label_key(s);
}
static inline const char *ec_check_label_value(const char *s)
{
	return ctl_k8s_label_value(s);
}

/* A validation failure: HTTP code (400 or 422; a MissionList also 409 and
 * 413), the field path ("" for the whole body) and the message "PATH: what
 * is wrong". */
struct ec_verr {
	int code;
	char field[256];
	char msg[640];
};

enum ec_op { EC_OP_CREATE, EC_OP_REPLACE };

/* What a valid Mission body carries. labels and spec are new references. */
struct ec_mission_in {
	const char *name; /* borrowed from the body */
	const char *uid;  /* NULL if absent */
	uint64_t rv;	  /* valid if has_rv */
	bool has_rv;
	json_t *labels;
	json_t *annotations;
	json_t *spec;
};

int ec_mission_validate(json_t *obj, enum ec_op op, struct ec_mission_in *in, struct ec_verr *e);
void ec_mission_in_free(struct ec_mission_in *in);

/* A MissionList body (a bulk create): the envelope (apiVersion, kind, items;
 * metadata ignored), at most max_items items, each a valid Mission for a
 * create (paths "items[3].spec..."), each at most max_item bytes as compact
 * JSON (413), no name twice (409 at the second). On success *ins holds the
 * *n items in list order (ec_mission_list_free); names borrow from obj. */
bool ec_is_list(json_t *obj, const char *kind);
int ec_mission_list_validate(json_t *obj, size_t max_items, size_t max_item,
			     struct ec_mission_in **ins, size_t *n, struct ec_verr *e);
void ec_mission_list_free(struct ec_mission_in *ins, size_t n);

/* A stored object (missions and clusters share the shape). JSON columns are
 * text as stored; rows from the store own their strings. */
struct ec_row {
	char name[EC_MISSION_NAME_MAX + 1];
	char uid[EC_UID_LEN + 1];
	uint64_t rv;
	char created[EC_TS_LEN + 1];
	char *labels, *spec, *state;
	char *annotations; /* NULL: none (clusters) */
};
void ec_row_free(struct ec_row *r);
json_t *ec_object_json(const char *kind, const struct ec_row *r);
json_t *ec_list_json(const char *kind, uint64_t revision, json_t *items);

/* A Kubernetes Status object; reason NULL: the usual one for the code
 * (409 is "Conflict"; a create of an existing name passes "AlreadyExists");
 * field may be NULL or "". */
static inline json_t *ec_status(int code, const char *reason, const char *message,
				const char *field)
{
	return ctl_k8s_status(code, reason, message, field);
}
static inline const char *ec_reason(int code)
{
	return ctl_k8s_reason(code);
}

/* labelSelector: the base's (ctl_k8s_selector_parse, ctl_k8s_selector_match). */

/* Does a mission spec place itself on cluster NAME carrying LABELS? */
bool ec_placement_match(json_t *spec, const char *name, json_t *labels);

static inline void ec_uuid4(char out[EC_UID_LEN + 1])
{
	ctl_k8s_uuid4(out);
}
static inline void ec_timestamp(time_t t, char out[EC_TS_LEN + 1])
{
	ctl_k8s_timestamp(t, out);
}

/* Is the stored JSON text the same value as v (key order and spacing aside)? */
bool ec_json_same_text(const char *stored, json_t *v);

#endif
