// SPDX-License-Identifier: BSD-2-Clause
/*
 * Applications and sessions as clients send them: every rule of
 * proto/fornax.md section 1, each refusal naming its field path and
 * quoting the value, so that a client can point at its own mistake.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_k8s.h"
#include "model.h"

int fx_errf(struct fx_err *e, int code, const char *field, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- quantities ---- */

/* value * 10^exp10 * mul, from "D[.D][suffix]"; -1 when it is not one */
static long double quantity(const char *s)
{
	static const struct {
		const char *sfx;
		long double mul;
	} sfx[] = {{"", 1},
		   {"m", 1e-3},
		   {"k", 1e3},
		   {"M", 1e6},
		   {"G", 1e9},
		   {"T", 1e12},
		   {"P", 1e15},
		   {"E", 1e18},
		   {"Ki", 1024.0L},
		   {"Mi", 1048576.0L},
		   {"Gi", 1073741824.0L},
		   {"Ti", 1099511627776.0L},
		   {"Pi", 1125899906842624.0L},
		   {"Ei", 1152921504606846976.0L}};
	long double v = 0, frac = 0.1L;
	const char *p = s;
	bool digits = false;

	if (!s)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++, digits = true)
		v = v * 10 + (*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, frac /= 10, digits = true)
			v += (*p - '0') * frac;
	if (!digits || v > 1e30L)
		return -1;
	if ((*p == 'e' || *p == 'E') && p[1] >= '0' && p[1] <= '9') {
		int x = 0;

		for (p++; *p >= '0' && *p <= '9' && x < 100; p++)
			x = x * 10 + (*p - '0');
		if (*p || x > 30)
			return -1;
		return v * powl(10, x);
	}
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (!strcmp(p, sfx[i].sfx))
			return v * sfx[i].mul;
	return -1;
}

int64_t fx_cpu_milli(const char *s)
{
	long double v = quantity(s);

	if (v < 0 || v * 1000 > 1e15L)
		return -1;
	return (int64_t)ceill(v * 1000 - 1e-9L);
}

int64_t fx_mem_bytes(const char *s)
{
	long double v = quantity(s);

	if (v < 0 || v > 9e18L)
		return -1;
	return (int64_t)ceill(v - 1e-9L);
}

/* ---- fields ---- */

static json_t *get(json_t *o, const char *k)
{
	return json_is_object(o) ? json_object_get(o, k) : NULL;
}

/* an optional integer in [lo, hi] (absent: dflt) */
static int int_field(json_t *o, const char *k, const char *path, long lo, long hi, long dflt,
		     long *out, struct fx_err *e)
{
	json_t *v = get(o, k);
	char f[160];

	snprintf(f, sizeof(f), "%s.%s", path, k);
	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v))
		return fx_errf(e, 422, f, "%s: must be an integer", f);
	if (json_integer_value(v) < lo || json_integer_value(v) > hi)
		return fx_errf(e, 422, f, "%s: %" JSON_INTEGER_FORMAT " is out of range %ld..%ld",
			       f, json_integer_value(v), lo, hi);
	*out = (long)json_integer_value(v);
	return 0;
}

static int check_metadata(json_t *obj, const char *kind, const char *ns_path, struct fx_err *e)
{
	json_t *md = get(obj, "metadata"), *labels, *v;
	const char *name, *ns, *why, *k, *av = json_string_value(get(obj, "apiVersion"));
	const char *kd = json_string_value(get(obj, "kind"));

	if (!json_is_object(obj))
		return fx_errf(e, 400, "", "the body must be a JSON object (a %s)", kind);
	if (get(obj, "apiVersion") && (!av || strcmp(av, FX_API_VERSION)))
		return fx_errf(e, 422, "apiVersion", "apiVersion: must be %s", FX_API_VERSION);
	if (get(obj, "kind") && (!kd || strcmp(kd, kind)))
		return fx_errf(e, 422, "kind", "kind: must be %s", kind);
	if (!json_is_object(md))
		return fx_errf(e, 422, "metadata", "metadata: required (an object with a name)");
	name = json_string_value(get(md, "name"));
	if (!name)
		return fx_errf(e, 422, "metadata.name", "metadata.name: required (a string)");
	if ((why = ctl_k8s_dns_subdomain(name)))
		return fx_errf(e, 422, "metadata.name", "metadata.name '%.253s': %s", name, why);
	if ((v = get(md, "namespace")) && !json_is_null(v)) {
		if (!(ns = json_string_value(v)) || ctl_k8s_dns_label(ns))
			return fx_errf(e, 422, "metadata.namespace",
				       "metadata.namespace: must be a DNS-1123 label");
		if (ns_path && strcmp(ns, ns_path))
			return fx_errf(e, 400, "metadata.namespace",
				       "metadata.namespace '%s' does not match the path's '%s'", ns,
				       ns_path);
	}
	if ((v = get(md, "annotations")) && !json_is_null(v)) {
		size_t total = 0;
		json_t *a;

		/* kubectl apply keeps the last applied configuration here */
		if (!json_is_object(v))
			return fx_errf(e, 422, "metadata.annotations",
				       "metadata.annotations: an object of strings");
		json_object_foreach(v, k, a)
		{
			char f[160];

			snprintf(f, sizeof(f), "metadata.annotations[%.100s]", k);
			if (!json_is_string(a))
				return fx_errf(e, 422, f, "%s: must be a string", f);
			if (!strcmp(k, FX_FORM_ANNOTATION) && strcmp(json_string_value(a), "1") &&
			    strcmp(json_string_value(a), "2"))
				return fx_errf(e, 422, f, "%s '%.20s': \"1\" or \"2\"", f,
					       json_string_value(a));
			total += strlen(k) + json_string_length(a);
		}
		if (total > FX_ANNOTATIONS_MAX)
			return fx_errf(e, 422, "metadata.annotations",
				       "metadata.annotations: %zu bytes, at most %u", total,
				       FX_ANNOTATIONS_MAX);
	}
	labels = get(md, "labels");
	if (labels && !json_is_null(labels)) {
		if (!json_is_object(labels))
			return fx_errf(e, 422, "metadata.labels", "metadata.labels: an object");
		json_object_foreach(labels, k, v)
		{
			char f[160];

			snprintf(f, sizeof(f), "metadata.labels[%.100s]", k);
			if ((why = ctl_k8s_label_key(k)))
				return fx_errf(e, 422, f, "%s: key: %s", f, why);
			if (!json_is_string(v) || (why = ctl_k8s_label_value(json_string_value(v))))
				return fx_errf(e, 422, f, "%s: %s", f,
					       json_is_string(v) ? why : "must be a string");
		}
	}
	return 0;
}

/* ---- Application ---- */

int fx_policy_parse(json_t *sp, struct fx_policy *p, struct fx_err *e)
{
	const char *P = "spec.scalingPolicy", *type;
	json_t *th;
	long min, max, burst, high, low;
	char f[160];

	memset(p, 0, sizeof(*p));
	if (!json_is_object(sp))
		return fx_errf(e, 422, P, "%s: required (an object)", P);
	if (int_field(sp, "minimumInstance", P, 0, 100000, 0, &min, e) ||
	    int_field(sp, "maximumInstance", P, 1, 100000, -1, &max, e) ||
	    int_field(sp, "burst", P, 1, 100000, 1, &burst, e))
		return -1;
	if (max < 0)
		return fx_errf(e, 422, "spec.scalingPolicy.maximumInstance",
			       "spec.scalingPolicy.maximumInstance: required (> 0)");
	if (max < min)
		return fx_errf(e, 422, "spec.scalingPolicy.maximumInstance",
			       "spec.scalingPolicy.maximumInstance %ld: must be >= minimumInstance "
			       "%ld",
			       max, min);
	type = json_string_value(get(sp, "scalingPolicyType"));
	if (!type || (strcmp(type, "idle_session_number") && strcmp(type, "idle_session_percent")))
		return fx_errf(
		    e, 422, "spec.scalingPolicy.scalingPolicyType",
		    "spec.scalingPolicy.scalingPolicyType '%.60s': idle_session_number or "
		    "idle_session_percent",
		    type ? type : "");
	p->type = strcmp(type, "idle_session_number") ? FX_IDLE_PERCENT : FX_IDLE_NUMBER;
	snprintf(f, sizeof(f), "%s.%s", P,
		 p->type == FX_IDLE_NUMBER ? "idleSessionNumThreshold"
					   : "idleSessionPercentThreshold");
	th = get(sp, p->type == FX_IDLE_NUMBER ? "idleSessionNumThreshold"
					       : "idleSessionPercentThreshold");
	if (!json_is_object(th))
		return fx_errf(e, 422, f, "%s: required for %s ({\"high\":H,\"low\":L})", f, type);
	if (int_field(th, "high", f, 0, p->type == FX_IDLE_PERCENT ? 100 : 100000, 0, &high, e) ||
	    int_field(th, "low", f, 0, 100000, 0, &low, e))
		return -1;
	if (high < low) {
		char fl[180];

		snprintf(fl, sizeof(fl), "%s.high", f);
		return fx_errf(e, 422, fl, "%s %ld: must be >= low %ld", fl, high, low);
	}
	*p = (struct fx_policy){(int)min, (int)max, (int)burst, p->type, (int)high, (int)low};
	return 0;
}

/* as the node runs them (nodeagentd's NA_CTRS_MAX, NA_PORTS_MAX) */
#define FX_APP_CTRS_MAX	 4
#define FX_APP_PORTS_MAX 8

static int resources(json_t *c, const char *C, struct fx_app_spec *out, struct fx_err *e)
{
	static const char *const groups[] = {"requests", "limits"};
	json_t *r = get(c, "resources");

	if (!r || json_is_null(r))
		return 0;
	if (!json_is_object(r)) {
		char f[96];

		snprintf(f, sizeof(f), "%s.resources", C);
		return fx_errf(e, 422, f, "%s: an object", f);
	}
	for (int g = 0; g < 2; g++) {
		json_t *q = get(r, groups[g]), *v;
		const char *k;

		if (!q || json_is_null(q))
			continue;
		json_object_foreach(q, k, v)
		{
			char f[160];
			int64_t n;

			snprintf(f, sizeof(f), "%s.resources.%s.%.40s", C, groups[g], k);
			if (strcmp(k, "cpu") && strcmp(k, "memory"))
				return fx_errf(e, 422, f, "%s: only cpu and memory", f);
			n = !json_is_string(v)	? -1
			    : !strcmp(k, "cpu") ? fx_cpu_milli(json_string_value(v))
						: fx_mem_bytes(json_string_value(v));
			if (n < 0)
				return fx_errf(
				    e, 422, f,
				    "%s '%.60s': not a quantity (e.g. 100m, 0.5, 64Mi, 1G)", f,
				    json_is_string(v) ? json_string_value(v) : "?");
			/* the pod's requests: the sum of its containers' */
			if (g == 0 && !strcmp(k, "cpu"))
				out->cpu_req += n;
			else if (g == 0)
				out->mem_req += n;
		}
	}
	return 0;
}

static int string_array(json_t *a, const char *f, bool nonempty, struct fx_err *e)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || (nonempty && !json_array_size(a)))
		return fx_errf(e, 422, f, "%s: %s", f,
			       nonempty ? "required (a non-empty array of strings)"
					: "an array of strings");
	json_array_foreach(a, i, v) if (!json_is_string(v))
	{
		char fi[180];

		snprintf(fi, sizeof(fi), "%s[%zu]", f, i);
		return fx_errf(e, 422, fi, "%s: must be a string", fi);
	}
	return 0;
}

/* containers[i], and what it adds to the pod's ports (ps, np) */
static int container(json_t *cs, size_t ci, struct fx_app_spec *out, uint32_t *ps, size_t *np,
		     struct fx_err *e)
{
	json_t *c = json_array_get(cs, ci), *ports = get(c, "ports"), *env = get(c, "env"), *v;
	const char *name = json_string_value(get(c, "name"));
	char C[48], f[160];
	size_t i;

	snprintf(C, sizeof(C), "spec.containers[%zu]", ci);
	if (!json_is_object(c))
		return fx_errf(e, 422, C, "%s: an object", C);
	snprintf(f, sizeof(f), "%s.name", C);
	if (!name || ctl_k8s_dns_label(name))
		return fx_errf(e, 422, f, "%s '%.64s': required, a DNS-1123 label", f,
			       name ? name : "");
	for (i = 0; i < ci; i++)
		if (!strcmp(name, json_string_value(get(json_array_get(cs, i), "name"))))
			return fx_errf(e, 422, f,
				       "%s '%s': already the name of spec.containers[%zu]", f, name,
				       i);
	snprintf(f, sizeof(f), "%s.command", C);
	if (string_array(get(c, "command"), f, true, e))
		return -1;
	snprintf(f, sizeof(f), "%s.args", C);
	if (get(c, "args") && string_array(get(c, "args"), f, false, e))
		return -1;
	if (env && !json_is_null(env)) {
		snprintf(f, sizeof(f), "%s.env", C);
		if (!json_is_array(env))
			return fx_errf(e, 422, f, "%s: an array", f);
		json_array_foreach(env, i, v)
		{
			snprintf(f, sizeof(f), "%s.env[%zu]", C, i);
			if (!json_is_string(get(v, "name")) ||
			    !json_string_length(get(v, "name")) ||
			    (get(v, "value") && !json_is_string(get(v, "value"))))
				return fx_errf(e, 422, f, "%s: {\"name\":N,\"value\":V} strings",
					       f);
		}
	}
	/* a container may have none (a sidecar): the pod needs one at least */
	snprintf(f, sizeof(f), "%s.ports", C);
	if (ports && !json_is_null(ports) && !json_is_array(ports))
		return fx_errf(e, 422, f, "%s: an array", f);
	json_array_foreach(ports, i, v)
	{
		json_t *p = get(v, "containerPort");
		const char *proto = json_string_value(get(v, "protocol"));
		uint32_t key;

		snprintf(f, sizeof(f), "%s.ports[%zu].containerPort", C, i);
		if (!json_is_integer(p) || json_integer_value(p) < 1 ||
		    json_integer_value(p) > 65535)
			return fx_errf(e, 422, f, "%s: an integer 1..65535", f);
		snprintf(f, sizeof(f), "%s.ports[%zu].protocol", C, i);
		if (get(v, "protocol") &&
		    (!proto || (strcmp(proto, "TCP") && strcmp(proto, "UDP"))))
			return fx_errf(e, 422, f, "%s '%.20s': TCP or UDP", f, proto ? proto : "?");
		/* the containers share the pod's network namespace */
		key = (uint32_t)json_integer_value(p) |
		      (proto && !strcmp(proto, "UDP") ? 1u << 16 : 0);
		snprintf(f, sizeof(f), "%s.ports[%zu].containerPort", C, i);
		for (size_t j = 0; j < *np; j++)
			if (ps[j] == key)
				return fx_errf(e, 422, f, "%s %d/%s: already a port of the pod", f,
					       (int)json_integer_value(p),
					       key >> 16 ? "UDP" : "TCP");
		if (*np == FX_APP_PORTS_MAX)
			return fx_errf(e, 422, f, "%s: at most %d ports in a pod", f,
				       FX_APP_PORTS_MAX);
		ps[(*np)++] = key;
	}
	return resources(c, C, out, e);
}

json_t *fx_app_ports(json_t *spec)
{
	json_t *all = json_array(), *c;
	size_t i;

	json_array_foreach(get(spec, "containers"), i, c)
	{
		json_t *ps = get(c, "ports");

		if (json_is_array(ps))
			json_array_extend(all, ps);
	}
	return all;
}

int fx_app_validate(json_t *obj, const char *ns_path, struct fx_app_spec *out, struct fx_err *e)
{
	json_t *spec, *cs, *cd, *v;
	const char *k;

	memset(out, 0, sizeof(*out));
	if (check_metadata(obj, "Application", ns_path, e))
		return -1;
	spec = get(obj, "spec");
	if (!json_is_object(spec))
		return fx_errf(e, 422, "spec", "spec: required (an object)");
	cs = get(spec, "containers");
	if (!json_is_array(cs) || !json_array_size(cs) || json_array_size(cs) > FX_APP_CTRS_MAX)
		return fx_errf(e, 422, "spec.containers", "spec.containers: 1 to %d containers",
			       FX_APP_CTRS_MAX);
	{
		uint32_t ps[FX_APP_PORTS_MAX];
		size_t np = 0;

		for (size_t i = 0; i < json_array_size(cs); i++)
			if (container(cs, i, out, ps, &np, e))
				return -1;
		if (!np)
			return fx_errf(e, 422, "spec.containers[0].ports",
				       "spec.containers[0].ports: at least one port in the pod");
	}
	v = get(get(get(obj, "metadata"), "annotations"), FX_FORM_ANNOTATION);
	if (json_is_string(v)) /* checked with the metadata */
		out->form = atoi(json_string_value(v));
	v = get(spec, "usingNodeSessionService");
	if (v && !json_is_boolean(v))
		return fx_errf(e, 422, "spec.usingNodeSessionService",
			       "spec.usingNodeSessionService: true or false");
	out->session_service = json_is_true(v);
	cd = get(spec, "configData");
	if (cd && !json_is_null(cd)) {
		if (!json_is_object(cd))
			return fx_errf(e, 422, "spec.configData", "spec.configData: an object");
		json_object_foreach(cd, k, v) if (!json_is_string(v))
		{
			char f[160];

			snprintf(f, sizeof(f), "spec.configData[%.100s]", k);
			return fx_errf(e, 422, f, "%s: must be a string", f);
		}
	}
	return fx_policy_parse(get(spec, "scalingPolicy"), &out->policy, e);
}

int fx_app_update_check(json_t *old_spec, json_t *new_spec, struct fx_err *e)
{
	const char *k;
	json_t *v;

	json_object_foreach(old_spec, k, v)
	{
		char f[160];

		if (!strcmp(k, "scalingPolicy"))
			continue;
		snprintf(f, sizeof(f), "spec.%.100s", k);
		if (!json_equal(v, json_object_get(new_spec, k)))
			return fx_errf(e, 422, f,
				       "%s: only spec.scalingPolicy and metadata.labels and "
				       "annotations may change (delete and create the application "
				       "instead)",
				       f);
	}
	json_object_foreach(new_spec, k, v)
	{
		char f[160];

		snprintf(f, sizeof(f), "spec.%.100s", k);
		if (strcmp(k, "scalingPolicy") && !json_object_get(old_spec, k))
			return fx_errf(e, 422, f,
				       "%s: only spec.scalingPolicy and metadata.labels and "
				       "annotations may change",
				       f);
	}
	return 0;
}

/* ---- ApplicationSession ---- */

static bool base64_ok(const char *s, size_t *decoded)
{
	size_t n = strlen(s), pad = 0;

	if (n % 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '=') {
			if (i < n - 2)
				return false;
			pad++;
		} else if (pad || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
				    (c >= '0' && c <= '9') || c == '+' || c == '/')) {
			return false;
		}
	}
	*decoded = n / 4 * 3 - pad;
	return true;
}

int fx_session_validate(json_t *obj, const char *ns_path, struct fx_session_spec *out,
			struct fx_err *e)
{
	const char *S = "spec", *app, *data, *why;
	json_t *spec, *k;
	size_t dec;
	long v;

	memset(out, 0, sizeof(*out));
	if (check_metadata(obj, "ApplicationSession", ns_path, e))
		return -1;
	spec = get(obj, "spec");
	if (!json_is_object(spec))
		return fx_errf(e, 422, "spec", "spec: required (an object)");
	app = json_string_value(get(spec, "applicationName"));
	if (!app)
		return fx_errf(e, 422, "spec.applicationName",
			       "spec.applicationName: required (a string)");
	if ((why = ctl_k8s_dns_subdomain(app)))
		return fx_errf(e, 422, "spec.applicationName", "spec.applicationName '%.253s': %s",
			       app, why);
	snprintf(out->app, sizeof(out->app), "%s", app);
	data = json_string_value(get(spec, "sessionData"));
	if (!data)
		return fx_errf(e, 422, "spec.sessionData",
			       "spec.sessionData: required (base64, at most 16 KiB decoded)");
	if (!base64_ok(data, &dec))
		return fx_errf(e, 422, "spec.sessionData", "spec.sessionData: not base64");
	if (dec > FX_SESSION_DATA_MAX)
		return fx_errf(e, 422, "spec.sessionData",
			       "spec.sessionData: %zu bytes decoded, at most %d", dec,
			       FX_SESSION_DATA_MAX);
	if (int_field(spec, "openTimeoutSeconds", S, 1, 3600, 10, &v, e))
		return -1;
	out->open_timeout_s = (unsigned)v;
	if (int_field(spec, "closeGracePeriodSeconds", S, 0, 3600, 60, &v, e))
		return -1;
	out->close_grace_s = (unsigned)v;
	k = get(spec, "killInstanceWhenSessionClosed");
	if (k && !json_is_null(k) && !json_is_boolean(k))
		return fx_errf(e, 422, "spec.killInstanceWhenSessionClosed",
			       "spec.killInstanceWhenSessionClosed: true or false");
	out->kill_on_close = !k || json_is_null(k) || json_is_true(k);
	return 0;
}
