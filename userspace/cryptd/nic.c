// SPDX-License-Identifier: BSD-2-Clause
/* What the workers ask of a device, through ethtool's ioctl in the network
 * namespace the process runs in (sysfs may be another namespace's: `ip
 * netns exec` remounts it, nsenter does not). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* unshare */
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cryptd.h"

static int ethtool(const char *dev, void *cmd)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (s < 0)
		return -1;
	strncpy(ifr.ifr_name, dev, sizeof(ifr.ifr_name) - 1);
	ifr.ifr_data = cmd;
	rc = ioctl(s, SIOCETHTOOL, &ifr);
	close(s);
	return rc;
}

unsigned nic_rx_queues(const char *dev)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	unsigned n;

	if (ethtool(dev, &ch))
		return 1; /* no channels to tell: one queue */
	n = ch.rx_count + ch.combined_count;
	if (n > XG_GW_MAX_QUEUES)
		n = XG_GW_MAX_QUEUES;
	return n ? n : 1;
}

/* veth reports its peer as the statistic "peer_ifindex". */
uint32_t nic_veth_peer(const char *dev)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} info = {.hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_STATS}};
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *vals = NULL;
	uint32_t n, peer = 0;

	if (ethtool(dev, &info) || !(info.hdr.sset_mask & (1ULL << ETH_SS_STATS)))
		return 0;
	n = info.len;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	vals = calloc(1, sizeof(*vals) + (size_t)n * sizeof(uint64_t));
	if (!names || !vals)
		goto out;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = n;
	vals->cmd = ETHTOOL_GSTATS;
	vals->n_stats = n;
	if (ethtool(dev, names) || ethtool(dev, vals))
		goto out;
	for (uint32_t i = 0; i < n && i < vals->n_stats; i++)
		if (!strncmp((char *)names->data + (size_t)i * ETH_GSTRING_LEN, "peer_ifindex",
			     ETH_GSTRING_LEN))
			peer = (uint32_t)vals->data[i];
out:
	free(names);
	free(vals);
	return peer;
}

/* In a child with a mount namespace of its own and a sysfs mounted there:
 * sysfs shows the network namespace of whoever mounts it, and ours may not
 * be the one /sys was mounted in (nsenter --net, a process that setns()).
 * The child writes what the knob was, then a status line, into fd. */
static void knob_child(int fd, const char *dev, const char *knob, const char *val)
{
	char path[128], old[64] = "";
	ssize_t n = -1;
	int f, rc = 0;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL)) {
		dprintf(fd, "\nmounting sysfs: %s", strerror(errno));
		_exit(1);
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", dev, knob);
	if ((f = open(path, O_RDWR | O_CLOEXEC)) >= 0) {
		n = read(f, old, sizeof(old) - 1);
		rc = n < 0 || (val && (lseek(f, 0, SEEK_SET) ||
				       write(f, val, strlen(val)) != (ssize_t)strlen(val)));
	}
	if (f < 0 || rc) {
		dprintf(fd, "\n%s: %s", path, strerror(errno));
		_exit(1);
	}
	old[n] = 0;
	old[strcspn(old, "\n")] = 0;
	dprintf(fd, "%s\n", old);
	_exit(0);
}

int nic_knob(const char *dev, const char *knob, const char *val, char *old, size_t oldlen,
	     char *err, size_t errlen)
{
	char buf[256] = "";
	ssize_t n, got = 0;
	int p[2], st = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		snprintf(err, errlen, "%s %s: pipe: %s", dev, knob, strerror(errno));
		return -1;
	}
	if ((pid = fork()) == 0) {
		close(p[0]);
		knob_child(p[1], dev, knob, val);
	}
	close(p[1]);
	while (pid > 0 && got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		char *why = strchr(buf, '\n');

		snprintf(err, errlen, "%s %s: %s", dev, knob,
			 pid < 0 ? strerror(errno)
			 : why	 ? why + 1
				 : "failed");
		return -1;
	}
	buf[strcspn(buf, "\n")] = 0;
	snprintf(old, oldlen, "%s", buf);
	return 0;
}
