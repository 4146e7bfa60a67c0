/* SPDX-License-Identifier: BSD-2-Clause */
/* Directories the daemons make for their files (databases, work roots). */
#ifndef CTL_FS_H
#define CTL_FS_H

#include <sys/types.h>

/* mkdir -p dir: each missing component with mode (existing ones are left
 * as they are). 0, or -1 with errno. */
int ctl_mkdir_p(const char *dir, mode_t mode);
/* mkdir -p of the directory file is in ("name" and "/name": nothing). */
int ctl_mkdir_parent(const char *file, mode_t mode);

#endif
