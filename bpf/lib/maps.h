/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Map definitions, identical in every xgate object. All are pinned by name
 * (LIBBPF_PIN_BY_NAME under the instance's pin root), so the transit and
 * agent programs of a host share one set and a reload reuses the state.
 */
#ifndef XG_MAPS_H
#define XG_MAPS_H

#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xg_host);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_host SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XG_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct xg_iface);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_ifaces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XG_MAX_VPCS);
	__type(key, __u32);
	__type(value, struct xg_vpc);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_vpc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XG_MAX_SUBNETS);
	__type(key, struct xg_subnet_key);
	__type(value, struct xg_subnet);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_subnet SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XG_MAX_ENDPOINTS);
	__type(key, struct xg_ep_key);
	__type(value, struct xg_endpoint);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_endpoint SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XG_MAX_CACHE);
	__type(key, struct xg_ep_key);
	__type(value, struct xg_cache_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_MAX_STATS);
	__type(key, __u32);
	__type(value, struct xg_stat);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, XG_MAX_IFACES);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_txports SEC(".maps");

/* Configuration generation and the per-CPU caches (see xgate_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xg_gen);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_NHCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_nh_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_nhcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_IFCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_ifc_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_ifcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_EPCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_epc_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_epcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_RTCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_rt_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_rtcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_DPCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_dpc_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_dpcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_AGCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_agc_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_agcache SEC(".maps");

/* Session NAT (xgate_abi.h, "session ingress"): written by userspace only,
 * so no preallocation (memory follows the sessions, not the maximum). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XG_MAX_SESSIONS);
	__type(key, struct xg_sess_key);
	__type(value, struct xg_sess);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_sess SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XG_MAX_SESSIONS);
	__type(key, struct xg_sess_rev_key);
	__type(value, struct xg_sess_rev);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_sess_rev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_SESSCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_sess_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_sesscache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XG_SESSCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xg_sess_rslot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_sessrcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xg_sgen SEC(".maps");

#endif
