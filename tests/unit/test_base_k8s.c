// SPDX-License-Identifier: BSD-2-Clause
/* The control base's Kubernetes rules: names and labels, Status bodies with
 * the field path (and text that is not UTF-8 quoted), uids, timestamps. */
#include <string.h>

#include "ctl_k8s.h"
#include "unit.h"

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
	return unit_summary();
}
