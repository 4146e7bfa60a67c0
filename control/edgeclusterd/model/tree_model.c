// SPDX-License-Identifier: BSD-2-Clause
/* The tree's vocabulary: pure functions, see tree_model.h. */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "tree_model.h"

static const char *const phases[] = {"inactive", "registering",	  "install_in_progress",
				     "active",	 "deregistering", "uninstall_in_progress"};

const char *tree_phase_name(enum ec_phase p)
{
	return p <= PH_UNINSTALLING ? phases[p] : "?";
}

bool tree_path_ok(const char *p)
{
	char part[EC_NAME_MAX + 2];
	int n = 0;

	while (*p) {
		size_t l = strcspn(p, "/");

		if (!l || l > EC_NAME_MAX || ++n > 32)
			return false;
		memcpy(part, p, l);
		part[l] = 0;
		if (ec_check_dns_label(part))
			return false;
		p += l;
		if (*p == '/' && !*++p)
			return false; /* trailing slash */
	}
	return n > 0;
}

void tree_new_credential(char out[TREE_CRED_LEN + 1])
{
	unsigned char raw[32];
	char b64[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	snprintf(out, TREE_CRED_LEN + 1, "%s", b64);
	sodium_memzero(raw, sizeof(raw));
}

int tree_hub_url(const char *s, struct ctl_url *u, char *err, size_t errlen)
{
	if (ctl_url_parse(s, CTL_SCHEMES_WS, u, err, errlen))
		return -1;
	if (!strcmp(u->path, "/"))
		snprintf(u->path, sizeof(u->path), "%s", TREE_HUB_PATH);
	return 0;
}

unsigned tree_parent_count(const char *list)
{
	unsigned n = 0;

	for (const char *p = list; *p;) {
		p += strspn(p, ", ");
		if (!*p)
			break;
		n++;
		p += strcspn(p, ", ");
	}
	return n;
}

int tree_parent_at(const char *list, unsigned i, char *out, size_t len)
{
	unsigned n = 0;

	for (const char *p = list; *p;) {
		size_t w;

		p += strspn(p, ", ");
		if (!*p)
			break;
		w = strcspn(p, ", ");
		if (n++ == i) {
			if (w >= len)
				return -1;
			memcpy(out, p, w);
			out[w] = 0;
			return 0;
		}
		p += w;
	}
	return -1;
}

bool tree_in_subtree(const char *k, const char *child)
{
	size_t n = strlen(child);

	return !strncmp(k, child, n) && (k[n] == 0 || k[n] == '/');
}

static bool labels_ok(json_t *l)
{
	const char *k;
	json_t *v;

	if (l && !json_is_object(l))
		return false;
	json_object_foreach(l, k, v) if (ec_check_label_key(k) || !json_is_string(v) ||
					 ec_check_label_value(json_string_value(v))) return false;
	return true;
}

json_t *tree_row_from(json_t *o, const char *path, const char *last_hb)
{
	json_t *md = json_object_get(o, "metadata"), *st = json_object_get(o, "state");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *uid = json_string_value(json_object_get(md, "uid"));
	const char *created = json_string_value(json_object_get(md, "creationTimestamp"));
	const char *slash = strrchr(path, '/');
	json_t *spec = json_object_get(o, "spec"), *labels = json_object_get(md, "labels"), *state;

	if (!name || strcmp(slash ? slash + 1 : path, name) || !uid || strlen(uid) > EC_UID_LEN ||
	    !labels_ok(json_object_get(md, "labels")) || (spec && !json_is_object(spec)) ||
	    (st && !json_is_object(st)))
		return NULL;
	state = st ? json_deep_copy(st) : json_object();
	json_object_set_new(state, "path", json_string(path));
	if (last_hb)
		json_object_set_new(state, "lastHeartbeat", json_string(last_hb));
	json_object_del(state, "attach"); /* its own business, not its parent's */
	json_object_del(state, "parentLink");
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:o},s:o,s:o}", "apiVersion", EC_API_VERSION,
			 "kind", "EdgeCluster", "metadata", "name", name, "uid", uid,
			 "creationTimestamp", created ? created : "", "labels",
			 labels ? json_incref(labels) : json_object(), "spec",
			 spec ? json_incref(spec) : json_object(), "state", state);
}
