/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xgate ABI: every map key/value layout, constant and stats reason shared by
 * the XDP programs and userspace. One header so the two can never disagree.
 *
 * Rules: fixed-width types only, explicit padding, no bitfields. Fields named
 * *_be are in network byte order (they are compared against packet bytes
 * without conversion); everything else is host order.
 */
#ifndef XGATE_ABI_H
#define XGATE_ABI_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_spin_lock */

#define XG_ABI_VERSION 1

/* ---- wire constants ---------------------------------------------------- */

#define XG_GENEVE_PORT 6081   /* RFC 8926 */
#define XG_ETH_P_TEB 0x6558   /* Geneve protocol type: inner Ethernet */
/* Option class from the RFC 8926 experimental range (0xFFF0-0xFFFF). */
#define XG_OPT_CLASS 0xFFF8
#define XG_OPT_CRITICAL 0x80  /* high bit of the option type */

/*
 * XG_OPT_HOST (non-critical): "the inner source address lives on host X".
 * Agents put it on every frame they encapsulate (X = their own host); a
 * bouncer answering ARP rewrites it so X = host of the ARP target. The host
 * that finally delivers the frame learns (VNI, inner source) -> X into its
 * direct-path cache.
 */
#define XG_OPT_TYPE_HOST 0x01
#define XG_OPT_HOST_DIRECT 0x01 /* sender used its direct-path cache */
#define XG_OPT_HOST_STALE 0x02  /* bounced back: inner dst is not where you thought */
/* Session ingress, dedicated-gateway form: the inner frame is a session's
 * DNATed datagram going to its pod's host (SESS_IN) or the pod's reply
 * going back to the ingress host (SESS_OUT). Its inner client address is
 * no VPC endpoint: receivers check it against their session entry and
 * never learn a direct path from it. */
#define XG_OPT_HOST_SESS_IN 0x04
#define XG_OPT_HOST_SESS_OUT 0x08

struct xg_opt_host {
	__u16 opt_class_be;
	__u8 type;
	__u8 len; /* low 5 bits: data length in 4-byte words (2) */
	__u32 host_be;
	__u8 flags;
	__u8 rsvd[3];
};

/* Encapsulation overhead added by an agent: outer Ethernet, IPv4, UDP,
 * Geneve base header and one XG_OPT_HOST option. */
#define XG_GENEVE_HDR_LEN 8
#define XG_ENCAP_LEN (14 + 20 + 8 + XG_GENEVE_HDR_LEN + (int)sizeof(struct xg_opt_host))
/* Pod MTU rule: pod MTU <= underlay MTU - XG_POD_MTU_OVERHEAD (inner Ethernet
 * header is carried too, but MTUs count from the IP header). */
#define XG_POD_MTU_OVERHEAD (XG_ENCAP_LEN)

#define XG_MAX_GENEVE_OPTS 8   /* TLV walk bound */
#define XG_MAX_BOUNCERS 8
#define XG_MAX_DIVIDERS 8

/* ---- map sizes ---------------------------------------------------------- */

#define XG_MAX_IFACES 256
#define XG_MAX_VPCS 4096
#define XG_MAX_SUBNETS 16384
#define XG_MAX_ENDPOINTS 65536
#define XG_MAX_CACHE 131072 /* LRU: >= 2x the endpoints a host talks to */

/* ---- maps ---------------------------------------------------------------
 * All pinned under /sys/fs/bpf/xgate/<instance>/<map name>. Names are the
 * ABI: userspace finds maps by these names, never by position.
 */
#define XG_MAP_HOST "xg_host"
#define XG_MAP_IFACES "xg_ifaces"
#define XG_MAP_VPC "xg_vpc"
#define XG_MAP_SUBNET "xg_subnet"
#define XG_MAP_ENDPOINT "xg_endpoint"
#define XG_MAP_CACHE "xg_cache"
#define XG_MAP_STATS "xg_stats"
#define XG_MAP_TXPORTS "xg_txports"
#define XG_MAP_GEN "xg_gen"
#define XG_MAP_NHCACHE "xg_nhcache"
#define XG_MAP_IFCACHE "xg_ifcache"
#define XG_MAP_EPCACHE "xg_epcache"
#define XG_MAP_RTCACHE "xg_rtcache"
#define XG_MAP_DPCACHE "xg_dpcache"

/* xg_host: ARRAY[1]. This host's underlay identity. */
struct xg_host {
	__u32 ip_be;         /* underlay address of this host (outer src) */
	__u32 gateway_be;    /* cluster gateway: where remote subnets go; 0 = none */
	__u32 nic_ifindex;   /* underlay NIC (transit attached here) */
	__u8 ttl;            /* outer TTL on encap; 0 means 64 */
	__u8 pad[3];
};

/* xg_ifaces: HASH ifindex -> role, stats slot and (for agents) the pod. */
enum xg_role {
	XG_ROLE_NONE = 0,
	XG_ROLE_TRANSIT = 1,
	XG_ROLE_AGENT = 2,
	XG_ROLE_PASS = 3, /* stub on a veth peer; never in xg_ifaces */
	XG_ROLE_GATEWAY = 4, /* both NICs of a cluster gateway */
	XG_ROLE_INGRESS = 5, /* a node's public NIC: session DNAT */
};

struct xg_iface {
	__u32 slot;   /* stats slot, 1..XG_MAX_IFACES-1; 0 = "unknown device" */
	__u32 role;   /* enum xg_role */
	/* agent only: the pod behind this veth (set by `endpoint add ... dev`) */
	__u32 vni;
	__u32 pod_ip_be;
	__u8 pod_mac[6];
	__u16 flags;
};
#define XG_IFACE_HAS_POD 0x1

/* xg_vpc: HASH vni -> dividers of the VPC (where a bouncer sends misses). */
struct xg_vpc {
	__u32 n_dividers;
	__u32 dividers_be[XG_MAX_DIVIDERS];
};

/* xg_subnet: LPM_TRIE (vni, prefix) -> bouncers. The VNI sits in front of
 * the address so one trie serves every tenant: prefixlen = 32 + mask. */
struct xg_subnet_key {
	__u32 prefixlen;
	__u32 vni_be;
	__u32 ip_be;
};
#define XG_SUBNET_REMOTE 0x1 /* lives in another cluster: send to the gateway */

struct xg_subnet {
	__u32 flags;
	__u32 gw_ip_be;    /* the subnet's gateway address, answered by ARP */
	__u8 gw_mac[6];
	__u16 n_bouncers;
	__u32 bouncers_be[XG_MAX_BOUNCERS];
};

/* xg_endpoint: HASH (vni, ip) -> where the endpoint lives. */
struct xg_ep_key {
	__u32 vni;
	__u32 ip_be;
};
#define XG_EP_LOCAL 0x1 /* behind a veth on this host: ifindex is valid */

struct xg_endpoint {
	__u32 host_be;
	__u32 ifindex;
	__u8 mac[6];
	__u16 flags;
};

/* xg_cache: LRU_HASH (vni, ip) -> host learned from XG_OPT_HOST. */
struct xg_cache_entry {
	__u32 host_be;
	__u32 pad;
	__u64 learned_ns; /* bpf_ktime_get_ns when learned */
};

/* xg_txports: DEVMAP_HASH ifindex -> ifindex, every device we redirect to. */

/* ---- per-CPU caches --------------------------------------------------------
 * On this kind of machine a HASH lookup costs ~40 ns, an LPM_TRIE lookup ~18
 * and bpf_fib_lookup ~170 ns, while a PERCPU_ARRAY lookup is inlined by the
 * JIT and jiffies are one load. The programs therefore keep per-CPU,
 * direct-mapped copies of what they read on every packet: xg_ifaces and
 * xg_endpoint entries and xg_subnet longest-prefix matches (present or
 * absent), and next hops from bpf_fib_lookup (successes only: an error is
 * asked again on the next packet).
 *
 * A slot is used only if it was filled under the current configuration
 * generation (xg_gen) and less than XG_CACHE_TTL_JIFFIES ago:
 *  - every writer of the configuration maps (xg_host, xg_ifaces, xg_vpc,
 *    xg_subnet, xg_endpoint, xg_txports) bumps xg_gen AFTER its writes, so a
 *    change takes effect from the next packet on (libxgate: xg_gen_bump);
 *  - next hops (MACs, egress device, MTU) come from the kernel FIB and are
 *    at most XG_CACHE_TTL_JIFFIES old: 100 jiffies, i.e. 0.1 s at HZ=1000,
 *    0.4 s at HZ=250, 1 s at HZ=100. A neighbour or route change (new MAC,
 *    neighbour lost, MTU, forwarding sysctl) is seen within that bound.
 *    A writer that does not bump xg_gen is seen within the same bound.
 * The caches are pinned like the other maps (transit and agent programs of a
 * host share them); userspace never needs to read them.
 */
#define XG_CACHE_TTL_JIFFIES 100
#define XG_NHCACHE_SLOTS 256  /* power of 2 */
#define XG_EPCACHE_SLOTS 1024 /* power of 2 */
#define XG_RTCACHE_SLOTS 512  /* power of 2 */
#define XG_DPCACHE_SLOTS 1024 /* power of 2 */
#define XG_AGCACHE_SLOTS 256  /* power of 2 */
#define XG_IFCACHE_SLOTS 256  /* power of 2, indexed by ifindex */

/* xg_gen: ARRAY[1], the configuration generation, and the generation of
 * xg_cache, which the data path itself writes (learn, stale delete) and then
 * bumps dgen atomically. Userspace writes the pair (gen + 1, dgen as read):
 * it may lose a concurrent dgen bump, but gen grew, so no (gen, dgen) pair
 * a slot was stamped with ever comes back. */
struct xg_gen {
	__u32 gen;
	__u32 dgen;
};

/* xg_nhcache: PERCPU_ARRAY, slot = hash(dst). A bpf_fib_lookup success for
 * (dst, src, oif). */
struct xg_nh_slot {
	__u32 dst_be;  /* fib inputs */
	__u32 src_be;
	__u32 oif;
	__u32 gen;
	__u64 expires; /* jiffies */
	__u32 ifindex; /* fib outputs: egress device, route MTU, MACs */
	__u16 mtu;
	__u8 dmac[6];
	__u8 smac[6];
	__u8 pad[6];
};

/* xg_ifcache: PERCPU_ARRAY, slot = ifindex % XG_IFCACHE_SLOTS. */
struct xg_ifc_slot {
	__u32 ifindex;
	__u32 gen;
	__u64 expires;
	__u32 present; /* 0: ifindex is not in xg_ifaces */
	__u32 pad;
	struct xg_iface ifc;
};

/* xg_epcache: PERCPU_ARRAY, slot = hash(vni, ip). */
struct xg_epc_slot {
	struct xg_ep_key key;
	__u32 gen;
	__u32 present; /* 0: no such endpoint */
	__u64 expires;
	struct xg_endpoint ep;
};

/* xg_rtcache: PERCPU_ARRAY, slot = hash(vni, ip). The xg_subnet entry
 * matching (vni, ip), i.e. the result of the longest-prefix lookup. */
struct xg_rt_slot {
	struct xg_ep_key key;
	__u32 gen;
	__u32 present; /* 0: no subnet holds ip */
	__u64 expires;
	struct xg_subnet s;
};

/* xg_dpcache: PERCPU_ARRAY, slot = hash(vni, ip). The result of an xg_cache
 * lookup (the direct path), present or absent, valid under (gen, dgen): a
 * learn or stale delete is seen by the next packet. An entry the LRU evicts
 * may still be used for XG_CACHE_TTL_JIFFIES: eviction is for room, the
 * location it holds was not wrong (a wrong one comes back STALE and is
 * deleted, which bumps dgen). */
struct xg_dpc_slot {
	struct xg_ep_key key;
	__u32 gen;
	__u32 dgen;
	__u64 expires;
	__u32 present; /* 0: not in xg_cache */
	__u32 host_be;
};

/* xg_agcache: PERCPU_ARRAY, slot = hash(vni, ip). The agent's whole
 * decision for a destination (its xg_endpoint, xg_cache, xg_subnet and
 * xg_vpc lookups in one), valid under both generations: deliver into a
 * local pod's veth, or encapsulate toward dst_be. Decisions that depend on
 * the flow (a pick among several bouncers or dividers) and drops are not
 * kept. */
enum xg_agc_kind {
	XG_AGC_NONE = 0,
	XG_AGC_LOCAL = 1, /* redirect into ifindex, destination MAC mac */
	XG_AGC_ENCAP = 2, /* Geneve to dst_be, counted as reason */
};
struct xg_agc_slot {
	struct xg_ep_key key;
	__u32 gen;
	__u32 dgen;
	__u64 expires;
	__u32 kind;
	__u32 dst_be;
	__u32 ifindex;
	__u16 reason;
	__u8 opt_flags;
	__u8 pad;
	__u8 mac[6];
	__u16 pad2;
};

/* ---- inter-cluster tunnel (gateway to gateway), proto/xgtun.md -----------
 * Outer IPv4/UDP to the peer gateway's public address, then this header,
 * then the inner Ethernet frame (what the pod sent). The tag authenticates
 * the first 16 bytes of the header and the whole inner frame with the key
 * the sender announced for key_id (type AUTH: SipHash-2-4, 128-bit output,
 * payload in clear). Type AEAD is reserved for an encrypting mode: same
 * header, same keys and counters, the tag becomes the AEAD tag.
 */
#define XG_TUN_PORT 6082 /* default; the receiving gateway's choice */
#define XG_TUN_VERSION 1
#define XG_TUN_TYPE_AUTH 0
#define XG_TUN_TYPE_AEAD 1 /* proto/xgtun.md "Type 1: AEAD" */
/* A type 1 frame its worker opened (tag verified, inner frame in clear),
 * sent back into the gateway program on the crypt interface: never valid
 * on the wire, accepted on that interface only (xg_gw_conf.crypt_ifindex). */
#define XG_TUN_TYPE_OPENED 0x81

struct xg_tun_hdr {
	__u8 ver;    /* XG_TUN_VERSION */
	__u8 type;   /* XG_TUN_TYPE_* */
	__u8 key_id; /* which of the sender's keys (DATAKEY, proto/gatewayd.md) */
	__u8 flags;  /* 0 */
	__u32 vni_be; /* VNI << 8, low byte 0 (as in Geneve) */
	__u64 counter_be; /* per sender and peer, starts at 1, never repeats */
	__u8 tag[16];
};
#define XG_TUN_AUTH_LEN 16 /* header bytes the tag covers, before the tag */
/* Outer Ethernet, IPv4 (no options), UDP and the tunnel header: 74 bytes,
 * 12 more than a Geneve hop, so the WAN MTU must be the cluster underlay's
 * + 12 for pods to keep their MTU. */
#define XG_TUN_LEN (14 + 20 + 8 + (int)sizeof(struct xg_tun_hdr))
/* Largest inner frame the gateway authenticates (bounded loop). */
#define XG_TUN_MAX_INNER 1536 /* a 1500-byte inner IP packet + Ethernet; no jumbo */

#define XG_GW_MAX_PEERS 256
#define XG_GW_MAX_ROUTES 16384
/* Replay window: a ring of XG_GW_RING slots, each one 64-bit word holding
 * a block number (counter / 16, 48 bits) and that block's 16 seen-bits, so
 * one compare-and-swap both checks and records a counter (no lock). */
#define XG_GW_RING 16
#define XG_GW_BLOCK_SHIFT 4 /* 16 counters per slot */
/* Counters more than this far behind the highest accepted are refused. The
 * ring remembers at least (XG_GW_RING - 1) * 16 = 240 back, so every
 * counter inside the window is tracked. */
#define XG_GW_WINDOW 192
#define XG_GW_CTR_LIMIT (1ULL << 52) /* block numbers fit 48 bits */

#define XG_MAP_GW "xg_gw"
#define XG_MAP_GW_PEERS "xg_gw_peers"
#define XG_MAP_GW_PADDR "xg_gw_paddr"
#define XG_MAP_GW_ROUTE "xg_gw_route"
#define XG_MAP_GW_REPLAY "xg_gw_replay"
#define XG_MAP_GW_TXCTR "xg_gw_txctr"
#define XG_MAP_GW_PSTATS "xg_gw_pstats"
#define XG_MAP_GW_PACACHE "xg_gw_pacache"
#define XG_MAP_GW_RTCACHE "xg_gw_rtcache"
#define XG_MAP_GW_DCACHE "xg_gw_dcache"
#define XG_MAP_GW_XSK "xg_gw_xsk"
/* xg_gw_xsk: XSKMAP[2 * XG_GW_MAX_QUEUES]: the crypto workers' AF_XDP
 * sockets (docs/architecture.md, "Encrypted tunnel"). A socket is bound to
 * one device's queue and the frames to open arrive on the public NIC, those
 * to seal on the internal one: index = RX queue for frames from peers,
 * XG_GW_XSK_SEAL + RX queue for frames to peers. */
#define XG_GW_MAX_QUEUES 64
#define XG_GW_XSK_SEAL XG_GW_MAX_QUEUES

/* xg_gw: ARRAY[1]. The gateway's public side (its internal side is
 * xg_host: address and NIC on the cluster underlay). */
struct xg_gw_conf {
	__u32 pub_ip_be;     /* tunnel packets are sent from and accepted at */
	__u32 pub_ifindex;   /* public NIC */
	__u16 port_be;       /* UDP port tunnel packets are accepted at */
	__u8 ttl;            /* outer TTL on the WAN; 0 means 64 */
	__u8 pad;
	/* The gateway's end of the crypt interface, where workers send the
	 * frames they opened (XG_TUN_TYPE_OPENED); 0: none. Written by
	 * xgate-cryptd, which owns the interface; gatewayd keeps it. */
	__u32 crypt_ifindex;
};

/* A data-plane key, derived by both gatewayds from their session and a
 * fresh X25519 exchange per rekey (gw_rekey_derive); id is what the tunnel
 * header carries. Type 0: the first 16 bytes of k (SipHash), cipher 0.
 * Type 1: all 32 bytes, the salt and the cipher agreed in the session, read
 * by the crypto workers (the program checks only that a key's kind is its
 * peer's type). */
struct xg_gw_key {
	__u8 id;
	__u8 valid;
	__u8 cipher;  /* 0, or XG_GW_CIPHER_* */
	__u8 pad;
	__u8 salt[4]; /* type 1: the nonce's first 4 bytes */
	__u8 k[32];
	/* Reject-After-Messages and Reject-After-Time (proto/gatewayd.md,
	 * "Key limits"), enforced where the key is used: the XDP program and
	 * the crypto workers neither seal nor open with a key past either, and
	 * count the frame (drop_gw_key_expired). In the entry, not in a
	 * process, so they hold across a restart of gatewayd or the workers.
	 * 0: no limit (gatewayd always sets both). */
	__u64 ctr_max;    /* the highest counter the key may carry */
	__u64 expires_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_*ns) when it stops */
};
/* As INFO's cipher bits (proto/gatewayd.md) and enum xgt_cipher. */
#define XG_GW_CIPHER_CHACHA20_POLY1305 1
#define XG_GW_CIPHER_AES256_GCM 2

/* xg_gw_peers: ARRAY[XG_GW_MAX_PEERS], index = peer id (gatewayd's). */
struct xg_gw_peer {
	__u32 ip_be;        /* public address: outer dst, and the only accepted src */
	__u16 port_be;
	__u8 flags;         /* XG_GW_PEER_VALID */
	__u8 tx_slot;       /* tx[tx_slot] is the sending key */
	__u8 ident[8];      /* first bytes of the peer's public key: whose entry */
	struct xg_gw_key tx[2];
	struct xg_gw_key rx[2]; /* either may verify; a new key replaces the older */
};
#define XG_GW_PEER_VALID 0x1
/* Type 1 (AEAD) with this peer, both ways: the program checks what it can,
 * builds or pre-checks the frame and hands it to the AF_XDP crypto worker
 * of its RX queue (xg_gw_xsk); a type 0 frame from it is refused. */
#define XG_GW_PEER_AEAD 0x2

/* xg_gw_paddr: HASH public ip -> peer id. By address alone: peers send
 * from flow-hash source ports (proto/xgtun.md); the tag authenticates. */
struct xg_gw_paddr_key {
	__u32 ip_be;
};

/* xg_gw_route: LPM_TRIE, key as xg_subnet_key. Subnets other clusters'
 * gateways announced, and which peer did: where to send to (dst), and
 * whose packets may come from them (src). */
struct xg_gw_route {
	__u32 peer;
	__u32 flags;
};

/* xg_gw_replay: ARRAY[XG_GW_MAX_PEERS * 2], index = peer * 2 + rx slot.
 * Written by the data path only; gatewayd zeroes a slot's window when it
 * installs a new key there. */
struct xg_gw_replay {
	__u64 top;                 /* highest counter accepted (a hint, see tun.h) */
	__u64 ring[XG_GW_RING];    /* slot (c / 16) % 16: (c / 16) << 16 | seen bits */
};

/* Per-CPU caches of the gateway program, same rules as the host's (see
 * "Per-CPU caches" above: valid under the current xg_gen.gen, for at most
 * XG_CACHE_TTL_JIFFIES). gatewayd bumps xg_gen after changing xg_gw_paddr,
 * xg_gw_route or xg_gw_peers (copied into xg_gw_pstats).
 * xg_gw_pacache: slot = hash(outer source): xg_gw_paddr's answer, present
 * or not (a stranger's address too). */
#define XG_GW_PACACHE_SLOTS 64
struct xg_gw_pac_slot {
	__u32 ip_be;
	__u32 id;      /* peer id; 0: no such peer */
	__u32 gen;
	__u32 pad;
	__u64 expires;
};

/* xg_gw_rtcache: slot = hash(vni, ip): xg_gw_route's longest match. */
#define XG_GW_RTCACHE_SLOTS 256
struct xg_gw_rtc_slot {
	__u32 vni;
	__u32 ip_be;
	__u32 gen;
	__u32 present; /* 0: no route */
	__u64 expires;
	struct xg_gw_route r;
};

/* xg_gw_dcache: slot = hash(vni, ip): where a frame from a peer for (vni,
 * ip) goes in this cluster, as xg_endpoint, xg_subnet and xg_vpc decide it
 * (the answer, not the entries): the endpoint's host (n = 1), or the
 * subnet's bouncers or the VPC's dividers to pick from by flow hash. Only
 * forwarding answers are kept; a drop is decided again on every packet. */
#define XG_GW_DCACHE_SLOTS 256
enum xg_gw_dc_kind {
	XG_GW_DC_NONE = 0,
	XG_GW_DC_HOSTS = 1,    /* the endpoint's host, or bouncers (none is us) */
	XG_GW_DC_DIVIDERS = 2, /* the VPC's dividers: a pick of us is DROP_NO_ROUTE */
};
struct xg_gw_dc_slot {
	__u32 vni;
	__u32 ip_be;
	__u32 gen;
	__u16 kind;
	__u16 n; /* 1..XG_MAX_BOUNCERS (= XG_MAX_DIVIDERS) */
	__u64 expires;
	__u32 dst_be[XG_MAX_BOUNCERS];
};

/* xg_gw_txctr: ARRAY[XG_GW_MAX_PEERS]: the highest counter reserved for a
 * peer. CPUs reserve XG_GW_TX_BLOCK counters at a time (one atomic add) and
 * hand them out from xg_gw_pstats; a CPU drops the rest of its block once
 * XG_GW_TX_LAG or more counters above its next one have been reserved, so
 * it never sends a counter that far below the highest any CPU may have sent
 * (proto/xgtun.md, "Counters"). Never lowered: a counter must not come back,
 * and a CPU's block is checked against this value, not reset with it. */
#define XG_GW_TX_BLOCK 16
#define XG_GW_TX_LAG 64 /* < XG_GW_WINDOW: the rest is the network's reordering */
struct xg_gw_txctr {
	__u64 last;
};

/* Per-peer traffic, as userspace sums it over the CPUs. */
struct xg_gw_pstat {
	__u64 tx_packets;
	__u64 tx_bytes;
	__u64 rx_packets;
	__u64 rx_bytes;
	__u64 rx_dropped; /* from the peer's address, not authentic/replayed/unowned */
	__u64 pad;
};

/* xg_gw_pstats: PERCPU_ARRAY[XG_GW_MAX_PEERS], index = peer id: everything
 * a CPU needs of a peer in one slot. Its traffic (st, what userspace
 * reads), its block of send counters (tx_next .. tx_end - 1, taken from
 * xg_gw_txctr), and a copy of its xg_gw_peers entry, used while filled under
 * the current xg_gen.gen and for at most XG_CACHE_TTL_JIFFIES (the per-CPU
 * cache rules above): gatewayd bumps xg_gen after writing xg_gw_peers. */
struct xg_gw_pcpu {
	struct xg_gw_pstat st;
	__u64 tx_next;
	__u64 tx_end;
	__u64 expires;
	__u32 gen;
	__u32 pad;
	struct xg_gw_peer peer;
};

/* ---- session ingress (docs/architecture.md, "Session ingress") -----------
 * A session's public endpoint (protocol, public IPv4, public port) maps to
 * its pod (VNI, pod IPv4, pod port): xg_sess forward, read by `ingress` on
 * the public NIC (DNAT toward the pod); xg_sess_rev reverse, read by `agent`
 * on the pod's veth (SNAT of the pod's replies back to the public endpoint).
 * Both are plain HASH maps, never LRU: a live session must never be evicted.
 * Only userspace inserts or deletes: reverse inserted first and forward
 * deleted first, so a packet never finds a forward entry without its
 * reverse (a DNATed flow whose replies would leak out un-NATed).
 *
 * Per-session counters live in the entries themselves (client -> pod in
 * the forward one, pod -> client in the reverse one), added to with atomic
 * adds once per tick by each CPU from its per-CPU copy of the session
 * (xg_sesscache and xg_sessrcache below), where the packets are counted.
 */
#define XG_MAP_SESS "xg_sess"
#define XG_MAP_SESS_REV "xg_sess_rev"
/* Default size of both maps; userspace may create them at another size
 * (the programs reuse whatever size the pinned maps have). */
#define XG_MAX_SESSIONS 65536

/* Form 2 (dedicated ingress gateway) is two entries on two hosts:
 *  - on the ingress host, XG_SESS_FORM_GATEWAY: host_be is the pod's host;
 *    `ingress` DNATs and encapsulates toward it, transit SNATs the replies
 *    that come back from it (and only from it, in the session's VNI);
 *  - on the pod's host, XG_SESS_POD_SIDE: host_be is the ingress host;
 *    transit delivers only the DNATed frames that come from it, and the
 *    agent encapsulates the pod's replies, untranslated, back to it.
 * Both flags are in the forward and the reverse entry alike. */
#define XG_SESS_FORM_GATEWAY 0x1
#define XG_SESS_POD_SIDE 0x2

struct xg_sess_ctr {
	__u64 packets;
	__u64 bytes;
	__u64 last_ns; /* bpf_ktime_get_coarse_ns (CLOCK_MONOTONIC, tick grain) of the last packet */
	__u64 last_jiffies; /* when last_ns was taken: it is read once per tick, not per packet */
};

/* xg_sess key: proto is IPPROTO_TCP or IPPROTO_UDP. */
struct xg_sess_key {
	__u32 ip_be;
	__u16 port_be;
	__u8 proto;
	__u8 pad;
};

struct xg_sess {
	__u32 vni;
	__u32 pod_ip_be;
	__u16 pod_port_be;
	__u16 flags;   /* XG_SESS_* */
	__u32 host_be; /* form 2: the other host (see XG_SESS_POD_SIDE); 0 on-node */
	struct xg_sess_ctr in; /* client -> pod, counted by `ingress` */
};

/*
 * The DNAT hit path reads a per-CPU copy of the session instead of the hash
 * entry (the hash lookup was most of its cost):
 * xg_sesscache: PERCPU_ARRAY[XG_SESSCACHE_SLOTS], slot = hash(key), holds
 * the session's target and the packets and bytes counted on this CPU since
 * they were last added to the entry; they are added (atomic adds, and the
 * entry's last seen) on the first packet of every tick and when the slot
 * goes to another key, so the entry lags by at most a tick's packets of
 * each CPU, which `xgate ingress ls` adds from the slots.
 * xg_sgen: ARRAY[1], the session generation: userspace bumps it after it
 * deletes a session (adds need not: only present sessions are copied), and
 * a slot is used only under the generation it was filled in, read before
 * the entry was, so the next packet to a deleted session finds none. A
 * generation of its own: session churn must not flush the other caches.
 */
#define XG_MAP_SESSCACHE "xg_sesscache"
#define XG_MAP_SGEN "xg_sgen"
#define XG_SESSCACHE_SLOTS 256 /* 2^8: the >> 24 below */
/* Slot of (ip_be, port_be, proto) in xg_sesscache, for BPF and userspace
 * alike (`xgate ingress ls` reads the slot a session would be in). */
#define XG_SESS_SLOT(ip_be, port_be, proto)                                             \
	((((__u32)(ip_be) ^ (((__u32)(port_be) << 16 | (__u32)(proto)) * 0x85ebca6bu)) * \
	  0x9e3779b1u) >> 24)

struct xg_sess_slot {
	struct xg_sess_key key;
	__u32 sgen;
	__u32 present; /* 0: key had no session (not used, looked up again) */
	__u64 flushed; /* jiffies of the last add into the entry */
	__u64 packets; /* counted here, not yet in the entry */
	__u64 bytes;
	__u32 vni;
	__u32 pod_ip_be;
	__u16 pod_port_be;
	__u16 flags;
	__u32 host_be;
};

struct xg_sess_rev_key {
	__u32 vni;
	__u32 pod_ip_be;
	__u16 pod_port_be;
	__u8 proto;
	__u8 pad;
};

/* The same per-CPU copies for the agent's reverse lookups (the pod's
 * replies): xg_sessrcache, PERCPU_ARRAY[XG_SESSCACHE_SLOTS], slot =
 * XG_SESS_RSLOT(key), under the same session generation; its counters go to
 * the reverse entry's `out`. */
#define XG_MAP_SESSRCACHE "xg_sessrcache"
#define XG_SESS_RSLOT(vni, ip_be, port_be, proto) \
	XG_SESS_SLOT((__u32)(ip_be) ^ (__u32)(vni) * 0xc2b2ae35u, port_be, proto)

struct xg_sess_rslot {
	struct xg_sess_rev_key key;
	__u32 sgen;
	__u32 present;
	__u64 flushed;
	__u64 packets;
	__u64 bytes;
	__u32 pub_ip_be;
	__u16 pub_port_be;
	__u16 flags;
	__u32 host_be;
	__u32 pad;
};

struct xg_sess_rev {
	__u32 pub_ip_be;
	__u16 pub_port_be;
	__u16 flags;   /* XG_SESS_*, as the forward entry's */
	__u32 host_be; /* as the forward entry's */
	__u32 pad;
	struct xg_sess_ctr out; /* pod -> client, counted by `agent` */
};

/* ---- stats ---------------------------------------------------------------
 * xg_stats: PERCPU_ARRAY indexed slot * XG_R_MAX + reason. Every verdict
 * and every drop has a reason; the CLI prints the names below.
 */
#define XG_REASONS(X)                                                            \
	/* verdicts */                                                           \
	X(PASS_NOT_IP, "pass: not IPv4 (host traffic)")                          \
	X(PASS_NOT_GENEVE, "pass: not Geneve/UDP 6081 (host traffic)")           \
	X(PASS_NOT_FOR_US, "pass: outer dst is not this host")                   \
	X(PASS_FRAGMENT, "pass: non-first IPv4 fragment (host stack)")           \
	X(PASS_NO_CONFIG, "pass: device not configured")                         \
	X(BOUNCER_FWD, "bouncer: forwarded to endpoint host")                    \
	X(BOUNCER_TO_DIVIDER, "bouncer: miss, sent to divider")                  \
	X(DIVIDER_FWD, "divider: forwarded to subnet bouncer")                   \
	X(DIVIDER_TO_GATEWAY, "divider: remote subnet, sent to gateway")         \
	X(ARP_REPLY, "arp: answered inside the tunnel")                          \
	X(DECAP_LOCAL, "decap: delivered to local pod")                          \
	X(STALE_BOUNCE, "direct path: stale, bounced to sender")                 \
	X(STALE_REROUTE, "direct path: cache entry invalidated, rerouted")       \
	X(CACHE_LEARN, "direct path: location learned")                          \
	X(ENCAP_BOUNCER, "agent: encap to bouncer")                              \
	X(ENCAP_DIRECT, "agent: encap to destination host (direct path)")        \
	X(ENCAP_DIVIDER, "agent: encap to divider (subnet not held here)")       \
	X(ENCAP_GATEWAY, "agent: encap to gateway")                              \
	X(AGENT_LOCAL, "agent: pod to pod on this host")                         \
	X(ICMP_FRAG_NEEDED, "agent: too big, ICMP frag-needed sent to the pod")  \
	X(GW_ENCAP, "gateway: sent to the peer gateway")                         \
	X(GW_DECAP, "gateway: from a peer, sent to bouncer/divider")             \
	/* drops */                                                              \
	X(DROP_TRUNC_ETH, "drop: truncated Ethernet header")                     \
	X(DROP_TRUNC_IP, "drop: truncated IPv4 header")                          \
	X(DROP_BAD_IP, "drop: bad IPv4 header (ihl/version/length)")             \
	X(DROP_IP_OPTIONS, "drop: outer IPv4 options")                           \
	X(DROP_FRAGMENT, "drop: fragmented Geneve packet")                       \
	X(DROP_TRUNC_UDP, "drop: truncated UDP header")                          \
	X(DROP_BAD_UDP_LEN, "drop: UDP length disagrees with packet")            \
	X(DROP_TRUNC_GENEVE, "drop: truncated Geneve header")                    \
	X(DROP_GENEVE_VERSION, "drop: Geneve version not 0")                     \
	X(DROP_GENEVE_PROTO, "drop: Geneve protocol not Ethernet")               \
	X(DROP_GENEVE_OAM, "drop: Geneve OAM frame")                             \
	X(DROP_OPT_LEN, "drop: Geneve option runs past the header")              \
	X(DROP_OPT_TOO_MANY, "drop: too many Geneve options")                    \
	X(DROP_OPT_CRITICAL, "drop: unknown critical Geneve option")             \
	X(DROP_VNI_UNKNOWN, "drop: VNI of no VPC")                               \
	X(DROP_TRUNC_INNER, "drop: truncated inner frame")                       \
	X(DROP_INNER_NOT_IPV4, "drop: inner frame not IPv4/ARP")                 \
	X(DROP_INNER_BAD_IP, "drop: bad inner IPv4 header")                      \
	X(DROP_ARP_BAD, "drop: unsupported ARP")                                 \
	X(DROP_ARP_UNKNOWN, "drop: ARP for an unknown address")                  \
	X(DROP_TTL, "drop: outer TTL exceeded")                                  \
	X(DROP_NO_ROUTE, "drop: no subnet and no divider")                       \
	X(DROP_NO_ENDPOINT, "drop: no such endpoint in its subnet")              \
	X(DROP_NO_GATEWAY, "drop: remote subnet but no gateway configured")      \
	X(DROP_LOOP, "drop: next hop is this host")                              \
	X(DROP_SPOOF, "drop: pod source IP/MAC not its own")                     \
	X(DROP_TOO_BIG, "drop: frame exceeds underlay MTU after encap")          \
	X(DROP_HEADROOM, "drop: no headroom/tailroom to encap")                  \
	X(DROP_FIB, "drop: no underlay route")                                   \
	X(DROP_FWD_DISABLED, "drop: IPv4 forwarding off on the NIC")             \
	X(DROP_NO_NEIGH, "drop: underlay neighbour unresolved")                  \
	X(DROP_TX_PORT, "drop: egress device not in xg_txports")                 \
	X(DROP_NO_HOST, "drop: host address not configured")                    \
	X(DROP_GW_NO_ROUTE, "drop: gateway: no peer announced the destination")  \
	X(DROP_GW_NO_KEY, "drop: gateway: peer has no data-plane key yet")       \
	X(DROP_GW_UNKNOWN_PEER, "drop: gateway: tunnel packet from a stranger")  \
	X(DROP_GW_TRUNC, "drop: gateway: truncated tunnel header")               \
	X(DROP_GW_BAD_HDR, "drop: gateway: bad tunnel version/type/flags")       \
	X(DROP_GW_BAD_KEY, "drop: gateway: unknown key id")                      \
	X(DROP_GW_BAD_MAC, "drop: gateway: authentication failed")               \
	X(DROP_GW_REPLAY, "drop: gateway: replayed counter")                     \
	X(DROP_GW_TOO_OLD, "drop: gateway: counter behind the replay window")    \
	X(DROP_GW_BUSY, "drop: gateway: replay window contended, retries out")   \
	X(DROP_GW_UNOWNED, "drop: gateway: inner source not announced by peer")  \
	X(DROP_GW_TRANSIT, "drop: gateway: destination not in this cluster")     \
	X(DROP_GW_TOO_BIG, "drop: gateway: frame too big for the tunnel")        \
	X(DROP_IP_LEN, "drop: IPv4 total length runs past the frame")            \
	X(DROP_POD_MTU, "drop: frame exceeds the pod's MTU")                    \
	X(INGRESS_DNAT, "ingress: session hit, DNATed into the pod")             \
	X(INGRESS_SNAT, "agent: session reply SNATed out to the client")         \
	X(PASS_NO_SESSION, "pass: no session for this address and port")         \
	X(PASS_NOT_L4, "pass: not TCP/UDP (host traffic)")                       \
	X(DROP_TRUNC_TCP, "drop: truncated TCP header")                          \
	X(DROP_TCP_BAD_DOFF, "drop: TCP data offset out of range")               \
	X(DROP_SESS_FRAGMENT, "drop: fragmented session packet")                 \
	X(DROP_SESS_IP_OPTIONS, "drop: session packet with IPv4 options")        \
	X(DROP_SESS_NO_POD, "drop: session's pod is not on this host")           \
	X(INGRESS_ICMP_DNAT, "ingress: ICMP error about a session, to the pod")  \
	X(INGRESS_ICMP_SNAT, "agent: pod's ICMP error about a session, out")    \
	X(INGRESS_DNAT_GW, "ingress: session hit, DNATed to the pod's host")     \
	X(INGRESS_REPLY_GW, "agent: session reply, sent to the ingress host")    \
	X(INGRESS_SNAT_GW, "transit: session reply from the pod's host, out")    \
	X(SESS_DELIVER_GW, "transit: session frame from the ingress host, in")   \
	X(DROP_SESS_SPOOF, "drop: overlay session frame matches no session")    \
	X(INGRESS_ICMP_DNAT_GW, "ingress: ICMP error about a session, to the pod's host") \
	X(SESS_ICMP_DELIVER_GW, "transit: ICMP error about a session, in")      \
	X(INGRESS_ICMP_REPLY_GW, "agent: pod's ICMP error, to the ingress host") \
	X(INGRESS_ICMP_SNAT_GW, "transit: pod's ICMP error from its host, out")  \
	X(DROP_SESS_ICMP_QUOTE, "drop: overlay session ICMP error, bad quote")   \
	X(GW_TO_WORKER, "gateway: type 1 frame to its queue's crypto worker")    \
	X(DROP_GW_NO_WORKER, "drop: gateway: no crypto worker on this queue")    \
	X(DROP_GW_KEY_EXPIRED, "drop: gateway: key past RejectAfterTime/Messages")

#define XG_ENUM_ENTRY(name, desc) XG_R_##name,
enum xg_reason {
	XG_R_NONE = 0,
	XG_REASONS(XG_ENUM_ENTRY)
	XG_R__COUNT,
};
#undef XG_ENUM_ENTRY

#define XG_R_MAX 96 /* stride of a stats slot; room to grow the list */
#define XG_MAX_STATS (XG_MAX_IFACES * XG_R_MAX)

struct xg_stat {
	__u64 packets;
	__u64 bytes;
};

#endif /* XGATE_ABI_H */
