// SPDX-License-Identifier: BSD-2-Clause
/* Pods' cgroups, v1 and v2; see na_cgroup.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "na_cgroup.h"

/* v1 hierarchies a pod joins; the freezer last, so it is the one checked. */
static const char *const v1_ctrls[] = {"cpu", "memory", "freezer"};
#define N_V1 3

static int write_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -1;
	n = write(fd, v, strlen(v));
	err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)strlen(v) ? 0 : -1;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* DIR of the group (ctrl: a v1 controller, NULL on v2), NAME may be NULL
 * (the parent). */
static void dir_of(const struct na_cg *g, const char *ctrl, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s/%s%s%s", g->root, ctrl ? "/" : "", ctrl ? ctrl : "", g->parent,
		 name ? "/" : "", name ? name : "");
}

/* v2: controllers reach a group only when every ancestor enables them for
 * its children, from the root down. */
static void v2_enable(struct na_cg *g)
{
	char path[PATH_MAX], *p;
	size_t rl = strlen(g->root);

	snprintf(path, sizeof(path), "%s/%s", g->root, g->parent);
	for (p = path + rl; p; p = strchr(p + 1, '/')) {
		char f[PATH_MAX + 32], save = *p;

		*p = 0;
		snprintf(f, sizeof(f), "%s/cgroup.subtree_control", path);
		write_file(f, "+cpu");
		write_file(f, "+memory");
		*p = save;
	}
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/cgroup.subtree_control");
	write_file(path, "+cpu");
	write_file(path, "+memory");
}

int na_cg_init(struct na_cg *g, enum na_cgroup_mode want, const char *root, const char *parent,
	       char *err, size_t errlen)
{
	char p[PATH_MAX];
	bool v2, v1 = true;

	memset(g, 0, sizeof(*g));
	snprintf(g->root, sizeof(g->root), "%s", root ? root : "/sys/fs/cgroup");
	snprintf(g->parent, sizeof(g->parent), "%s", parent);
	snprintf(p, sizeof(p), "%s/cgroup.controllers", g->root);
	v2 = !access(p, R_OK);
	for (int i = 0; i < N_V1; i++) {
		snprintf(p, sizeof(p), "%s/%s/cgroup.procs", g->root, v1_ctrls[i]);
		v1 = v1 && !access(p, W_OK);
	}
	g->mode = want == NA_CG_AUTO ? (v2 ? NA_CG_V2 : v1 ? NA_CG_V1 : NA_CG_NONE) : want;
	if ((g->mode == NA_CG_V2 && !v2) || (g->mode == NA_CG_V1 && !v1)) {
		snprintf(err, errlen, "cgroup %s is not mounted at %s", na_cgroup_mode_name(want),
			 g->root);
		return -1;
	}
	if (g->mode == NA_CG_NONE)
		return 0;
	for (int i = 0; i < (g->mode == NA_CG_V1 ? N_V1 : 1); i++) {
		dir_of(g, g->mode == NA_CG_V1 ? v1_ctrls[i] : NULL, NULL, p, sizeof(p));
		if (fs_mkdir_p(p, 0755)) {
			snprintf(err, errlen, "cgroup %s: %s", p, strerror(errno));
			return -1;
		}
	}
	if (g->mode == NA_CG_V2)
		v2_enable(g);
	return 0;
}

int na_cg_create(struct na_cg *g, const char *name, int64_t cpu_milli, int64_t mem_bytes, char *err,
		 size_t errlen)
{
	char d[PATH_MAX], f[PATH_MAX + 32], v[64];

	if (g->mode == NA_CG_NONE)
		return 0;
	for (int i = 0; i < (g->mode == NA_CG_V1 ? N_V1 : 1); i++) {
		dir_of(g, g->mode == NA_CG_V1 ? v1_ctrls[i] : NULL, name, d, sizeof(d));
		if (mkdir(d, 0755) && errno != EEXIST) {
			snprintf(err, errlen, "cgroup %s: %s", d, strerror(errno));
			return -1;
		}
	}
	/* quota per 100 ms period: 500m is 50 ms of CPU time in every 100 ms */
	if (g->mode == NA_CG_V1) {
		if (cpu_milli > 0) {
			dir_of(g, "cpu", name, d, sizeof(d));
			snprintf(f, sizeof(f), "%s/cpu.cfs_period_us", d);
			write_file(f, "100000");
			snprintf(f, sizeof(f), "%s/cpu.cfs_quota_us", d);
			snprintf(v, sizeof(v), "%lld", (long long)(cpu_milli * 100));
			if (write_file(f, v))
				goto fail;
		}
		if (mem_bytes > 0) {
			dir_of(g, "memory", name, d, sizeof(d));
			snprintf(f, sizeof(f), "%s/memory.limit_in_bytes", d);
			snprintf(v, sizeof(v), "%lld", (long long)mem_bytes);
			if (write_file(f, v))
				goto fail;
		}
		return 0;
	}
	dir_of(g, NULL, name, d, sizeof(d));
	if (cpu_milli > 0) {
		snprintf(f, sizeof(f), "%s/cpu.max", d);
		snprintf(v, sizeof(v), "%lld 100000", (long long)(cpu_milli * 100));
		if (write_file(f, v))
			goto fail;
	}
	if (mem_bytes > 0) {
		snprintf(f, sizeof(f), "%s/memory.max", d);
		snprintf(v, sizeof(v), "%lld", (long long)mem_bytes);
		if (write_file(f, v))
			goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "cgroup %s = %s: %s", f, v, strerror(errno));
	return -1;
}

int na_cg_procs_files(const struct na_cg *g, const char *name, char paths[][PATH_MAX], int max)
{
	char d[PATH_MAX - 16];
	int n = 0;

	if (g->mode == NA_CG_NONE)
		return 0;
	for (int i = 0; i < (g->mode == NA_CG_V1 ? N_V1 : 1) && n < max; i++) {
		dir_of(g, g->mode == NA_CG_V1 ? v1_ctrls[i] : NULL, name, d, sizeof(d));
		snprintf(paths[n++], PATH_MAX, "%s/cgroup.procs", d);
	}
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

bool na_cg_frozen(const struct na_cg *g, const char *name, pid_t pgid)
{
	char d[PATH_MAX], f[PATH_MAX + 32], buf[256];

	if (g->mode == NA_CG_NONE) {
		snprintf(f, sizeof(f), "/proc/%d/stat", (int)pgid);
		if (read_file(f, buf, sizeof(buf)))
			return false;
		char *p = strrchr(buf, ')');
		return p && (p[2] == 'T' || p[2] == 't');
	}
	dir_of(g, g->mode == NA_CG_V1 ? "freezer" : NULL, name, d, sizeof(d));
	if (g->mode == NA_CG_V1) {
		snprintf(f, sizeof(f), "%s/freezer.state", d);
		return !read_file(f, buf, sizeof(buf)) && !strncmp(buf, "FROZEN", 6);
	}
	snprintf(f, sizeof(f), "%s/cgroup.events", d);
	return !read_file(f, buf, sizeof(buf)) && strstr(buf, "frozen 1");
}

int na_cg_freeze(struct na_cg *g, const char *name, pid_t pgid, bool frozen)
{
	char d[PATH_MAX], f[PATH_MAX + 32];
	int rc;

	dir_of(g, g->mode == NA_CG_V1 ? "freezer" : NULL, name, d, sizeof(d));
	if (g->mode == NA_CG_NONE) {
		rc = kill(-pgid, frozen ? SIGSTOP : SIGCONT);
	} else if (g->mode == NA_CG_V1) {
		snprintf(f, sizeof(f), "%s/freezer.state", d);
		rc = write_file(f, frozen ? "FROZEN" : "THAWED");
	} else {
		snprintf(f, sizeof(f), "%s/cgroup.freeze", d);
		rc = write_file(f, frozen ? "1" : "0");
	}
	if (rc || !frozen)
		return rc;
	/* FREEZING -> FROZEN (or a SIGSTOP's delivery) takes a moment; standby
	 * is reported once it is true */
	for (int i = 0; i < 200 && !na_cg_frozen(g, name, pgid); i++)
		sleep_ms(1);
	return na_cg_frozen(g, name, pgid) ? 0 : -1;
}

int na_cg_count(const struct na_cg *g, const char *name)
{
	char d[PATH_MAX], f[PATH_MAX + 32], buf[4096];
	int n = 0;

	if (g->mode == NA_CG_NONE)
		return 0;
	dir_of(g, g->mode == NA_CG_V1 ? "freezer" : NULL, name, d, sizeof(d));
	snprintf(f, sizeof(f), "%s/cgroup.procs", d);
	if (read_file(f, buf, sizeof(buf)))
		return -1;
	for (char *p = buf; *p; p++)
		n += *p == '\n';
	return n;
}

void na_cg_kill(struct na_cg *g, const char *name, pid_t pgid)
{
	char d[PATH_MAX], f[PATH_MAX + 32], buf[4096];

	if (pgid > 0) {
		kill(-pgid, SIGKILL);
		kill(-pgid, SIGCONT);
	}
	if (g->mode == NA_CG_NONE)
		return;
	dir_of(g, g->mode == NA_CG_V1 ? "freezer" : NULL, name, d, sizeof(d));
	snprintf(f, sizeof(f), "%s/cgroup.procs", d);
	/* a process that forks while we read is caught on the next pass */
	for (int pass = 0; pass < 5; pass++) {
		if (read_file(f, buf, sizeof(buf)) || !buf[0])
			break;
		for (char *p = buf, *e; *p; p = e) {
			long pid = strtol(p, &e, 10);

			if (e == p)
				break;
			if (pid > 0)
				kill((pid_t)pid, SIGKILL);
		}
		na_cg_freeze(g, name, pgid, false); /* a frozen task dies only once thawed */
	}
}

int na_cg_remove(struct na_cg *g, const char *name)
{
	char d[PATH_MAX];
	int rc = 0;

	if (g->mode == NA_CG_NONE)
		return 0;
	for (int i = 0; i < (g->mode == NA_CG_V1 ? N_V1 : 1); i++) {
		dir_of(g, g->mode == NA_CG_V1 ? v1_ctrls[i] : NULL, name, d, sizeof(d));
		/* the last killed task leaves the group a moment after it is reaped */
		for (int t = 0; t < 100 && rmdir(d) && errno == EBUSY; t++)
			sleep_ms(2);
		if (is_dir(d))
			rc = -1;
	}
	return rc;
}

int na_cg_sweep(struct na_cg *g)
{
	char d[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int n = 0;

	if (g->mode == NA_CG_NONE)
		return 0;
	/* the freezer's (v1) or the one (v2) hierarchy names the groups */
	dir_of(g, g->mode == NA_CG_V1 ? "freezer" : NULL, NULL, d, sizeof(d));
	dir = opendir(d);
	while (dir && (de = readdir(dir))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || strlen(de->d_name) > 64)
			continue;
		na_cg_kill(g, de->d_name, 0);
		if (!na_cg_remove(g, de->d_name))
			n++;
	}
	if (dir)
		closedir(dir);
	return n;
}
