// SPDX-License-Identifier: BSD-2-Clause
/*
 * The cluster drivers: what `local` and `kubectl` do differently (the
 * kubectl argv, the per-mission work directory and content file), and the
 * one-line description of a job's end and the state text that go into
 * states and the log.
 * mission.c sequences the steps; the base's runner (ctl_exec.c) runs them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "driver.h"

/* Bytes of the valid UTF-8 character at p, or 0 (what jansson accepts: no
 * NUL, no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_char(const unsigned char *p, size_t left)
{
	unsigned cp, n;

	if (p[0] < 0x80)
		return p[0] ? 1 : 0;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1fu;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0fu;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07u;
	else
		return 0;
	if (n > left)
		return 0;
	for (unsigned k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[k] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void ec_state_text(const char *in, size_t len, char *out, size_t outlen, size_t max)
{
	size_t o = 0, i = 0;

	while (len && is_space(*in))
		in++, len--;
	while (len && is_space(in[len - 1]))
		len--;
	while (i < len && o + 5 < outlen) {
		size_t n = utf8_char((const unsigned char *)in + i, len - i);

		if (o + (n ? n : 1) > max)
			break;
		if (!n) {
			out[o++] = '?';
			i++;
			continue;
		}
		memcpy(out + o, in + i, n);
		o += n;
		i += n;
	}
	out[o] = 0;
}

/* The last non-empty line of s, at most max bytes of it. */
static void last_line(const char *s, size_t len, char *out, size_t max)
{
	size_t e = len, b;

	while (e && (s[e - 1] == '\n' || s[e - 1] == '\r' || s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	b = e;
	while (b && s[b - 1] != '\n')
		b--;
	if (e - b >= max)
		e = b + max - 1;
	memcpy(out, s + b, e - b);
	out[e - b] = 0;
}

void ctl_job_describe(const struct ctl_job_result *r, char *buf, size_t len)
{
	char line[256];

	switch (r->end) {
	case CTL_JOB_EXITED:
		last_line(r->err, r->err_len, line, sizeof(line));
		if (!line[0])
			last_line(r->out, r->out_len, line, sizeof(line));
		snprintf(buf, len, "exited %d%s%s", r->code, line[0] ? ": " : "", line);
		break;
	case CTL_JOB_SIGNALED:
		snprintf(buf, len, "killed by signal %d", r->code);
		break;
	case CTL_JOB_TIMEOUT:
		if (r->code % 1000)
			snprintf(buf, len, "timed out after %.1fs", r->code / 1000.0);
		else
			snprintf(buf, len, "timed out after %ds", r->code / 1000);
		break;
	case CTL_JOB_CANCELLED:
		snprintf(buf, len, "stopped");
		break;
	case CTL_JOB_SPAWN_FAILED:
		snprintf(buf, len, "cannot run: %s", strerror(r->code));
		break;
	}
}

/* ---- the drivers ---- */

void ec_drv_init(struct ec_drv *dv, const struct ec_conf *c)
{
	static const char arktos_kc[] = "/var/run/kubernetes/admin.kubeconfig";
	size_t n;

	memset(dv, 0, sizeof(*dv));
	dv->rootfd = -1;
	dv->kind = c->driver;
	snprintf(dv->kubectl_bin, sizeof(dv->kubectl_bin), "%s", c->kubectl);
	if (c->distro == EC_DISTRO_K3S && !strcmp(c->kubectl, "kubectl")) {
		/* k3s ships kubectl inside its binary, preset to its own kubeconfig */
		dv->kubectl[0] = "k3s";
		dv->kubectl[1] = "kubectl";
	} else {
		dv->kubectl[0] = dv->kubectl_bin;
	}
	if (c->kubeconfig[0])
		snprintf(dv->kubeconfig, sizeof(dv->kubeconfig), "%s", c->kubeconfig);
	else if (c->distro == EC_DISTRO_ARKTOS && !access(arktos_kc, R_OK))
		snprintf(dv->kubeconfig, sizeof(dv->kubeconfig), "%s", arktos_kc); /* arktos-up */
	n = strlen(c->database);
	if (n > 3 && !strcmp(c->database + n - 3, ".db"))
		n -= 3;
	snprintf(dv->workroot, sizeof(dv->workroot), "%.*s.missions", (int)n, c->database);
}

/* KUBECTL [--kubeconfig K] into a; the count. */
static int kubectl_prefix(const struct ec_drv *dv, const char **a)
{
	int n = 0;

	for (int i = 0; dv->kubectl[i]; i++)
		a[n++] = dv->kubectl[i];
	if (dv->kubeconfig[0]) {
		a[n++] = "--kubeconfig";
		a[n++] = dv->kubeconfig;
	}
	return n;
}

char **ec_drv_kubectl_argv(const struct ec_drv *dv, bool apply)
{
	const char *a[12];
	int n = kubectl_prefix(dv, a);

	if (apply) {
		a[n++] = "apply";
	} else {
		a[n++] = "delete";
		a[n++] = "--ignore-not-found"; /* the reverse must be idempotent too */
	}
	a[n++] = "-f";
	a[n++] = "-";
	a[n] = NULL;
	return ec_argv_dup((char *const *)a);
}

char **ec_drv_kubectl_get_nodes(const struct ec_drv *dv, const char *label)
{
	const char *a[12];
	int n = kubectl_prefix(dv, a);

	a[n++] = "get";
	a[n++] = "nodes";
	if (label) {
		a[n++] = "-l";
		a[n++] = label;
	}
	a[n++] = "-o";
	a[n++] = "name";
	a[n] = NULL;
	return ec_argv_dup((char *const *)a);
}

int ec_drv_workdir(const struct ec_drv *dv, const char *mission, bool create, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/%s", dv->workroot, mission) >= len)
		return -1;
	if (!create || !mkdir(out, 0700) || errno == EEXIST)
		return 0;
	/* the parents only when they are missing: not a walk per mission */
	return errno == ENOENT ? fs_mkdir_p(out, 0700) : -1;
}

void ec_drv_close(struct ec_drv *dv)
{
	if (dv->rootfd >= 0)
		close(dv->rootfd);
	dv->rootfd = -1;
}

/* The work root's fd, made and opened when needed; again when it was
 * removed meanwhile (again: ENOENT from a call relative to the old one). */
static int root_fd(struct ec_drv *dv, bool again)
{
	if (again)
		ec_drv_close(dv);
	if (dv->rootfd >= 0)
		return dv->rootfd;
	if (fs_mkdir_p(dv->workroot, 0700))
		return -1;
	dv->rootfd = open(dv->workroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return dv->rootfd;
}

/* Written relative to the work root's fd: each call walks two names, not
 * the whole path (a content-only mission is little more than these calls). */
static int write_rel(int root, const char *mission, const char *content)
{
	char tmp[EC_PATH_MAX], dst[EC_PATH_MAX];
	size_t n = strlen(content), off = 0;
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.content.tmp", mission) >= sizeof(tmp) ||
	    (size_t)snprintf(dst, sizeof(dst), "%s/content", mission) >= sizeof(dst)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdirat(root, mission, 0700) && errno != EEXIST)
		return -1;
	fd = openat(root, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	while (off < n) {
		ssize_t w = write(fd, content + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			unlinkat(root, tmp, 0);
			return -1;
		}
		off += (size_t)w;
	}
	/* renamed into place: a command never reads half a manifest */
	if (close(fd) || renameat(root, tmp, root, dst)) {
		int e = errno;

		unlinkat(root, tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

int ec_drv_write_content(struct ec_drv *dv, const char *mission, const char *content, char *path,
			 size_t len)
{
	int root = root_fd(dv, false);

	if ((size_t)snprintf(path, len, "%s/%s/content", dv->workroot, mission) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (root < 0)
		return -1;
	if (!write_rel(root, mission, content))
		return 0;
	if (errno != ENOENT || (root = root_fd(dv, true)) < 0)
		return -1;
	return write_rel(root, mission, content); /* the root was removed and is made again */
}

int ec_drv_remove_small(const struct ec_drv *dv, const char *mission)
{
	char dir[EC_PATH_MAX + 256];
	struct stat st;
	int fd, rc;

	if (ec_drv_workdir(dv, mission, false, dir, sizeof(dir)))
		return -1;
	if (lstat(dir, &st))
		return errno == ENOENT ? 0 : -1;
	/* a symlink (or anything else) is rm's: it removes the link, never follows */
	if (!S_ISDIR(st.st_mode))
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* through the directory's fd: a name swapped in meanwhile is not followed */
	rc = (unlinkat(fd, "content", 0) && errno != ENOENT) ||
		     (unlinkat(fd, ".content.tmp", 0) && errno != ENOENT)
		 ? -1
		 : 0;
	close(fd);
	return rc || rmdir(dir) ? -1 : 0;
}

char **ec_drv_remove_argv(const struct ec_drv *dv, const char *mission)
{
	char dir[EC_PATH_MAX + 256];
	char *a[] = {"rm", "-rf", "--", dir, NULL};

	if (ec_drv_workdir(dv, mission, false, dir, sizeof(dir)))
		return NULL;
	return ec_argv_dup(a);
}
