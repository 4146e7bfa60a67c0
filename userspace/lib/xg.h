/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libxgate: what the CLI and the daemons share — instance pin paths, pinned
 * map access, parsers with precise messages, XDP attach/detach, neighbour
 * priming. Every function reports its own error on stderr and returns an
 * xg_exit code (or -1 for parsers), so callers only propagate.
 */
#ifndef XG_LIB_H
#define XG_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <limits.h>

#include "xgate_abi.h"

#define XG_PIN_BASE	    "/sys/fs/bpf/xgate"
#define XG_DEFAULT_INSTANCE "default"

/* Exit codes of every xgate command (docs/cli.md, `xgate help`). */
enum xg_exit {
	XG_OK = 0,
	XG_EFAIL = 1,	  /* kernel or system error */
	XG_EUSAGE = 2,	  /* bad syntax or value */
	XG_ENOTFOUND = 3, /* unknown device, missing entry, no instance */
	XG_EEXIST = 4,	  /* entry already exists */
	XG_EPERM = 5,	  /* no permission for BPF / netlink */
	XG_EVERIFIER = 6, /* program rejected by the verifier */
};

/* ---- log.c ---- */
void xg_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int xg_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int xg_errno_code(int err); /* map -errno to an xg_exit code */
void xg_libbpf_capture(bool verbose);
void xg_libbpf_log_tail(int lines);
bool xg_libbpf_log_has(const char *needle);

/* ---- parse.c ---- */
int xg_parse_vni(const char *s, __u32 *vni);
int xg_parse_ip(const char *s, __u32 *ip_be);
int xg_parse_cidr(const char *s, __u32 *ip_be, int *plen);
int xg_parse_mac(const char *s, __u8 mac[6]);
int xg_parse_ip_list(const char *what, const char *s, __u32 *out, int max, __u32 *n);
int xg_parse_u32(const char *what, const char *s, __u32 min, __u32 max, __u32 *out);
const char *xg_ip_str(__u32 ip_be, char buf[16]);
const char *xg_mac_str(const __u8 *mac, char buf[18]);
void xg_gw_mac_default(__u32 gw_ip_be, __u8 mac[6]);

/* ---- maps.c ---- */
struct xg_neigh;
struct xg_maps {
	int host, ifaces, vpc, subnet, endpoint, cache, stats, txports;
	int gen; /* -1 if the instance predates xg_gen (its programs cache nothing) */
	struct xg_neigh *neigh; /* opened by the first xg_maps_neigh_keep */
	char root[PATH_MAX];
	char instance[64];
};

int xg_instance_root(const char *instance, char *buf, size_t len);
/* mkdir -p (mode 0700) of a directory, or of the directories above a file:
 * 0 or -errno. */
/* Open the instance's pinned maps; with create, make them (by loading the
 * transit object once) when the instance does not exist yet. */
int xg_maps_open(const char *instance, bool create, struct xg_maps *m);
void xg_maps_close(struct xg_maps *m);
/* Call between open and load of any xgate object reusing an instance's
 * pins (works around a libbpf 1.1 devmap flag check). */
struct bpf_object;
int xg_obj_prepare(struct bpf_object *obj, const char *root);
/* The inode of the network namespace the instance was made in: 0, or -1
 * if it does not say (made by an older xgate, or no instance). */
int xg_instance_netns(const char *instance, unsigned long *ino);
/* Remove every pin of the instance (maps keep living while programs use them). */
int xg_instance_remove(const char *instance);

int xg_host_get(struct xg_maps *m, struct xg_host *h);
int xg_host_put(struct xg_maps *m, const struct xg_host *h);
int xg_slot_alloc(struct xg_maps *m, __u32 *slot);
int xg_stats_read(struct xg_maps *m, __u32 slot, struct xg_stat out[XG_R_MAX]);
int xg_stats_clear(struct xg_maps *m, __u32 slot);
const char *xg_reason_name(unsigned int r);
const char *xg_reason_desc(unsigned int r);
/* Keep the direct-path cache honest after an endpoint changes here. */
void xg_cache_forget(struct xg_maps *m, __u32 vni, __u32 ip_be);
/* Call after writing xg_host, xg_ifaces, xg_vpc, xg_subnet, xg_endpoint or
 * xg_txports: the programs' per-CPU caches drop what they hold (xgate_abi.h). */
void xg_gen_bump(struct xg_maps *m);

/* Size the session maps of an object about to be loaded (xg_obj_prepare
 * does it): 0 or -errno. */
int xg_sess_size(struct bpf_object *obj, const char *root);
/* Create the maps an instance made by an older xgate lacks. */
int xg_maps_complete(struct xg_maps *m);

/* ---- sess.c: session ingress (xgate_abi.h, "session ingress") ----
 * The operations the CLI and the daemons use. Reverse entry inserted
 * before the forward one, forward deleted before the reverse one: the data
 * path never sees a forward entry without its reverse. */
struct xg_sess_maps {
	int fwd, rev;
	int cache, rcache, sgen; /* xg_sesscache, xg_sessrcache, xg_sgen (xgate_abi.h) */
};
int xg_sess_open(struct xg_maps *m, struct xg_sess_maps *s);
void xg_sess_close(struct xg_sess_maps *s);
/* "tcp" | "udp" -> IPPROTO_*; -1 after a message. */
int xg_parse_proto(const char *s, __u8 *proto);
/* "A.B.C.D:PORT", port 1..65535; -1 after a message naming what. */
int xg_parse_endpoint(const char *what, const char *s, __u32 *ip_be, __u16 *port_be);
const char *xg_proto_str(__u8 proto);
/* XG_OK (also when the same session is there already), XG_ENOTFOUND
 * (no such VPC), XG_EEXIST (public or pod endpoint taken by another
 * session), XG_EUSAGE, XG_EFAIL. */
int xg_sess_add(struct xg_maps *m, struct xg_sess_maps *s, const struct xg_sess_key *k,
		const struct xg_sess *v);
/* XG_OK or XG_ENOTFOUND. */
int xg_sess_del(struct xg_sess_maps *s, const struct xg_sess_key *k);
/* Every session (and any reverse entry left without one): how many. */
int xg_sess_flush(struct xg_sess_maps *s, unsigned int *n);
/* Packets and bytes toward the pod that CPUs counted for k and have not
 * yet added to its entry (xg_sesscache). */
void xg_sess_pending(const struct xg_sess_maps *s, const struct xg_sess_key *k, __u64 *packets,
		     __u64 *bytes);
/* The same toward the client, for the reverse entry at k (xg_sessrcache). */
void xg_sess_rev_pending(const struct xg_sess_maps *s, const struct xg_sess_rev_key *k,
			 __u64 *packets, __u64 *bytes);
/* Reverse key of a forward entry. */
struct xg_sess_rev_key xg_sess_rev_key_of(const struct xg_sess_key *k, const struct xg_sess *v);

/* ---- attach.c ---- */
enum xg_mode { XG_MODE_NATIVE, XG_MODE_GENERIC };
int xg_dev_index(const char *dev, __u32 *ifindex);
/* The device carrying IPv4 address ip_be in this namespace, or 0. */
__u32 xg_ipv4_ifindex(__u32 ip_be);
int xg_attach(struct xg_maps *m, const char *dev, enum xg_role role, enum xg_mode mode, bool force);
int xg_detach(struct xg_maps *m, const char *dev);
/* Where xg_attach pins the role's program in the instance for reuse:
 * ROOT/prog_ROLE_HASH, HASH the start of the built-in object's SHA-256. */
void xg_prog_pin_path(const struct xg_maps *m, enum xg_role role, char *out, size_t len);
/* prog id and mode of the XDP program on ifindex (0 if none). */
int xg_xdp_query(__u32 ifindex, __u32 *prog_id, enum xg_mode *mode);
/* The name of a loaded program (0, or -errno). */
int xg_prog_name(__u32 prog_id, char *name, size_t len);
/* The devices of this network namespace running the `pass` stub: it has
 * no maps, so no instance records it. Returns how many (at most max). */
int xg_pass_stubs(__u32 *ifindexes, int max);

/* ---- neigh.c: the underlay next hops the data plane forwards to ----
 * Kernel-managed neighbour entries (NTF_EXT_MANAGED): resolved and kept by
 * the kernel, never collected (docs/architecture.md, "Underlay
 * neighbours"). Functions return 0 or -errno; -ENETUNREACH when the address
 * is local or has no route (nothing to resolve). */
#define XG_NEIGH_PROTO 88 /* NDA_PROTOCOL of the entries xgate made */
struct xg_neigh_entry {
	__u32 ip_be; /* the neighbour: the address itself, or its route's gateway */
	__u32 ifindex;
	__u16 state; /* NUD_* */
	__u8 proto;
	bool managed;
	bool has_mac;
	__u8 mac[6];
};
struct xg_neigh *xg_neigh_open(void); /* NULL with errno set */
void xg_neigh_close(struct xg_neigh *n);
/* 0: the next hop toward ip has a managed entry (or a permanent one);
 * 1: this kernel has no managed entries, resolution was asked once. */
int xg_neigh_keep(struct xg_neigh *n, __u32 ip_be);
/* Remove the entry xg_neigh_keep made for ip's next hop (-ENOENT if the
 * entry there is not xgate's). */
int xg_neigh_release(struct xg_neigh *n, __u32 ip_be);
/* The entry for ip's next hop (-ENOENT if none). */
int xg_neigh_get(struct xg_neigh *n, __u32 ip_be, struct xg_neigh_entry *e);
/* xgate's entries in this namespace: how many (at most max), or -errno. */
int xg_neigh_list(struct xg_neigh *n, struct xg_neigh_entry *out, int max);
/* xg_neigh_keep through the maps' handle; failures only show later, as
 * drop_no_neigh, since the map write they follow stands. */
void xg_maps_neigh_keep(struct xg_maps *m, __u32 ip_be);

#endif
