// SPDX-License-Identifier: BSD-2-Clause
/* edge.xgate.io/v1 resources: names and labels by the Kubernetes rules,
 * Mission validation (each bad body names the exact field), MissionList
 * validation (paths under items[i], duplicates, limits), selectors,
 * placement, uid and timestamp formats. */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "resource.h"

#define HEAD "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Mission\","
#define MD   "\"metadata\":{\"name\":\"m1\"},"
#define CMD  "\"command\":{\"command\":[\"/bin/true\"]}"

/* body, operation, wanted code and field (NULL: valid) */
static const struct {
	const char *body;
	enum ec_op op;
	int code;
	const char *field;
	const char *msg; /* a substring of the message */
} cases[] = {
    {HEAD MD "\"spec\":{" CMD "}}", EC_OP_CREATE, 0, NULL, NULL},
    {HEAD MD "\"spec\":{\"content\":\"kind: Pod\"}}", EC_OP_CREATE, 0, NULL, NULL},
    {HEAD
     "\"metadata\":{\"name\":\"a.b-c\",\"labels\":{\"example.com/app\":\"web\",\"x\":\"\"},"
     "\"uid\":\"ignored\",\"creationTimestamp\":\"ignored\"},\"state\":{\"b\":\"x\"},"
     "\"spec\":{\"content\":\"c\",\"command\":{\"command\":[\"a\",\"\"],\"reverseCommand\":[\"r\"],"
     "\"trigger\":[\"t\"],\"runWhenTriggerSucceeds\":false,\"timeoutSeconds\":30},"
     "\"placement\":{\"clusters\":[\"b\",\"c\"],\"matchLabels\":{\"zone\":\"east\"}},"
     "\"stateCheck\":{\"command\":[\"s\"],\"intervalSeconds\":10,\"timeoutSeconds\":5}}}",
     EC_OP_CREATE, 0, NULL, NULL},
    {HEAD "\"metadata\":{\"name\":\"m1\",\"resourceVersion\":\"7\"},\"spec\":{" CMD "}}",
     EC_OP_REPLACE, 0, NULL, NULL},
    /* the body */
    {"[1,2]", EC_OP_CREATE, 400, "", "must be a JSON object, not an array"},
    {HEAD MD "\"spec\":{" CMD "},\"status\":{}}", EC_OP_CREATE, 422, "status", "unknown field"},
    {"{\"kind\":\"Mission\"," MD "\"spec\":{" CMD "}}", EC_OP_CREATE, 422, "apiVersion",
     "required"},
    {"{\"apiVersion\":\"v1\",\"kind\":\"Mission\"," MD "\"spec\":{" CMD "}}", EC_OP_CREATE, 422,
     "apiVersion", "must be \"edge.xgate.io/v1\", not \"v1\""},
    {"{\"apiVersion\":1,\"kind\":\"Mission\"," MD "\"spec\":{}}", EC_OP_CREATE, 422, "apiVersion",
     "must be a string, not an integer"},
    {"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Deployment\"," MD "\"spec\":{}}",
     EC_OP_CREATE, 422, "kind", "must be \"Mission\""},
    {"{\"apiVersion\":\"edge.xgate.io/v1\"," MD "\"spec\":{}}", EC_OP_CREATE, 422, "kind",
     "required"},
    {HEAD MD "\"spec\":{" CMD "},\"state\":[]}", EC_OP_CREATE, 422, "state", "must be an object"},
    /* metadata */
    {HEAD "\"spec\":{" CMD "}}", EC_OP_CREATE, 422, "metadata", "required"},
    {HEAD "\"metadata\":[],"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata", "must be an object"},
    {HEAD "\"metadata\":{},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.name", "required"},
    {HEAD "\"metadata\":{\"name\":\"Web_1\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.name", "DNS-1123 subdomain"},
    {HEAD "\"metadata\":{\"name\":\"a..b\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.name", "DNS-1123"},
    {HEAD "\"metadata\":{\"name\":\"-a\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.name", NULL},
    {HEAD "\"metadata\":{\"name\":\"a\\u0000b\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.name", "NUL"},
    {HEAD "\"metadata\":{\"name\":7},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.name", "must be a string, not an integer"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"namespace\":\"x\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.namespace", "unknown field"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"labels\":[\"a\"]},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.labels", "must be an object"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"labels\":{\"a b\":\"x\"}},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.labels.a b", "invalid label key"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"labels\":{\"Bad_Prefix/a\":\"x\"}},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.labels.Bad_Prefix/a", "prefix"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"labels\":{\"a\":\"-x\"}},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.labels.a", "invalid label value"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"labels\":{\"a\":1}},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.labels.a", "must be a string"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"resourceVersion\":\"3\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_CREATE, 422, "metadata.resourceVersion", "must not be set on create"},
    {HEAD MD "\"spec\":{" CMD "}}", EC_OP_REPLACE, 422, "metadata.resourceVersion",
     "required to replace"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"resourceVersion\":\"07\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_REPLACE, 422, "metadata.resourceVersion", "decimal string"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"resourceVersion\":\"18446744073709551616\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_REPLACE, 422, "metadata.resourceVersion", "decimal string"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"resourceVersion\":\"x1\"},"
	  "\"spec\":{" CMD "}}",
     EC_OP_REPLACE, 422, "metadata.resourceVersion", "decimal string"},
    {HEAD "\"metadata\":{\"name\":\"m\",\"resourceVersion\":3},"
	  "\"spec\":{" CMD "}}",
     EC_OP_REPLACE, 422, "metadata.resourceVersion", "must be a string"},
    /* spec */
    {HEAD MD "\"x\":1}", EC_OP_CREATE, 422, "x", "unknown field"},
    {HEAD MD "\"spec\":null}", EC_OP_CREATE, 422, "spec", "must be an object, not null"},
    {HEAD MD "\"spec\":{}}", EC_OP_CREATE, 422, "spec", "needs content or command"},
    {HEAD MD "\"spec\":{\"contents\":\"x\"}}", EC_OP_CREATE, 422, "spec.contents", "unknown field"},
    {HEAD MD "\"spec\":{\"content\":{\"kind\":\"Pod\"}}}", EC_OP_CREATE, 422, "spec.content",
     "must be a string, not an object"},
    {HEAD MD "\"spec\":{\"command\":\"/bin/true\"}}", EC_OP_CREATE, 422, "spec.command",
     "must be an object, not a string"},
    {HEAD MD "\"spec\":{\"command\":{}}}", EC_OP_CREATE, 422, "spec.command.command", "required"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":\"ls -l\"}}}", EC_OP_CREATE, 422,
     "spec.command.command", "must be an array of strings"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[]}}}", EC_OP_CREATE, 422, "spec.command.command",
     "1-256 strings"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"ls\",2]}}}", EC_OP_CREATE, 422,
     "spec.command.command[1]", "must be a string, not an integer"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"\"]}}}", EC_OP_CREATE, 422,
     "spec.command.command", "must not be empty"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"a\"],\"reverseCommand\":[null]}}}",
     EC_OP_CREATE, 422, "spec.command.reverseCommand[0]", "must be a string, not null"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"a\"],\"runWhenTriggerSucceeds\":true}}}",
     EC_OP_CREATE, 422, "spec.command.runWhenTriggerSucceeds", "needs spec.command.trigger"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"a\"],\"trigger\":[\"t\"],"
	     "\"runWhenTriggerSucceeds\":\"yes\"}}}",
     EC_OP_CREATE, 422, "spec.command.runWhenTriggerSucceeds", "must be a boolean"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"a\"],\"timeoutSeconds\":0}}}", EC_OP_CREATE,
     422, "spec.command.timeoutSeconds", "1-86400"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"a\"],\"timeoutSeconds\":1.5}}}", EC_OP_CREATE,
     422, "spec.command.timeoutSeconds", "must be an integer"},
    {HEAD MD "\"spec\":{\"command\":{\"command\":[\"a\"],\"shell\":true}}}", EC_OP_CREATE, 422,
     "spec.command.shell", "unknown field"},
    {HEAD MD "\"spec\":{" CMD ",\"placement\":[]}}", EC_OP_CREATE, 422, "spec.placement",
     "must be an object"},
    {HEAD MD "\"spec\":{" CMD ",\"placement\":{\"clusters\":\"b\"}}}", EC_OP_CREATE, 422,
     "spec.placement.clusters", "must be an array"},
    {HEAD MD "\"spec\":{" CMD ",\"placement\":{\"clusters\":[\"b\",\"B\"]}}}", EC_OP_CREATE, 422,
     "spec.placement.clusters[1]", "must be a DNS-1123 label"},
    {HEAD MD "\"spec\":{" CMD ",\"placement\":{\"clusters\":[\"b\",\"c\",\"b\"]}}}", EC_OP_CREATE,
     422, "spec.placement.clusters[2]", "duplicate of clusters[0]"},
    {HEAD MD "\"spec\":{" CMD ",\"placement\":{\"clusters\":[\"b.c\"]}}}", EC_OP_CREATE, 422,
     "spec.placement.clusters[0]", "DNS-1123 label"},
    {HEAD MD "\"spec\":{" CMD ",\"placement\":{\"matchLabels\":{\"zone\":true}}}}", EC_OP_CREATE,
     422, "spec.placement.matchLabels.zone", "must be a string, not a boolean"},
    {HEAD MD "\"spec\":{" CMD ",\"placement\":{\"matchlabels\":{}}}}", EC_OP_CREATE, 422,
     "spec.placement.matchlabels", "unknown field"},
    {HEAD MD "\"spec\":{" CMD ",\"stateCheck\":{}}}", EC_OP_CREATE, 422, "spec.stateCheck.command",
     "required"},
    {HEAD MD "\"spec\":{" CMD ",\"stateCheck\":{\"command\":[\"s\"],\"intervalSeconds\":-1}}}",
     EC_OP_CREATE, 422, "spec.stateCheck.intervalSeconds", "1-86400"},
};

static void label_checks(void)
{
	char long63[64], long64[65], sub253[254], sub254[255];

	memset(long63, 'a', 63);
	long63[63] = 0;
	memset(long64, 'a', 64);
	long64[64] = 0;
	memset(sub253, 'a', 253);
	for (int i = 50; i < 253; i += 50)
		sub253[i] = '.';
	sub253[253] = 0;
	memcpy(sub254, sub253, 253);
	sub254[253] = 'a';
	sub254[254] = 0;
	CHECK(!ec_check_dns_label("a") && !ec_check_dns_label("a-1") && !ec_check_dns_label(long63),
	      "DNS-1123 labels");
	CHECK(ec_check_dns_label("") && ec_check_dns_label("A") && ec_check_dns_label("-a") &&
		  ec_check_dns_label("a-") && ec_check_dns_label("a.b") &&
		  ec_check_dns_label(long64) && ec_check_dns_label("a_b"),
	      "not DNS-1123 labels: empty, upper case, edge dashes, dot, 64 long, underscore");
	CHECK(!ec_check_dns_subdomain("a.b-c.d") && !ec_check_dns_subdomain(sub253),
	      "DNS-1123 subdomains");
	CHECK(ec_check_dns_subdomain("a..b") && ec_check_dns_subdomain(".a") &&
		  ec_check_dns_subdomain("a.") && ec_check_dns_subdomain(sub254),
	      "not subdomains: empty part, leading/trailing dot, 254 long");
	CHECK(!ec_check_label_key("app") && !ec_check_label_key("example.com/App_1.x") &&
		  !ec_check_label_key("A"),
	      "label keys with and without prefix");
	CHECK(ec_check_label_key("") && ec_check_label_key("/a") && ec_check_label_key("a/") &&
		  ec_check_label_key("Ex.com/a") && ec_check_label_key("a b") &&
		  ec_check_label_key(long64) && ec_check_label_key("a/b/c"),
	      "bad label keys: empty, empty prefix or name, upper-case prefix, space, 64, two "
	      "slashes");
	CHECK(!ec_check_label_value("") && !ec_check_label_value("v1.2_x-y") &&
		  !ec_check_label_value(long63),
	      "label values (empty allowed)");
	CHECK(ec_check_label_value("-x") && ec_check_label_value("x ") &&
		  ec_check_label_value(long64),
	      "bad label values");
}

static void validation(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_error_t je;
		json_t *v = json_loads(cases[i].body, JSON_ALLOW_NUL, &je);
		struct ec_mission_in in;
		struct ec_verr e = {0};
		int rc;

		if (!v) {
			CHECK(0, "case %zu: test body does not parse: %s", i, je.text);
			continue;
		}
		rc = ec_mission_validate(v, cases[i].op, &in, &e);
		if (!cases[i].field) {
			CHECK(rc == 0 && in.spec && in.labels &&
				  !strcmp(in.name, json_string_value(json_object_get(
						       json_object_get(v, "metadata"), "name"))),
			      "case %zu valid (%s)", i, rc ? e.msg : "");
			if (!rc)
				ec_mission_in_free(&in);
		} else {
			CHECK(rc < 0 && e.code == cases[i].code &&
				  !strcmp(e.field, cases[i].field) &&
				  (!cases[i].msg || strstr(e.msg, cases[i].msg)) &&
				  (!*e.field || !strncmp(e.msg, e.field, strlen(e.field))),
			      "case %zu: %d %s (want %d, field '%s')", i, e.code, e.msg,
			      cases[i].code, cases[i].field);
			CHECK(!in.spec && !in.labels, "case %zu: nothing held on failure", i);
		}
		json_decref(v);
	}
}

#define ITEM(name, spec)                                                                           \
	"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Mission\",\"metadata\":{\"name\":\"" name \
	"\"},\"spec\":" spec "}"
#define LIST(items)                                                                                \
	"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"MissionList\",\"items\":[" items "]}"

/* MissionList bodies: max 3 items, each at most 200 bytes */
static const struct {
	const char *body;
	int code; /* 0: valid */
	const char *field;
	const char *msg;
} list_cases[] = {
    {LIST(ITEM("a", "{\"content\":\"x\"}") "," ITEM("b", "{\"content\":\"y\"}")), 0, NULL, NULL},
    {LIST(""), 0, NULL, NULL},
    {"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"MissionList\",\"metadata\":{"
     "\"resourceVersion\":\"9\"},\"items\":[" ITEM("a", "{\"content\":\"x\"}") "]}",
     0, NULL, NULL},
    {"[]", 400, "", "must be a JSON object"},
    {"{\"kind\":\"MissionList\",\"items\":[]}", 422, "apiVersion", "required"},
    {"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"MissionList\"}", 422, "items", "required"},
    {"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"MissionList\",\"items\":{}}", 422, "items",
     "must be an array"},
    {"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"MissionList\",\"items\":[],\"spec\":{}}", 422,
     "spec", "unknown field"},
    {"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"MissionList\",\"metadata\":[],"
     "\"items\":[]}",
     422, "metadata", "must be an object"},
    {LIST(ITEM("a", "{\"content\":\"x\"}") ",7"), 422, "items[1]", "must be a Mission object"},
    {LIST(ITEM("a", "{\"content\":\"x\"}") "," ITEM("B", "{\"content\":\"x\"}")), 422,
     "items[1].metadata.name", "DNS-1123"},
    {LIST(ITEM("a", "{\"content\":\"x\",\"placement\":{\"clusters\":[\"ok\",\"No\"]}}")), 422,
     "items[0].spec.placement.clusters[1]", "DNS-1123 label"},
    {LIST(ITEM("a", "{}")), 422, "items[0].spec", "needs content or command"},
    {LIST(ITEM("a", "{\"content\":\"x\"}") "," ITEM("b", "{\"content\":\"x\"}") "," ITEM(
	 "a", "{\"content\":\"x\"}")),
     409, "items[2].metadata.name", "\"a\" is also the name of items[0]"},
    {LIST(ITEM("a", "{\"content\":\"x\"}") "," ITEM("b", "{\"content\":\"x\"}") "," ITEM(
	 "c", "{\"content\":\"x\"}") "," ITEM("d", "{\"content\":\"x\"}")),
     413, "items", "4 missions in one MissionList; at most 3"},
    {LIST(ITEM("a", "{\"content\":\"x\"}") "," ITEM(
	 "b", "{\"content\":\"0123456789012345678901234567890123456789012345678901234567890123"
	      "456789012345678901234567890123456789012345678901234567890123456789\"}")),
     413, "items[1]", "one mission is at most 200 bytes"},
};

static void list_validation(void)
{
	for (size_t i = 0; i < sizeof(list_cases) / sizeof(list_cases[0]); i++) {
		json_t *v = json_loads(list_cases[i].body, 0, NULL);
		struct ec_mission_in *ins = (void *)1;
		struct ec_verr e = {0};
		size_t n = 99;
		int rc;

		if (!v) {
			CHECK(0, "list case %zu: test body does not parse", i);
			continue;
		}
		rc = ec_mission_list_validate(v, 3, 200, &ins, &n, &e);
		if (!list_cases[i].code) {
			size_t want = json_array_size(json_object_get(v, "items"));
			bool names = true;

			for (size_t k = 0; !rc && k < n; k++)
				names &=
				    ins[k].spec && ins[k].labels &&
				    !strcmp(ins[k].name,
					    json_string_value(json_object_get(
						json_object_get(
						    json_array_get(json_object_get(v, "items"), k),
						    "metadata"),
						"name")));
			CHECK(rc == 0 && n == want && names && (n || !ins),
			      "list case %zu valid: %zu items in order (%s)", i, n,
			      rc ? e.msg : "");
			if (!rc)
				ec_mission_list_free(ins, n);
		} else {
			CHECK(rc < 0 && e.code == list_cases[i].code &&
				  !strcmp(e.field, list_cases[i].field) &&
				  strstr(e.msg, list_cases[i].msg) &&
				  !strncmp(e.msg, e.field, strlen(e.field)),
			      "list case %zu: %d %s (want %d, field '%s')", i, e.code, e.msg,
			      list_cases[i].code, list_cases[i].field);
			CHECK(!ins && !n, "list case %zu: nothing held on failure", i);
		}
		json_decref(v);
	}
	{
		json_t *m = json_loads(ITEM("a", "{\"content\":\"x\"}"), 0, NULL);
		json_t *l = json_loads(LIST(""), 0, NULL);

		CHECK(ec_is_list(l, "MissionList") && !ec_is_list(m, "MissionList") &&
			  !ec_is_list(NULL, "MissionList"),
		      "ec_is_list tells a MissionList from a Mission");
		json_decref(m);
		json_decref(l);
	}
}

static void selectors_and_placement(void)
{
	json_t *labels = json_pack("{s:s,s:s}", "zone", "east", "tier", "edge");
	struct ctl_k8s_selector sel;
	char err[256];
	json_t *spec;

	CHECK(!ctl_k8s_selector_parse("zone=east,tier==edge,!gpu,tier,region!=west", &sel, err,
				      sizeof(err)) &&
		  sel.n == 5 && ctl_k8s_selector_match(&sel, labels),
	      "selector with =, ==, !key, key, != matches");
	CHECK(!ctl_k8s_selector_parse("zone=west", &sel, err, sizeof(err)) &&
		  !ctl_k8s_selector_match(&sel, labels),
	      "zone=west does not match");
	CHECK(!ctl_k8s_selector_parse("zone!=east", &sel, err, sizeof(err)) &&
		  !ctl_k8s_selector_match(&sel, labels),
	      "zone!=east does not match");
	CHECK(!ctl_k8s_selector_parse("", &sel, err, sizeof(err)) &&
		  ctl_k8s_selector_match(&sel, labels),
	      "empty selector matches everything");
	CHECK(ctl_k8s_selector_parse("zone=east,", &sel, err, sizeof(err)) < 0 &&
		  strstr(err, "trailing"),
	      "trailing comma refused: %s", err);
	CHECK(ctl_k8s_selector_parse("bad key=x", &sel, err, sizeof(err)) < 0,
	      "bad key refused: %s", err);
	CHECK(ctl_k8s_selector_parse("k=-v", &sel, err, sizeof(err)) < 0, "bad value refused: %s",
	      err);

	spec = json_loads("{}", 0, NULL);
	CHECK(ec_placement_match(spec, "a", labels), "no placement: every cluster");
	json_decref(spec);
	spec = json_loads("{\"placement\":{\"clusters\":[\"b\",\"a\"]}}", 0, NULL);
	CHECK(ec_placement_match(spec, "a", labels) && !ec_placement_match(spec, "c", labels),
	      "clusters list");
	json_decref(spec);
	spec = json_loads("{\"placement\":{\"matchLabels\":{\"zone\":\"east\",\"tier\":\"edge\"}}}",
			  0, NULL);
	CHECK(ec_placement_match(spec, "a", labels), "all matchLabels carried: match");
	json_object_set_new(labels, "tier", json_string("core"));
	CHECK(!ec_placement_match(spec, "a", labels),
	      "one matchLabel differs: no match (ALL must)");
	json_decref(spec);
	spec = json_loads(
	    "{\"placement\":{\"clusters\":[\"a\"],\"matchLabels\":{\"zone\":\"west\"}}}", 0, NULL);
	CHECK(!ec_placement_match(spec, "a", labels), "named but labels differ: no match");
	json_decref(spec);
	json_decref(labels);
}

int main(void)
{
	char uid[EC_UID_LEN + 1], uid2[EC_UID_LEN + 1], ts[EC_TS_LEN + 1];
	json_t *st;

	if (sodium_init() < 0)
		return 1;
	label_checks();
	validation();
	list_validation();
	selectors_and_placement();

	ec_uuid4(uid);
	ec_uuid4(uid2);
	CHECK(strlen(uid) == 36 && uid[8] == '-' && uid[13] == '-' && uid[14] == '4' &&
		  strchr("89ab", uid[19]) && strcmp(uid, uid2),
	      "uid is a random UUIDv4: %s", uid);
	ec_timestamp(86400 * 365, ts);
	CHECK(!strcmp(ts, "1971-01-01T00:00:00Z"), "RFC 3339 timestamp: %s", ts);
	st = ec_status(422, NULL, "spec.x: bad", "spec.x");
	CHECK(
	    json_integer_value(json_object_get(st, "code")) == 422 &&
		!strcmp(json_string_value(json_object_get(st, "reason")), "Invalid") &&
		!strcmp(json_string_value(json_object_get(st, "kind")), "Status") &&
		!strcmp(json_string_value(json_object_get(json_object_get(st, "details"), "field")),
			"spec.x"),
	    "Status object in the Kubernetes shape");
	json_decref(st);
	/* jansson refuses invalid UTF-8: the Status must still be built */
	st = ec_status(404, NULL, "missions \"\xff\xc0\xaf\xed\xa0\x80x\" not found", "a\xfe");
	CHECK(
	    st &&
		!strcmp(json_string_value(json_object_get(st, "message")),
			"missions \"\\xff\\xc0\\xaf\\xed\\xa0\\x80x\" not found") &&
		!strcmp(json_string_value(json_object_get(json_object_get(st, "details"), "field")),
			"a\\xfe"),
	    "invalid UTF-8 (and overlong, surrogate) in a Status: quoted as \\xNN: %s",
	    st ? json_string_value(json_object_get(st, "message")) : "NULL");
	json_decref(st);
	st = ec_status(404, NULL, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x82", NULL);
	CHECK(st && !strcmp(json_string_value(json_object_get(st, "message")),
			    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "),
	      "valid UTF-8 kept, a character cut at the end dropped: %s",
	      st ? json_string_value(json_object_get(st, "message")) : "NULL");
	json_decref(st);
	return unit_summary();
}
