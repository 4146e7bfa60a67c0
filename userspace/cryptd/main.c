// SPDX-License-Identifier: BSD-2-Clause
/*
 * xgate-cryptd -n INSTANCE -c CRYPTDEV [-s SECONDS] [-b USECS] [-C CPU]
 * [-R PRIO | -P NICE]: the crypto workers of
 * the gateway whose program runs in xgate instance INSTANCE. Finds the
 * public NIC (xg_gw) and the internal one (xg_host) in the instance's maps,
 * opens an AF_XDP socket per RX queue of each, registers them in xg_gw_xsk
 * and the crypt interface in xg_gw (CRYPTDEV is the workers' end of a veth
 * pair whose other end runs the gateway program), then opens and seals
 * until SIGTERM/SIGINT. Counters are logged every SECONDS (default 60) when
 * they moved, and at exit. -b: preferred busy polling of the NICs' queues
 * (their NAPI runs in the workers' system calls, when they ask for frames);
 * -C: the CPU the workers run on; -R: their SCHED_FIFO priority (default
 * 1; 0: the normal scheduler, where -P gives their nice value).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <net/if.h>

#include "cryptd.h"
#include "dargs.h"
#include "dlog.h"
#include "xg.h"

struct cryptd {
	const char *instance;
	char root[256];
	int gw, xskmap, host, sfd;
	struct keys keys;
	struct xsock pub[XG_GW_MAX_QUEUES], intl[XG_GW_MAX_QUEUES], crypt;
	unsigned n_pub, n_intl;
	bool one_nic;		/* the public NIC is the internal one: its sockets seal too */
	uint32_t crypt_ifindex; /* the gateway's end, registered in xg_gw */
	struct cryptd_stats st, logged;
	uint64_t tx_waits; /* poll()s that slept for a busy device (TX pending, RX empty) */
	unsigned busy_us;  /* preferred busy polling: SO_BUSY_POLL; 0: off */
	char flush_ns[16]; /* and the NICs' gro_flush_timeout meanwhile */
	/* the NICs' NAPI knobs as they were before busy polling set them */
	struct knob {
		char dev[IF_NAMESIZE];
		const char *name;
		char old[32];
		bool set;
	} knobs[4];
};

/* With busy polling, a NAPI that the workers' calls did not run is left to
 * a timer (gro_flush_timeout, --busy-timeout) instead of the softirq, up to
 * this many times in a row (napi_defer_hard_irqs): the pairing the kernel
 * documents (Documentation/networking/napi.rst, "Preferred busy polling").
 * While the timer runs, frames wait in the device's queue and, when it is
 * full, are dropped there: before any work was spent on them. */
#define BUSY_DEFER	"2"
#define BUSY_TIMEOUT_US "200"

/* The workers are the later stage of a pipeline whose earlier stage (the
 * NIC's receive work, the gateway program, the copy into their rings) is
 * cheaper per frame: at equal shares of a core the earlier stage fills the
 * rings faster than the workers empty them, and every frame dropped at a
 * full ring has cost that stage's work for nothing (receive livelock). A
 * real-time priority runs the workers whenever they have frames, so the
 * excess stays in the NIC's queue, where it costs least. They sleep when
 * their rings are empty, so they cannot hold the core without frames to
 * seal; the kernel's RT throttling bounds them even then. Priority 1: any
 * real-time thread an operator configured still comes first. */
#define RT_PRIO_DEFAULT "1"

__attribute__((format(printf, 2, 3))) static void cd_log(struct cryptd *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dlog_v("xgate-cryptd", c->instance, 1024, fmt, ap);
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: xgate-cryptd -n|--instance INSTANCE -c|--crypt DEV [-s|--stats SECONDS]\n"
	       "                    [-b|--busy-poll USECS] [-t|--busy-timeout USECS]\n"
	       "                    [-C|--cpu CPU] [-R|--rt-priority PRIO | -P|--nice NICE]\n"
	       "  the crypto workers of the gateway program in xgate instance INSTANCE;\n"
	       "  DEV: the workers' end of the crypt veth (the other end runs the program)\n"
	       "  --busy-poll USECS: preferred busy polling (0-1000 us, default 0: off): the\n"
	       "    NICs' receive work runs when the workers ask for frames, not in softirqs\n"
	       "    competing with them; sets the NICs' napi_defer_hard_irqs (" BUSY_DEFER ") and\n"
	       "    gro_flush_timeout (--busy-timeout) until exit\n"
	       "  --busy-timeout USECS: with --busy-poll, how long the NICs' receive work\n"
	       "    waits for the workers before a softirq does it (1-100000 us, "
	       "default " BUSY_TIMEOUT_US ")\n"
	       "  --cpu CPU: run on this CPU only (default: any)\n"
	       "  --rt-priority PRIO: the workers' SCHED_FIFO priority, 1-99, so that they\n"
	       "    run before the receive work that feeds them (default " RT_PRIO_DEFAULT
	       "; a system\n"
	       "    that refuses it leaves them on the normal scheduler, logged); 0: the\n"
	       "    normal scheduler\n"
	       "  --nice NICE: on the normal scheduler (implies --rt-priority 0), the workers'\n"
	       "    nice value, -20 to 19 (default: inherited)\n");
}

static int set_crypt(struct cryptd *c, uint32_t ifindex)
{
	struct xg_gw_conf g;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(c->gw, &zero, &g))
		return -1;
	g.crypt_ifindex = ifindex;
	return bpf_map_update_elem(c->gw, &zero, &g, BPF_ANY);
}

static int open_sockets(struct cryptd *c, const char *pub, const char *intl, const char *crypt)
{
	char err[256];
	__u32 idx;
	int fd;

	c->n_pub = nic_rx_queues(pub);
	/* a queue takes one socket of its own UMEM: on one NIC, the public
	 * side's sockets are in both halves of xg_gw_xsk */
	c->n_intl = c->one_nic ? 0 : nic_rx_queues(intl);
	for (unsigned q = 0; q < c->n_pub; q++)
		if (xsock_open(&c->pub[q], pub, q, true, err, sizeof(err)))
			goto fail;
	for (unsigned q = 0; q < c->n_intl; q++)
		if (xsock_open(&c->intl[q], intl, q, true, err, sizeof(err)))
			goto fail;
	if (xsock_open(&c->crypt, crypt, 0, false, err, sizeof(err)))
		goto fail;
	for (unsigned q = 0; q < c->n_pub; q++) {
		fd = xsock_fd(&c->pub[q]);
		idx = q;
		if (bpf_map_update_elem(c->xskmap, &idx, &fd, BPF_ANY))
			goto map_fail;
		idx = XG_GW_XSK_SEAL + q;
		if (c->one_nic && bpf_map_update_elem(c->xskmap, &idx, &fd, BPF_ANY))
			goto map_fail;
	}
	for (unsigned q = 0; q < c->n_intl; q++) {
		fd = xsock_fd(&c->intl[q]);
		idx = XG_GW_XSK_SEAL + q;
		if (bpf_map_update_elem(c->xskmap, &idx, &fd, BPF_ANY))
			goto map_fail;
	}
	if (c->one_nic)
		cd_log(c,
		       "workers on %s (%u queues, %s), the public and the internal NIC, crypt "
		       "interface %s",
		       pub, c->n_pub, c->pub[0].zerocopy ? "zero-copy" : "copy mode", crypt);
	else
		cd_log(c, "workers on %s (%u queues, %s) and %s (%u queues), crypt interface %s",
		       pub, c->n_pub, c->pub[0].zerocopy ? "zero-copy" : "copy mode", intl,
		       c->n_intl, crypt);
	return 0;
map_fail:
	snprintf(err, sizeof(err), "xg_gw_xsk[%u]: %s", idx, strerror(errno));
fail:
	cd_log(c, "%s", err);
	return -1;
}

/* Preferred busy polling on every receiving socket, and the NAPI knobs
 * of their NICs that make it preferred (saved, restored at exit). */
static int busy_on(struct cryptd *c, const char *pub, const char *intl)
{
	const char *devs[] = {pub, c->one_nic ? NULL : intl};
	const char *names[] = {"napi_defer_hard_irqs", "gro_flush_timeout"};
	const char *vals[] = {BUSY_DEFER, c->flush_ns};
	unsigned k = 0;
	char err[256];

	for (unsigned i = 0; i < c->n_pub + c->n_intl; i++)
		if (xsock_busy_poll(i < c->n_pub ? &c->pub[i] : &c->intl[i - c->n_pub], c->busy_us,
				    XS_BATCH, err, sizeof(err)))
			goto fail;
	for (unsigned d = 0; d < 2; d++)
		for (unsigned j = 0; devs[d] && j < 2; j++, k++) {
			struct knob *kn = &c->knobs[k];

			snprintf(kn->dev, sizeof(kn->dev), "%s", devs[d]);
			kn->name = names[j];
			if (nic_knob(kn->dev, kn->name, vals[j], kn->old, sizeof(kn->old), err,
				     sizeof(err)))
				goto fail;
			kn->set = true;
		}
	cd_log(c,
	       "preferred busy polling: %u us, budget %u, napi_defer_hard_irqs %s, "
	       "gro_flush_timeout %s ns on %s%s%s",
	       c->busy_us, XS_BATCH, BUSY_DEFER, c->flush_ns, pub, c->one_nic ? "" : " and ",
	       c->one_nic ? "" : intl);
	return 0;
fail:
	cd_log(c, "--busy-poll: %s", err);
	return -1;
}

static void busy_off(struct cryptd *c)
{
	char err[256], was[32];

	for (size_t k = 0; k < sizeof(c->knobs) / sizeof(c->knobs[0]); k++)
		if (c->knobs[k].set && nic_knob(c->knobs[k].dev, c->knobs[k].name, c->knobs[k].old,
						was, sizeof(was), err, sizeof(err)))
			cd_log(c, "restoring %s: %s", c->knobs[k].name, err);
}

/* Frames the kernel could not give the workers (an RX ring full, no fill
 * frame): lost before any counter of ours, so asked for. */
static uint64_t rx_lost(struct cryptd *c)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < c->n_pub + c->n_intl; i++) {
		struct xsock *s = i < c->n_pub ? &c->pub[i] : &c->intl[i - c->n_pub];
		struct xdp_statistics x = {0};
		socklen_t len = sizeof(x);

		if (s->xsk && !getsockopt(xsock_fd(s), SOL_XDP, XDP_STATISTICS, &x, &len))
			n += x.rx_dropped + x.rx_ring_full + x.rx_fill_ring_empty_descs;
	}
	return n;
}

static void log_stats(struct cryptd *c)
{
	char drops[512] = "";
	size_t o = 0;

	c->st.rx_lost = rx_lost(c);
	if (!memcmp(&c->st, &c->logged, sizeof(c->st)))
		return;
	for (int r = 1; r < XG_R__COUNT; r++)
		if (c->st.drops[r] && o < sizeof(drops))
			o += (size_t)snprintf(drops + o, sizeof(drops) - o, " %s=%llu",
					      xg_reason_name((unsigned)r),
					      (unsigned long long)c->st.drops[r]);
	cd_log(c,
	       "opened %llu, sealed %llu, not sent %llu, lost in the rings %llu, kicks refused "
	       "%llu, waits for a busy device %llu%s%s",
	       (unsigned long long)c->st.opened, (unsigned long long)c->st.sealed,
	       (unsigned long long)(c->crypt.tx_full + c->pub[0].tx_full),
	       (unsigned long long)c->st.rx_lost,
	       (unsigned long long)(c->crypt.tx_busy + c->pub[0].tx_busy),
	       (unsigned long long)c->tx_waits, drops[0] ? ";" : "", drops);
	c->logged = c->st;
}

/* Frames already waiting in an RX ring: the next pass takes them without
 * asking poll() (a system call, and a sleep and a wake-up when the ring
 * was empty); under load that is most passes. */
static bool rx_ready(const struct cryptd *c)
{
	for (unsigned q = 0; q < c->n_pub; q++)
		if (xsock_rx_ready(&c->pub[q]))
			return true;
	for (unsigned q = 0; q < c->n_intl; q++)
		if (xsock_rx_ready(&c->intl[q]))
			return true;
	return false;
}

static int run(struct cryptd *c, int sfd, unsigned stats_s)
{
	struct pollfd pf[2 * XG_GW_MAX_QUEUES + 1];
	unsigned n = 0, skipped = 0;
	uint64_t next_log = dlog_now_ms() + (uint64_t)stats_s * 1000;

	for (unsigned q = 0; q < c->n_pub; q++)
		pf[n++] = (struct pollfd){.fd = xsock_fd(&c->pub[q]), .events = POLLIN};
	for (unsigned q = 0; q < c->n_intl; q++)
		pf[n++] = (struct pollfd){.fd = xsock_fd(&c->intl[q]), .events = POLLIN};
	pf[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
	for (;;) {
		uint64_t now;
		bool pending = xsock_tx_pending(&c->crypt);

		/* busy polling: the NICs' receive work runs here, in our time */
		for (unsigned q = 0; c->busy_us && q < c->n_pub; q++)
			xsock_rx_kick(&c->pub[q]);
		for (unsigned q = 0; c->busy_us && q < c->n_intl; q++)
			xsock_rx_kick(&c->intl[q]);

		for (unsigned q = 0; q < c->n_pub; q++)
			pending |= xsock_tx_pending(&c->pub[q]);
		if (rx_ready(c) && ++skipped % 64) {
			/* every socket is looked at: an empty ring costs a read */
			for (unsigned i = 0; i < n - 1; i++)
				pf[i].revents = POLLIN;
			pf[n - 1].revents = 0;
		} else {
			int wait = rx_ready(c) ? 0 : pending ? 1 : 1000;
			int rc = poll(pf, n, wait);

			/* (every 64th busy pass polls too: a signal is seen) */
			if (rc < 0 && errno != EINTR)
				return -1;
			/* a whole millisecond asleep with frames waiting to leave */
			if (rc == 0 && wait == 1)
				c->tx_waits++;
		}
		/* frames a busy device left in a TX ring: kicked again soon */
		if (pending) {
			xsock_flush(&c->crypt);
			for (unsigned q = 0; q < c->n_pub; q++)
				xsock_flush(&c->pub[q]);
		}
		if (pf[n - 1].revents)
			return 0; /* SIGTERM or SIGINT */
		now = dlog_now_ms();
		keys_refresh(&c->keys, now);
		for (unsigned q = 0; q < c->n_pub; q++)
			if (pf[q].revents & POLLIN)
				work_batch(&c->keys, &c->pub[q], &c->crypt,
					   c->one_nic ? WORK_EITHER : WORK_OPEN, &c->st);
		for (unsigned q = 0; q < c->n_intl; q++)
			if (pf[c->n_pub + q].revents & POLLIN)
				work_batch(&c->keys, &c->intl[q], &c->pub[q % c->n_pub], false,
					   &c->st);
		if (stats_s && now >= next_log) {
			log_stats(c);
			next_log = now + (uint64_t)stats_s * 1000;
		}
	}
}

/* Finds the NICs, opens the sockets, registers and serves until a signal:
 * the exit code. */
static int serve(struct cryptd *c, const char *crypt, unsigned stats_s)
{
	char pub[IF_NAMESIZE] = "", intl[IF_NAMESIZE] = "", err[512];
	struct xg_gw_conf g;
	struct xg_host h;
	__u32 zero = 0;
	sigset_t ss;
	int rc = 1, fd;

	if (keys_open(&c->keys, c->root, err, sizeof(err))) {
		cd_log(c, "%s", err);
		return 1;
	}
	snprintf(err, sizeof(err), "%s/%s", c->root, XG_MAP_GW);
	c->gw = bpf_obj_get(err);
	snprintf(err, sizeof(err), "%s/%s", c->root, XG_MAP_GW_XSK);
	c->xskmap = bpf_obj_get(err);
	snprintf(err, sizeof(err), "%s/%s", c->root, XG_MAP_HOST);
	fd = c->host = bpf_obj_get(err);
	if (c->gw < 0 || c->xskmap < 0 || fd < 0 || bpf_map_lookup_elem(c->gw, &zero, &g) ||
	    bpf_map_lookup_elem(fd, &zero, &h)) {
		cd_log(c, "the gateway program's maps are not in %s", c->root);
		return 1;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if ((c->sfd = signalfd(-1, &ss, SFD_CLOEXEC)) < 0)
		return 1;
	/* gatewayd names the public NIC when it starts: either may come first */
	for (int i = 0; !g.pub_ifindex || !h.nic_ifindex; i++) {
		struct pollfd w = {.fd = c->sfd, .events = POLLIN};

		if (i == 0)
			cd_log(c, "waiting for gatewayd to name the public NIC (xg_gw) and for the "
				  "host address (xg_host)");
		if (poll(&w, 1, 100) != 0)
			return 0;
		if (bpf_map_lookup_elem(c->gw, &zero, &g) || bpf_map_lookup_elem(fd, &zero, &h))
			return 1;
	}
	if (!if_indextoname(g.pub_ifindex, pub) || !if_indextoname(h.nic_ifindex, intl)) {
		cd_log(c, "the public NIC (%u) or the internal one (%u) is gone", g.pub_ifindex,
		       h.nic_ifindex);
		return 1;
	}
	/* One device: both ways arrive on one queue's socket, told apart by
	 * which side our public address is on (work.c) */
	c->one_nic = g.pub_ifindex == h.nic_ifindex;
	c->keys.self_ip_be = g.pub_ip_be;
	c->crypt_ifindex = nic_veth_peer(crypt);
	if (!c->crypt_ifindex) {
		cd_log(c, "--crypt %s: not one end of a veth pair", crypt);
		return 2;
	}
	if (open_sockets(c, pub, intl, crypt) || (c->busy_us && busy_on(c, pub, intl)) ||
	    set_crypt(c, c->crypt_ifindex))
		return 1;
	rc = run(c, c->sfd, stats_s) ? 1 : 0;
	/* gone: new encrypt sessions are refused until workers are back */
	if (!bpf_map_lookup_elem(c->gw, &zero, &g) && g.crypt_ifindex == c->crypt_ifindex)
		set_crypt(c, 0);
	return rc;
}

/* The scheduling policy asked for, or by default (rt NULL) the one the
 * system allows: 0, or the exit code. */
static int set_rt(struct cryptd *c, const char *rt, long prio)
{
	struct sched_param sp = {.sched_priority = (int)prio};

	/* not inherited by what the workers fork (the busy-polling knobs'
	 * helper) */
	if (!prio || !sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		return 0;
	if (rt) {
		fprintf(stderr, "xgate-cryptd: --rt-priority %s: %s\n", rt, strerror(errno));
		return 1;
	}
	cd_log(c,
	       "SCHED_FIFO %ld refused (%s): the workers stay on the normal scheduler, where a "
	       "flood can starve them (--rt-priority 0 chooses that without this line)",
	       prio, strerror(errno));
	return 0;
}

/* A number option in lo..hi, or a message quoting it and usage. */
static int num_arg(const char *opt, const char *s, long lo, long hi, const char *what, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (!*s || *end || errno || *out < lo || *out > hi) {
		fprintf(stderr, "xgate-cryptd: %s '%s': expected %s from %ld to %ld\n", opt, s,
			what, lo, hi);
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *crypt = NULL, *stats = "60", *instance = NULL, *busy = "0", *cpu = NULL,
		   *nice = NULL, *busy_to = BUSY_TIMEOUT_US, *rt = NULL;
	/* clang-format off */
	const struct darg opts[] = {
	    {"instance", 'n', &instance},
	    {"crypt", 'c', &crypt},
	    {"stats", 's', &stats},
	    {"busy-poll", 'b', &busy},
	    {"busy-timeout", 't', &busy_to},
	    {"cpu", 'C', &cpu},
	    {"nice", 'P', &nice},
	    {"rt-priority", 'R', &rt},
	    {0},
	};
	/* clang-format on */
	long st, busy_us, busy_to_us, cpu_n = -1, nice_n = 0, rt_n = 0;
	const char *rt_s;
	struct cryptd *c;
	int rc;

	if ((rc = dargs_parse(argc, argv, opts, usage)) >= 0)
		return rc;
	/* a nice value is the normal scheduler's */
	rt_s = rt ? rt : nice ? "0" : RT_PRIO_DEFAULT;
	if (!crypt) {
		fprintf(stderr, "xgate-cryptd: --crypt DEV is required\n");
		usage(stderr);
		return 2;
	}
	if (num_arg("--stats", stats, 0, 86400, "seconds", &st) ||
	    num_arg("--busy-poll", busy, 0, 1000, "microseconds", &busy_us) ||
	    num_arg("--busy-timeout", busy_to, 1, 100000, "microseconds", &busy_to_us) ||
	    (cpu && num_arg("--cpu", cpu, 0, CPU_SETSIZE - 1, "a CPU number", &cpu_n)) ||
	    (nice && num_arg("--nice", nice, -20, 19, "a nice value", &nice_n)) ||
	    num_arg("--rt-priority", rt_s, 0, 99, "a priority", &rt_n))
		return 2;
	if (nice && rt_n) {
		fprintf(stderr,
			"xgate-cryptd: --nice %s with --rt-priority %s: a nice value is for the "
			"normal scheduler (--rt-priority 0)\n",
			nice, rt);
		return 2;
	}
	if (cpu_n >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cpu_n, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "xgate-cryptd: --cpu %ld: %s\n", cpu_n, strerror(errno));
			return 1;
		}
	}
	if (nice && setpriority(PRIO_PROCESS, 0, (int)nice_n)) {
		fprintf(stderr, "xgate-cryptd: --nice %ld: %s\n", nice_n, strerror(errno));
		return 1;
	}
	if (!(c = calloc(1, sizeof(*c))))
		return 1;
	c->instance = instance;
	if ((rc = set_rt(c, rt, rt_n))) {
		free(c);
		return rc;
	}
	c->busy_us = (unsigned)busy_us;
	snprintf(c->flush_ns, sizeof(c->flush_ns), "%ld", busy_to_us * 1000);
	c->gw = c->xskmap = c->host = c->sfd = -1;
	c->keys.paddr = c->keys.peers = c->keys.gen = -1;
	if (xg_instance_root(instance, c->root, sizeof(c->root))) {
		fprintf(stderr, "xgate-cryptd: instance '%s' is not a valid instance name\n",
			instance);
		rc = 2;
	} else if (xgt_init()) {
		rc = 1;
	} else {
		rc = serve(c, crypt, (unsigned)st);
	}
	log_stats(c);
	busy_off(c);
	for (unsigned q = 0; q < c->n_pub; q++)
		xsock_close(&c->pub[q]);
	for (unsigned q = 0; q < c->n_intl; q++)
		xsock_close(&c->intl[q]);
	xsock_close(&c->crypt);
	keys_close(&c->keys);
	{
		int fds[] = {c->gw, c->xskmap, c->host, c->sfd};

		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	free(c);
	return rc;
}
