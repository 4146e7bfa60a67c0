/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the etcd client's files only (ctl_etcd_json.c): the gateway's
 * encodings. */
#ifndef CTL_ETCD_INT_H
#define CTL_ETCD_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* o[name] as an int64: the gateway sends a string, other gateways a number;
 * 0 when absent */
int64_t ctl_etcd_jint(json_t *o, const char *name);
/* an int64 as the gateway takes it (a decimal string) */
json_t *ctl_etcd_jnum(int64_t v);
/* set o[name] to the base64 of (p, len); -1 when out of memory */
int ctl_etcd_jb64(json_t *o, const char *name, const void *p, size_t len);

#endif
