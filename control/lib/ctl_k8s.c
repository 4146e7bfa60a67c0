// SPDX-License-Identifier: BSD-2-Clause
/* Kubernetes names and labels, Status bodies, uids and timestamps; see
 * ctl_k8s.h. */
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl_k8s.h"

/* ---- names and labels ---- */

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
	return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool dns_label_ok(const char *s, size_t n)
{
	if (!n || n > 63 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

const char *ctl_k8s_dns_label(const char *s)
{
	if (!dns_label_ok(s, strlen(s)))
		return "must be a DNS-1123 label (at most 63 of a-z, 0-9 and '-', starting and "
		       "ending with a letter or digit)";
	return NULL;
}

static bool dns_subdomain_ok(const char *s, size_t n)
{
	const char *p = s, *end = s + n;

	if (!n || n > 253)
		return false;
	while (p <= end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		const char *e = dot ? dot : end;

		if (!dns_label_ok(p, (size_t)(e - p)))
			return false;
		p = e + 1;
	}
	return true;
}

const char *ctl_k8s_dns_subdomain(const char *s)
{
	if (!dns_subdomain_ok(s, strlen(s)))
		return "must be a DNS-1123 subdomain (at most 253 of a-z, 0-9, '-' and '.', each "
		       "dot-separated part starting and ending with a letter or digit)";
	return NULL;
}

/* Kubernetes "qualified name" part: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, <= 63 */
static bool qualified_ok(const char *s, size_t n, bool empty_ok)
{
	if (!n)
		return empty_ok;
	if (n > 63 || !alnum(s[0]) || !alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

const char *ctl_k8s_label_key(const char *s)
{
	const char *slash = strchr(s, '/');
	const char *name = slash ? slash + 1 : s;

	if (slash && !dns_subdomain_ok(s, (size_t)(slash - s)))
		return "prefix before '/' must be a DNS-1123 subdomain";
	if (!qualified_ok(name, strlen(name), false))
		return "must be at most 63 of A-Z, a-z, 0-9, '-', '_' and '.', starting and ending "
		       "with a letter or digit (optionally PREFIX/ before it)";
	return NULL;
}

const char *ctl_k8s_label_value(const char *s)
{
	if (!qualified_ok(s, strlen(s), true))
		return "must be empty or at most 63 of A-Z, a-z, 0-9, '-', '_' and '.', starting "
		       "and ending with a letter or digit";
	return NULL;
}

/* ---- Status ---- */

const char *ctl_k8s_reason(int code)
{
	static const struct {
		int code;
		const char *reason;
	} reasons[] = {{400, "BadRequest"},	   {401, "Unauthorized"},
		       {404, "NotFound"},	   {405, "MethodNotAllowed"},
		       {408, "Timeout"},	   {409, "Conflict"},
		       {411, "LengthRequired"},	   {413, "RequestEntityTooLarge"},
		       {414, "RequestURITooLong"}, {415, "UnsupportedMediaType"},
		       {422, "Invalid"},	   {501, "NotImplemented"},
		       {403, "Forbidden"},	   {410, "Expired"},
		       {429, "TooManyRequests"}};

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].code == code)
			return reasons[i].reason;
	return "InternalError";
}

/* The length of the UTF-8 character at s (n bytes left): 1-4, 0 if the
 * bytes are not one (overlong, surrogate, past U+10FFFF, cut short). */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80   ? 1
		     : s[0] < 0xc2 ? 0
		     : s[0] < 0xe0 ? 2
		     : s[0] < 0xf0 ? 3
		     : s[0] < 0xf5 ? 4
				   : 0;
	uint32_t cp;

	if (len < 2)
		return len;
	if (len > n)
		return 0;
	cp = s[0] & (0x3fu >> (len - 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A copy of s that jansson takes (it refuses invalid UTF-8): a bad byte
 * becomes the text \xNN, so the message still quotes what was sent; a
 * character cut short at the very end (a "%.200s" of a longer text) goes. */
static char *utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;
	char *out = malloc(4 * n + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_char(p + i, n - i), j = i + 1;

		if (k) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		while (j < n && (p[j] & 0xc0) == 0x80)
			j++;
		if (j == n && p[i] >= 0xc2 && p[i] < 0xf5 &&
		    n - i < (p[i] < 0xe0   ? 2u
			     : p[i] < 0xf0 ? 3u
					   : 4u))
			break;
		o += (size_t)sprintf(out + o, "\\x%02x", p[i]);
		i++;
	}
	out[o] = 0;
	return out;
}

json_t *ctl_k8s_status(int code, const char *reason, const char *message, const char *field)
{
	char *m = utf8_clean(message), *f = field && *field ? utf8_clean(field) : NULL;
	json_t *st = m ? json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion",
				   "v1", "status", "Failure", "message", m, "reason",
				   reason ? reason : ctl_k8s_reason(code), "code", code)
		       : NULL;

	if (st && f) {
		json_t *details = json_pack("{s:s}", "field", f);
		size_t fl = strlen(f);
		/* kubectl prints a 422 from its causes ("FIELD: MESSAGE"), not
		 * from the message, which already starts with the field */
		const char *cm = !strncmp(m, f, fl) && !strncmp(m + fl, ": ", 2) ? m + fl + 2 : m;

		if (details && code == 422)
			json_object_set_new(details, "causes",
					    json_pack("[{s:s,s:s,s:s}]", "reason",
						      "FieldValueInvalid", "message", cm, "field",
						      f));
		json_object_set_new(st, "details", details);
	}
	free(m);
	free(f);
	return st;
}

/* ---- patches ---- */

json_t *ctl_k8s_merge_patch(json_t *target, json_t *patch)
{
	json_t *out, *v;
	const char *k;

	if (!json_is_object(patch))
		return json_deep_copy(patch);
	/* a target that is not an object is replaced by one */
	out = json_is_object(target) ? json_deep_copy(target) : json_object();
	json_object_foreach(patch, k, v)
	{
		json_t *m;

		if (!out)
			break;
		if (json_is_null(v)) {
			json_object_del(out, k);
			continue;
		}
		m = ctl_k8s_merge_patch(json_object_get(out, k), v);
		if (!m || json_object_set_new(out, k, m)) {
			json_decref(out);
			out = NULL;
		}
	}
	return out;
}

int ctl_k8s_field_selector(const char *s, char *name, size_t len, char *err, size_t errlen)
{
	static const char key[] = "metadata.name";
	const char *v = s + sizeof(key) - 1;

	name[0] = 0;
	if (!*s)
		return 0;
	if (strncmp(s, key, sizeof(key) - 1) || *v != '=') {
		snprintf(err, errlen,
			 "fieldSelector: '%.200s' is not supported (only metadata.name=NAME)", s);
		return -1;
	}
	v += v[1] == '=' ? 2 : 1;
	if (strchr(v, ',') || strlen(v) >= len) {
		snprintf(err, errlen,
			 "fieldSelector: '%.200s' is not supported (one metadata.name=NAME, a name "
			 "of at most %zu bytes)",
			 s, len - 1);
		return -1;
	}
	snprintf(name, len, "%s", v);
	return 0;
}

bool ctl_k8s_media_is(const char *ct, const char *mt)
{
	size_t n = strlen(mt);

	ct += strspn(ct, " \t");
	if (strncasecmp(ct, mt, n))
		return false;
	ct += n;
	ct += strspn(ct, " \t");
	return !*ct || *ct == ';';
}

/* ---- identity and time ---- */

void ctl_k8s_uuid4(char out[CTL_K8S_UID_LEN + 1])
{
	unsigned char b[16];

	randombytes_buf(b, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, CTL_K8S_UID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
}

void ctl_k8s_timestamp(time_t t, char out[CTL_K8S_TS_LEN + 1])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, CTL_K8S_TS_LEN + 1, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- labelSelector ---- */

int ctl_k8s_selector_parse(const char *s, struct ctl_k8s_selector *sel, char *err, size_t errlen)
{
	const char *p = s;

	memset(sel, 0, sizeof(*sel));
	while (*p) {
		const char *end = strchr(p, ','), *why;
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char term[400], *op;

		if (sel->n >= CTL_K8S_SEL_MAX || n >= sizeof(term)) {
			snprintf(err, errlen, "at most %d terms of at most 399 characters",
				 CTL_K8S_SEL_MAX);
			return -1;
		}
		memcpy(term, p, n);
		term[n] = 0;
		p += n + (end ? 1 : 0);
		if (end && !*p) {
			snprintf(err, errlen, "trailing ','");
			return -1;
		}
		if ((op = strstr(term, "!="))) {
			sel->req[sel->n].op = CTL_SEL_NE;
			*op = 0;
			op += 2;
		} else if ((op = strchr(term, '='))) {
			sel->req[sel->n].op = CTL_SEL_EQ;
			*op++ = 0;
			if (*op == '=')
				op++;
		} else if (term[0] == '!') {
			sel->req[sel->n].op = CTL_SEL_NOT_EXISTS;
			memmove(term, term + 1, strlen(term));
		} else {
			sel->req[sel->n].op = CTL_SEL_EXISTS;
		}
		if (strlen(term) >= sizeof(sel->req[0].key) || (why = ctl_k8s_label_key(term))) {
			snprintf(err, errlen, "'%.64s': label key %s", term,
				 strlen(term) >= sizeof(sel->req[0].key) ? "too long" : why);
			return -1;
		}
		if (op && (strlen(op) > 63 || ctl_k8s_label_value(op))) {
			snprintf(err, errlen, "'%.64s': invalid label value '%.64s'", term, op);
			return -1;
		}
		strcpy(sel->req[sel->n].key, term);
		if (op)
			strcpy(sel->req[sel->n].value, op);
		sel->n++;
	}
	return 0;
}

bool ctl_k8s_selector_match(const struct ctl_k8s_selector *sel, json_t *labels)
{
	for (int i = 0; i < sel->n; i++) {
		json_t *v = json_object_get(labels, sel->req[i].key);
		bool eq =
		    v && json_is_string(v) && !strcmp(json_string_value(v), sel->req[i].value);
		enum ctl_k8s_sel_op op = sel->req[i].op;

		if ((op == CTL_SEL_EQ && !eq) || (op == CTL_SEL_NE && eq) ||
		    (op == CTL_SEL_EXISTS && !v) || (op == CTL_SEL_NOT_EXISTS && v))
			return false;
	}
	return true;
}
