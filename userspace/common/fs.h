/* SPDX-License-Identifier: BSD-2-Clause */
/* mkdir -p: directories the daemons and the CLI make for their files
 * (databases, sockets, work roots, pin directories). */
#ifndef XG_COMMON_FS_H
#define XG_COMMON_FS_H

#include <sys/types.h>

/* mkdir -p dir: each missing component with mode (existing ones are left
 * as they are). 0, or -1 with errno. */
int fs_mkdir_p(const char *dir, mode_t mode);
/* mkdir -p of the directory file is in ("name" and "/name": nothing). */
int fs_mkdir_parent(const char *file, mode_t mode);

#endif
