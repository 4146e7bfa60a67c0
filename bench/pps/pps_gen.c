// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * pps_gen: blast one pre-built tunnel frame out of a device, as fast as the
 * kernel can, for bench/pps_veth.sh.
 *
 * The frame is an outer Ethernet/IPv4/UDP header, a Geneve (with xgate's
 * XG_OPT_HOST option, as an agent sends it) or VXLAN header, and an inner
 * Ethernet/IPv4/UDP frame of --inner-len bytes (default 60: a 64-byte frame
 * once the 4-byte FCS a veth never carries is counted).
 *
 * With --encap none the frame is what a pod sends, for bench/cross_cluster.sh:
 * one Ethernet/IPv4/UDP frame of --inner-len bytes built from --dmac --smac
 * --src --dst (UDP checksum complete, DF set, to --dport, default 9), sent
 * from the pod's own eth0; the --inner-* and tunnel options do not apply.
 *
 * Transmission uses BPF_PROG_RUN in live-frames mode (kernel 5.18+), the
 * method of xdp-trafficgen: a small hand-assembled XDP program writes the
 * frame (from a one-entry array map) into the page and returns
 * bpf_redirect(ifindex); the kernel sends each frame out of the device as an
 * xdp_frame, batch by batch, without building an skb. The receiving end of
 * the veth must run XDP (or NAPI) to take them.
 *
 *   pps_gen -N NETNS -i DEV -t SECONDS --encap geneve|vxlan --vni N
 *           --dmac MAC --smac MAC --src IP --dst IP
 *           --inner-dmac MAC --inner-smac MAC --inner-src IP --inner-dst IP
 *           [--opt-host IP] [--inner-len N] [--sport N] [--dport N]
 *           [--repeat N] [--dump]
 *   pps_gen -N NETNS -i DEV -t SECONDS --encap none
 *           --dmac MAC --smac MAC --src IP --dst IP
 *           [--inner-len N] [--sport N] [--dport N] [--repeat N] [--dump]
 *
 * Prints one line: "sent N secs S pps P" (frames handed to the device; the
 * device may still drop them when its peer's ring is full: count at the
 * receiver).
 *
 *   pps_gen -N NETNS -i DEV --tc-drop
 *
 * attaches the bench's sink instead: a two-instruction tc ingress program
 * (direct action, TC_ACT_SHOT) on DEV, so what arrives there is counted by
 * the device (rx_packets) and dropped before the IP stack. It stays attached
 * until the device goes; this kernel has neither cls_matchall nor act_gact,
 * and nft may be missing, hence a program.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pkt.h" /* tests/fixtures: the frame builder */

#define GENEVE_PORT 6081
#define VXLAN_PORT  4789
#define DISCARD_PORT 9
#define MAX_FRAME   512

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int die(const char *fmt, const char *arg)
{
	fprintf(stderr, "pps_gen: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(1);
}

static void parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		die("bad MAC '%s'", s);
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			die("bad MAC '%s'", s);
		mac[i] = b[i];
	}
}

static uint32_t parse_ip(const char *s)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		die("bad IPv4 address '%s'", s);
	return a.s_addr;
}

/* Ethernet + IPv4 + UDP header at f, payload of plen bytes already in
 * place after it. Returns the header length (42). */
static size_t l2l3l4(uint8_t *f, const uint8_t *dmac, const uint8_t *smac, uint32_t src,
		     uint32_t dst, uint16_t sport, uint16_t dport, size_t plen, int udp_csum,
		     int df)
{
	uint8_t *ip = f + 14, *udp = ip + 20;
	uint16_t ulen = 8 + plen;

	put_eth(f, dmac, smac, 0x0800);
	put_ipv4(ip, 0, 20 + ulen, 0, df ? 0x4000 : 0, 64, 17, src, dst);
	put_udp(udp, sport, dport, ulen);
	if (udp_csum)
		put16(udp + 6, udp4_csum(ip, udp, ulen));
	return 42;
}

static void enter_netns(const char *netns)
{
	char path[256];
	int fd;

	if (!netns)
		return;
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die("cannot enter network namespace '%s'", netns);
	close(fd);
}

static int attach_tc_drop(const char *netns, const char *dev)
{
	struct bpf_insn prog[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 2 /* TC_ACT_SHOT */},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	unsigned int ifindex;
	int fd, err;

	enter_netns(netns);
	ifindex = if_nametoindex(dev);
	if (!ifindex)
		die("unknown device '%s'", dev);
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "pps_sink", "GPL", prog, 2, NULL);
	if (fd < 0)
		die("loading the tc program: %s", strerror(errno));
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = fd);
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST)
		die("creating the clsact qdisc: %s", strerror(-err));
	err = bpf_tc_attach(&hook, &opts);
	if (err)
		die("attaching the tc program: %s", strerror(-err));
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pps_gen -N NETNS -i DEV -t SECONDS --encap geneve|vxlan --vni N\n"
		"         --dmac MAC --smac MAC --src IP --dst IP\n"
		"         --inner-dmac MAC --inner-smac MAC --inner-src IP --inner-dst IP\n"
		"         [--opt-host IP] [--inner-len N] [--sport N] [--dport N] [--repeat N]\n"
		"         [--dump]\n"
		"       pps_gen -N NETNS -i DEV -t SECONDS --encap none\n"
		"         --dmac MAC --smac MAC --src IP --dst IP\n"
		"         [--inner-len N] [--sport N] [--dport N] [--repeat N] [--dump]\n"
		"       pps_gen -N NETNS -i DEV --tc-drop\n");
	exit(2);
}

int main(int argc, char **argv)
{
	enum {
		O_ENCAP = 256,
		O_VNI,
		O_DMAC,
		O_SMAC,
		O_SRC,
		O_DST,
		O_IDMAC,
		O_ISMAC,
		O_ISRC,
		O_IDST,
		O_OPTHOST,
		O_ILEN,
		O_SPORT,
		O_DPORT,
		O_REPEAT,
		O_DUMP,
		O_TCDROP
	};
	static const struct option lo[] = {{"netns", required_argument, 0, 'N'},
					   {"dev", required_argument, 0, 'i'},
					   {"time", required_argument, 0, 't'},
					   {"encap", required_argument, 0, O_ENCAP},
					   {"vni", required_argument, 0, O_VNI},
					   {"dmac", required_argument, 0, O_DMAC},
					   {"smac", required_argument, 0, O_SMAC},
					   {"src", required_argument, 0, O_SRC},
					   {"dst", required_argument, 0, O_DST},
					   {"inner-dmac", required_argument, 0, O_IDMAC},
					   {"inner-smac", required_argument, 0, O_ISMAC},
					   {"inner-src", required_argument, 0, O_ISRC},
					   {"inner-dst", required_argument, 0, O_IDST},
					   {"opt-host", required_argument, 0, O_OPTHOST},
					   {"inner-len", required_argument, 0, O_ILEN},
					   {"sport", required_argument, 0, O_SPORT},
					   {"dport", required_argument, 0, O_DPORT},
					   {"repeat", required_argument, 0, O_REPEAT},
					   {"dump", no_argument, 0, O_DUMP},
					   {"tc-drop", no_argument, 0, O_TCDROP},
					   {0, 0, 0, 0}};
	const char *netns = NULL, *dev = NULL;
	double secs = 5;
	int geneve = -1, dump = 0, tc_drop = 0, repeat = 1 << 18, fixed_repeat = 0, have = 0;
	int plain = 0;
	uint32_t vni = 0, src = 0, dst = 0, isrc = 0, idst = 0, opt_host = 0;
	uint8_t dmac[6], smac[6], idmac[6], ismac[6];
	unsigned int ilen = 60, sport = 49152 + 4242, dport = 0;
	uint8_t frame[MAX_FRAME] = {0};
	int c;

	while ((c = getopt_long(argc, argv, "N:i:t:h", lo, NULL)) != -1) {
		switch (c) {
		case 'N':
			netns = optarg;
			break;
		case 'i':
			dev = optarg;
			break;
		case 't':
			secs = atof(optarg);
			break;
		case O_ENCAP:
			if (!strcmp(optarg, "geneve"))
				geneve = 1;
			else if (!strcmp(optarg, "vxlan"))
				geneve = 0;
			else if (!strcmp(optarg, "none"))
				geneve = 0, plain = 1;
			else
				die("unknown encap '%s': geneve, vxlan or none", optarg);
			break;
		case O_VNI:
			vni = strtoul(optarg, NULL, 0);
			have |= 1;
			break;
		case O_DMAC:
			parse_mac(optarg, dmac);
			have |= 2;
			break;
		case O_SMAC:
			parse_mac(optarg, smac);
			have |= 4;
			break;
		case O_SRC:
			src = parse_ip(optarg);
			have |= 8;
			break;
		case O_DST:
			dst = parse_ip(optarg);
			have |= 16;
			break;
		case O_IDMAC:
			parse_mac(optarg, idmac);
			have |= 32;
			break;
		case O_ISMAC:
			parse_mac(optarg, ismac);
			have |= 64;
			break;
		case O_ISRC:
			isrc = parse_ip(optarg);
			have |= 128;
			break;
		case O_IDST:
			idst = parse_ip(optarg);
			have |= 256;
			break;
		case O_OPTHOST:
			opt_host = parse_ip(optarg);
			break;
		case O_ILEN:
			ilen = strtoul(optarg, NULL, 0);
			break;
		case O_SPORT:
			sport = strtoul(optarg, NULL, 0);
			break;
		case O_DPORT:
			dport = strtoul(optarg, NULL, 0);
			break;
		case O_REPEAT:
			repeat = atoi(optarg);
			fixed_repeat = 1;
			break;
		case O_DUMP:
			dump = 1;
			break;
		case O_TCDROP:
			tc_drop = 1;
			break;
		default:
			usage();
		}
	}
	if (tc_drop && dev)
		return attach_tc_drop(netns, dev);
	/* --encap none: the outer fields are the frame's; no VNI, no inner */
	if (plain && (have & (2 | 4 | 8 | 16)) == (2 | 4 | 8 | 16))
		have = 511;
	if (!dev || geneve < 0 || have != 511 || secs <= 0 || repeat <= 0 || ilen < 42 ||
	    ilen > 256 || sport > 65535 || dport > 65535 || vni > 0xffffff)
		usage();
	if (!dport)
		dport = plain ? DISCARD_PORT : geneve ? GENEVE_PORT : VXLAN_PORT;

	/* ---- the frame, inner first ---- */
	size_t tun = plain ? 0 : geneve ? 8 + (opt_host ? 12 : 0) : 8, outer = 42 + tun;
	size_t len = plain ? ilen : outer + ilen;
	uint8_t *t = frame + 42, *inner = t + tun;

	if (plain) {
		/* what a pod sends: complete UDP checksum (pods run with TX
		 * checksum offload off), DF set as Linux sets it on UDP */
		for (unsigned int i = 42; i < ilen; i++)
			frame[i] = (uint8_t)i;
		l2l3l4(frame, dmac, smac, src, dst, sport, dport, ilen - 42, 1, 1);
	} else {
		for (unsigned int i = 42; i < ilen; i++)
			inner[i] = (uint8_t)i; /* payload */
		l2l3l4(inner, idmac, ismac, isrc, idst, 40000, DISCARD_PORT, ilen - 42, 1, 0);
		if (geneve) {
			put_geneve_hdr(t, 0, 0, 0x6558, vni, opt_host ? FX_OPT_HOST_LEN : 0);
			if (opt_host) /* XG_OPT_HOST: class 0xFFF8, type 1, 2 words */
				put_opt_host(t + 8, opt_host, 0);
		} else {
			t[0] = 0x08; /* I flag */
			t[4] = vni >> 16;
			t[5] = vni >> 8;
			t[6] = vni;
		}
		/* Outer UDP checksum zero, as tunnels send over IPv4 (RFC 8926 3.3,
		 * RFC 7348 5); DF set as xgate's agent sets it. */
		l2l3l4(frame, dmac, smac, src, dst, sport, dport, tun + ilen, 0, 1);
	}
	if (dump) {
		for (size_t i = 0; i < len; i++)
			printf("%02x%s", frame[i], (i % 16 == 15 || i + 1 == len) ? "\n" : " ");
		return 0;
	}

	enter_netns(netns);
	unsigned int ifindex = if_nametoindex(dev);

	if (!ifindex)
		die("unknown device '%s'", dev);

	/*
	 * Live-frames mode initialises a page's content once, when the page
	 * pool hands it out the first time; afterwards the page comes back
	 * (xdp_frame return, or an skb built around it being freed) with
	 * whatever the data path wrote into it: xgate's bouncer rewrites the
	 * outer header in place, decap moves the data, the kernel's VXLAN
	 * re-encapsulates in the headroom. So the program writes the template
	 * back into every frame before redirecting it:
	 *   v = map[0]; if (!v) drop; if (xdp_store_bytes(ctx, 0, v, len)) drop;
	 *   return bpf_redirect(ifindex, 0);
	 */
	int map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pps_gen_frame", 4, len, 1, NULL);
	__u32 zero = 0;

	if (map_fd < 0 || bpf_map_update_elem(map_fd, &zero, frame, 0))
		die("creating the frame map: %s", strerror(errno));
	struct bpf_insn prog[] = {
	    /* 0 */ {
		.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_6, .src_reg = BPF_REG_1},
	    /* 1 */ {.code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4, .imm = 0},
	    /* 2 */
	    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
	    /* 3 */ {.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4},
	    /* 4 */
	    {.code = BPF_LD | BPF_DW | BPF_IMM,
	     .dst_reg = BPF_REG_1,
	     .src_reg = BPF_PSEUDO_MAP_FD,
	     .imm = map_fd},
	    /* 5 */ {0},
	    /* 6 */ {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
	    /* 7 */ {.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0, .off = 10, .imm = 0},
	    /* 8 */
	    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_6},
	    /* 9 */ {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0},
	    /* 10 */
	    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_0},
	    /* 11 */
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = (int32_t)len},
	    /* 12 */ {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_xdp_store_bytes},
	    /* 13 */ {.code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = 4, .imm = 0},
	    /* 14 */
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = (int32_t)ifindex},
	    /* 15 */ {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0},
	    /* 16 */ {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect},
	    /* 17 */ {.code = BPF_JMP | BPF_EXIT},
	    /* 18 */ {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP},
	    /* 19 */ {.code = BPF_JMP | BPF_EXIT},
	};
	char vlog[4096] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, lopts, .log_buf = vlog, .log_size = sizeof(vlog),
		    .log_level = 0);
	int prog_fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "pps_gen", "GPL", prog,
				    sizeof(prog) / sizeof(prog[0]), &lopts);

	if (prog_fd < 0) {
		int err = errno;

		lopts.log_level = 1;
		prog_fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "pps_gen", "GPL", prog,
					sizeof(prog) / sizeof(prog[0]), &lopts);
		fprintf(stderr, "%s\n", vlog);
		die("loading the XDP program: %s", strerror(err));
	}

	struct sigaction sa = {.sa_handler = on_signal};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct xdp_md ctx_in = {.data_end = len, .ingress_ifindex = 1 /* lo */};
	struct timespec t0, t1;
	unsigned long long sent = 0;
	double el = 0;

	/*
	 * Each BPF_PROG_RUN call swaps the XDP dispatcher twice, and each swap
	 * waits for an RCU grace period (milliseconds): short calls would leave
	 * the device idle in between. So the first call is short, to learn the
	 * rate, and the next ones last about a second each (less near the end).
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len,
			    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in), .repeat = repeat,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);
		int err = bpf_prog_test_run_opts(prog_fd, &o);
		double left, want;

		if (err && errno != EINTR)
			die("BPF_PROG_RUN (live frames): %s", strerror(errno));
		if (!err)
			sent += repeat;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		left = secs - el;
		if (left <= 0.001)
			break;
		if (!fixed_repeat && sent && el > 0) {
			want = sent / el * (left < 1.0 ? left : 1.0);
			repeat = want < 4096 ? 4096 : want > (1 << 26) ? (1 << 26) : (int)want;
		}
	}
	printf("sent %llu secs %.3f pps %.0f\n", sent, el, el > 0 ? sent / el : 0);
	return 0;
}
