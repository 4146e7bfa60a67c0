// SPDX-License-Identifier: BSD-2-Clause
/* The workers' copy of the peers' keys: read from the pinned maps on first
 * use and again after gatewayd wrote them (it bumps xg_gen after every
 * write of xg_gw_peers, keys included), or after a second at most. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <sodium.h>

#include "cryptd.h"

#define KEYS_MAX_AGE_MS 1000

static int open_pin(const char *root, const char *name, char *err, size_t errlen)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		snprintf(err, errlen, "%s: %s (is the gateway program attached?)", path,
			 strerror(errno));
	return fd;
}

int keys_open(struct keys *k, const char *root, char *err, size_t errlen)
{
	memset(k, 0, sizeof(*k));
	k->paddr = k->peers = k->gen = -1;
	if ((k->paddr = open_pin(root, XG_MAP_GW_PADDR, err, errlen)) < 0 ||
	    (k->peers = open_pin(root, XG_MAP_GW_PEERS, err, errlen)) < 0 ||
	    (k->gen = open_pin(root, XG_MAP_GEN, err, errlen)) < 0)
		return -1;
	return 0;
}

void keys_close(struct keys *k)
{
	int *fds[] = {&k->paddr, &k->peers, &k->gen};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	sodium_memzero(k->p, sizeof(k->p));
	k->n = 0;
}

void keys_refresh(struct keys *k, uint64_t now_ms)
{
	struct xg_gen g = {0};
	__u32 zero = 0;

	k->now_ms = now_ms;
	bpf_map_lookup_elem(k->gen, &zero, &g);
	if (g.gen == k->seen_gen && now_ms - k->read_ms < KEYS_MAX_AGE_MS)
		return;
	k->seen_gen = g.gen;
	k->read_ms = now_ms;
	sodium_memzero(k->p, sizeof(k->p[0]) * (size_t)k->n); /* old keys go */
	k->n = 0;
}

const struct kpeer *keys_peer(struct keys *k, uint32_t ip_be)
{
	struct xg_gw_paddr_key a = {.ip_be = ip_be};
	struct kpeer *p;
	__u32 id;

	for (int i = 0; i < k->n; i++)
		if (k->p[i].ip_be == ip_be)
			return k->p[i].id ? &k->p[i] : NULL;
	if (k->n == XG_GW_MAX_PEERS) /* strangers filled it: start over */
		keys_refresh(k, k->read_ms + KEYS_MAX_AGE_MS);
	p = &k->p[k->n++];
	memset(p, 0, sizeof(*p));
	p->ip_be = ip_be;
	if (bpf_map_lookup_elem(k->paddr, &a, &id) || bpf_map_lookup_elem(k->peers, &id, &p->v) ||
	    !(p->v.flags & XG_GW_PEER_VALID))
		return NULL; /* remembered as nobody until the next refresh */
	p->id = id;
	return p;
}

/* Past RejectAfterMessages (ctr_max) or RejectAfterTime (expires_ns,
 * CLOCK_MONOTONIC as bpf_ktime_get_ns, written by gatewayd): the workers
 * check what the program checked before handing the frame over, because
 * their copy of the entry (and the clock) is their own. 0: no limit. */
static bool spent(const struct keys *k, const struct xg_gw_key *x, uint64_t ctr)
{
	return (x->ctr_max && ctr > x->ctr_max) ||
	       (x->expires_ns && k->now_ms >= x->expires_ns / 1000000);
}

int keys_get(const struct keys *k, const struct kpeer *p, bool tx, const uint8_t *hdr,
	     struct xgt_key *out)
{
	const struct xg_gw_key *ks = tx ? p->v.tx : p->v.rx;
	uint8_t id = hdr[offsetof(struct xg_tun_hdr, key_id)];
	uint64_t ctr = 0;

	for (int i = 0; i < 8; i++)
		ctr = ctr << 8 | hdr[offsetof(struct xg_tun_hdr, counter_be) + (size_t)i];
	for (int i = 0; i < 2; i++) {
		const struct xg_gw_key *x = &ks[i];

		if (!x->valid || x->id != id || !x->cipher)
			continue;
		if (spent(k, x, ctr))
			return XG_R_DROP_GW_KEY_EXPIRED;
		out->id = x->id;
		out->cipher = x->cipher;
		out->valid = true;
		memcpy(out->salt, x->salt, sizeof(out->salt));
		memcpy(out->k, x->k, sizeof(out->k));
		return 0;
	}
	return tx ? XG_R_DROP_GW_NO_KEY : XG_R_DROP_GW_BAD_KEY;
}
