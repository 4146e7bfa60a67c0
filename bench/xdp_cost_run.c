// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_cost: counters, the sink's configuration, one check run (normal mode,
 * repeat 1), one timed run (live frames), and the report.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp_cost.h"
#include "floor.skel.h"

static const char *reason_names[] = {
	"NONE",
#define XG_NAME_ENTRY(name, desc) #name,
	XG_REASONS(XG_NAME_ENTRY)
#undef XG_NAME_ENTRY
};

const char *reason_name(int r)
{
	if (r >= 0 && r < XG_R__COUNT)
		return reason_names[r];
	return "?";
}

const char *verdict_name(uint32_t v)
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

int read_slot(uint32_t slot, uint64_t pk[XG_R_MAX])
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

/*
 * What the sink writes back. A path that moved the frame's start by `shift`
 * bytes hands the sink a frame starting that much later (> 0) or earlier
 * (< 0) than the page's frame: the template is taken from the input frame
 * at shift (> 0) or written at -shift into the received one (< 0), so the
 * bytes land where they were.
 */
static int set_sink(const struct path *p)
{
	struct bench_sink_cfg cfg = {};
	size_t src = p->shift > 0 ? (size_t)p->shift : 0;
	size_t n = p->f.len > src ? p->f.len - src : 0;
	uint32_t zero = 0;

	if (p->restore && n >= BENCH_RESTORE_LEN)
		cfg.restore = 1;
	cfg.off = p->shift < 0 ? -p->shift : 0;
	memcpy(cfg.tmpl, p->f.b + src, n < BENCH_RESTORE_LEN ? n : BENCH_RESTORE_LEN);
	if (cfg.off > BENCH_OFF_MASK) {
		die_msg("%s: sink offsets out of range", p->name);
		return -1;
	}
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
void print_deltas(const uint64_t *a, const uint64_t *b)
{
	for (int r = 0; r < XG_R_MAX; r++)
		if (b[r] != a[r])
			fprintf(stderr, "    %-22s +%llu\n", reason_name(r),
				(unsigned long long)(b[r] - a[r]));
}

/* ---- one check run (repeat=1, normal mode) ----------------------------------- */

int check_path(struct path *p)
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

	if (p->prepare && p->prepare(p))
		return -1;
	md.data_end = p->f.len;
	o.data_size_in = p->f.len;
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
	if (p->check_out && p->check_out(p, out, o.data_size_out))
		return -1;
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
int timed_run(struct path *p, unsigned long repeat, double *ns, double *wall, bool strict)
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

	if (p->prepare && p->prepare(p))
		return -1;
	md.data_end = p->f.len;
	o.data_size_in = p->f.len;
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
	if (strict && p->after && p->after(p, repeat))
		return -1;
	*ns = o.duration;
	*wall = (t1 - t0) / repeat;
	return 0;
}

/* Normal (non-live) mode with repeat: only for programs whose output, fed
 * back as input, takes the same path (checked through the stats). */
int normal_run(struct path *p, unsigned long repeat, double *ns)
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

/* ---- report ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double best_of(const double *v, int n)
{
	double b = v[0];

	for (int i = 1; i < n; i++)
		if (v[i] < b)
			b = v[i];
	return b;
}

double median_of(const double *v, int n)
{
	double s[MAX_RUNS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

const struct path *find_floor(enum prog_id prog)
{
	for (int i = 0; i < np; i++)
		if (P[i].kind == K_FLOOR && P[i].prog == prog && P[i].n)
			return &P[i];
	return NULL;
}

/* The floor of a path's verdict: devmap REDIRECT, or XDP_TX (the gateway's
 * rows: an instance of the REDIRECT floor timed right before them). */
const struct path *floor_of(const struct path *p)
{
	const struct path *redir = find_floor(PR_REDIRECT);

	if (p->floor && p->floor->n)
		return p->floor;
	return p->verdict == XDP_REDIRECT && redir ? redir : find_floor(PR_TX);
}

/* Median over the rounds of (p - q), both timed in the same round. On a VM
 * both drift together; pairing cancels most of it, where the best of each
 * (a minimum of a noisy series) does not. */
double paired_median(const struct path *p, const struct path *q)
{
	double d[MAX_RUNS];
	int n = p->n < q->n ? p->n : q->n;

	for (int r = 0; r < n; r++)
		d[r] = p->ns[r] - q->ns[r];
	return median_of(d, n);
}

#define NAME_W 46

void print_table(void)
{
	const struct path *drop = find_floor(PR_DROP), *tx = find_floor(PR_TX);
	double fdrop = drop ? best_of(drop->ns, drop->n) : 0;
	double ftx = tx ? best_of(tx->ns, tx->n) : 0;

	printf("\n%-*s %5s %-8s %8s %7s %9s %9s %8s %9s %-5s %7s %8s\n", NAME_W, "path", "bytes",
	       "verdict", "ns/pkt", "median", "-DROP fl", "-TX fl", "-fl med", "target", "ok?",
	       "Mpps", "wall ns");
	printf("%.*s\n", NAME_W + 101,
	       "--------------------------------------------------------------------------"
	       "--------------------------------------------------------------------------");
	for (int i = 0; i < np; i++) {
		const struct path *p = &P[i];
		const struct path *fl = floor_of(p);
		double b, m, ndrop, ntx, nmed = 0;
		char target[16] = "-", ok[8] = "-", sdrop[16] = "-", stx[16] = "-", smed[16] = "-";

		if (p->kind == K_TRAP)
			continue;
		if (i > 0 && P[i - 1].kind != p->kind)
			printf("\n");
		if (!p->n) {
			printf("%-*s %5zu %-8s %8s\n", NAME_W, p->name, p->f.len,
			       verdict_name(p->verdict), p->skipped ? "skipped" : "n/a");
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
			const struct path *t = p->target_of ? p->target_of : p;
			const struct path *tfl = floor_of(t);

			snprintf(target, sizeof(target), "<=%.0f%s", p->target,
				 p->target_of ? "+MAC" : "");
			if (t->n && tfl)
				snprintf(ok, sizeof(ok), "%s",
					 paired_median(t, tfl) <= p->target ? "yes" : "NO");
		}
		printf("%-*s %5zu %-8s %8.0f %7.0f %9s %9s %8s %9s %-5s %7.2f %8.1f\n", NAME_W,
		       p->name, p->f.len, verdict_name(p->verdict), b, m, sdrop, stx, smed, target,
		       ok, 1000.0 / b, best_of(p->wall, p->n));
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
	       "  <=60+MAC: met if the path's [no tag] twin is <= 60 (the MAC is what the tag "
	       "adds).\n"
	       "wall ns: wall-clock time of the whole syscall / repeat (includes setup).\n"
	       "[no caches]: same program built without its per-CPU caches (bench/nocache.h):\n"
	       "  xg_ifaces/xg_endpoint hash, xg_subnet LPM and bpf_fib_lookup on every packet.\n"
	       "gw ... [no tag] / [no replay]: bpf/gateway.bpf.c built with the tunnel tag / the "
	       "replay window\n"
	       "  compiled out; [bench ctr]: its replay window fed a counter of "
	       "the bench, +1 per\n"
	       "  packet, instead of the frame's (bench/gwvariant.h). Bytes: the input frame; "
	       "the inner frame\n"
	       "  is 60 B (64 B with FCS) or 1400 B.\n");
}
