// SPDX-License-Identifier: BSD-2-Clause
/* mkdir -p; see fs.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"

int fs_mkdir_p(const char *dir, mode_t mode)
{
	char tmp[PATH_MAX];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s", dir) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, mode) && errno != EEXIST ? -1 : 0;
}

int fs_mkdir_parent(const char *file, mode_t mode)
{
	char dir[PATH_MAX];
	char *slash;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", file) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0; /* in the cwd, or directly under / */
	*slash = 0;
	return fs_mkdir_p(dir, mode);
}
