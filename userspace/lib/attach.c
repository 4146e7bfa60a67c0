// SPDX-License-Identifier: BSD-2-Clause
/* XDP attach/detach through libbpf, and the bookkeeping that goes with it:
 * the device's stats slot and role in xg_ifaces, its place in xg_txports,
 * and for transit the host's NIC and address. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xg.h"
#include "transit.skel.h"
#include "agent.skel.h"
#include "gateway.skel.h"
#include "pass.skel.h"
#include "ingress.skel.h"
#include "bpf_hash.h"

int xg_dev_index(const char *dev, __u32 *ifindex)
{
	if (!dev || strlen(dev) >= IFNAMSIZ)
		return xg_fail(XG_EUSAGE, "invalid device name '%s'", dev ? dev : "");
	*ifindex = if_nametoindex(dev);
	if (!*ifindex)
		return xg_fail(XG_ENOTFOUND, "unknown device '%s'", dev);
	return XG_OK;
}

int xg_xdp_query(__u32 ifindex, __u32 *prog_id, enum xg_mode *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query((int)ifindex, 0, &q);

	/* defined on failure too: callers that only test the result stay simple */
	*prog_id = 0;
	*mode = XG_MODE_NATIVE;
	if (err)
		return xg_fail(xg_errno_code(err), "querying XDP on ifindex %u: %s", ifindex,
			       strerror(-err));
	*prog_id = q.prog_id;
	*mode = q.attach_mode == XDP_ATTACHED_SKB ? XG_MODE_GENERIC : XG_MODE_NATIVE;
	return XG_OK;
}

int xg_prog_name(__u32 prog_id, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(prog_id), err;

	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &ilen);
	close(fd);
	if (err)
		return err;
	snprintf(name, len, "%s", info.name);
	return 0;
}

int xg_pass_stubs(__u32 *ifindexes, int max)
{
	struct if_nameindex *all = if_nameindex(), *i;
	int n = 0;

	for (i = all; i && i->if_index && n < max; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		char name[16];

		if (!bpf_xdp_query((int)i->if_index, 0, &q) && q.prog_id &&
		    !xg_prog_name(q.prog_id, name, sizeof(name)) && !strcmp(name, "xg_pass"))
			ifindexes[n++] = i->if_index;
	}
	if (all)
		if_freenameindex(all);
	return n;
}

static __u32 first_ipv4(const char *dev)
{
	struct ifaddrs *ifa, *i;
	__u32 ip = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i && !ip; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, dev))
			ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
	freeifaddrs(ifa);
	return ip;
}

__u32 xg_ipv4_ifindex(__u32 ip_be)
{
	struct ifaddrs *ifa, *i;
	__u32 ifindex = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i && !ifindex; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == ip_be)
			ifindex = if_nametoindex(i->ifa_name);
	freeifaddrs(ifa);
	return ifindex;
}

/* bpf_fib_lookup refuses to resolve next hops on a device whose IPv4
 * forwarding is off, even in output mode: the NIC needs it on. */
static int ensure_forwarding(const char *dev)
{
	char path[128], v = '0';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/forwarding", dev);
	f = fopen(path, "r");
	if (!f)
		return xg_fail(XG_EFAIL, "cannot read %s: %s", path, strerror(errno));
	if (fread(&v, 1, 1, f) != 1)
		v = '0';
	fclose(f);
	if (v == '1')
		return XG_OK;
	f = fopen(path, "w");
	if (!f || fputs("1\n", f) < 0 || fclose(f)) {
		if (f)
			fclose(f);
		return xg_fail(XG_EFAIL, "cannot enable IPv4 forwarding on %s (%s): %s", dev, path,
			       strerror(errno));
	}
	fprintf(stderr, "xgate: note: enabled IPv4 forwarding on %s (the FIB lookup needs it)\n",
		dev);
	return XG_OK;
}

static const char *role_name(enum xg_role role)
{
	static const char *const names[] = {"", "transit", "agent", "pass", "gateway", "ingress"};

	return (unsigned)role < sizeof(names) / sizeof(names[0]) ? names[role] : "?";
}

/* The object built into xgate for a role (the skeletons embed it). */
static const void *role_elf(enum xg_role role, size_t *sz)
{
	switch (role) {
	case XG_ROLE_TRANSIT:
		return transit_bpf__elf_bytes(sz);
	case XG_ROLE_AGENT:
		return agent_bpf__elf_bytes(sz);
	case XG_ROLE_PASS:
		return pass_bpf__elf_bytes(sz);
	case XG_ROLE_GATEWAY:
		return gateway_bpf__elf_bytes(sz);
	case XG_ROLE_INGRESS:
		return ingress_bpf__elf_bytes(sz);
	default:
		return NULL;
	}
}

/* Load the role's object against the instance's pinned maps; returns the
 * program fd and keeps the object alive in *keep until attached. */
static int load_prog(struct xg_maps *m, enum xg_role role, struct bpf_object **keep, int *prog_fd)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = m ? m->root : NULL,
		    .object_name = role_name(role));
	const char *dir = getenv("XGATE_BPF_DIR");
	char path[PATH_MAX], prog[32];
	struct bpf_object *obj;
	struct bpf_program *p;
	int err;

	snprintf(prog, sizeof(prog), "xg_%s", role_name(role));
	/* Development override: load ROLE.bpf.o from a directory instead of
	 * the objects built into xgate (tests use it to feed a bad program). */
	if (dir) {
		snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, role_name(role));
		obj = bpf_object__open_file(path, &opts);
	} else {
		size_t sz = 0;
		const void *elf = role_elf(role, &sz);

		snprintf(path, sizeof(path), "the built-in %s object", role_name(role));
		obj = elf ? bpf_object__open_mem(elf, sz, &opts) : NULL;
	}
	if (!obj)
		return xg_fail(dir ? XG_ENOTFOUND : XG_EFAIL, "cannot open %s: %s", path,
			       strerror(errno));
	p = bpf_object__find_program_by_name(obj, prog);
	if (!p) {
		bpf_object__close(obj);
		return xg_fail(XG_EFAIL, "%s has no program %s", path, prog);
	}
	err = m ? xg_obj_prepare(obj, m->root) : 0;
	if (!err)
		err = bpf_object__load(obj);
	if (err) {
		bpf_object__close(obj);
		goto fail;
	}
	*keep = obj;
	*prog_fd = bpf_program__fd(p);
	return XG_OK;
fail:
	if (err == -EPERM)
		return xg_fail(XG_EPERM, "loading the program: permission denied "
					 "(need root or CAP_BPF+CAP_NET_ADMIN)");
	if (xg_libbpf_log_has("couldn't reuse pinned map")) {
		xg_libbpf_log_tail(4);
		return xg_fail(XG_EFAIL,
			       "the maps pinned under %s do not match this xgate build "
			       "(older version?); `xgate reset` removes them",
			       m->root);
	}
	xg_libbpf_log_tail(25);
	return xg_fail(XG_EVERIFIER, "the kernel rejected the %s program: %s", role_name(role),
		       strerror(-err));
}

/* SHA-256 of the object built into xgate for a role (bpf_hash.h, made
 * with the skeletons at build time): the hash of role_elf()'s bytes. */
static const char *role_hash(enum xg_role role)
{
	switch (role) {
	case XG_ROLE_TRANSIT:
		return XG_BPF_HASH_transit;
	case XG_ROLE_AGENT:
		return XG_BPF_HASH_agent;
	case XG_ROLE_PASS:
		return XG_BPF_HASH_pass;
	case XG_ROLE_GATEWAY:
		return XG_BPF_HASH_gateway;
	case XG_ROLE_INGRESS:
		return XG_BPF_HASH_ingress;
	default:
		return "";
	}
}

/*
 * Where the instance keeps its loaded program of role as this build made
 * it: pinned under the instance root by the first attach, so that the next
 * device of that role (every pod's veth) gets the same program without
 * loading and verifying it again (59 ms of a pod's start for `agent`).
 * Equivalent to loading it anew: every map of every object is pinned by
 * name in the instance and no program keeps global state. The name
 * carries the object's hash, so another xgate build loads its own;
 * `xgate reset` removes it with the maps. The hash is the build's
 * (bpf_hash.h), not one made here: finding the pin reads none of the
 * object, so a daemon attaching to many devices (nodeagentd, a veth per
 * pod) keeps the object's pages and libbpf's parsing out of its memory
 * when another process made the pin.
 */
void xg_prog_pin_path(const struct xg_maps *m, enum xg_role role, char *out, size_t len)
{
	snprintf(out, len, "%s/prog_%s_%.16s", m->root, role_name(role), role_hash(role));
}

/*
 * The first load of a reused program, made in a child process that pins it
 * and exits: parsing the object (libbpf, libelf, the embedded ELF's pages)
 * and the verifier's log stay out of the caller, which then takes the
 * program from its pin like every later attach. What a long-lived caller
 * keeps is what it uses: nodeagentd attaches a pod's veth with the pin
 * alone (0.1-0.3 MB less RSS, docs/bench.md). The child reports as
 * load_prog does (stderr) and exits with its code. 0: loaded (pinned, if
 * the pin could be made); XG_E*: the load failed; -1: no child.
 */
static int load_pinned_by_child(struct xg_maps *m, enum xg_role role, const char *pin)
{
	int status, rc;
	pid_t pid;

	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct bpf_object *keep = NULL;
		int fd;

		/* a pin that fails (or another process's, EEXIST) is no error:
		 * the caller then finds that one, or loads its own */
		rc = load_prog(m, role, &keep, &fd);
		if (!rc)
			bpf_obj_pin(fd, pin);
		fflush(stderr);
		_exit(rc); /* no atexit handlers: they are the parent's */
	}
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0 || !WIFEXITED(status))
		return xg_fail(XG_EFAIL, "loading the %s program (in a child process): %s",
			       role_name(role), rc < 0 ? strerror(errno) : "killed");
	return WEXITSTATUS(status);
}

int xg_attach(struct xg_maps *m, const char *dev, enum xg_role role, enum xg_mode mode, bool force)
{
	/* the development override (XGATE_BPF_DIR) always loads its file */
	bool reuse = m && role != XG_ROLE_PASS && !getenv("XGATE_BPF_DIR");
	char pin[PATH_MAX + 64];
	__u32 flags = mode == XG_MODE_GENERIC ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	__u32 ifindex, cur_id;
	enum xg_mode cur_mode;
	struct xg_iface ifc = {};
	struct bpf_object *keep = NULL;
	int prog_fd = -1, rc, err;

	rc = xg_dev_index(dev, &ifindex);
	if (rc)
		return rc;
	rc = xg_xdp_query(ifindex, &cur_id, &cur_mode);
	if (rc)
		return rc;
	if (cur_id && !force)
		return xg_fail(XG_EEXIST,
			       "%s already has an XDP program (id %u); `xgate detach %s` first "
			       "or use --force to replace it",
			       dev, cur_id, dev);
	if (cur_id && cur_mode != mode) {
		/* A program in the other mode would block this one. */
		err = bpf_xdp_detach(
		    (int)ifindex,
		    cur_mode == XG_MODE_GENERIC ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			return xg_fail(xg_errno_code(err), "%s: cannot replace program: %s", dev,
				       strerror(-err));
	}
	if ((role == XG_ROLE_TRANSIT || role == XG_ROLE_GATEWAY || role == XG_ROLE_INGRESS) &&
	    (rc = ensure_forwarding(dev)))
		return rc;
	if (reuse) {
		xg_prog_pin_path(m, role, pin, sizeof(pin));
		prog_fd = bpf_obj_get(pin);
		if (prog_fd < 0) {
			rc = load_pinned_by_child(m, role, pin);
			if (rc > 0)
				return rc;
			if (!rc)
				prog_fd = bpf_obj_get(pin);
		}
	}
	/* no reuse, no child, or no pin: load here */
	if (prog_fd < 0) {
		rc = load_prog(m, role, &keep, &prog_fd);
		if (rc)
			return rc;
		/* a pin that fails only makes the next attach load its own */
		if (reuse)
			bpf_obj_pin(prog_fd, pin);
	}
	if (!force || cur_mode != mode || !cur_id)
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	err = bpf_xdp_attach((int)ifindex, prog_fd, flags, NULL);
	/* the device holds the program now */
	if (keep)
		bpf_object__close(keep);
	else
		close(prog_fd);
	if (!err && role == XG_ROLE_PASS)
		return XG_OK; /* a stub: no maps, no bookkeeping */
	if (err) {
		if (err == -EOPNOTSUPP)
			return xg_fail(XG_EFAIL,
				       "%s does not support native XDP; use --mode generic", dev);
		if (err == -EBUSY || err == -EEXIST)
			return xg_fail(XG_EEXIST, "%s already has an XDP program; detach it first",
				       dev);
		if (err == -EPERM)
			return xg_fail(XG_EPERM, "attaching to %s: permission denied", dev);
		return xg_fail(XG_EFAIL, "attaching to %s: %s", dev, strerror(-err));
	}

	if (bpf_map_lookup_elem(m->ifaces, &ifindex, &ifc)) {
		memset(&ifc, 0, sizeof(ifc));
		rc = xg_slot_alloc(m, &ifc.slot);
		if (rc)
			return rc;
	}
	ifc.role = role;
	if (bpf_map_update_elem(m->ifaces, &ifindex, &ifc, BPF_ANY) ||
	    bpf_map_update_elem(m->txports, &ifindex, &ifindex, BPF_ANY)) {
		rc = xg_fail(XG_EFAIL, "recording %s in the maps: %s", dev, strerror(errno));
		xg_gen_bump(m);
		return rc;
	}
	xg_gen_bump(m);

	if (role == XG_ROLE_GATEWAY || role == XG_ROLE_INGRESS) {
		/* Of a gateway's two NICs, the cluster side is the one carrying
		 * the host address (`host set ip` may also come later). An
		 * ingress NIC carrying it is the underlay NIC too (one NIC:
		 * the program is its transit as well). */
		struct xg_host h;

		rc = xg_host_get(m, &h);
		if (!rc && h.ip_be && xg_ipv4_ifindex(h.ip_be) == ifindex) {
			h.nic_ifindex = ifindex;
			rc = xg_host_put(m, &h);
		}
	} else if (role == XG_ROLE_TRANSIT) {
		struct xg_host h;

		rc = xg_host_get(m, &h);
		if (rc)
			return rc;
		h.nic_ifindex = ifindex;
		if (!h.ip_be)
			h.ip_be = first_ipv4(dev);
		if (!h.ip_be)
			xg_err("warning: %s has no IPv4 address; set the host address with "
			       "`xgate host set ip ADDR`",
			       dev);
		rc = xg_host_put(m, &h);
	}
	return rc;
}

int xg_detach(struct xg_maps *m, const char *dev)
{
	__u32 ifindex, id;
	enum xg_mode mode;
	struct xg_iface ifc;
	int rc, err;

	rc = xg_dev_index(dev, &ifindex);
	if (rc)
		return rc;
	rc = xg_xdp_query(ifindex, &id, &mode);
	if (rc)
		return rc;
	if (!id)
		return xg_fail(XG_ENOTFOUND, "%s has no XDP program attached", dev);
	err = bpf_xdp_detach(
	    (int)ifindex, mode == XG_MODE_GENERIC ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, NULL);
	if (err)
		return xg_fail(xg_errno_code(err), "detaching from %s: %s", dev, strerror(-err));
	if (!m)
		return XG_OK;
	if (!bpf_map_lookup_elem(m->ifaces, &ifindex, &ifc)) {
		if (ifc.flags & XG_IFACE_HAS_POD) {
			ifc.role = XG_ROLE_NONE; /* keep the pod binding for re-attach */
			bpf_map_update_elem(m->ifaces, &ifindex, &ifc, BPF_ANY);
		} else {
			bpf_map_delete_elem(m->ifaces, &ifindex);
			bpf_map_delete_elem(m->txports, &ifindex);
		}
		xg_gen_bump(m);
	}
	return XG_OK;
}
