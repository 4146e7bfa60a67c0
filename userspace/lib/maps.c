// SPDX-License-Identifier: BSD-2-Clause
/* Pinned map access for one instance: /sys/fs/bpf/xgate/<instance>/<map>. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fs.h"
#include "xg.h"
#include "transit.skel.h"

_Static_assert(XG_R__COUNT <= XG_R_MAX, "stats reasons overflow a slot");

#define XG_NAME_ENTRY(name, desc) #name,
#define XG_DESC_ENTRY(name, desc) desc,
static const char *reason_names[] = {"none", XG_REASONS(XG_NAME_ENTRY)};
static const char *reason_descs[] = {"", XG_REASONS(XG_DESC_ENTRY)};

const char *xg_reason_name(unsigned int r)
{
	static char lower[XG_R__COUNT][40];

	if (r >= XG_R__COUNT)
		return "unknown";
	if (!lower[r][0]) {
		size_t i;

		for (i = 0; reason_names[r][i] && i < sizeof(lower[r]) - 1; i++)
			lower[r][i] = (char)tolower((unsigned char)reason_names[r][i]);
		lower[r][i] = 0;
	}
	return lower[r];
}

const char *xg_reason_desc(unsigned int r)
{
	return r < XG_R__COUNT ? reason_descs[r] : "unknown";
}

int xg_instance_root(const char *instance, char *buf, size_t len)
{
	if (!instance || !*instance || strlen(instance) > 48 || strchr(instance, '/') ||
	    instance[0] == '.') {
		xg_err("invalid instance name '%s': 1-48 characters, no '/' and no leading '.'",
		       instance ? instance : "");
		return XG_EUSAGE;
	}
	snprintf(buf, len, "%s/%s", XG_PIN_BASE, instance);
	return XG_OK;
}

static int create_maps(const char *root);

int xg_obj_prepare(struct bpf_object *obj, const char *root)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, XG_MAP_TXPORTS);
	char path[PATH_MAX + 64];

	/* The kernel adds BPF_F_RDONLY_PROG to every devmap it creates, and
	 * libbpf 1.1 compares flags before reusing a pin: declare the flag
	 * only when reusing (creating a devmap with it is refused). */
	snprintf(path, sizeof(path), "%s/%s", root, XG_MAP_TXPORTS);
	if (map && !access(path, F_OK) && bpf_map__set_map_flags(map, BPF_F_RDONLY_PROG))
		return -EINVAL;
	return xg_sess_size(obj, root);
}

/* The session maps are sized by configuration: XGATE_MAX_SESSIONS when
 * they are created, and whatever size the pinned ones have afterwards
 * (libbpf reuses a pin only if the sizes agree). */
int xg_sess_size(struct bpf_object *obj, const char *root)
{
	const char *names[] = {XG_MAP_SESS, XG_MAP_SESS_REV};
	const char *env = getenv("XGATE_MAX_SESSIONS");
	char path[PATH_MAX + 64];

	for (size_t i = 0; i < 2; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, names[i]);
		struct bpf_map_info info = {};
		__u32 len = sizeof(info), n = 0;
		int fd;

		if (!map)
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			if (!bpf_obj_get_info_by_fd(fd, &info, &len))
				n = info.max_entries;
			close(fd);
		} else if (env && xg_parse_u32("XGATE_MAX_SESSIONS", env, 1, 1u << 26, &n)) {
			return -EINVAL;
		}
		if (n && bpf_map__set_max_entries(map, n))
			return -EINVAL;
	}
	return 0;
}

int xg_maps_complete(struct xg_maps *m)
{
	return create_maps(m->root);
}

/* The instance remembers the network namespace it was made in (a directory
 * netns-INODE in its pin directory: bpffs holds nothing but pins and
 * directories, and no name with a dot), so that `-n NAME` alone can go
 * back there: ifindexes in the maps mean nothing in another namespace. */
static void mark_netns(const char *root)
{
	char path[PATH_MAX + 64];
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return;
	snprintf(path, sizeof(path), "%s/netns-%lu", root, (unsigned long)st.st_ino);
	if (mkdir(path, 0700) && errno != EEXIST)
		xg_err("note: cannot record the network namespace in %s: %s", root,
		       strerror(errno));
}

int xg_instance_netns(const char *instance, unsigned long *ino)
{
	char root[PATH_MAX];
	struct dirent *de;
	int found = -1;
	DIR *d;

	if (xg_instance_root(instance, root, sizeof(root)))
		return -1;
	d = opendir(root);
	while (d && (de = readdir(d)))
		if (sscanf(de->d_name, "netns-%lu", ino) == 1)
			found = 0;
	if (d)
		closedir(d);
	return found;
}

/* Loading the transit object once creates and pins every map (they are all
 * LIBBPF_PIN_BY_NAME); the program itself is released right after. */
static int create_maps(const char *root)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = root);
	struct transit_bpf *skel;
	int err;

	err = fs_mkdir_p(root, 0700) ? -errno : 0;
	if (err) {
		if (err == -EPERM || err == -EACCES)
			return xg_fail(XG_EPERM, "cannot create %s: permission denied (need root)",
				       root);
		return xg_fail(XG_EFAIL, "cannot create %s: %s (is bpffs mounted on /sys/fs/bpf?)",
			       root, strerror(-err));
	}
	skel = transit_bpf__open_opts(&opts);
	if (!skel)
		return xg_fail(XG_EFAIL, "cannot open the transit object: %s", strerror(errno));
	err = xg_obj_prepare(skel->obj, root);
	if (!err)
		err = transit_bpf__load(skel);
	transit_bpf__destroy(skel);
	if (!err)
		mark_netns(root);
	if (err) {
		if (err == -EPERM)
			return xg_fail(XG_EPERM, "loading BPF maps: permission denied "
						 "(need root or CAP_BPF+CAP_NET_ADMIN)");
		xg_libbpf_log_tail(20);
		return xg_fail(XG_EFAIL,
			       "cannot create maps under %s: %s (pins made by an incompatible "
			       "version? `xgate reset` removes them)",
			       root, strerror(-err));
	}
	return XG_OK;
}

int xg_maps_open(const char *instance, bool create, struct xg_maps *m)
{
	struct {
		const char *name;
		int *fd;
	} tab[] = {
	    {XG_MAP_HOST, &m->host},	 {XG_MAP_IFACES, &m->ifaces},	  {XG_MAP_VPC, &m->vpc},
	    {XG_MAP_SUBNET, &m->subnet}, {XG_MAP_ENDPOINT, &m->endpoint}, {XG_MAP_CACHE, &m->cache},
	    {XG_MAP_STATS, &m->stats},	 {XG_MAP_TXPORTS, &m->txports},
	};
	char path[PATH_MAX + 64];
	int rc;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		*tab[i].fd = -1;
	m->gen = -1;
	rc = xg_instance_root(instance, m->root, sizeof(m->root));
	if (rc)
		return rc;
	snprintf(m->instance, sizeof(m->instance), "%s", instance);

	{
		struct statfs sfs;

		if (statfs("/sys/fs/bpf", &sfs) || sfs.f_type != BPF_FS_MAGIC)
			return xg_fail(
			    XG_EFAIL,
			    "no bpffs at /sys/fs/bpf (mount -t bpf bpf /sys/fs/bpf; note that "
			    "`ip netns exec` remounts /sys: use `xgate --netns NAME`)");
	}
	snprintf(path, sizeof(path), "%s/%s", m->root, XG_MAP_HOST);
	if (access(path, F_OK)) {
		if (errno == EACCES)
			return xg_fail(XG_EPERM, "%s: permission denied (need root)", path);
		if (!create)
			return xg_fail(
			    XG_ENOTFOUND,
			    "instance '%s' has no maps (nothing configured yet under %s)", instance,
			    m->root);
		rc = create_maps(m->root);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", m->root, tab[i].name);
		*tab[i].fd = bpf_obj_get(path);
		if (*tab[i].fd < 0) {
			int err = errno;

			xg_maps_close(m);
			if (err == EPERM || err == EACCES)
				return xg_fail(XG_EPERM, "%s: permission denied (need root)", path);
			return xg_fail(XG_EFAIL, "%s: %s (instance incomplete: `xgate reset`)",
				       path, strerror(err));
		}
	}
	/* Optional: pinned by the first program of this version loaded here;
	 * an instance whose programs are older has no caches to invalidate. */
	snprintf(path, sizeof(path), "%s/%s", m->root, XG_MAP_GEN);
	m->gen = bpf_obj_get(path);
	return XG_OK;
}

void xg_maps_close(struct xg_maps *m)
{
	int *fds[] = {&m->host,	 &m->ifaces, &m->vpc,	  &m->subnet, &m->endpoint,
		      &m->cache, &m->stats,  &m->txports, &m->gen};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] > 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	xg_neigh_close(m->neigh);
	m->neigh = NULL;
}

int xg_instance_remove(const char *instance)
{
	char root[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;
	int rc = xg_instance_root(instance, root, sizeof(root));

	if (rc)
		return rc;
	d = opendir(root);
	if (!d)
		return errno == ENOENT
			   ? XG_OK
			   : xg_fail(xg_errno_code(errno), "%s: %s", root, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, de->d_name);
		if (unlink(path) && rmdir(path)) /* pins, or the netns mark */
			xg_err("cannot remove %s: %s", path, strerror(errno));
	}
	closedir(d);
	if (rmdir(root))
		return xg_fail(XG_EFAIL, "cannot remove %s: %s", root, strerror(errno));
	rmdir(XG_PIN_BASE); /* only succeeds once the last instance is gone */
	return XG_OK;
}

int xg_host_get(struct xg_maps *m, struct xg_host *h)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(m->host, &zero, h))
		return xg_fail(XG_EFAIL, "reading xg_host: %s", strerror(errno));
	return XG_OK;
}

int xg_host_put(struct xg_maps *m, const struct xg_host *h)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(m->host, &zero, h, BPF_ANY))
		return xg_fail(XG_EFAIL, "writing xg_host: %s", strerror(errno));
	xg_gen_bump(m);
	return XG_OK;
}

int xg_slot_alloc(struct xg_maps *m, __u32 *slot)
{
	unsigned char used[XG_MAX_IFACES] = {1}; /* slot 0: unknown devices */
	__u32 key, next, *prev = NULL;
	struct xg_iface v;

	while (!bpf_map_get_next_key(m->ifaces, prev, &next)) {
		if (!bpf_map_lookup_elem(m->ifaces, &next, &v) && v.slot < XG_MAX_IFACES)
			used[v.slot] = 1;
		key = next;
		prev = &key;
	}
	for (__u32 s = 1; s < XG_MAX_IFACES; s++)
		if (!used[s]) {
			*slot = s;
			return xg_stats_clear(m, s);
		}
	return xg_fail(XG_EFAIL, "no free device slot: at most %d devices per instance",
		       XG_MAX_IFACES - 1);
}

int xg_stats_read(struct xg_maps *m, __u32 slot, struct xg_stat out[XG_R_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	struct xg_stat *v;

	if (ncpu <= 0)
		return xg_fail(XG_EFAIL, "cannot count CPUs");
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return xg_fail(XG_EFAIL, "out of memory");
	memset(out, 0, sizeof(*out) * XG_R_MAX);
	for (__u32 r = 0; r < XG_R_MAX; r++) {
		__u32 key = slot * XG_R_MAX + r;

		if (bpf_map_lookup_elem(m->stats, &key, v)) {
			free(v);
			return xg_fail(XG_EFAIL, "reading xg_stats: %s", strerror(errno));
		}
		for (int c = 0; c < ncpu; c++) {
			out[r].packets += v[c].packets;
			out[r].bytes += v[c].bytes;
		}
	}
	free(v);
	return XG_OK;
}

int xg_stats_clear(struct xg_maps *m, __u32 slot)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xg_stat *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v));

	if (!v || ncpu <= 0) {
		free(v);
		return xg_fail(XG_EFAIL, "out of memory");
	}
	for (__u32 r = 0; r < XG_R_MAX; r++) {
		__u32 key = slot * XG_R_MAX + r;

		if (bpf_map_update_elem(m->stats, &key, v, BPF_ANY)) {
			free(v);
			return xg_fail(XG_EFAIL, "clearing xg_stats: %s", strerror(errno));
		}
	}
	free(v);
	return XG_OK;
}

void xg_gen_bump(struct xg_maps *m)
{
	struct xg_gen g = {};
	__u32 zero = 0;

	/* Read-modify-write: two concurrent writers may both write g+1, which
	 * still invalidates, since each wrote its maps before reading g. */
	if (m->gen < 0 || bpf_map_lookup_elem(m->gen, &zero, &g))
		return;
	g.gen++;
	if (bpf_map_update_elem(m->gen, &zero, &g, BPF_ANY))
		xg_err("warning: cannot bump %s (%s): XDP programs may use cached configuration "
		       "for up to %d jiffies",
		       XG_MAP_GEN, strerror(errno), XG_CACHE_TTL_JIFFIES);
}

void xg_cache_forget(struct xg_maps *m, __u32 vni, __u32 ip_be)
{
	struct xg_ep_key k = {.vni = vni, .ip_be = ip_be};

	if (bpf_map_delete_elem(m->cache, &k) == 0)
		xg_gen_bump(m); /* drops the per-CPU copies (xg_dpcache) */
}
