// SPDX-License-Identifier: BSD-2-Clause
/* The one mkdir -p (userspace/common/fs.c) on a real file system. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "unit.h"

static bool is_dir(const char *p, mode_t mode)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == mode;
}

int main(void)
{
	char root[] = "/tmp/test_common_fs.XXXXXX", p[PATH_MAX], f[PATH_MAX];
	char longp[PATH_MAX + 10];

	if (!mkdtemp(root))
		return 1;
	umask(022);
	snprintf(p, sizeof(p), "%s/a/b/c", root);
	CHECK(!fs_mkdir_p(p, 0700) && is_dir(p, 0700), "mkdir -p makes every level");
	snprintf(f, sizeof(f), "%s/a", root);
	CHECK(is_dir(f, 0700), "with the mode asked for");
	CHECK(!fs_mkdir_p(p, 0700), "again: it exists, fine");

	snprintf(f, sizeof(f), "%s/d/e/db.sqlite", root);
	snprintf(p, sizeof(p), "%s/d/e", root);
	CHECK(!fs_mkdir_parent(f, 0755) && is_dir(p, 0755), "the parent of a file");
	snprintf(p, sizeof(p), "%s/d/e/db.sqlite", root);
	CHECK(access(p, F_OK), "not the file itself");
	CHECK(!fs_mkdir_parent("db.sqlite", 0755) && !fs_mkdir_parent("/db", 0755),
	      "a name in the cwd or under /: nothing to make");

	snprintf(f, sizeof(f), "%s/file", root);
	fclose(fopen(f, "w"));
	snprintf(p, sizeof(p), "%s/file/sub", root);
	errno = 0;
	CHECK(fs_mkdir_p(p, 0700) == -1 && errno == ENOTDIR, "a file in the way: ENOTDIR (%s)",
	      strerror(errno));
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = 0;
	errno = 0;
	CHECK(fs_mkdir_p(longp, 0700) == -1 && errno == ENAMETOOLONG, "too long: ENAMETOOLONG");

	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	if (system(p))
		return 1;
	return unit_summary();
}
