// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_cost: addresses, frames as xgate puts them on the wire, the list of
 * timed paths (the gateway's are in xdp_cost_gw.c) and the components
 * probes (normal test-run mode).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>

#include "xdp_cost.h"

/* ---- topology (must match run_xdp_cost.sh) ------------------------------ */

const char *if_nic = "bx0", *if_nic_peer = "bx1";
const char *if_pod = "bp0", *if_pod_peer = "bp1";
const char *if_pub = "bg0", *if_pub_peer = "bg1";

uint32_t ip_self, ip_sender, ip_ephost, ip_bouncer, ip_divider, ip_gateway;
uint32_t ov_sender, ov_ep, ov_miss, ov_s2, ov_remote, ov_pod, ov_gw;

const uint8_t mac_sender_pod[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x0a };
const uint8_t mac_ep[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x14 };
const uint8_t mac_pod[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x3c };
const uint8_t mac_gw[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x01 };
const uint8_t mac_remote_host[6] = { 0x02, 0x98, 0x00, 0x00, 0x00, 0x02 };
const uint8_t mac_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
uint8_t mac_nic[6], mac_pub[6];

void set_addresses(void)
{
	ip_self = inet_addr(UL(1));
	ip_sender = inet_addr(UL(2));
	ip_ephost = inet_addr(UL(3));
	ip_bouncer = inet_addr(UL(4));
	ip_divider = inet_addr(UL(5));
	ip_gateway = inet_addr(UL(6));
	ov_sender = inet_addr("10.1.1.10");
	ov_ep = inet_addr("10.1.1.20");
	ov_miss = inet_addr("10.1.1.50");
	ov_pod = inet_addr("10.1.1.60");
	ov_gw = inet_addr("10.1.1.1");
	ov_s2 = inet_addr("10.1.2.30");
	ov_remote = inet_addr("10.2.0.40");
}

/* ---- frames ----------------------------------------------------------------
 * Built with the fixtures' builder (tests/fixtures/pkt.h), in the shapes
 * xgate puts on the wire. */

/* Ethernet + IPv4 (DF, TTL 64, id 0) + UDP 40000 -> 5201, zero payload up
 * to frame_len (>= 42). */
size_t inner_udp(uint8_t *p, const uint8_t *smac, const uint8_t *dmac, uint32_t src,
		 uint32_t dst, size_t frame_len)
{
	memset(p, 0, frame_len);
	put_eth(p, dmac, smac, 0x0800);
	put_ipv4(p + 14, 0, frame_len - 14, 0, 0x4000, 64, 17, src, dst);
	put_udp(p + 34, 40000, 5201, frame_len - 34);
	return frame_len;
}

/* Ethernet + ARP request "who has tpa, tell spa". */
static size_t inner_arp(uint8_t *p, const uint8_t *smac, uint32_t spa, uint32_t tpa)
{
	static const uint8_t zero[6];

	return build_arp(p, mac_bcast, smac, 1, smac, spa, zero, tpa);
}

/* What an agent on host `sender` emits: Geneve + XG_OPT_HOST around inner. */
void geneve_frame(struct frame *f, uint32_t osrc, uint32_t odst, uint32_t opt_host,
		  uint8_t opt_flags, const uint8_t *inner, size_t inner_len)
{
	struct gnv g = { .saddr = osrc, .daddr = odst, .ttl = 64, .frag = 0x4000,
			 .sport = 0xc123, .dport = XG_GENEVE_PORT, .proto = XG_ETH_P_TEB,
			 .vni = VNI, .inner = inner, .inner_len = inner_len };

	memcpy(g.dmac, mac_nic, 6);
	memcpy(g.smac, mac_remote_host, 6);
	g.optlen = put_opt_host(g.opts, opt_host, opt_flags);
	f->len = build_geneve(f->b, &g);
}

/* ---- the path list -------------------------------------------------------------- */

struct path P[MAX_PATHS];
int np;

struct path *add_path(const char *name, enum kind kind, enum prog_id prog, int ingress,
		      uint32_t verdict, int reason)
{
	struct path *p = &P[np++];

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->kind = kind;
	p->prog = prog;
	p->ingress = ingress;
	p->verdict = verdict;
	p->reason = reason;
	p->slot = ingress == G.ifx_pod ? SLOT_POD : ingress == G.ifx_pub ? SLOT_PUB : SLOT_NIC;
	p->out_len = -1;
	return p;
}

#define add add_path

void build_paths(void)
{
	uint8_t in[MAX_FRAME];
	size_t il;
	struct path *p, *fwd;
	size_t encap_out = XG_ENCAP_LEN;

	/* floors (frame: the bouncer frame, restored by the sink like it) */
	il = inner_udp(in, mac_sender_pod, mac_ep, ov_sender, ov_ep, 42);
	p = add("floor: XDP_DROP", K_FLOOR, PR_DROP, G.ifx_nic, XDP_DROP, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p = add("floor: XDP_TX unchanged", K_FLOOR, PR_TX, G.ifx_nic, XDP_TX, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->restore = true;
	p = add("floor: devmap REDIRECT (pod->nic)", K_FLOOR, PR_REDIRECT, G.ifx_pod,
		XDP_REDIRECT, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->restore = true;
	p = add("floor: fib_lookup + XDP_TX", K_FLOOR, PR_FIB, G.ifx_nic, XDP_TX, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->restore = true;

	/* transit: bouncer forward (holds the endpoint, its host is .3) */
	fwd = p = add("bouncer forward", K_PATH, PR_TRANSIT, G.ifx_nic, XDP_TX,
		      XG_R_BOUNCER_FWD);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->out_dst = ip_ephost;
	p->out_len = p->f.len;
	p->restore = true;
	p->target = 40;

	/* divider forward: 10.1.2.30 is in a subnet whose bouncer is .4 */
	il = inner_udp(in, mac_sender_pod, mac_gw, ov_sender, ov_s2, 42);
	p = add("divider forward", K_PATH, PR_TRANSIT, G.ifx_nic, XDP_TX, XG_R_DIVIDER_FWD);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->out_dst = ip_bouncer;
	p->out_len = p->f.len;
	p->restore = true;
	p->target = 50;

	/* the same with three bouncers: flow hash and a division to pick one
	 * (the output's outer dst is one of .4 .5 .6: its length is checked) */
	il = inner_udp(in, mac_sender_pod, mac_gw, ov_sender, inet_addr("10.1.3.30"), 42);
	p = add("divider forward, 3 bouncers", K_PATH, PR_TRANSIT, G.ifx_nic, XDP_TX,
		XG_R_DIVIDER_FWD);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->out_len = p->f.len;
	p->restore = true;
	p->target = 50;

	/* remote subnet: divider sends it to the cluster gateway */
	il = inner_udp(in, mac_sender_pod, mac_gw, ov_sender, ov_remote, 42);
	p = add("remote -> gateway", K_PATH, PR_TRANSIT, G.ifx_nic, XDP_TX,
		XG_R_DIVIDER_TO_GATEWAY);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->out_dst = ip_gateway;
	p->out_len = p->f.len;
	p->restore = true;

	/* ARP request in the tunnel for a known endpoint: reply to the sender */
	il = inner_arp(in, mac_sender_pod, ov_sender, ov_ep);
	p = add("ARP reply in tunnel", K_PATH, PR_TRANSIT, G.ifx_nic, XDP_TX, XG_R_ARP_REPLY);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->out_dst = ip_sender;
	p->out_len = p->f.len;
	p->restore = true;

	/* decap to the local pod (cache already knows the sender: steady state) */
	il = inner_udp(in, mac_sender_pod, mac_pod, ov_sender, ov_pod, 42);
	p = add("decap -> local pod", K_PATH, PR_TRANSIT, G.ifx_nic, XDP_REDIRECT,
		XG_R_DECAP_LOCAL);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->out_len = il;

	/* agent: pod 10.1.1.60 -> 10.1.1.50 (no endpoint, no cache) -> bouncer */
	p = add("agent encap -> bouncer", K_PATH, PR_AGENT, G.ifx_pod, XDP_REDIRECT,
		XG_R_ENCAP_BOUNCER);
	p->f.len = inner_udp(p->f.b, mac_pod, mac_gw, ov_pod, ov_miss, 60);
	p->out_dst = ip_bouncer;
	p->out_len = p->f.len + encap_out;
	p->target = 60;

	/* agent: pod -> 10.1.1.10, learned in xg_cache (host .2) */
	p = add("agent encap direct (cache hit)", K_PATH, PR_AGENT, G.ifx_pod, XDP_REDIRECT,
		XG_R_ENCAP_DIRECT);
	p->f.len = inner_udp(p->f.b, mac_pod, mac_sender_pod, ov_pod, ov_sender, 60);
	p->out_dst = ip_sender;
	p->out_len = p->f.len + encap_out;
	p->target = 60;

	p = add("agent encap -> bouncer, 1400 B", K_PATH, PR_AGENT, G.ifx_pod, XDP_REDIRECT,
		XG_R_ENCAP_BOUNCER);
	p->f.len = inner_udp(p->f.b, mac_pod, mac_gw, ov_pod, ov_miss, 1400);
	p->out_dst = ip_bouncer;
	p->out_len = p->f.len + encap_out;
	p->target = 60;

	/* session ingress: a client's UDP datagram to 10.98.0.1:5201, DNATed
	 * into the pod's veth; the pod's reply from its session port, SNATed
	 * and routed out of the NIC (bpf_fib_lookup from the veth) */
	p = add("ingress DNAT -> pod", K_PATH, PR_INGRESS, G.ifx_nic, XDP_REDIRECT,
		XG_R_INGRESS_DNAT);
	/* >= BENCH_RESTORE_LEN: the sink writes the frame back (in-place NAT) */
	p->f.len = inner_udp(p->f.b, mac_remote_host, mac_nic, ip_sender, ip_self, 128);
	p->out_dst = ov_pod;
	p->out_len = p->f.len;
	p->restore = true;
	p->target = 40;

	/* the same datagram to a dedicated-gateway session (port 5202): DNATed
	 * and encapsulated toward the pod's host (.3), out of the NIC it came
	 * in by; the frame grows 62 bytes in front, restored behind them */
	p = add("ingress DNAT+encap -> pod's host", K_PATH, PR_INGRESS, G.ifx_nic, XDP_TX,
		XG_R_INGRESS_DNAT_GW);
	p->f.len = inner_udp(p->f.b, mac_remote_host, mac_nic, ip_sender, ip_self, 128);
	put16(p->f.b + 36, 5202);
	p->out_dst = ip_ephost;
	p->out_len = p->f.len + encap_out;
	p->restore = true;
	p->shift = -(int)XG_ENCAP_LEN;

	p = add("agent SNAT -> nic (session reply)", K_PATH, PR_AGENT, G.ifx_pod, XDP_REDIRECT,
		XG_R_INGRESS_SNAT);
	p->f.len = inner_udp(p->f.b, mac_pod, mac_gw, ov_pod, ip_sender, 128);
	put16(p->f.b + 34, 40001); /* 40000 is the encap paths' port: no session */
	p->out_dst = ip_sender;
	p->out_len = p->f.len;
	p->restore = true;
	p->target = 40;

	if (!opt.no_variants) {
		/* the same programs without their per-CPU caches */
		p = add("bouncer forward [no caches]", K_VARIANT, PR_TRANSIT_NOCACHE, G.ifx_nic,
			XDP_TX, XG_R_BOUNCER_FWD);
		p->f = fwd->f;
		p->out_dst = ip_ephost;
		p->out_len = p->f.len;
		p->restore = true;

		il = inner_udp(in, mac_sender_pod, mac_gw, ov_sender, ov_s2, 42);
		p = add("divider forward [no caches]", K_VARIANT, PR_TRANSIT_NOCACHE, G.ifx_nic,
			XDP_TX, XG_R_DIVIDER_FWD);
		geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
		p->out_dst = ip_bouncer;
		p->out_len = p->f.len;
		p->restore = true;

		p = add("agent encap -> bouncer [no caches]", K_VARIANT, PR_AGENT_NOCACHE, G.ifx_pod,
			XDP_REDIRECT, XG_R_ENCAP_BOUNCER);
		p->f.len = inner_udp(p->f.b, mac_pod, mac_gw, ov_pod, ov_miss, 60);
		p->out_dst = ip_bouncer;
		p->out_len = p->f.len + encap_out;

		p = add("agent encap direct [no caches]", K_VARIANT, PR_AGENT_NOCACHE, G.ifx_pod,
			XDP_REDIRECT, XG_R_ENCAP_DIRECT);
		p->f.len = inner_udp(p->f.b, mac_pod, mac_sender_pod, ov_pod, ov_sender, 60);
		p->out_dst = ip_sender;
		p->out_len = p->f.len + encap_out;
	}

	/* the cluster gateway: encap to the peer, decap+verify to a bouncer */
	gw_build_paths();

	if (opt.trap_demo) {
		/* what happens without the sink's restore: pages come back with the
		 * frame as forwarded (outer dst = next hop), i.e. "not for us" */
		p = add("bouncer forward, NO restore", K_TRAP, PR_TRANSIT, G.ifx_nic, XDP_TX,
			XG_R_BOUNCER_FWD);
		p->f = fwd->f;
		p->out_dst = ip_ephost;
		p->out_len = p->f.len;
	}
}

#undef add

/* ---- components ---------------------------------------------------------------- */

/* Component costs, in normal test-run mode (no page pool, no transmit):
 * programs whose rewrite is idempotent, or that stop before rewriting. */
#define MAX_COMP 16
static struct path C[MAX_COMP];
static int nc;

static struct path *cadd(const char *name, enum prog_id prog, int ingress, uint32_t verdict,
			 int reason)
{
	struct path *p = &C[nc++];

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->kind = K_FLOOR;
	p->prog = prog;
	p->ingress = ingress;
	p->verdict = verdict;
	p->reason = reason;
	p->slot = SLOT_NIC;
	p->out_len = -1;
	return p;
}

int run_components(void)
{
	uint8_t in[MAX_FRAME];
	size_t il = inner_udp(in, mac_sender_pod, mac_ep, ov_sender, ov_ep, 42);
	struct path *p;
	double base = 0, tx = 0;

	p = cadd("XDP_DROP", PR_DROP, G.ifx_nic, XDP_DROP, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p = cadd("XDP_TX unchanged", PR_TX, G.ifx_nic, XDP_TX, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p = cadd("fib_lookup(OUTPUT) + MACs + XDP_TX", PR_FIB, G.ifx_nic, XDP_TX, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->fib_flags = BPF_FIB_LOOKUP_OUTPUT;
	p = cadd("fib_lookup(OUTPUT|DIRECT) + MACs", PR_FIB, G.ifx_nic, XDP_TX, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->fib_flags = BPF_FIB_LOOKUP_OUTPUT | BPF_FIB_LOOKUP_DIRECT;
	p = cadd("fib_lookup(OUTPUT|SKIP_NEIGH) + MACs", PR_FIB, G.ifx_nic, XDP_TX, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->fib_flags = BPF_FIB_LOOKUP_OUTPUT | BPF_FIB_LOOKUP_SKIP_NEIGH;
	p = cadd("one HASH lookup (xg_ifaces-like)", PR_PROBE_HASH, G.ifx_nic, XDP_DROP, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p = cadd("one LPM_TRIE lookup (xg_subnet-like)", PR_PROBE_LPM, G.ifx_nic, XDP_DROP, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p = cadd("one PERCPU_ARRAY lookup (cache slot)", PR_PROBE_PCPU, G.ifx_nic, XDP_DROP, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p = cadd("bpf_jiffies64()", PR_PROBE_JIFFIES, G.ifx_nic, XDP_DROP, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p = cadd("bpf_ktime_get_coarse_ns()", PR_PROBE_COARSE, G.ifx_nic, XDP_DROP, -1);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	/* transit stopping early: outer headers parsed, not for this host */
	p = cadd("transit: outer parse, not for us", PR_TRANSIT, G.ifx_nic, XDP_PASS,
		 XG_R_PASS_NOT_FOR_US);
	geneve_frame(&p->f, ip_sender, inet_addr(UL(9)), ip_sender, 0, in, il);
	/* ... + Geneve option walk, inner parse, xg_endpoint and xg_subnet
	 * (cached: absent) and the xg_vpc miss (VNI 100 -> 101: unknown) */
	p = cadd("transit: + walk, VNI unknown (+ xg_vpc)", PR_TRANSIT, G.ifx_nic, XDP_DROP,
		 XG_R_DROP_VNI_UNKNOWN);
	geneve_frame(&p->f, ip_sender, ip_self, ip_sender, 0, in, il);
	p->f.b[14 + 20 + 8 + 6] = (VNI + 1) & 0xff;

	for (int i = 0; i < nc; i++)
		if (check_path(&C[i]))
			return -1;
	for (int r = 0; r < opt.runs && !stop; r++)
		for (int i = 0; i < nc && !stop; i++) {
			p = &C[i];
			if (normal_run(p, opt.repeat, &p->ns[p->n]))
				return -1;
			p->n++;
		}
	if (stop)
		return -1;
	base = best_of(C[0].ns, C[0].n);
	tx = best_of(C[1].ns, C[1].n);
	printf("\ncomponents, normal test-run mode (program on one buffer: no page pool, "
	       "nothing transmitted)\n");
	printf("%-40s %8s %7s %9s %9s\n", "probe", "ns/pkt", "median", "-DROP", "-TX");
	for (int i = 0; i < nc; i++) {
		double b = best_of(C[i].ns, C[i].n);

		printf("%-40s %8.0f %7.0f %9.0f %9.0f\n", C[i].name, b,
		       median_of(C[i].ns, C[i].n), b - base, b - tx);
	}
	return 0;
}
