// SPDX-License-Identifier: BSD-2-Clause
/* The control base's Kubernetes rules: names and labels, Status bodies with
 * the field path (and text that is not UTF-8 quoted), uids, timestamps. */
#include <stdlib.h>
#include <string.h>

#include "ctl_k8s.h"
#include "unit.h"

/* RFC 7386 Appendix A, every row: original, patch, result */
static const char *const rfc7386[][3] = {
    {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
    {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
    {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
    {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
    {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
    {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
    {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
    {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
    {"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
    {"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
    {"{\"a\":\"foo\"}", "null", "null"},
    {"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
    {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
    {"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
    {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
    /* section 3's example */
    {"{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\",\"familyName\":\"Doe\"},"
     "\"tags\":[\"example\",\"sample\"],\"content\":\"This will be unchanged\"}",
     "{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\",\"author\":{\"familyName\":null},"
     "\"tags\":[\"example\"]}",
     "{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},\"tags\":[\"example\"],"
     "\"content\":\"This will be unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}"},
};

static void merge_patches(void)
{
	for (size_t i = 0; i < sizeof(rfc7386) / sizeof(rfc7386[0]); i++) {
		json_t *t = json_loads(rfc7386[i][0], JSON_DECODE_ANY, NULL);
		json_t *p = json_loads(rfc7386[i][1], JSON_DECODE_ANY, NULL);
		json_t *want = json_loads(rfc7386[i][2], JSON_DECODE_ANY, NULL);
		json_t *t0 = json_deep_copy(t), *got = ctl_k8s_merge_patch(t, p);
		char *g = got ? json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

		CHECK(t && p && want && got && json_equal(got, want) && json_equal(t, t0),
		      "RFC 7386 %s + %s = %s (got %s), the original unchanged", rfc7386[i][0],
		      rfc7386[i][1], rfc7386[i][2], g ? g : "NULL");
		free(g);
		json_decref(t);
		json_decref(t0);
		json_decref(p);
		json_decref(want);
		json_decref(got);
	}
	{
		json_t *p = json_pack("{s:s}", "a", "b"), *got = ctl_k8s_merge_patch(NULL, p);

		CHECK(got && json_equal(got, p), "a patch of an absent value: the patch");
		json_decref(p);
		json_decref(got);
	}
	CHECK(ctl_k8s_media_is("application/merge-patch+json", "application/merge-patch+json") &&
		  ctl_k8s_media_is("Application/JSON; charset=utf-8", "application/json") &&
		  !ctl_k8s_media_is("application/json-patch+json", "application/json") &&
		  !ctl_k8s_media_is("application/jsonx", "application/json") &&
		  !ctl_k8s_media_is("", "application/json"),
	      "media types: parameters aside, nothing longer");
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int main(void)
{
	char uid[CTL_K8S_UID_LEN + 1], uid2[CTL_K8S_UID_LEN + 1], ts[CTL_K8S_TS_LEN + 1];
	json_t *st;

	CHECK(!ctl_k8s_dns_label("edge-a1") && ctl_k8s_dns_label("Edge") &&
		  ctl_k8s_dns_label("-a") && ctl_k8s_dns_label("a.b") && ctl_k8s_dns_label(""),
	      "DNS labels: lower case, digits, inner '-'");
	CHECK(
	    !ctl_k8s_dns_subdomain("a.b-c.d") && ctl_k8s_dns_subdomain("a..b") &&
		ctl_k8s_dns_subdomain("a.") &&
		!ctl_k8s_dns_label("abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghija"),
	    "DNS subdomains: labels joined by dots");
	CHECK(!ctl_k8s_label_key("example.com/Tier_1") && !ctl_k8s_label_key("zone") &&
		  ctl_k8s_label_key("Bad_/x") && ctl_k8s_label_key("/x") &&
		  ctl_k8s_label_key("a/-x"),
	      "label keys: [PREFIX/]NAME");
	CHECK(!ctl_k8s_label_value("") && !ctl_k8s_label_value("East_1.x") &&
		  ctl_k8s_label_value("_x") && ctl_k8s_label_value("a b"),
	      "label values: empty or a qualified name");

	st = ctl_k8s_status(422, NULL, "spec.x: must be a string", "spec.x");
	CHECK(st && !strcmp(str(st, "kind"), "Status") && !strcmp(str(st, "status"), "Failure") &&
		  !strcmp(str(st, "reason"), "Invalid") &&
		  json_integer_value(json_object_get(st, "code")) == 422 &&
		  !strcmp(str(json_object_get(st, "details"), "field"), "spec.x"),
	      "a Status with the field path");
	{
		json_t *c =
		    json_array_get(json_object_get(json_object_get(st, "details"), "causes"), 0);

		CHECK(c && !strcmp(str(c, "field"), "spec.x") &&
			  !strcmp(str(c, "message"), "must be a string") &&
			  !strcmp(str(c, "reason"), "FieldValueInvalid"),
		      "a 422 has the cause kubectl prints (FIELD: MESSAGE, the field not twice)");
	}
	json_decref(st);
	st = ctl_k8s_status(409, "AlreadyExists", "exists", "");
	CHECK(st && !strcmp(str(st, "reason"), "AlreadyExists") && !json_object_get(st, "details"),
	      "a reason of the caller's, no field: no details");
	json_decref(st);
	st = ctl_k8s_status(404, NULL, "name \"\xff\" not found", NULL);
	CHECK(st && !strcmp(str(st, "message"), "name \"\\xff\" not found") &&
		  !strcmp(str(st, "reason"), "NotFound"),
	      "a byte that is not UTF-8 is quoted: %s", st ? str(st, "message") : "NULL");
	json_decref(st);
	CHECK(!strcmp(ctl_k8s_reason(599), "InternalError"), "an unknown code: InternalError");

	ctl_k8s_uuid4(uid);
	ctl_k8s_uuid4(uid2);
	CHECK(strlen(uid) == 36 && uid[8] == '-' && uid[14] == '4' && strchr("89ab", uid[19]) &&
		  strcmp(uid, uid2),
	      "uids: version 4, RFC 4122 variant, different: %s", uid);
	ctl_k8s_timestamp(0, ts);
	CHECK(!strcmp(ts, "1970-01-01T00:00:00Z"), "timestamps in UTC: %s", ts);
	merge_patches();
	{
		char name[64], err[256];

		CHECK(!ctl_k8s_field_selector("metadata.name=m1", name, sizeof(name), err,
					      sizeof(err)) &&
			  !strcmp(name, "m1") &&
			  !ctl_k8s_field_selector("metadata.name==m2", name, sizeof(name), err,
						  sizeof(err)) &&
			  !strcmp(name, "m2") &&
			  !ctl_k8s_field_selector("", name, sizeof(name), err, sizeof(err)) &&
			  !name[0],
		      "fieldSelector metadata.name=NAME, ==, or empty");
		CHECK(ctl_k8s_field_selector("spec.x=1", name, sizeof(name), err, sizeof(err)) &&
			  strstr(err, "'spec.x=1'") &&
			  ctl_k8s_field_selector("metadata.name!=a", name, sizeof(name), err,
						 sizeof(err)) &&
			  ctl_k8s_field_selector("metadata.name=a,metadata.name=b", name,
						 sizeof(name), err, sizeof(err)) &&
			  ctl_k8s_field_selector("metadata.namex=a", name, sizeof(name), err,
						 sizeof(err)),
		      "other fields, !=, two terms: refused, quoted (%s)", err);
	}
	return unit_summary();
}
