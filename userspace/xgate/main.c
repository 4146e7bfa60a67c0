// SPDX-License-Identifier: BSD-2-Clause
/* xgate: the operator CLI. `xgate [OPTIONS] OBJECT COMMAND [ARGS]`. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <sched.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Switch network namespace only: the mount namespace (and so the bpffs
 * holding our pins) stays the caller's. */
static int enter_netns(const char *name)
{
	char path[256];
	int fd;

	if (!*name || strchr(name, '/') || strlen(name) > 200)
		return xg_fail(XG_EUSAGE, "invalid network namespace name '%s'", name);
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return xg_fail(errno == ENOENT ? XG_ENOTFOUND : XG_EPERM,
			       "network namespace '%s': %s", name, strerror(errno));
	if (setns(fd, CLONE_NEWNET)) {
		int err = errno;

		close(fd);
		return xg_fail(err == EPERM ? XG_EPERM : XG_EFAIL,
			       "entering network namespace '%s': %s", name, strerror(err));
	}
	close(fd);
	return XG_OK;
}

/* `-n NAME` without `-N`: go to the namespace the instance was made in, if
 * it is a named one; its maps hold that namespace's ifindexes. */
static int follow_instance(const char *instance, const char *verb)
{
	unsigned long want;
	struct dirent *de;
	struct stat st;
	char path[300];
	DIR *d;
	int rc = XG_OK;

	if (xg_instance_netns(instance, &want) || stat("/proc/self/ns/net", &st) ||
	    st.st_ino == want)
		return XG_OK;
	d = opendir("/run/netns");
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(path, &st) && st.st_ino == want) {
			rc = enter_netns(de->d_name);
			closedir(d);
			return rc;
		}
	}
	if (d)
		closedir(d);
	if (!arg_is(verb, "reset"))
		xg_err("note: instance '%s' was made in another network namespace (not one under "
		       "/run/netns): device names are this namespace's",
		       instance);
	return XG_OK;
}

int main(int argc, char **argv)
{
	struct cli c = {.instance = getenv("XGATE_INSTANCE")};
	const char *netns = NULL;
	bool inst_given = c.instance && *c.instance, help = false;
	const struct object *o;
	char **pos = calloc(argc + 1, sizeof(char *));
	struct args a = {0, pos};

	if (!pos)
		return XG_EFAIL;
	if (!c.instance || !*c.instance)
		c.instance = XG_DEFAULT_INSTANCE;

	/* Options may appear anywhere; what remains is positional. */
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "-h") || !strcmp(s, "--help") ||
		    (a.argc == 0 && !strcmp(s, "help"))) {
			help = true;
		} else if (!strcmp(s, "-j") || !strcmp(s, "--json")) {
			c.json = true;
		} else if (!strcmp(s, "-v") || !strcmp(s, "--verbose")) {
			c.verbose = true;
		} else if (!strcmp(s, "-o") || !strcmp(s, "--output")) {
			if (++i >= argc) {
				free(pos);
				return xg_fail(XG_EUSAGE, "'%s' needs a value: table or json", s);
			}
			if (!strcmp(argv[i], "json"))
				c.json = true;
			else if (!strcmp(argv[i], "table"))
				c.json = false;
			else {
				free(pos);
				return xg_fail(XG_EUSAGE,
					       "unknown output format '%s': table or json",
					       argv[i]);
			}
		} else if (!strcmp(s, "-N") || !strcmp(s, "--netns")) {
			if (++i >= argc) {
				free(pos);
				return xg_fail(XG_EUSAGE, "'%s' needs a namespace name", s);
			}
			netns = argv[i];
		} else if (!strcmp(s, "-n") || !strcmp(s, "--instance")) {
			if (++i >= argc) {
				free(pos);
				return xg_fail(XG_EUSAGE, "'%s' needs an instance name", s);
			}
			c.instance = argv[i];
			inst_given = true;
		} else {
			pos[a.argc++] = argv[i];
		}
	}
	if (help) {
		/* `xgate vpc -h` is the object's help, `xgate -h` all of it */
		int rc = a.argc && object_find(a.argv[0]) ? object_help(a.argv[0])
							  : (help_print(stdout), XG_OK);

		free(pos);
		return rc;
	}
	xg_libbpf_capture(c.verbose);
	if (netns) {
		int rc = enter_netns(netns);

		if (rc) {
			free(pos);
			return rc;
		}
		if (!inst_given)
			c.instance = netns;
	} else if (inst_given && a.argc && object_find(a.argv[0]) &&
		   !object_find(a.argv[0])->no_maps) {
		/* not for the daemons' objects: their sockets are here */
		int rc = follow_instance(c.instance, a.argv[0]);

		if (rc) {
			free(pos);
			return rc;
		}
	}

	if (a.argc == 0) {
		help_print(stderr);
		free(pos);
		return XG_EUSAGE;
	}
	o = object_find(a.argv[0]);
	if (o) {
		int rc;

		a.argc--;
		a.argv++;
		rc = object_run(o, &c, &a);
		free(pos);
		return rc;
	}
	xg_err("unknown object '%s' (try `xgate help`)", a.argv[0]);
	free(pos);
	return XG_EUSAGE;
}
