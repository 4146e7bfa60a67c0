/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edgeclusterd's cluster drivers, on the base's child-process runner
 * (ctl_exec.h).
 *
 * ec_drv: what differs between the `local` and `kubectl` drivers (the
 * kubectl argv, the per-mission work directory); mission.c sequences them.
 */
#ifndef ECD_DRIVER_H
#define ECD_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "ctl_exec.h"

/* "exited 3: <last line of stderr, else stdout>", "timed out after 5s",
 * "killed by signal 9", "cannot run: No such file or directory". */
void ctl_job_describe(const struct ctl_job_result *r, char *buf, size_t len);
/* Command output made a state value: valid UTF-8 (anything else, NUL
 * included, becomes '?': jansson refuses invalid strings), surrounding
 * whitespace trimmed, at most max bytes, cut between characters. */
void ec_state_text(const char *in, size_t len, char *out, size_t outlen, size_t max);
/* ---- the drivers ---- */
struct ec_drv {
	enum ec_driver kind;
	const char *kubectl[3]; /* argv prefix, NULL-ended: {Kubectl} or {"k3s", "kubectl"} */
	char kubectl_bin[EC_PATH_MAX];
	char kubeconfig[EC_PATH_MAX];
	char workroot[EC_PATH_MAX]; /* <Database minus .db>.missions */
	int rootfd;		    /* workroot, opened on the first content write; -1 */
};

void ec_drv_init(struct ec_drv *dv, const struct ec_conf *c);
void ec_drv_close(struct ec_drv *dv);
/* kubectl [--kubeconfig K] apply -f -  |  ... delete --ignore-not-found -f - */
char **ec_drv_kubectl_argv(const struct ec_drv *dv, bool apply);
/* kubectl [--kubeconfig K] get nodes [-l LABEL] -o name (nodes.c) */
char **ec_drv_kubectl_get_nodes(const struct ec_drv *dv, const char *label);
/* WORKROOT/MISSION; with create, mkdir -p (mode 0700: manifests hold secrets). */
int ec_drv_workdir(const struct ec_drv *dv, const char *mission, bool create, char *out,
		   size_t len);
/* The local driver's content file, WORKDIR/content (0600), written whole
 * (a temporary file renamed into place); its path into path. */
int ec_drv_write_content(struct ec_drv *dv, const char *mission, const char *content, char *path,
			 size_t len);
/* Remove WORKDIR here if that is quick: it is missing, or a directory with
 * nothing but the content file. 0 done; -1: anything else, for the command
 * below (the content file may be gone by then). */
int ec_drv_remove_small(const struct ec_drv *dv, const char *mission);
/* rm -rf -- WORKDIR, run as a command like the others: a big tree left by
 * a mission must not stall the loop (rm removes symlinks, never follows). */
char **ec_drv_remove_argv(const struct ec_drv *dv, const char *mission);

#endif
