// SPDX-License-Identifier: BSD-2-Clause
/*
 * What etcd's JSON gateway reads and writes (ctl_etcd.h, ctl_etcd_int.h):
 * keys and values travel as base64, int64s as decimal strings.
 */
#include <inttypes.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_etcd.h"
#include "ctl_etcd_int.h"

char *ctl_etcd_b64(const void *p, size_t len)
{
	size_t n = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	char *b = malloc(n);

	if (b)
		sodium_bin2base64(b, n, p, len, sodium_base64_VARIANT_ORIGINAL);
	return b;
}

/* base64 text -> a NUL-terminated copy; -1 if it is not base64 */
static int unb64(const char *t, char **out, size_t *len)
{
	size_t tl = strlen(t), n;
	char *b = malloc(tl + 1);

	if (!b || sodium_base642bin((unsigned char *)b, tl, t, tl, NULL, &n, NULL,
				    sodium_base64_VARIANT_ORIGINAL)) {
		free(b);
		return -1;
	}
	b[n] = 0;
	*out = b;
	if (len)
		*len = n;
	return 0;
}

char *ctl_etcd_prefix_end_b64(const char *prefix)
{
	size_t n = strlen(prefix);
	unsigned char *end = (unsigned char *)strdup(prefix);
	char *b;

	if (!end)
		return NULL;
	/* the first key after every key with this prefix: the last byte that
	 * can grow, grown, the rest cut; "\0" (every key) if none can */
	while (n && end[n - 1] == 0xff)
		n--;
	if (n)
		end[n - 1]++;
	b = n ? ctl_etcd_b64(end, n) : ctl_etcd_b64("", 1);
	free(end);
	return b;
}

int64_t ctl_etcd_jint(json_t *o, const char *name)
{
	json_t *v = json_object_get(o, name);

	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

json_t *ctl_etcd_jnum(int64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRId64, v);
	return json_string(b);
}

int ctl_etcd_jb64(json_t *o, const char *name, const void *p, size_t len)
{
	char *b = ctl_etcd_b64(p, len);
	int rc = b ? json_object_set_new(o, name, json_string(b)) : -1;

	free(b);
	return rc;
}

int ctl_etcd_kv_parse(json_t *o, struct ctl_etcd_kv *kv)
{
	const char *k = json_string_value(json_object_get(o, "key"));
	const char *v = json_string_value(json_object_get(o, "value"));

	memset(kv, 0, sizeof(*kv));
	if (!k || unb64(k, &kv->key, NULL) || unb64(v ? v : "", &kv->value, &kv->value_len)) {
		ctl_etcd_kv_clear(kv);
		return -1;
	}
	kv->create_rev = ctl_etcd_jint(o, "create_revision");
	kv->mod_rev = ctl_etcd_jint(o, "mod_revision");
	kv->version = ctl_etcd_jint(o, "version");
	kv->lease = ctl_etcd_jint(o, "lease");
	return 0;
}

void ctl_etcd_kv_clear(struct ctl_etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

void ctl_etcd_kvs_free(struct ctl_etcd_kvs *r)
{
	for (size_t i = 0; r->kv && i < r->n; i++)
		ctl_etcd_kv_clear(&r->kv[i]);
	free(r->kv);
	memset(r, 0, sizeof(*r));
}
