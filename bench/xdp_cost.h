/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/xdp_cost: what its files share. Method in xdp_cost.c and in
 * docs/bench.md "xdp_cost".
 *   xdp_cost.c        options, the run loop (check, warm-up, timed rounds)
 *   xdp_cost_run.c    counters, one check run, one timed run, the report
 *   xdp_cost_setup.c  netns devices, programs, map state, sinks, cleanup
 *   xdp_cost_paths.c  frames, the path list, the components probes
 *   xdp_cost_gw.c     the gateway's map state, tunnel frames, paths, summary
 */
#ifndef XG_BENCH_XDP_COST_H
#define XG_BENCH_XDP_COST_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgate_abi.h"
#include "bench_abi.h"
#include "pkt.h" /* tests/fixtures: the frame builder */

#define MAX_RUNS 64
#define MAX_FRAME 2048

/* ---- topology (must match run_xdp_cost.sh) ------------------------------ */

#define VNI 100
#define SLOT_NIC 1
#define SLOT_POD 2
#define SLOT_PUB 3 /* bg0, the gateway's public NIC */

extern const char *if_nic, *if_nic_peer, *if_pod, *if_pod_peer, *if_pub, *if_pub_peer;

#define UL(x) "10.98.0." #x /* underlay address of host x */
extern uint32_t ip_self, ip_sender, ip_ephost, ip_bouncer, ip_divider, ip_gateway;
extern uint32_t ov_sender, ov_ep, ov_miss, ov_s2, ov_remote, ov_pod, ov_gw;

extern const uint8_t mac_sender_pod[6], mac_ep[6], mac_pod[6], mac_gw[6],
	mac_remote_host[6], mac_bcast[6];
extern uint8_t mac_nic[6], mac_pub[6];

/* ---- options ------------------------------------------------------------- */

struct options {
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
};
extern struct options opt;
extern volatile sig_atomic_t stop;

void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- frames ---------------------------------------------------------------- */

struct frame {
	uint8_t b[MAX_FRAME];
	size_t len;
};

size_t inner_udp(uint8_t *p, const uint8_t *smac, const uint8_t *dmac, uint32_t src,
		 uint32_t dst, size_t frame_len);
void geneve_frame(struct frame *f, uint32_t osrc, uint32_t odst, uint32_t opt_host,
		  uint8_t opt_flags, const uint8_t *inner, size_t inner_len);

/* ---- programs and paths ---------------------------------------------------- */

enum prog_id {
	PR_TRANSIT,
	PR_AGENT,
	PR_TRANSIT_NOCACHE,
	PR_AGENT_NOCACHE,
	PR_GATEWAY,
	PR_GW_SEQ,
	PR_GW_SEQ_NOTAG,
	PR_GW_NOREPLAY,
	PR_INGRESS,
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

enum kind { K_FLOOR, K_PATH, K_VARIANT, K_GW, K_TRAP };

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
	int shift;           /* bytes the program moves the frame's start by:
			      * < 0 it grew in front, > 0 it cut (restore there) */
	const struct path *floor; /* the floor it is paired with, if not the
				   * first one of its verdict */
	double target;       /* ns net of the floor, 0 = none */
	const struct path *target_of; /* the target applies to this path's net
				       * (gateway: "60 + MAC" = its [no tag] twin) */
	uint32_t fib_flags;  /* PR_FIB only: bpf_fib_lookup flags */
	/* before each check and timed run (gateway: where its window starts) */
	int (*prepare)(struct path *p);
	/* extra output check in the check run (gateway: the tunnel tag) */
	int (*check_out)(const struct path *p, const uint8_t *out, uint32_t len);
	/* after each timed run (gateway: the window moved by `repeat`) */
	int (*after)(struct path *p, unsigned long repeat);
	/* results */
	double ns[MAX_RUNS];
	double wall[MAX_RUNS];
	int n;
	bool skipped;
};

struct bpf_map;
struct transit_bpf;
struct agent_bpf;
struct transit_nocache_bpf;
struct agent_nocache_bpf;
struct gateway_bpf;
struct gateway_seq_bpf;
struct gateway_seq_notag_bpf;
struct gateway_noreplay_bpf;
struct ingress_bpf;
struct floor_bpf;

struct bench_state {
	struct transit_bpf *transit;
	struct agent_bpf *agent;
	struct transit_nocache_bpf *transit_nocache;
	struct agent_nocache_bpf *agent_nocache;
	struct gateway_bpf *gateway;
	struct gateway_seq_bpf *gw_seq;
	struct gateway_seq_notag_bpf *gw_seq_notag;
	struct gateway_noreplay_bpf *gw_noreplay;
	struct ingress_bpf *ingress;
	struct floor_bpf *floor;
	int prog_fd[PR__N];
	int stats_fd, sink_cfg_fd, sink_count_fd, gw_replay_fd;
	int ifx_nic, ifx_nic_peer, ifx_pod, ifx_pod_peer, ifx_pub, ifx_pub_peer;
	bool sink_on_nic, sink_on_pod, sink_on_pub;
	bool pin_created, xgate_dir_created;
	char pin_root[256];
	int ncpu;
};
extern struct bench_state G;

#define MAX_PATHS 40
extern struct path P[MAX_PATHS];
extern int np;

struct path *add_path(const char *name, enum kind kind, enum prog_id prog, int ingress,
		      uint32_t verdict, int reason);

/* xdp_cost_run.c */
const char *reason_name(int r);
const char *verdict_name(uint32_t v);
int read_slot(uint32_t slot, uint64_t pk[XG_R_MAX]);
void print_deltas(const uint64_t *a, const uint64_t *b);
int check_path(struct path *p);
int timed_run(struct path *p, unsigned long repeat, double *ns, double *wall, bool strict);
int normal_run(struct path *p, unsigned long repeat, double *ns);
double best_of(const double *v, int n);
double median_of(const double *v, int n);
double paired_median(const struct path *p, const struct path *q);
const struct path *find_floor(enum prog_id prog);
const struct path *floor_of(const struct path *p);
void print_table(void);

/* xdp_cost_setup.c */
int setup_devices(void);
int load_programs(void);
int program_maps(void);
int attach_sinks(void);
void cleanup(void);
int upd(struct bpf_map *m, const void *k, const void *v, const char *what);

/* xdp_cost_paths.c */
void set_addresses(void);
void build_paths(void);
int run_components(void);

/* xdp_cost_gw.c */
int gw_program_maps(void);
void gw_build_paths(void);
int gw_check_variants(void);
void gw_print_summary(void);

#endif
