/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Maps of the gateway program only (layouts in xgate_abi.h), pinned next to
 * the host's other maps: gatewayd finds them by name. */
#ifndef XG_GW_MAPS_H
#define XG_GW_MAPS_H

#include "maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xg_gw_conf);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XG_GW_MAX_PEERS);
	__type(key, __u32);
	__type(value, struct xg_gw_peer);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_peers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XG_GW_MAX_PEERS);
	__type(key, struct xg_gw_paddr_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_paddr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XG_GW_MAX_ROUTES);
	__type(key, struct xg_subnet_key);
	__type(value, struct xg_gw_route);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_route SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XG_GW_MAX_PEERS * 2);
	__type(key, __u32);
	__type(value, struct xg_gw_replay);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_replay SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XG_GW_MAX_PEERS);
	__type(key, __u32);
	__type(value, struct xg_gw_txctr);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_txctr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_GW_MAX_PEERS);
	__type(key, __u32);
	__type(value, struct xg_gw_pcpu);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_pstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_GW_PACACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_gw_pac_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_pacache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_GW_RTCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_gw_rtc_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_rtcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_GW_DCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_gw_dc_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_dcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 2 * XG_GW_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gw_xsk SEC(".maps");

#endif
