/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xgate-cryptd: the crypto workers of one gateway (docs/architecture.md,
 * "Encrypted tunnel: where the crypto runs"). AF_XDP sockets (libxdp's xsk
 * API) on every RX queue of the public NIC (frames from peers, to open) and
 * of the internal NIC (frames to peers, to seal), registered in the gateway
 * program's xg_gw_xsk; sealed frames leave on the public NIC, opened ones
 * go back into the gateway program as OPENED on the crypt interface. Keys
 * are read from the pinned xg_gw_peers, never written: gatewayd can restart
 * while this process keeps forwarding.
 *
 * Modules, each calling only those below it: main.c (command line, setup,
 * the loop), work.c (a batch: open or seal, counters), xsock.c (one AF_XDP
 * socket: umem, rings, send by copy), keys.c (the key cache), nic.c (queues
 * and veth peer of a device).
 */
#ifndef CRYPTD_H
#define CRYPTD_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <xdp/xsk.h>

#include "aead.h"
#include "xgate_abi.h"

/* ---- nic.c ------------------------------------------------------------- */

/* RX queues of dev (1 if it does not say; at most XG_GW_MAX_QUEUES). */
unsigned nic_rx_queues(const char *dev);
/* The ifindex of veth dev's other end, 0 if dev is no veth. */
uint32_t nic_veth_peer(const char *dev);
/* Set dev's sysfs knob (napi_defer_hard_irqs, gro_flush_timeout) to val,
 * as seen from this process's network namespace, and put what it was in
 * old (oldlen > 0; val NULL: only read it). 0, or -1 with err set. */
int nic_knob(const char *dev, const char *knob, const char *val, char *old, size_t oldlen,
	     char *err, size_t errlen);

/* ---- xsock.c ----------------------------------------------------------- */

#define XS_FRAMES 2048 /* per socket: half filled for RX, half for TX */
#define XS_FRAME  XSK_UMEM__DEFAULT_FRAME_SIZE
#define XS_BATCH  64 /* descriptors taken from a ring at once */

struct xsock {
	char dev[IF_NAMESIZE];
	uint32_t queue;
	bool zerocopy;
	void *buf;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	uint64_t free[XS_FRAMES / 2]; /* TX frames not in flight */
	uint32_t n_free;
	uint64_t tx_full; /* frames not sent: no TX frame or ring room */
	uint64_t tx_busy; /* TX kicks the device refused (EAGAIN, EBUSY, ENOBUFS) */
	bool busy;	  /* preferred busy polling: our system calls run the NAPI */
};

/* An AF_XDP socket on dev's queue: zero-copy if the driver has it, else
 * copy mode; rx: with an RX ring (filled), else transmit only. 0, or a
 * negative errno with err set. */
int xsock_open(struct xsock *s, const char *dev, uint32_t queue, bool rx, char *err, size_t errlen);
void xsock_close(struct xsock *s);
int xsock_fd(const struct xsock *s);
/* Queue len bytes of frame for sending (copied into a TX frame); kicked
 * by xsock_flush. false if there is no room (counted). */
bool xsock_send(struct xsock *s, const uint8_t *frame, uint32_t len);
void xsock_flush(struct xsock *s);
/* Frames queued that the kernel has not taken yet. */
bool xsock_tx_pending(const struct xsock *s);
/* Frames in the RX ring not taken yet: no need to ask poll(). */
bool xsock_rx_ready(const struct xsock *s);
/* Preferred busy polling (SO_PREFER_BUSY_POLL, SO_BUSY_POLL usecs,
 * SO_BUSY_POLL_BUDGET budget): the device queue's NAPI runs in this
 * process's system calls on the socket. 0, or -1 with err set. */
int xsock_busy_poll(struct xsock *s, unsigned usecs, unsigned budget, char *err, size_t errlen);
/* With busy polling: run the device queue's NAPI once (a non-blocking
 * recvfrom), which fills the RX ring. */
void xsock_rx_kick(struct xsock *s);

/* ---- keys.c ------------------------------------------------------------ */

/* What the workers know of a peer: its entry in xg_gw_peers, found by its
 * public address, as of the generation it was read under. */
struct kpeer {
	uint32_t ip_be;
	uint32_t id; /* 0: no such peer */
	struct xg_gw_peer v;
};

struct keys {
	int paddr, peers, gen; /* pinned maps */
	uint32_t seen_gen;
	uint64_t read_ms;
	uint64_t now_ms;     /* CLOCK_MONOTONIC, as of the last keys_refresh */
	uint32_t self_ip_be; /* our public address (xg_gw): a frame's way on one NIC */
	struct kpeer p[XG_GW_MAX_PEERS];
	int n;
};

int keys_open(struct keys *k, const char *root, char *err, size_t errlen);
void keys_close(struct keys *k);
/* Forget every cached entry when xg_gen moved (gatewayd wrote the maps)
 * or a second passed; once per batch. */
void keys_refresh(struct keys *k, uint64_t now_ms);
/* The peer whose public address is ip_be, NULL for none (not type 1:
 * the caller checks the flag). */
const struct kpeer *keys_peer(struct keys *k, uint32_t ip_be);
/* The peer's key that tunnel header hdr names (a receive key, or a
 * sending key: tx), as xg_tun takes it: 0, or the drop reason: no key of
 * a cipher under that id (XG_R_DROP_GW_NO_KEY sending, _BAD_KEY
 * receiving), or one past its limits for hdr's counter
 * (XG_R_DROP_GW_KEY_EXPIRED: RejectAfterTime as of keys_refresh,
 * RejectAfterMessages). */
int keys_get(const struct keys *k, const struct kpeer *p, bool tx, const uint8_t *hdr,
	     struct xgt_key *out);

/* ---- work.c ------------------------------------------------------------ */

struct cryptd_stats {
	uint64_t opened, sealed;
	uint64_t rx_lost; /* the kernel's count, as of the last log line */
	uint64_t drops[XG_R__COUNT];
};

/* Open a frame from the public NIC (outer headers included) in place:
 * 0 (it is OPENED now), or the XG_R_DROP_* reason. */
int work_open(struct keys *k, uint8_t *pkt, uint32_t len);
/* Seal a frame the program built for a type 1 peer in place: 0 or the
 * reason. */
int work_seal(struct keys *k, uint8_t *pkt, uint32_t len);
/* What a socket's frames are: to seal, to open, or either (a gateway whose
 * public and internal NIC are one device: its sockets are in both halves
 * of xg_gw_xsk, and each frame's addresses tell its way). */
enum work_dir { WORK_SEAL = 0, WORK_OPEN = 1, WORK_EITHER = 2 };
/* Up to XS_BATCH frames from in's RX ring (how: enum work_dir), each
 * opened and sent on out, or sealed and sent on out (on in for
 * WORK_EITHER: in is on the public NIC), the frames returned to in's fill
 * ring. The count. */
unsigned work_batch(struct keys *k, struct xsock *in, struct xsock *out, int how,
		    struct cryptd_stats *st);

#endif
