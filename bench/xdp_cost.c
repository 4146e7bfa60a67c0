// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_cost: ns/packet of each xgate data path, by BPF_PROG_RUN.
 *
 * Method (see docs/bench.md "xdp_cost"):
 *  - Every path is first checked once in normal test-run mode (repeat=1): its
 *    XDP verdict, its stats reason and the output frame must be the expected
 *    ones, so a drop path is never timed by accident.
 *  - It is then timed in live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES, kernel
 *    5.18+): XDP_TX and XDP_REDIRECT are really executed, into veth pairs of a
 *    private netns whose peers run a sink program (bench/floor.bpf.c).
 *    Live mode recycles pages without rewriting their content, so paths that
 *    rewrite the frame in place would see their own output again; the sink
 *    writes the original frame back before the page returns to the pool.
 *    Every timed run is checked afterwards: the stats reason of the path must
 *    have grown by exactly `repeat` and no other reason of the device at all,
 *    and the sink must have received every transmitted frame.
 *  - Floors are measured in the same mode and the same run: XDP_DROP (harness
 *    only), XDP_TX unchanged (harness + transmit + sink), devmap redirect.
 *  - Runs are interleaved (round r times every path) and summarised by best
 *    and median, and by the median over the rounds of (path - floor of the
 *    same round): the program's own cost, to which the targets apply.
 *  - "[no caches]" variants: the same sources without the per-CPU caches
 *    (bench/nocache.h), i.e. what a packet costs when every slot misses.
 *
 * Expected environment (bench/run_xdp_cost.sh builds it): veth pairs
 * bx0/bx1 (underlay NIC, bx0 10.98.0.1/24 with permanent neighbours for
 * 10.98.0.2-6) and bp0/bp1 (a pod veth, host side bp0).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xgate_abi.h"
#include "bench_abi.h"
#include "transit.skel.h"
#include "agent.skel.h"
#include "transit_nocache.skel.h"
#include "agent_nocache.skel.h"
#include "floor.skel.h"

#define MAX_RUNS 64
#define MAX_FRAME 2048

/* ---- topology (must match run_xdp_cost.sh) ------------------------------ */

#define VNI 100
#define SLOT_NIC 1
#define SLOT_POD 2

static const char *if_nic = "bx0", *if_nic_peer = "bx1";
static const char *if_pod = "bp0", *if_pod_peer = "bp1";

#define UL(x) "10.98.0." #x /* underlay address of host x */
static uint32_t ip_self, ip_sender, ip_ephost, ip_bouncer, ip_divider, ip_gateway;
static uint32_t ov_sender, ov_ep, ov_miss, ov_s2, ov_remote, ov_pod, ov_gw;

static const uint8_t mac_sender_pod[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x0a };
static const uint8_t mac_ep[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x14 };
static const uint8_t mac_pod[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x3c };
static const uint8_t mac_gw[6] = { 0x02, 0x0a, 0x01, 0x01, 0x00, 0x01 };
static const uint8_t mac_remote_host[6] = { 0x02, 0x98, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t mac_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static uint8_t mac_nic[6];

/* ---- options -------------------------------------------------------------- */

static struct {
	unsigned long repeat;
	int runs;
	int batch;
	int cpu;
	const char *netns;
	const char *pin_root;
	const char *only;
	bool trap_demo;
	bool no_variants;
	bool components;
	bool verbose;
} opt = {
	.repeat = 1000000,
	.runs = 5,
	.batch = 64,
	.cpu = -1,
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "xdp_cost: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* ---- frames ---------------------------------------------------------------- */

struct frame {
	uint8_t b[MAX_FRAME];
	size_t len;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put_be32(uint8_t *p, uint32_t v_be)
{
	memcpy(p, &v_be, 4);
}

static void ipv4_hdr(uint8_t *p, uint32_t src_be, uint32_t dst_be, uint16_t tot_len,
		     uint8_t proto)
{
	uint32_t sum = 0;

	memset(p, 0, 20);
	p[0] = 0x45;
	put16(p + 2, tot_len);
	put16(p + 6, 0x4000); /* DF */
	p[8] = 64;
	p[9] = proto;
	put_be32(p + 12, src_be);
	put_be32(p + 16, dst_be);
	for (int i = 0; i < 20; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(p + 10, ~sum);
}

static size_t eth_hdr(uint8_t *p, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	put16(p + 12, type);
	return 14;
}

/* Ethernet + IPv4 + UDP, zero payload up to frame_len (>= 42). */
static size_t inner_udp(uint8_t *p, const uint8_t *smac, const uint8_t *dmac, uint32_t src,
			uint32_t dst, size_t frame_len)
{
	memset(p, 0, frame_len);
	eth_hdr(p, dmac, smac, 0x0800);
	ipv4_hdr(p + 14, src, dst, frame_len - 14, 17);
	put16(p + 34, 40000);
	put16(p + 36, 5201);
	put16(p + 38, frame_len - 34);
	return frame_len;
}

/* Ethernet + ARP request "who has tpa, tell spa". */
static size_t inner_arp(uint8_t *p, const uint8_t *smac, uint32_t spa, uint32_t tpa)
{
	eth_hdr(p, mac_bcast, smac, 0x0806);
	p += 14;
	put16(p, 1);
	put16(p + 2, 0x0800);
	p[4] = 6;
	p[5] = 4;
	put16(p + 6, 1);
	memcpy(p + 8, smac, 6);
	put_be32(p + 14, spa);
	memset(p + 18, 0, 6);
	put_be32(p + 24, tpa);
	return 14 + 28;
}

/* What an agent on host `sender` emits: Geneve + XG_OPT_HOST around inner. */
static void geneve_frame(struct frame *f, uint32_t osrc, uint32_t odst, uint32_t opt_host,
			 uint8_t opt_flags, const uint8_t *inner, size_t inner_len)
{
	uint8_t *p = f->b;
	size_t l4 = 8 + XG_GENEVE_HDR_LEN + sizeof(struct xg_opt_host) + inner_len;

	p += eth_hdr(p, mac_nic, mac_remote_host, 0x0800);
	ipv4_hdr(p, osrc, odst, 20 + l4, 17);
	p += 20;
	put16(p, 0xc123);
	put16(p + 2, XG_GENEVE_PORT);
	put16(p + 4, l4);
	put16(p + 6, 0);
	p += 8;
	p[0] = sizeof(struct xg_opt_host) / 4; /* version 0, optlen */
	p[1] = 0;
	put16(p + 2, XG_ETH_P_TEB);
	p[4] = VNI >> 16;
	p[5] = VNI >> 8;
	p[6] = VNI;
	p[7] = 0;
	p += 8;
	put16(p, XG_OPT_CLASS);
	p[2] = XG_OPT_TYPE_HOST;
	p[3] = 2;
	put_be32(p + 4, opt_host);
	p[8] = opt_flags;
	p[9] = p[10] = p[11] = 0;
	p += 12;
	memcpy(p, inner, inner_len);
	f->len = (p - f->b) + inner_len;
}

/* ---- programs and paths ---------------------------------------------------- */

enum prog_id {
	PR_TRANSIT,
	PR_AGENT,
	PR_TRANSIT_NOCACHE,
	PR_AGENT_NOCACHE,
	PR_DROP,
	PR_TX,
	PR_REDIRECT,
	PR_FIB,
	PR_PROBE_HASH,
	PR_PROBE_LPM,
	PR_PROBE_JIFFIES,
	PR_PROBE_COARSE,
	PR_PROBE_PCPU,
	PR__N,
};

enum kind { K_FLOOR, K_PATH, K_VARIANT, K_TRAP };

struct path {
	const char *name;
	enum kind kind;
	enum prog_id prog;
	struct frame f;
	int ingress;         /* ifindex the frame arrives on */
	uint32_t verdict;    /* XDP action */
	int reason;          /* XG_R_*, or -1 (floors) */
	uint32_t slot;       /* stats slot of the ingress device */
	uint32_t out_dst;    /* expected outer IPv4 dst of the output, 0 = none */
	int out_len;         /* expected output length, -1 = unchecked */
	bool restore;        /* sink writes the frame back (in-place rewrites) */
	double target;       /* ns net of the TX floor, 0 = none */
	uint32_t fib_flags;  /* PR_FIB only: bpf_fib_lookup flags */
	/* results */
	double ns[MAX_RUNS];
	double wall[MAX_RUNS];
	int n;
	bool skipped;
};

static struct {
	struct transit_bpf *transit;
	struct agent_bpf *agent;
	struct transit_nocache_bpf *transit_nocache;
	struct agent_nocache_bpf *agent_nocache;
	struct floor_bpf *floor;
	int prog_fd[PR__N];
	int stats_fd, sink_cfg_fd, sink_count_fd;
	int ifx_nic, ifx_nic_peer, ifx_pod, ifx_pod_peer;
	bool sink_on_nic, sink_on_pod;
	bool pin_created, xgate_dir_created;
	char pin_root[256];
	int ncpu;
} G = { .stats_fd = -1 };

static const char *reason_names[] = {
	"NONE",
#define XG_NAME_ENTRY(name, desc) #name,
	XG_REASONS(XG_NAME_ENTRY)
#undef XG_NAME_ENTRY
};

static const char *reason_name(int r)
{
	if (r >= 0 && r < XG_R__COUNT)
		return reason_names[r];
	return "?";
}

static const char *verdict_name(uint32_t v)
{
	switch (v) {
	case XDP_ABORTED: return "ABORTED";
	case XDP_DROP: return "DROP";
	case XDP_PASS: return "PASS";
	case XDP_TX: return "TX";
	case XDP_REDIRECT: return "REDIRECT";
	}
	return "?";
}

/* ---- counters ---------------------------------------------------------------- */

static int read_slot(uint32_t slot, uint64_t pk[XG_R_MAX])
{
	struct xg_stat v[G.ncpu];

	for (uint32_t r = 0; r < XG_R_MAX; r++) {
		uint32_t key = slot * XG_R_MAX + r;

		if (bpf_map_lookup_elem(G.stats_fd, &key, v))
			return -errno;
		pk[r] = 0;
		for (int c = 0; c < G.ncpu; c++)
			pk[r] += v[c].packets;
	}
	return 0;
}

static uint64_t read_sink(void)
{
	uint64_t v[G.ncpu], sum = 0;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(G.sink_count_fd, &zero, v))
		return 0;
	for (int c = 0; c < G.ncpu; c++)
		sum += v[c];
	return sum;
}

static int set_sink(const struct path *p)
{
	struct bench_sink_cfg cfg = {};
	uint32_t zero = 0;

	if (p->restore && p->f.len >= BENCH_RESTORE_LEN)
		cfg.restore = 1;
	memcpy(cfg.tmpl, p->f.b, p->f.len < BENCH_RESTORE_LEN ? p->f.len : BENCH_RESTORE_LEN);
	if (bpf_map_update_elem(G.sink_cfg_fd, &zero, &cfg, BPF_ANY))
		return -errno;
	return 0;
}

static void set_fib_flags(const struct path *p)
{
	if (p->prog == PR_FIB)
		G.floor->data->fib_flags = p->fib_flags ? p->fib_flags : BPF_FIB_LOOKUP_OUTPUT;
}

static bool sinked(const struct path *p)
{
	return p->verdict == XDP_TX || p->verdict == XDP_REDIRECT;
}

/* Print the reasons that moved between two snapshots. */
static void print_deltas(const uint64_t *a, const uint64_t *b)
{
	for (int r = 0; r < XG_R_MAX; r++)
		if (b[r] != a[r])
			fprintf(stderr, "    %-22s +%llu\n", reason_name(r),
				(unsigned long long)(b[r] - a[r]));
}

/* ---- one check run (repeat=1, normal mode) ----------------------------------- */

static int check_path(struct path *p)
{
	uint8_t out[MAX_FRAME + 256];
	struct xdp_md md = { .data_end = p->f.len, .ingress_ifindex = p->ingress };
	uint64_t before[XG_R_MAX], after[XG_R_MAX];
	int err;
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = p->f.b, .data_size_in = p->f.len,
		    .data_out = out, .data_size_out = sizeof(out),
		    .ctx_in = &md, .ctx_size_in = sizeof(md),
		    .repeat = 1);

	set_fib_flags(p);
	if (p->reason >= 0 && read_slot(p->slot, before))
		return -1;
	err = bpf_prog_test_run_opts(G.prog_fd[p->prog], &o);
	if (err) {
		die_msg("%s: BPF_PROG_RUN (check) failed: %s", p->name, strerror(-err));
		return -1;
	}
	if (o.retval != p->verdict) {
		die_msg("%s: verdict %s, expected %s: refusing to time a wrong path",
			p->name, verdict_name(o.retval), verdict_name(p->verdict));
		if (p->reason >= 0 && !read_slot(p->slot, after))
			print_deltas(before, after);
		if (p->prog == PR_FIB)
			fprintf(stderr, "    bpf_fib_lookup returned %d\n", G.floor->bss->fib_last_rc);
		return -1;
	}
	if (p->reason >= 0) {
		if (read_slot(p->slot, after))
			return -1;
		for (int r = 0; r < XG_R_MAX; r++) {
			uint64_t want = r == p->reason ? 1 : 0;

			if (after[r] - before[r] != want) {
				die_msg("%s: stats reason is not %s alone: refusing to time it",
					p->name, reason_name(p->reason));
				print_deltas(before, after);
				return -1;
			}
		}
	}
	if (p->out_len >= 0 && o.data_size_out != (uint32_t)p->out_len) {
		die_msg("%s: output frame is %u bytes, expected %d", p->name,
			o.data_size_out, p->out_len);
		return -1;
	}
	if (p->out_dst) {
		uint32_t dst;

		memcpy(&dst, out + 14 + 16, 4);
		if (o.data_size_out < 34 || out[12] != 0x08 || out[13] != 0 || dst != p->out_dst) {
			char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, &dst, a, sizeof(a));
			inet_ntop(AF_INET, &p->out_dst, b, sizeof(b));
			die_msg("%s: output outer dst %s, expected %s", p->name, a, b);
			return -1;
		}
	}
	return 0;
}

/* ---- one timed run (live frames) ------------------------------------------- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Returns 0 and fills *ns / *wall, or -1. With `strict` the counters must
 * show that every iteration took the path (trap demo: report only). */
static int timed_run(struct path *p, unsigned long repeat, double *ns, double *wall, bool strict)
{
	struct xdp_md md = { .data_end = p->f.len, .ingress_ifindex = p->ingress };
	uint64_t before[XG_R_MAX], after[XG_R_MAX], s0, s1;
	double t0, t1;
	int err;
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = p->f.b, .data_size_in = p->f.len,
		    .ctx_in = &md, .ctx_size_in = sizeof(md),
		    .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .batch_size = opt.batch);

	if (set_sink(p))
		return -1;
	set_fib_flags(p);
	if (p->reason >= 0 && read_slot(p->slot, before))
		return -1;
	s0 = read_sink();
	t0 = now_ns();
	err = bpf_prog_test_run_opts(G.prog_fd[p->prog], &o);
	t1 = now_ns();
	if (err) {
		if (err == -EINTR || stop)
			return -1;
		die_msg("%s: BPF_PROG_RUN (live) failed: %s", p->name, strerror(-err));
		return -1;
	}
	/* the sink runs in the softirq that follows each batch; by now every
	 * transmitted frame has been seen */
	s1 = read_sink();
	if (p->reason >= 0) {
		if (read_slot(p->slot, after))
			return -1;
		for (int r = 0; r < XG_R_MAX; r++) {
			uint64_t want = r == p->reason ? repeat : 0;

			if (after[r] - before[r] != want) {
				if (!strict) {
					fprintf(stderr, "  %s, %lu iterations in live mode went to:\n",
						p->name, repeat);
					print_deltas(before, after);
					break;
				}
				die_msg("%s: live run did not take the path every time "
					"(expected %s +%lu):", p->name, reason_name(p->reason), repeat);
				print_deltas(before, after);
				return -1;
			}
		}
	}
	if (strict) {
		uint64_t got = s1 - s0, want = sinked(p) ? repeat : 0;

		/* a few stray frames from the stack are tolerated, lost ones not */
		if (got < want || got > want + 16) {
			die_msg("%s: sink received %llu frames, expected %llu "
				"(transmit failed? is the peer's XDP sink attached?)",
				p->name, (unsigned long long)got, (unsigned long long)want);
			return -1;
		}
	}
	*ns = o.duration;
	*wall = (t1 - t0) / repeat;
	return 0;
}

/* Normal (non-live) mode with repeat: only for programs whose output, fed
 * back as input, takes the same path (checked through the stats). */
static int normal_run(struct path *p, unsigned long repeat, double *ns)
{
	struct xdp_md md = { .data_end = p->f.len, .ingress_ifindex = p->ingress };
	uint64_t before[XG_R_MAX], after[XG_R_MAX];
	int err;
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = p->f.b, .data_size_in = p->f.len,
		    .ctx_in = &md, .ctx_size_in = sizeof(md),
		    .repeat = repeat);

	set_fib_flags(p);
	if (p->reason >= 0 && read_slot(p->slot, before))
		return -1;
	err = bpf_prog_test_run_opts(G.prog_fd[p->prog], &o);
	if (err) {
		if (err != -EINTR && !stop)
			die_msg("%s: BPF_PROG_RUN failed: %s", p->name, strerror(-err));
		return -1;
	}
	if (o.retval != p->verdict) {
		die_msg("%s: verdict %s, expected %s", p->name, verdict_name(o.retval),
			verdict_name(p->verdict));
		return -1;
	}
	if (p->reason >= 0) {
		if (read_slot(p->slot, after))
			return -1;
		if (after[p->reason] - before[p->reason] != repeat) {
			die_msg("%s: not every iteration took %s", p->name,
				reason_name(p->reason));
			print_deltas(before, after);
			return -1;
		}
	}
	*ns = o.duration;
	return 0;
}

/* ---- setup ---------------------------------------------------------------------- */

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int mkdir_p(const char *path)
{
	char tmp[256];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static void remove_pins(void)
{
	DIR *d;
	struct dirent *e;
	char path[512];

	if (!G.pin_created)
		return;
	d = opendir(G.pin_root);
	if (d) {
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", G.pin_root, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(G.pin_root);
	if (G.xgate_dir_created)
		rmdir("/sys/fs/bpf/xgate"); /* only if empty */
}

static void cleanup(void)
{
	if (G.sink_on_nic)
		bpf_xdp_detach(G.ifx_nic_peer, XDP_FLAGS_DRV_MODE, NULL);
	if (G.sink_on_pod)
		bpf_xdp_detach(G.ifx_pod_peer, XDP_FLAGS_DRV_MODE, NULL);
	floor_bpf__destroy(G.floor);
	agent_nocache_bpf__destroy(G.agent_nocache);
	transit_nocache_bpf__destroy(G.transit_nocache);
	agent_bpf__destroy(G.agent);
	transit_bpf__destroy(G.transit);
	remove_pins();
}

static int ifindex_of(const char *name)
{
	int i = if_nametoindex(name);

	if (!i)
		die_msg("no interface %s in this netns (run through bench/run_xdp_cost.sh)",
			name);
	return i;
}

static int get_mac(const char *name, uint8_t *mac)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

#define CHECK(expr, what)                                                        \
	do {                                                                     \
		int _e = (expr);                                                 \
		if (_e) {                                                        \
			die_msg("%s: %s", what, strerror(_e < 0 ? -_e : errno)); \
			return -1;                                               \
		}                                                                \
	} while (0)

/*
 * The kernel adds BPF_F_RDONLY_PROG to every devmap's flags, and libbpf 1.1
 * compares flags when it reuses a pinned map: the second object that pins
 * xg_txports by name ("parameter mismatch") would fail to load. libbpf >= 1.4
 * masks the flag itself. The kernel refuses the flag at creation, so it is
 * given only to the objects that reuse the pin (every one after transit).
 */
static int devmap_flags(struct bpf_map *m)
{
	return bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_RDONLY_PROG);
}

static int load_programs(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = G.pin_root);
	struct stat st;

	if (stat("/sys/fs/bpf/xgate", &st))
		G.xgate_dir_created = true;
	/* a fresh root only: reused pins would mix someone else's state in */
	if (stat(G.pin_root, &st) == 0) {
		die_msg("pin root %s already exists; refusing to reuse it", G.pin_root);
		return -1;
	}
	G.pin_created = true;
	CHECK(mkdir_p(G.pin_root), G.pin_root);

	/* all four xgate objects share the pinned maps of this private root */
	G.transit = transit_bpf__open_opts(&oo);
	if (!G.transit || transit_bpf__load(G.transit)) {
		die_msg("loading transit.bpf.o failed");
		return -1;
	}
	G.agent = agent_bpf__open_opts(&oo);
	if (!G.agent || devmap_flags(G.agent->maps.xg_txports) || agent_bpf__load(G.agent)) {
		die_msg("loading agent.bpf.o failed");
		return -1;
	}
	if (!opt.no_variants) {
		G.transit_nocache = transit_nocache_bpf__open_opts(&oo);
		if (!G.transit_nocache || devmap_flags(G.transit_nocache->maps.xg_txports) ||
		    transit_nocache_bpf__load(G.transit_nocache)) {
			die_msg("loading transit_nocache.bpf.o failed");
			return -1;
		}
		G.agent_nocache = agent_nocache_bpf__open_opts(&oo);
		if (!G.agent_nocache || devmap_flags(G.agent_nocache->maps.xg_txports) ||
		    agent_nocache_bpf__load(G.agent_nocache)) {
			die_msg("loading agent_nocache.bpf.o failed");
			return -1;
		}
		G.prog_fd[PR_TRANSIT_NOCACHE] = bpf_program__fd(G.transit_nocache->progs.xg_transit);
		G.prog_fd[PR_AGENT_NOCACHE] = bpf_program__fd(G.agent_nocache->progs.xg_agent);
	}
	G.floor = floor_bpf__open();
	if (!G.floor) {
		die_msg("opening floor.bpf.o failed");
		return -1;
	}
	G.floor->rodata->redirect_ifindex = G.ifx_nic;
	G.floor->rodata->fib_src_be = ip_self;
	G.floor->rodata->fib_dst_be = ip_ephost;
	G.floor->rodata->fib_ifindex = G.ifx_nic;
	G.floor->rodata->probe_vni_be = htonl(VNI);
	G.floor->rodata->probe_ip_be = ov_s2;
	if (floor_bpf__load(G.floor)) {
		die_msg("loading floor.bpf.o failed");
		return -1;
	}
	G.prog_fd[PR_TRANSIT] = bpf_program__fd(G.transit->progs.xg_transit);
	G.prog_fd[PR_AGENT] = bpf_program__fd(G.agent->progs.xg_agent);
	G.prog_fd[PR_DROP] = bpf_program__fd(G.floor->progs.xdp_floor_drop);
	G.prog_fd[PR_TX] = bpf_program__fd(G.floor->progs.xdp_floor_tx);
	G.prog_fd[PR_REDIRECT] = bpf_program__fd(G.floor->progs.xdp_floor_redirect);
	G.prog_fd[PR_FIB] = bpf_program__fd(G.floor->progs.xdp_floor_fib);
	G.prog_fd[PR_PROBE_HASH] = bpf_program__fd(G.floor->progs.xdp_probe_hash);
	G.prog_fd[PR_PROBE_LPM] = bpf_program__fd(G.floor->progs.xdp_probe_lpm);
	G.prog_fd[PR_PROBE_JIFFIES] = bpf_program__fd(G.floor->progs.xdp_probe_jiffies);
	G.prog_fd[PR_PROBE_COARSE] = bpf_program__fd(G.floor->progs.xdp_probe_coarse_ns);
	G.prog_fd[PR_PROBE_PCPU] = bpf_program__fd(G.floor->progs.xdp_probe_pcpu);
	G.stats_fd = bpf_map__fd(G.transit->maps.xg_stats);
	G.sink_cfg_fd = bpf_map__fd(G.floor->maps.sink_cfg);
	G.sink_count_fd = bpf_map__fd(G.floor->maps.sink_count);
	return 0;
}

static int upd(struct bpf_map *m, const void *k, const void *v, const char *what)
{
	if (bpf_map__update_elem(m, k, bpf_map__key_size(m), v, bpf_map__value_size(m), BPF_ANY)) {
		die_msg("map %s (%s): %s", bpf_map__name(m), what, strerror(errno));
		return -1;
	}
	return 0;
}

static uint32_t map_id(const struct bpf_map *m)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_map__fd(m), &info, &len))
		return 0;
	return info.id;
}

static int subnet(uint32_t net_be, int mask, uint32_t flags, uint32_t bouncer_be)
{
	struct xg_subnet_key k = { .prefixlen = 32 + mask, .vni_be = htonl(VNI), .ip_be = net_be };
	struct xg_subnet s = { .flags = flags, .gw_ip_be = ov_gw };

	memcpy(s.gw_mac, mac_gw, 6);
	if (bouncer_be) {
		s.n_bouncers = 1;
		s.bouncers_be[0] = bouncer_be;
	}
	return upd(G.transit->maps.xg_subnet, &k, &s, "subnet");
}

/* A subnet with three bouncers: the divider picks one by flow hash. */
static int subnet3(uint32_t net_be, int mask)
{
	struct xg_subnet_key k = { .prefixlen = 32 + mask, .vni_be = htonl(VNI), .ip_be = net_be };
	struct xg_subnet s = { .gw_ip_be = ov_gw, .n_bouncers = 3,
			       .bouncers_be = { ip_bouncer, ip_divider, ip_gateway } };

	memcpy(s.gw_mac, mac_gw, 6);
	return upd(G.transit->maps.xg_subnet, &k, &s, "subnet");
}

/*
 * Map state: this host (10.98.0.1) is the bouncer of 10.1.1.0/24 (holds its
 * endpoints), knows 10.1.2.0/24 (bouncer .4), 10.1.3.0/24 (bouncers .4 .5 .6)
 * and the remote 10.2.0.0/16, and hosts pod 10.1.1.60 behind bp0. VPC 100's
 * divider is .5, the gateway .6.
 */
static int program_maps(void)
{
	struct bpf_map_info info = {};
	struct xg_host host = {
		.ip_be = ip_self, .gateway_be = ip_gateway,
		.nic_ifindex = G.ifx_nic, .ttl = 64,
	};
	struct xg_iface nic = { .slot = SLOT_NIC, .role = XG_ROLE_TRANSIT };
	struct xg_iface pod = {
		.slot = SLOT_POD, .role = XG_ROLE_AGENT, .vni = VNI,
		.pod_ip_be = ov_pod, .flags = XG_IFACE_HAS_POD,
	};
	struct xg_vpc vpc = { .n_dividers = 1, .dividers_be = { ip_divider } };
	struct xg_ep_key k_ep = { .vni = VNI, .ip_be = ov_ep };
	struct xg_endpoint ep = { .host_be = ip_ephost };
	struct xg_ep_key k_pod = { .vni = VNI, .ip_be = ov_pod };
	struct xg_endpoint eppod = { .host_be = ip_self, .flags = XG_EP_LOCAL };
	struct xg_ep_key k_cache = { .vni = VNI, .ip_be = ov_sender };
	struct xg_cache_entry ce = { .host_be = ip_sender };
	struct timespec ts;
	uint32_t zero = 0, vni = VNI, nic_if = G.ifx_nic, pod_if = G.ifx_pod;
	uint32_t len = sizeof(info);

	memcpy(pod.pod_mac, mac_pod, 6);
	memcpy(ep.mac, mac_ep, 6);
	memcpy(eppod.mac, mac_pod, 6);
	eppod.ifindex = G.ifx_pod;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ce.learned_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;

	/* one set of maps for all xgate objects (pinned in our private root) */
	if (bpf_obj_get_info_by_fd(bpf_map__fd(G.transit->maps.xg_stats), &info, &len)) {
		die_msg("map info: %s", strerror(errno));
		return -1;
	}
	if (map_id(G.agent->maps.xg_stats) != info.id ||
	    (G.transit_nocache && map_id(G.transit_nocache->maps.xg_stats) != info.id) ||
	    (G.agent_nocache && map_id(G.agent_nocache->maps.xg_stats) != info.id)) {
		die_msg("the xgate objects do not share their maps (pinning failed?)");
		return -1;
	}

	if (upd(G.transit->maps.xg_host, &zero, &host, "host") ||
	    upd(G.transit->maps.xg_ifaces, &nic_if, &nic, "nic") ||
	    upd(G.transit->maps.xg_ifaces, &pod_if, &pod, "pod") ||
	    upd(G.transit->maps.xg_vpc, &vni, &vpc, "vpc") ||
	    subnet(inet_addr("10.1.1.0"), 24, 0, ip_bouncer) ||
	    subnet(inet_addr("10.1.2.0"), 24, 0, ip_bouncer) ||
	    subnet3(inet_addr("10.1.3.0"), 24) ||
	    subnet(inet_addr("10.2.0.0"), 16, XG_SUBNET_REMOTE, 0) ||
	    upd(G.transit->maps.xg_endpoint, &k_ep, &ep, "endpoint") ||
	    upd(G.transit->maps.xg_endpoint, &k_pod, &eppod, "pod endpoint") ||
	    upd(G.transit->maps.xg_cache, &k_cache, &ce, "cache") ||
	    upd(G.transit->maps.xg_txports, &nic_if, &nic_if, "txport nic") ||
	    upd(G.transit->maps.xg_txports, &pod_if, &pod_if, "txport pod") ||
	    upd(G.floor->maps.floor_ports, &nic_if, &nic_if, "floor port") ||
	    upd(G.floor->maps.probe_hash, &nic_if, &nic, "probe hash") ||
	    upd(G.floor->maps.probe_hash, &pod_if, &pod, "probe hash"))
		return -1;
	/* the probe trie holds the same prefixes as xg_subnet */
	{
		const char *nets[] = { "10.1.1.0", "10.1.2.0", "10.2.0.0" };
		int masks[] = { 24, 24, 16 };
		struct xg_subnet s = { .n_bouncers = 1, .bouncers_be = { ip_bouncer } };

		for (int i = 0; i < 3; i++) {
			struct xg_subnet_key k = {
				.prefixlen = 32 + masks[i], .vni_be = htonl(VNI),
				.ip_be = inet_addr(nets[i]),
			};

			if (upd(G.floor->maps.probe_lpm, &k, &s, "probe lpm"))
				return -1;
		}
	}
	return 0;
}

static int attach_sinks(void)
{
	int fd = bpf_program__fd(G.floor->progs.xdp_sink);
	int err;

	err = bpf_xdp_attach(G.ifx_nic_peer, fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		die_msg("attach sink to %s: %s", if_nic_peer, strerror(-err));
		return -1;
	}
	G.sink_on_nic = true;
	err = bpf_xdp_attach(G.ifx_pod_peer, fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		die_msg("attach sink to %s: %s", if_pod_peer, strerror(-err));
		return -1;
	}
	G.sink_on_pod = true;
	return 0;
}

/* ---- the path list -------------------------------------------------------------- */

#define MAX_PATHS 24
static struct path P[MAX_PATHS];
static int np;

static struct path *add(const char *name, enum kind kind, enum prog_id prog, int ingress,
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
	p->slot = ingress == G.ifx_pod ? SLOT_POD : SLOT_NIC;
	p->out_len = -1;
	return p;
}

static void build_paths(void)
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

/* Component costs, in normal test-run mode (no page pool, no transmit):
 * programs whose rewrite is idempotent, or that stop before rewriting. */
static double best_of(const double *v, int n);
static double median_of(const double *v, int n);

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

static int run_components(void)
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

/* ---- report ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double best_of(const double *v, int n)
{
	double b = v[0];

	for (int i = 1; i < n; i++)
		if (v[i] < b)
			b = v[i];
	return b;
}

static double median_of(const double *v, int n)
{
	double s[MAX_RUNS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static const struct path *find_floor(enum prog_id prog)
{
	for (int i = 0; i < np; i++)
		if (P[i].kind == K_FLOOR && P[i].prog == prog && P[i].n)
			return &P[i];
	return NULL;
}

static void print_env(void)
{
	struct utsname u;
	char model[128] = "?", line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10)) {
				char *c = strchr(line, ':');

				if (c) {
					snprintf(model, sizeof(model), "%s", c + 2);
					model[strcspn(model, "\n")] = 0;
				}
				break;
			}
		fclose(f);
	}
	uname(&u);
	printf("xdp_cost: kernel %s, %s, pinned to CPU %d\n", u.release, model, opt.cpu);
	printf("          BPF_PROG_RUN live frames, repeat %lu, batch %d, %d runs per path "
	       "(interleaved), best and median\n", opt.repeat, opt.batch, opt.runs);
}

/* Median over the rounds of (path - floor), both timed in the same round.
 * On a VM both drift together; pairing cancels most of it, where the best
 * of each (a minimum of a noisy series) does not. */
static double paired_median(const struct path *p, const struct path *fl)
{
	double d[MAX_RUNS];
	int n = p->n < fl->n ? p->n : fl->n;

	for (int r = 0; r < n; r++)
		d[r] = p->ns[r] - fl->ns[r];
	return median_of(d, n);
}

static void print_table(void)
{
	const struct path *drop = find_floor(PR_DROP), *tx = find_floor(PR_TX);
	const struct path *redir = find_floor(PR_REDIRECT);
	double fdrop = drop ? best_of(drop->ns, drop->n) : 0;
	double ftx = tx ? best_of(tx->ns, tx->n) : 0;

	printf("\n%-34s %5s %-8s %8s %7s %9s %9s %8s %7s %-5s %7s %8s\n", "path", "bytes",
	       "verdict", "ns/pkt", "median", "-DROP fl", "-TX fl", "-fl med", "target", "ok?",
	       "Mpps", "wall ns");
	printf("%.*s\n", 133,
	       "--------------------------------------------------------------------------"
	       "--------------------------------------------------------------------------");
	for (int i = 0; i < np; i++) {
		const struct path *p = &P[i];
		const struct path *fl = p->verdict == XDP_REDIRECT && redir ? redir : tx;
		double b, m, ndrop, ntx, nmed = 0;
		char target[16] = "-", ok[8] = "-", sdrop[16] = "-", stx[16] = "-", smed[16] = "-";

		if (p->kind == K_TRAP)
			continue;
		if (i > 0 && P[i - 1].kind != p->kind)
			printf("\n");
		if (!p->n) {
			printf("%-34s %5zu %-8s %8s\n", p->name, p->f.len, verdict_name(p->verdict),
			       p->skipped ? "skipped" : "n/a");
			continue;
		}
		b = best_of(p->ns, p->n);
		m = median_of(p->ns, p->n);
		ndrop = b - fdrop;
		ntx = b - ftx;
		if (drop && p->prog != PR_DROP)
			snprintf(sdrop, sizeof(sdrop), "%.0f", ndrop);
		if (tx && p->prog != PR_DROP && p->prog != PR_TX)
			snprintf(stx, sizeof(stx), "%.0f", ntx);
		if (fl && p->kind != K_FLOOR) {
			nmed = paired_median(p, fl);
			snprintf(smed, sizeof(smed), "%.0f", nmed);
		}
		if (p->target > 0) {
			snprintf(target, sizeof(target), "<=%.0f", p->target);
			snprintf(ok, sizeof(ok), "%s", fl && nmed <= p->target ? "yes" : "NO");
		}
		printf("%-34s %5zu %-8s %8.0f %7.0f %9s %9s %8s %7s %-5s %7.2f %8.1f\n", p->name,
		       p->f.len, verdict_name(p->verdict), b, m, sdrop, stx, smed, target, ok,
		       1000.0 / b, best_of(p->wall, p->n));
	}
	printf("\nns/pkt, median: kernel-reported duration per packet (integer ns) of the best "
	       "and median run.\n"
	       "-DROP fl / -TX fl: best ns/pkt minus the best XDP_DROP floor (harness alone) / "
	       "XDP_TX floor\n"
	       "  (harness + transmit into the veth peer + sink). Mpps = 1000 / ns/pkt.\n"
	       "-fl med: median over the rounds of (path - floor timed in the same round), the "
	       "floor of the\n"
	       "  path's verdict (XDP_TX or devmap REDIRECT): the program's own cost. target "
	       "applies to it.\n"
	       "wall ns: wall-clock time of the whole syscall / repeat (includes setup).\n"
	       "[no caches]: same program built without its per-CPU caches (bench/nocache.h):\n"
	       "  xg_ifaces/xg_endpoint hash, xg_subnet LPM and bpf_fib_lookup on every packet.\n");
}

/* ---- main -------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: xdp_cost [--netns NAME] [--pin-root DIR] [--repeat N] [--runs N]\n"
		"                [--batch N] [--cpu N] [--only SUBSTR] [--no-variants] [--trap-demo]\n"
		"                [--components] [--verbose]\n"
		"Run through bench/run_xdp_cost.sh, which builds the netns.\n");
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "netns", required_argument, 0, 'n' },
		{ "pin-root", required_argument, 0, 'p' },
		{ "repeat", required_argument, 0, 'r' },
		{ "runs", required_argument, 0, 'R' },
		{ "batch", required_argument, 0, 'b' },
		{ "cpu", required_argument, 0, 'c' },
		{ "only", required_argument, 0, 'o' },
		{ "no-variants", no_argument, 0, 'V' },
		{ "trap-demo", no_argument, 0, 'T' },
		{ "components", no_argument, 0, 'C' },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n': opt.netns = optarg; break;
		case 'p': opt.pin_root = optarg; break;
		case 'r': opt.repeat = strtoul(optarg, NULL, 0); break;
		case 'R': opt.runs = atoi(optarg); break;
		case 'b': opt.batch = atoi(optarg); break;
		case 'c': opt.cpu = atoi(optarg); break;
		case 'o': opt.only = optarg; break;
		case 'V': opt.no_variants = true; break;
		case 'T': opt.trap_demo = true; break;
		case 'C': opt.components = true; break;
		case 'v': opt.verbose = true; break;
		default: usage(); return -1;
		}
	}
	if (opt.repeat < 1 || opt.runs < 1 || opt.runs > MAX_RUNS || opt.batch < 1 ||
	    opt.batch > 256) {
		usage();
		return -1;
	}
	return 0;
}

static int enter_netns(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		die_msg("netns %s: %s", name, strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET)) {
		die_msg("setns %s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int pin_cpu(void)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (opt.cpu < 0)
		opt.cpu = n > 1 ? n - 1 : 0;
	CPU_ZERO(&set);
	CPU_SET(opt.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		die_msg("pin to CPU %d: %s", opt.cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static bool selected(const struct path *p)
{
	return p->kind == K_FLOOR || !opt.only || strstr(p->name, opt.only);
}

static int run(void)
{
	unsigned long warm = opt.repeat / 10 ? opt.repeat / 10 : 1;
	double ns, wall;

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

	if (opt.netns && enter_netns(opt.netns))
		return -1;
	if (pin_cpu())
		return -1;
	G.ifx_nic = ifindex_of(if_nic);
	G.ifx_nic_peer = ifindex_of(if_nic_peer);
	G.ifx_pod = ifindex_of(if_pod);
	G.ifx_pod_peer = ifindex_of(if_pod_peer);
	if (!G.ifx_nic || !G.ifx_nic_peer || !G.ifx_pod || !G.ifx_pod_peer)
		return -1;
	if (get_mac(if_nic, mac_nic))
		return -1;
	G.ncpu = libbpf_num_possible_cpus();
	if (G.ncpu <= 0)
		return -1;

	if (load_programs() || program_maps() || attach_sinks())
		return -1;
	build_paths();
	print_env();

	/* 1. check every path once, in normal mode */
	for (int i = 0; i < np; i++) {
		if (!selected(&P[i])) {
			P[i].skipped = true;
			continue;
		}
		if (check_path(&P[i]))
			return -1;
	}
	printf("          checked: every path's verdict, stats reason and output frame\n");

	/* 2. trap demo: live mode without restoring the frame */
	for (int i = 0; i < np; i++)
		if (P[i].kind == K_TRAP) {
			fprintf(stderr, "trap demo (live frames, no restore):\n");
			if (timed_run(&P[i], opt.repeat, &ns, &wall, false))
				return -1;
			P[i].skipped = true;
		}

	/* 3. warm-up, then interleaved timed rounds */
	for (int i = 0; i < np; i++)
		if (!P[i].skipped && P[i].kind != K_TRAP &&
		    timed_run(&P[i], warm, &ns, &wall, true))
			return -1;
	for (int r = 0; r < opt.runs && !stop; r++)
		for (int i = 0; i < np && !stop; i++) {
			struct path *p = &P[i];

			if (p->skipped || p->kind == K_TRAP)
				continue;
			if (timed_run(p, opt.repeat, &p->ns[p->n], &p->wall[p->n], true))
				return -1;
			if (opt.verbose)
				printf("  run %d  %-34s %6.0f ns/pkt (wall %6.1f)\n", r + 1, p->name,
				       p->ns[p->n], p->wall[p->n]);
			p->n++;
		}
	if (stop)
		return -1;
	print_table();
	if (opt.components && run_components())
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_args(argc, argv))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	libbpf_set_print(libbpf_print);
	if (opt.pin_root)
		snprintf(G.pin_root, sizeof(G.pin_root), "%s", opt.pin_root);
	else
		snprintf(G.pin_root, sizeof(G.pin_root), "/sys/fs/bpf/xgate/bench-%d", getpid());

	rc = run();
	cleanup();
	if (stop)
		fprintf(stderr, "xdp_cost: interrupted\n");
	return rc ? 1 : 0;
}
