// SPDX-License-Identifier: BSD-2-Clause
/*
 * fornaxd's core as the node link and the API drive it: the input is a
 * script, one step per line, run against a fresh core (an in-memory SQLite
 * store, a fake clock, a fake link) holding the application default/echo
 * and the ready node node-a:
 *   T<digits>     the clock moves that many ms and the core ticks
 *   S<json>       an ApplicationSession created (fx_core_session_create)
 *   C<json>       the same by the client of token "tok-a" (MaxSessionsPerClient
 *                 2; its owner id, which the node echoes, 891a34b3...)
 *   D<name>       a session deleted
 *   A<json>       an application updated (fx_core_app_update of echo)
 *   R<json>       a NodeRegister for node-a (fx_core_node_register)
 *   anything else a message from node-a (fx_core_node_message)
 * After every step the pools' books must balance (the counts match the
 * pods, node usage never below zero, a session's pod points back at it).
 */
#include "core_int.h"
#include "fuzz.h"
#include "fx_books.h"

static int link_a;

static uint64_t now_ms(void *arg)
{
	return *(uint64_t *)arg;
}

static void sendf(void *arg, void *link, json_t *msg)
{
	(void)arg, (void)link;
	json_decref(msg);
}

#define APP                                                                                        \
	"{\"metadata\":{\"name\":\"echo\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"command\":" \
	"[\"/x\"],\"ports\":[{\"containerPort\":80}],\"resources\":{\"requests\":{\"cpu\":"        \
	"\"100m\",\"memory\":\"1Mi\"}}}],\"scalingPolicy\":{\"maximumInstance\":4,\"burst\":2,"    \
	"\"scalingPolicyType\":\"idle_session_number\",\"idleSessionNumThreshold\":{\"high\":2,"   \
	"\"low\":1}}}}"
#define REG                                                                                        \
	"{\"type\":\"NodeRegister\",\"v\":1,\"nodeRevision\":0,\"node\":{\"name\":\"node-a\","     \
	"\"capacity\":{\"cpu\":1000,\"memory\":100000000,\"pods\":8}}}"

static void reg(struct fx_core *c, const char *text)
{
	json_t *m = json_loads(text, 0, NULL);
	struct fx_err e;
	void *old;

	if (m && !fx_link_register_check(m, &e))
		fx_core_node_register(c, &link_a, m, 1, NULL, &old, &e);
	json_decref(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fx_core_conf cf = {.pod_net = 0x0af40000,
				  .pod_net_bits = 16,
				  .node_bits = 24,
				  .vni = 1,
				  .port_lo = 30000,
				  .port_hi = 30100,
				  .state_s = 60,
				  .max_sess_client = 2};
	uint64_t now = 1000000;
	struct fx_core_hooks h = {&now, now_ms, sendf, NULL, NULL};
	char *text = fz_text(data, size), *line, *save = NULL, err[256];
	struct fx_store *st = fx_store_sqlite_open(":memory:", err, sizeof(err));
	struct fx_core *c = st ? fx_core_new(st, &cf, &h, 1, err, sizeof(err)) : NULL;
	json_t *m, *out = NULL;
	struct fx_err e;
	unsigned char client[CTL_TOKEN_HASH_LEN];

	if (!c)
		abort();
	ctl_token_digest("tok-a", 5, client);
	m = json_loads(APP, 0, NULL);
	if (fx_core_app_create(c, "default", m, &out, &e))
		abort();
	json_decref(m);
	json_decref(out);
	reg(c, REG);
	m = json_loads("{\"type\":\"NodeReady\",\"nodeRevision\":0}", 0, NULL);
	fx_core_node_message(c, "node-a", &link_a, m, &e);
	json_decref(m);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		out = NULL;
		switch (line[0]) {
		case 'T':
			now += strtoul(line + 1, NULL, 10) % 100000;
			fx_core_tick(c);
			break;
		case 'S':
		case 'C':
		case 'A':
			if ((m = json_loads(line + 1, 0, NULL))) {
				if (line[0] != 'A')
					fx_core_session_create(c, "default", m,
							       line[0] == 'C' ? client : NULL, &out,
							       &e);
				else
					fx_core_app_update(c, "default", "echo", m, &out, &e);
			}
			json_decref(m);
			break;
		case 'D':
			fx_core_session_delete(c, "default", line + 1, &out, &e);
			break;
		case 'R':
			reg(c, line + 1);
			break;
		default:
			if ((m = json_loads(line, 0, NULL)))
				fx_core_node_message(c, "node-a", &link_a, m, &e);
			json_decref(m);
			break;
		}
		json_decref(out);
		FZ_ASSERT(fx_books_balance(c));
	}
	fx_core_free(c);
	st->ops->close(st);
	free(text);
	return 0;
}
