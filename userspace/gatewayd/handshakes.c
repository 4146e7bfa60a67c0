// SPDX-License-Identifier: BSD-2-Clause
/* Deadlines and a cap for handshakes under way; see handshakes.h. */
#include <string.h>
#include <sys/socket.h>

#include "handshakes.h"

void gw_hs_init(struct gw_hs_table *t, unsigned max_inbound)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->max_inbound = max_inbound < GW_HS_INBOUND_MAX ? max_inbound : GW_HS_INBOUND_MAX;
}

void gw_hs_destroy(struct gw_hs_table *t)
{
	pthread_mutex_destroy(&t->lock);
}

int gw_hs_begin(struct gw_hs_table *t, int fd, bool inbound, uint32_t addr_be, uint64_t deadline_ms)
{
	int i, free_slot = -1, same = 0;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < GW_HS_SLOTS; i++) {
		if (!t->slot[i].used && free_slot < 0)
			free_slot = i;
		same += t->slot[i].used && t->slot[i].inbound && t->slot[i].addr_be == addr_be;
	}
	if (inbound && (t->n_inbound >= t->max_inbound || same >= GW_HS_PER_ADDR))
		free_slot = -1;
	if (free_slot >= 0) {
		t->slot[free_slot] = (struct gw_hs_slot){.fd = fd,
							 .addr_be = inbound ? addr_be : 0,
							 .used = true,
							 .inbound = inbound,
							 .deadline_ms = deadline_ms};
		t->n_inbound += inbound;
	}
	pthread_mutex_unlock(&t->lock);
	return free_slot;
}

bool gw_hs_end(struct gw_hs_table *t, int i)
{
	bool expired;

	if (i < 0 || i >= GW_HS_SLOTS)
		return false;
	pthread_mutex_lock(&t->lock);
	expired = t->slot[i].expired;
	t->n_inbound -= t->slot[i].inbound;
	memset(&t->slot[i], 0, sizeof(t->slot[i]));
	pthread_mutex_unlock(&t->lock);
	return expired;
}

int gw_hs_expire(struct gw_hs_table *t, uint64_t now_ms)
{
	int n = 0;

	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < GW_HS_SLOTS; i++) {
		struct gw_hs_slot *s = &t->slot[i];

		/* under the lock: the fd is not closed before gw_hs_end */
		if (s->used && !s->expired && now_ms >= s->deadline_ms) {
			shutdown(s->fd, SHUT_RDWR);
			s->expired = true;
			n++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

unsigned gw_hs_inbound(struct gw_hs_table *t)
{
	unsigned n;

	pthread_mutex_lock(&t->lock);
	n = t->n_inbound;
	pthread_mutex_unlock(&t->lock);
	return n;
}
