// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_cost: the devices of the netns run_xdp_cost.sh built, the programs
 * (loaded with their maps pinned in a private root, so every xgate object
 * shares one set), the map state of a real host, the sinks, and cleanup.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp_cost.h"
#include "fs.h"
#include "xg.h"
#include "transit.skel.h"
#include "agent.skel.h"
#include "ingress.skel.h"
#include "gateway.skel.h"
#include "transit_nocache.skel.h"
#include "agent_nocache.skel.h"
#include "gateway_seq.skel.h"
#include "gateway_seq_notag.skel.h"
#include "gateway_noreplay.skel.h"
#include "floor.skel.h"

/* ---- devices ------------------------------------------------------------------- */

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

int setup_devices(void)
{
	G.ifx_nic = ifindex_of(if_nic);
	G.ifx_nic_peer = ifindex_of(if_nic_peer);
	G.ifx_pod = ifindex_of(if_pod);
	G.ifx_pod_peer = ifindex_of(if_pod_peer);
	G.ifx_pub = ifindex_of(if_pub);
	G.ifx_pub_peer = ifindex_of(if_pub_peer);
	if (!G.ifx_nic || !G.ifx_nic_peer || !G.ifx_pod || !G.ifx_pod_peer || !G.ifx_pub ||
	    !G.ifx_pub_peer)
		return -1;
	if (get_mac(if_nic, mac_nic) || get_mac(if_pub, mac_pub))
		return -1;
	return 0;
}

/* ---- pins ------------------------------------------------------------------------ */

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

void cleanup(void)
{
	if (G.sink_on_nic)
		bpf_xdp_detach(G.ifx_nic_peer, XDP_FLAGS_DRV_MODE, NULL);
	if (G.sink_on_pod)
		bpf_xdp_detach(G.ifx_pod_peer, XDP_FLAGS_DRV_MODE, NULL);
	if (G.sink_on_pub)
		bpf_xdp_detach(G.ifx_pub_peer, XDP_FLAGS_DRV_MODE, NULL);
	floor_bpf__destroy(G.floor);
	gateway_noreplay_bpf__destroy(G.gw_noreplay);
	gateway_seq_notag_bpf__destroy(G.gw_seq_notag);
	gateway_seq_bpf__destroy(G.gw_seq);
	gateway_bpf__destroy(G.gateway);
	agent_nocache_bpf__destroy(G.agent_nocache);
	transit_nocache_bpf__destroy(G.transit_nocache);
	ingress_bpf__destroy(G.ingress);
	agent_bpf__destroy(G.agent);
	transit_bpf__destroy(G.transit);
	remove_pins();
}

/* ---- programs ---------------------------------------------------------------------- */

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

/* Open, fix the devmap flags and load skeleton `name` with the shared pins;
 * on failure say which object. */
#define LOAD_SHARED(ptr, name)                                                          \
	do {                                                                            \
		(ptr) = name##_bpf__open_opts(&oo);                                     \
		if (!(ptr) || devmap_flags((ptr)->maps.xg_txports) ||                   \
		    name##_bpf__load(ptr)) {                                            \
			die_msg("loading " #name ".bpf.o failed");                      \
			return -1;                                                      \
		}                                                                       \
	} while (0)

int load_programs(void)
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
	CHECK(fs_mkdir_p(G.pin_root, 0700), G.pin_root);

	/* all xgate objects share the pinned maps of this private root */
	G.transit = transit_bpf__open_opts(&oo);
	if (!G.transit || transit_bpf__load(G.transit)) {
		die_msg("loading transit.bpf.o failed");
		return -1;
	}
	LOAD_SHARED(G.agent, agent);
	LOAD_SHARED(G.ingress, ingress);
	LOAD_SHARED(G.gateway, gateway);
	LOAD_SHARED(G.gw_seq, gateway_seq);
	LOAD_SHARED(G.gw_seq_notag, gateway_seq_notag);
	LOAD_SHARED(G.gw_noreplay, gateway_noreplay);
	if (!opt.no_variants) {
		LOAD_SHARED(G.transit_nocache, transit_nocache);
		LOAD_SHARED(G.agent_nocache, agent_nocache);
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
	G.prog_fd[PR_INGRESS] = bpf_program__fd(G.ingress->progs.xg_ingress);
	G.prog_fd[PR_GATEWAY] = bpf_program__fd(G.gateway->progs.xg_gateway);
	G.prog_fd[PR_GW_SEQ] = bpf_program__fd(G.gw_seq->progs.xg_gateway);
	G.prog_fd[PR_GW_SEQ_NOTAG] = bpf_program__fd(G.gw_seq_notag->progs.xg_gateway);
	G.prog_fd[PR_GW_NOREPLAY] = bpf_program__fd(G.gw_noreplay->progs.xg_gateway);
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
	G.gw_replay_fd = bpf_map__fd(G.gateway->maps.xg_gw_replay);
	G.sink_cfg_fd = bpf_map__fd(G.floor->maps.sink_cfg);
	G.sink_count_fd = bpf_map__fd(G.floor->maps.sink_count);
	return 0;
}

/* ---- map state ------------------------------------------------------------------ */

int upd(struct bpf_map *m, const void *k, const void *v, const char *what)
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

/* Every xgate object must use the same maps (pinned in our private root). */
static int maps_shared(void)
{
	uint32_t id = map_id(G.transit->maps.xg_stats);
	uint32_t rp = map_id(G.gateway->maps.xg_gw_replay);

	if (!id || !rp || map_id(G.agent->maps.xg_stats) != id ||
	    map_id(G.gateway->maps.xg_stats) != id || map_id(G.gw_seq->maps.xg_stats) != id ||
	    map_id(G.gw_seq_notag->maps.xg_stats) != id ||
	    map_id(G.gw_noreplay->maps.xg_stats) != id ||
	    map_id(G.gw_seq->maps.xg_gw_replay) != rp ||
	    map_id(G.gw_seq_notag->maps.xg_gw_replay) != rp ||
	    map_id(G.gw_noreplay->maps.xg_gw_replay) != rp ||
	    (G.transit_nocache && map_id(G.transit_nocache->maps.xg_stats) != id) ||
	    (G.agent_nocache && map_id(G.agent_nocache->maps.xg_stats) != id)) {
		die_msg("the xgate objects do not share their maps (pinning failed?)");
		return -1;
	}
	return 0;
}

/*
 * Session ingress: UDP 10.98.0.1:5201 -> pod 10.1.1.60:5201 (what the DNAT
 * path hits), UDP 10.98.0.1:30000 -> pod 10.1.1.60:40001 (whose reverse
 * entry the SNAT path hits; the encap paths' pod port, 40000, is in no
 * session), and UDP 10.98.0.1:5202 -> pod 10.1.1.60:5202 in the
 * dedicated-gateway form, the pod on host .3 (the DNAT + encap path).
 */
static int sessions(void)
{
	const uint16_t pub[3] = { 5201, 30000, 5202 }, pod[3] = { 5201, 40001, 5202 };
	const uint16_t flags[3] = { 0, 0, XG_SESS_FORM_GATEWAY };
	const uint32_t host[3] = { 0, 0, ip_ephost };

	for (int i = 0; i < 3; i++) {
		struct xg_sess_key k = { .ip_be = ip_self, .port_be = htons(pub[i]), .proto = 17 };
		struct xg_sess v = { .vni = VNI, .pod_ip_be = ov_pod, .pod_port_be = htons(pod[i]),
				     .flags = flags[i], .host_be = host[i] };
		struct xg_sess_rev_key rk = { .vni = VNI, .pod_ip_be = ov_pod,
					      .pod_port_be = htons(pod[i]), .proto = 17 };
		struct xg_sess_rev rv = { .pub_ip_be = ip_self, .pub_port_be = htons(pub[i]),
					  .flags = flags[i], .host_be = host[i] };

		if (upd(G.transit->maps.xg_sess_rev, &rk, &rv, "session reverse") ||
		    upd(G.transit->maps.xg_sess, &k, &v, "session"))
			return -1;
	}
	return 0;
}

/*
 * Map state: this host (10.98.0.1) is the bouncer of 10.1.1.0/24 (holds its
 * endpoints), knows 10.1.2.0/24 (bouncer .4), 10.1.3.0/24 (bouncers .4 .5 .6)
 * and the remote 10.2.0.0/16, and hosts pod 10.1.1.60 behind bp0. VPC 100's
 * divider is .5, the gateway .6. The gateway's own state (this host is also
 * a cluster gateway, public side on bg0): xdp_cost_gw.c.
 */
int program_maps(void)
{
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

	memcpy(pod.pod_mac, mac_pod, 6);
	memcpy(ep.mac, mac_ep, 6);
	memcpy(eppod.mac, mac_pod, 6);
	eppod.ifindex = G.ifx_pod;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ce.learned_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;

	if (maps_shared())
		return -1;
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
	    upd(G.floor->maps.probe_hash, &pod_if, &pod, "probe hash") || sessions())
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
	return gw_program_maps();
}

/* ---- sinks ------------------------------------------------------------------------ */

static int attach_sink(int ifindex, const char *name, bool *flag)
{
	int err = bpf_xdp_attach(ifindex, bpf_program__fd(G.floor->progs.xdp_sink),
				 XDP_FLAGS_DRV_MODE, NULL);

	if (err) {
		die_msg("attach sink to %s: %s", name, strerror(-err));
		return -1;
	}
	*flag = true;
	return 0;
}

int attach_sinks(void)
{
	if (attach_sink(G.ifx_nic_peer, if_nic_peer, &G.sink_on_nic) ||
	    attach_sink(G.ifx_pod_peer, if_pod_peer, &G.sink_on_pod) ||
	    attach_sink(G.ifx_pub_peer, if_pub_peer, &G.sink_on_pub))
		return -1;
	return 0;
}
