// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * pass: an XDP program that does nothing. A veth only drains frames that
 * were XDP_TX'd or redirected into it when its receiving end runs XDP, so
 * the far end of every veth our programs transmit into (the pod side of a
 * pod veth, the underlay side of a veth NIC) gets this one.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xg_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
