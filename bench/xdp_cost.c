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
 *  - The cluster gateway's paths and variants: xdp_cost_gw.c.
 *
 * Expected environment (bench/run_xdp_cost.sh builds it): veth pairs
 * bx0/bx1 (underlay NIC, bx0 10.98.0.1/24 with permanent neighbours for
 * 10.98.0.2-6), bp0/bp1 (a pod veth, host side bp0) and bg0/bg1 (the
 * gateway's public NIC, bg0 10.97.0.1/24, permanent neighbour 10.97.0.2).
 *
 * This file: options, entering the netns, the run loop. The rest: xdp_cost.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "xdp_cost.h"

struct options opt = {
	.repeat = 1000000,
	.runs = 5,
	.batch = 64,
	.cpu = -1,
};

struct bench_state G = { .stats_fd = -1 };

volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

void die_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "xdp_cost: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
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

/* ---- options ---------------------------------------------------------------------- */

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

/* ---- where it runs ------------------------------------------------------------------ */

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

/* ---- the run ---------------------------------------------------------------------- */

static bool selected(const struct path *p)
{
	return p->kind == K_FLOOR || !opt.only || strstr(p->name, opt.only);
}

static int run(void)
{
	unsigned long warm = opt.repeat / 10 ? opt.repeat / 10 : 1;
	double ns, wall;

	set_addresses();
	if (opt.netns && enter_netns(opt.netns))
		return -1;
	if (pin_cpu())
		return -1;
	if (setup_devices())
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
	if (gw_check_variants())
		return -1;

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
				printf("  run %d  %-46s %6.0f ns/pkt (wall %6.1f)\n", r + 1, p->name,
				       p->ns[p->n], p->wall[p->n]);
			p->n++;
		}
	if (stop)
		return -1;
	print_table();
	gw_print_summary();
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
