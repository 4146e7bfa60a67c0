/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every Kubernetes-shaped API of the daemons shares: the rules for
 * names and labels, Status error bodies that carry the field path, object
 * uids and timestamps. Pure functions (no I/O), unit-tested directly.
 */
#ifndef CTL_K8S_H
#define CTL_K8S_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#define CTL_K8S_UID_LEN 36
#define CTL_K8S_TS_LEN	20 /* 2025-01-31T12:00:00Z */

/* Validators: NULL if valid, else what is wrong ("must be ..."). */
const char *ctl_k8s_dns_label(const char *s);	  /* a DNS-1123 label: cluster names */
const char *ctl_k8s_dns_subdomain(const char *s); /* a DNS-1123 subdomain: object names */
const char *ctl_k8s_label_key(const char *s);	  /* [PREFIX/]NAME */
const char *ctl_k8s_label_value(const char *s);

/* A Status object (kind Status, apiVersion v1, status Failure); reason
 * NULL: the usual one for the code; field NULL or "": no details.field.
 * Text that is not UTF-8 (jansson refuses it) is quoted as \xNN. */
json_t *ctl_k8s_status(int code, const char *reason, const char *message, const char *field);
const char *ctl_k8s_reason(int code);

/* RFC 7386 JSON merge patch: target (may be NULL: absent) with patch
 * applied, a new value; neither argument is changed. An object patch
 * merges member by member (null removes a member); any other patch
 * replaces the target whole. NULL when out of memory. */
json_t *ctl_k8s_merge_patch(json_t *target, json_t *patch);

/* A fieldSelector (kubectl sends "metadata.name=NAME" to get, watch or
 * wait for one object): name gets NAME, or "" when s is empty. Only
 * metadata.name with = or == is taken: anything else is -1 and err says
 * what was refused, quoting it. */
int ctl_k8s_field_selector(const char *s, char *name, size_t len, char *err, size_t errlen);

/* A labelSelector: "k=v", "k==v", "k!=v", "k", "!k" joined by ',', every
 * term must hold (an empty selector takes everything). Keys and values
 * are checked as labels' are. */
#define CTL_K8S_SEL_MAX 32
enum ctl_k8s_sel_op { CTL_SEL_EQ, CTL_SEL_NE, CTL_SEL_EXISTS, CTL_SEL_NOT_EXISTS };
struct ctl_k8s_selector {
	int n;
	struct {
		char key[318]; /* a prefix (253) '/' a name (63), NUL */
		char value[64];
		enum ctl_k8s_sel_op op;
	} req[CTL_K8S_SEL_MAX];
};
/* 0, or -1 and err saying what is wrong, quoting the term. */
int ctl_k8s_selector_parse(const char *s, struct ctl_k8s_selector *sel, char *err, size_t errlen);
/* Do labels (an object, or NULL: none) satisfy every term? */
bool ctl_k8s_selector_match(const struct ctl_k8s_selector *sel, json_t *labels);

/* Is the Content-Type ct the media type mt ("application/json"), with or
 * without parameters (";charset=utf-8"), case aside? */
bool ctl_k8s_media_is(const char *ct, const char *mt);

/* A random (version 4) uid; an RFC 3339 UTC timestamp to the second. */
void ctl_k8s_uuid4(char out[CTL_K8S_UID_LEN + 1]);
void ctl_k8s_timestamp(time_t t, char out[CTL_K8S_TS_LEN + 1]);

#endif
