// SPDX-License-Identifier: BSD-2-Clause
/* One AF_XDP socket of the workers, with a umem of its own. Frames move
 * between sockets by copy: in copy mode (veth, most virtual NICs) the
 * kernel copies anyway, and 1.5 KB costs far less than its cipher. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

#include "cryptd.h"

static int fill(struct xsock *s)
{
	uint32_t idx;
	unsigned n = XS_FRAMES / 2;

	if (xsk_ring_prod__reserve(&s->fq, n, &idx) != n)
		return -ENOSPC;
	for (unsigned i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&s->fq, idx + i) = (uint64_t)i * XS_FRAME;
	xsk_ring_prod__submit(&s->fq, n);
	return 0;
}

static int try_open(struct xsock *s, bool rx, uint16_t bind_flags)
{
	struct xsk_socket_config cfg = {
	    .rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
	    .tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
	    /* the gateway program redirects; libxdp loads none of its own */
	    .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	    /* the kernel says when a TX kick is needed: always in copy mode
	     * (only a system call transmits there), rarely in zero-copy */
	    .bind_flags = bind_flags | XDP_USE_NEED_WAKEUP,
	};
	int rc;

	rc = xsk_umem__create(&s->umem, s->buf, (uint64_t)XS_FRAMES * XS_FRAME, &s->fq, &s->cq,
			      NULL);
	if (rc)
		return rc;
	rc = xsk_socket__create(&s->xsk, s->dev, s->queue, s->umem, rx ? &s->rx : NULL, &s->tx,
				&cfg);
	if (rc) {
		xsk_umem__delete(s->umem);
		s->umem = NULL;
		s->xsk = NULL;
	}
	return rc;
}

int xsock_open(struct xsock *s, const char *dev, uint32_t queue, bool rx, char *err, size_t errlen)
{
	int rc;

	memset(s, 0, sizeof(*s));
	snprintf(s->dev, sizeof(s->dev), "%s", dev);
	s->queue = queue;
	s->buf = mmap(NULL, (size_t)XS_FRAMES * XS_FRAME, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED) {
		s->buf = NULL;
		snprintf(err, errlen, "%s queue %u: umem: %s", dev, queue, strerror(errno));
		return -errno;
	}
	/* zero-copy where the driver has it (veth has not: EOPNOTSUPP) */
	rc = try_open(s, rx, XDP_ZEROCOPY);
	s->zerocopy = !rc;
	if (rc)
		rc = try_open(s, rx, XDP_COPY);
	if (!rc && rx)
		rc = fill(s);
	if (rc) {
		snprintf(err, errlen, "%s queue %u: AF_XDP socket: %s", dev, queue, strerror(-rc));
		xsock_close(s);
		return rc;
	}
	for (uint32_t i = 0; i < XS_FRAMES / 2; i++)
		s->free[s->n_free++] = (uint64_t)(XS_FRAMES / 2 + i) * XS_FRAME;
	return 0;
}

void xsock_close(struct xsock *s)
{
	if (s->xsk)
		xsk_socket__delete(s->xsk);
	if (s->umem)
		xsk_umem__delete(s->umem);
	if (s->buf)
		munmap(s->buf, (size_t)XS_FRAMES * XS_FRAME);
	s->xsk = NULL;
	s->umem = NULL;
	s->buf = NULL;
}

int xsock_fd(const struct xsock *s)
{
	return xsk_socket__fd(s->xsk);
}

/* TX frames the kernel is done with come back to the free list. */
static void reap(struct xsock *s)
{
	uint32_t idx, n = xsk_ring_cons__peek(&s->cq, XS_FRAMES / 2, &idx);

	for (uint32_t i = 0; i < n && s->n_free < XS_FRAMES / 2; i++)
		s->free[s->n_free++] = *xsk_ring_cons__comp_addr(&s->cq, idx + i);
	xsk_ring_cons__release(&s->cq, n);
}

bool xsock_send(struct xsock *s, const uint8_t *frame, uint32_t len)
{
	struct xdp_desc *d;
	uint32_t idx;
	uint64_t addr;

	if (!s->n_free)
		reap(s);
	if (!s->n_free || len > XS_FRAME || xsk_ring_prod__reserve(&s->tx, 1, &idx) != 1) {
		s->tx_full++;
		return false;
	}
	addr = s->free[--s->n_free];
	memcpy(xsk_umem__get_data(s->buf, addr), frame, len);
	d = xsk_ring_prod__tx_desc(&s->tx, idx);
	d->addr = addr;
	d->len = len;
	d->options = 0;
	xsk_ring_prod__submit(&s->tx, 1);
	return true;
}

/* Descriptors in the TX ring the kernel has not taken yet. */
static uint32_t tx_pending(const struct xsock *s)
{
	return s->tx.cached_prod - __atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE);
}

void xsock_flush(struct xsock *s)
{
	/* Copy mode sends only when asked, and at most 32 frames a call:
	 * kick until the ring is empty, or a frame left there waits for the
	 * next packet, which may be the peer's answer to it (a stall). A
	 * bounded number of tries: the device may be busy (EAGAIN, EBUSY);
	 * the loop's next turn kicks again. */
	for (int i = 0; i < 64 && tx_pending(s) && xsk_ring_prod__needs_wakeup(&s->tx); i++) {
		if (sendto(xsk_socket__fd(s->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			continue;
		if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			break;
		s->tx_busy++;
	}
	reap(s);
}

bool xsock_tx_pending(const struct xsock *s)
{
	return tx_pending(s) != 0;
}

bool xsock_rx_ready(const struct xsock *s)
{
	return s->rx.cached_cons != __atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE);
}

int xsock_busy_poll(struct xsock *s, unsigned usecs, unsigned budget, char *err, size_t errlen)
{
	const struct {
		int opt;
		const char *name;
		int val;
	} o[] = {{SO_PREFER_BUSY_POLL, "SO_PREFER_BUSY_POLL", 1},
		 {SO_BUSY_POLL, "SO_BUSY_POLL", (int)usecs},
		 {SO_BUSY_POLL_BUDGET, "SO_BUSY_POLL_BUDGET", (int)budget}};

	for (size_t i = 0; i < sizeof(o) / sizeof(o[0]); i++)
		if (setsockopt(xsock_fd(s), SOL_SOCKET, o[i].opt, &o[i].val, sizeof(o[i].val))) {
			snprintf(err, errlen, "%s queue %u: %s %d: %s", s->dev, s->queue, o[i].name,
				 o[i].val, strerror(errno));
			return -1;
		}
	s->busy = true;
	return 0;
}

void xsock_rx_kick(struct xsock *s)
{
	if (s->busy)
		recvfrom(xsock_fd(s), NULL, 0, MSG_DONTWAIT, NULL, NULL);
}
