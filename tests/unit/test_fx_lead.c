// SPDX-License-Identifier: BSD-2-Clause
/* fornaxd's view of the applications (lead/) across a compacted gap, on a
 * real three-member etcd (tests/etcd.sh 3): a view fed by the store's
 * watch loses its stream (the member it reads from is killed); meanwhile
 * another core deletes an application and creates one, and etcd compacts
 * past the view's revision. The delete can no longer be read as an event:
 * on resume the watch rereads everything, and the view must then drop the
 * application that is gone, keep the other and have the new one. The view
 * is stepped as fornaxd's loop does: on its fd and deadline only. Then
 * two cores campaign; when the leader stops, the standby takes over,
 * stepped on its election's watch only. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "ctl_log.h"
#include "etcd_test.h"
#include "fx_core_test.h"
#include "lead.h"
#include "store.h"
#include "unit.h"

#define APP                                                                                        \
	"{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"command\":["  \
	"\"/bin/srv\"],\"ports\":[{\"containerPort\":8080}],\"resources\":{\"requests\":{\"cpu\":" \
	"\"10m\",\"memory\":\"8Mi\"}}}],\"scalingPolicy\":{\"minimumInstance\":0,"                 \
	"\"maximumInstance\":1,\"burst\":1,\"scalingPolicyType\":\"idle_session_number\","         \
	"\"idleSessionNumThreshold\":{\"high\":1,\"low\":0}}}}"

static uint64_t now_ms(void *arg)
{
	(void)arg;
	return ctl_now_ms();
}

static void sendf(void *arg, void *link, json_t *msg)
{
	(void)arg;
	(void)link;
	json_decref(msg);
}

static void standby(void *arg, bool standby, const char *leader)
{
	int *led = arg;

	(void)leader;
	if (led && !standby)
		(*led)++;
}

static bool has(struct fx_core *c, const char *name)
{
	json_t *o = fx_core_get(c, FX_K_APP, "default", name);

	json_decref(o);
	return o != NULL;
}

static int create(struct fx_core *c, const char *name)
{
	char buf[1024];
	json_t *b, *out = NULL;
	struct fx_err fe = {0};
	int rc;

	snprintf(buf, sizeof(buf), APP, name);
	b = json_loads(buf, 0, NULL);
	rc = b ? fx_core_app_create(c, "default", b, &out, &fe) : -1;
	if (rc)
		printf("# create %s: %s\n", name, fe.msg);
	json_decref(b);
	json_decref(out);
	return rc;
}

/* step the view as the loop would (its fd, its deadline) until cond, 20 s at most */
#define STEP_UNTIL(l, cond)                                                                        \
	do {                                                                                       \
		struct pollfd p_ = {fx_lead_watch_fd(l), POLLIN, 0};                               \
		int ms_ = fx_lead_watch_step(l);                                                   \
		for (int i_ = 0; i_ < 400 && !(cond); i_++) {                                      \
			poll(&p_, 1, ms_<0 || ms_> 50 ? 50 : ms_);                                 \
			ms_ = fx_lead_watch_step(l);                                               \
		}                                                                                  \
	} while (0)

int main(void)
{
	const char *ep = getenv("XGATE_ETCD_ENDPOINTS");
	const struct fx_core_hooks h = {NULL, now_ms, sendf, NULL, NULL};
	const struct fx_lead_hooks lh = {NULL, standby};
	int led = 0;
	struct etcd_test_members m;
	char prefix[64], err[600];
	struct fx_store_etcd_conf ec = {.timeout_ms = 2000};
	struct fx_store *sv, *sw;
	struct fx_core *cv, *cw;
	struct fx_lead *l;
	struct ctl_etcd_kvs all;
	struct fx_err fe = {0};
	json_t *out = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ep || etcd_test_members(&m) != 3) {
		printf("not ok - run under tests/etcd.sh 3\n");
		return 1;
	}
	snprintf(prefix, sizeof(prefix), "/xgt-fxlead-%d/", (int)getpid());
	ec.endpoints = ep;
	ec.prefix = prefix;
	if (!(sw = fx_store_etcd_open(&ec, err, sizeof(err))) || !(cw = fx_test_core_new(sw, &h)) ||
	    !(sv = fx_store_etcd_open(&ec, err, sizeof(err)))) {
		printf("not ok - open the stores: %s\n", err);
		return 1;
	}
	CHECK(!create(cw, "old") && !create(cw, "keep"), "another core creates old and keep");
	l = fx_lead_new(sv, prefix, "view", 0);
	cv = l ? fx_test_core_new(sv, &h) : NULL;
	CHECK(cv && !fx_lead_start(l, cv, &lh), "the view starts");
	if (!cv)
		return unit_summary();
	STEP_UNTIL(l, has(cv, "old") && has(cv, "keep"));
	CHECK(has(cv, "old") && has(cv, "keep"), "the view has both");
	CHECK(!strcmp(ctl_etcd_endpoint(fx_store_etcd_client(sv)), m.url[0]),
	      "it reads from member 0 (%s)", ctl_etcd_endpoint(fx_store_etcd_client(sv)));

	etcd_test_signal(m.pid[0], SIGKILL, ") Z ");
	CHECK(!fx_core_app_delete(cw, "default", "old", &out, &fe) && !create(cw, "new"),
	      "meanwhile, on another member: old deleted, new created (%s)", fe.msg);
	json_decref(out);
	CHECK(!ctl_etcd_get(fx_store_etcd_client(sw), prefix, true, false, &all) &&
		  !ctl_etcd_compact(fx_store_etcd_client(sw), all.revision),
	      "etcd compacts up to %lld, past the view's revision", (long long)all.revision);
	ctl_etcd_kvs_free(&all);

	STEP_UNTIL(l, has(cv, "new"));
	STEP_UNTIL(l, !has(cv, "old"));
	CHECK(has(cv, "new") && has(cv, "keep"), "on resume the view has new and keep");
	CHECK(!has(cv, "old"), "and no longer old, deleted in the compacted gap");

	/* a standby campaigns from its election's watch when the leader's key
	 * goes: it is stepped on that watch's fd and deadline only (never the
	 * tick that campaigns on a timer), so it can only take over if the
	 * delete woke it */
	{
		const struct fx_lead_hooks bh = {&led, standby};
		struct fx_lead *la = fx_lead_new(sw, prefix, "a", 5);
		struct fx_lead *lb = fx_lead_new(sv, prefix, "b", 5);
		struct fx_core *cb = lb ? fx_test_core_new(sv, &h) : NULL;
		int ms = 0, i;

		CHECK(la && fx_lead_term(la) > 0, "a leads");
		CHECK(cb && !fx_lead_start(lb, cb, &bh) && fx_lead_term(lb) < 0 && !led,
		      "b is a standby");
		if (!cb)
			return unit_summary();
		for (i = 0; i < 10 && !fx_lead_elect_step(lb, &ms); i++)
			poll(NULL, 0, 50);
		CHECK(fx_lead_term(lb) < 0 && !led,
		      "while a leads, b's watch does not make it lead");
		fx_lead_free(la); /* a stops cleanly: its key goes now */
		for (i = 0; i < 400 && fx_lead_term(lb) < 0; i++) {
			struct pollfd p = {fx_lead_elect_fd(lb), POLLIN, 0};

			poll(&p, 1, ms < 0 || ms > 50 ? 50 : ms);
			if (fx_lead_elect_step(lb, &ms))
				break;
		}
		CHECK(fx_lead_term(lb) > 0 && led == 1,
		      "once a's key is deleted b takes over, woken by its watch (term %lld)",
		      (long long)fx_lead_term(lb));
		fx_lead_free(lb);
		fx_core_free(cb);
	}

	fx_lead_free(l);
	fx_core_free(cv);
	fx_core_free(cw);
	sv->ops->close(sv);
	sw->ops->close(sw);
	return unit_summary();
}
