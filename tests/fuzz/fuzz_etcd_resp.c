// SPDX-License-Identifier: BSD-2-Clause
/*
 * etcd's answers as the client in control/lib/ctl_etcd*.c reads them: what a
 * member (or anything listening at its address) sends back. Byte 0 picks
 * the request; the rest is the answer:
 *   0..5  a unary answer's body to /v3/kv/range, put, deleterange, txn,
 *         /v3/lease/grant, keepalive: loaded as the request loads it, then
 *         ctl_etcd_answer_parse (parse_kvs and ctl_etcd_kv_parse, the txn's
 *         first delete through nested transactions, the int64 strings)
 *   6     the watch's stream: ctl_etcd_watch_feed in chunks of byte 1's
 *         size (lines split anywhere), events to the hooks
 * A key or value that parses must come back the same through base64, and a
 * watch's revision never goes back.
 */
#include <jansson.h>

#include "ctl_etcd.h"
#include "fuzz.h"

#define FROM_REV 7 /* the watch resumes here: no snapshot first */

static const char *const paths[] = {"/v3/kv/range", "/v3/kv/put",      "/v3/kv/deleterange",
				    "/v3/kv/txn",   "/v3/lease/grant", "/v3/lease/keepalive"};

/* kv as the gateway would send it, parsed again: the same bytes */
static void kv_round_trip(const struct ctl_etcd_kv *kv)
{
	char *k, *v;
	json_t *o;
	struct ctl_etcd_kv back;

	FZ_ASSERT(kv->key && kv->value && !kv->value[kv->value_len]);
	k = ctl_etcd_b64(kv->key, strlen(kv->key));
	v = ctl_etcd_b64(kv->value, kv->value_len);
	FZ_ASSERT(k && v);
	o = json_pack("{s:s,s:s}", "key", k, "value", v);
	FZ_ASSERT(o && !ctl_etcd_kv_parse(o, &back));
	FZ_ASSERT(!strcmp(back.key, kv->key) && back.value_len == kv->value_len &&
		  !memcmp(back.value, kv->value, kv->value_len));
	ctl_etcd_kv_clear(&back);
	json_decref(o);
	free(k);
	free(v);
}

static void unary(struct ctl_etcd *e, const char *path, const uint8_t *data, size_t size)
{
	char *text = fz_text(data, size);
	/* as the request loads it: one value, whatever follows */
	json_t *o = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
	struct ctl_etcd_answer a;

	free(text);
	if (!o)
		return;
	if (json_object_get(o, "error")) { /* the request's failure, not parsed further */
		json_decref(o);
		return;
	}
	if (!ctl_etcd_answer_parse(e, path, o, &a)) {
		FZ_ASSERT(a.kvs.n <= json_array_size(json_object_get(o, "kvs")));
		for (size_t i = 0; i < a.kvs.n; i++)
			kv_round_trip(&a.kvs.kv[i]);
		if (!strcmp(path, "/v3/lease/grant"))
			FZ_ASSERT(a.id);
	} else {
		FZ_ASSERT(!a.kvs.n && !a.kvs.kv); /* freed on the way out */
		FZ_ASSERT(ctl_etcd_errmsg(e)[0]);
	}
	ctl_etcd_kvs_free(&a.kvs);
	json_decref(o);
}

struct watched {
	struct ctl_etcd_watch *w;
	int64_t top; /* the highest mod_rev delivered */
};

static void on_snapshot(void *arg, const struct ctl_etcd_kvs *all)
{
	(void)arg;
	(void)all;
	FZ_ASSERT(!"a snapshot: the watch resumed, it reads nothing");
}

static void on_events(void *arg, const struct ctl_etcd_event *ev, size_t n)
{
	struct watched *x = arg;

	FZ_ASSERT(n);
	for (size_t i = 0; i < n; i++) {
		FZ_ASSERT(ev[i].type == CTL_ETCD_PUT || ev[i].type == CTL_ETCD_DELETE);
		kv_round_trip(&ev[i].kv);
		if (ev[i].kv.mod_rev > x->top)
			x->top = ev[i].kv.mod_rev;
	}
	/* the resume point covers every event delivered */
	FZ_ASSERT(ctl_etcd_watch_revision(x->w) >= x->top);
}

static void on_trouble(void *arg, int rc, const char *msg)
{
	(void)arg;
	FZ_ASSERT(rc < 0 && msg && msg[0]);
}

static void stream(struct ctl_etcd *e, const uint8_t *data, size_t size)
{
	struct watched x = {.top = 0};
	const struct ctl_etcd_watch_hooks h = {
	    .arg = &x, .snapshot = on_snapshot, .events = on_events, .trouble = on_trouble};
	size_t chunk = size ? (size_t)data[0] + 1 : 1;

	x.w = ctl_etcd_watch_start(e, "/fz/", FROM_REV, &h);
	FZ_ASSERT(x.w);
	if (size) {
		data++;
		size--;
	}
	while (size) {
		size_t n = size < chunk ? size : chunk;

		if (ctl_etcd_watch_feed(x.w, (const char *)data, n) != n)
			break; /* the watch ends the transfer here */
		data += n;
		size -= n;
	}
	FZ_ASSERT(ctl_etcd_watch_revision(x.w) >= FROM_REV - 1);
	ctl_etcd_watch_stop(x.w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ctl_etcd_conf conf = {.endpoints = "http://127.0.0.1:9"};
	struct ctl_etcd *e;
	char err[200];
	unsigned pick;

	if (!size)
		return 0;
	pick = data[0] % 7;
	e = ctl_etcd_new(&conf, err, sizeof(err));
	FZ_ASSERT(e);
	if (pick < 6)
		unary(e, paths[pick], data + 1, size - 1);
	else
		stream(e, data + 1, size - 1);
	ctl_etcd_free(e);
	return 0;
}
