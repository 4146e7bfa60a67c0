// SPDX-License-Identifier: BSD-2-Clause
/* What the workers ask of a device, through ethtool's ioctl in the network
 * namespace the process runs in (sysfs may be another namespace's: `ip
 * netns exec` remounts it, nsenter does not). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

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
