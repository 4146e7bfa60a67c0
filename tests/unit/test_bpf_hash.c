// SPDX-License-Identifier: BSD-2-Clause
/* The name xg_attach pins a role's program under carries the hash CMake
 * made of the object at build time (bpf_hash.h): it must be the hash of the
 * bytes built into xgate, or a program of another build could be taken for
 * this one's (and this one's never found). Recomputed here from the
 * skeletons' embedded objects, with libsodium's SHA-256. */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "xg.h"
#include "transit.skel.h"
#include "agent.skel.h"
#include "gateway.skel.h"
#include "pass.skel.h"
#include "ingress.skel.h"
#include "unit.h"

static void sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, p, n);
	sodium_bin2hex(out, 65, h, sizeof(h));
}

int main(void)
{
	static const struct {
		enum xg_role role;
		const char *name;
		const void *(*elf)(size_t *sz);
	} roles[] = {
	    {XG_ROLE_TRANSIT, "transit", transit_bpf__elf_bytes},
	    {XG_ROLE_AGENT, "agent", agent_bpf__elf_bytes},
	    {XG_ROLE_PASS, "pass", pass_bpf__elf_bytes},
	    {XG_ROLE_GATEWAY, "gateway", gateway_bpf__elf_bytes},
	    {XG_ROLE_INGRESS, "ingress", ingress_bpf__elf_bytes},
	};
	struct xg_maps m = {.root = "/sys/fs/bpf/xgate/t"};
	char pins[5][PATH_MAX + 64];

	if (sodium_init() < 0)
		return 1;
	for (size_t i = 0; i < 5; i++) {
		char hex[65], want[PATH_MAX + 64];
		size_t sz = 0;
		const void *elf = roles[i].elf(&sz);

		sha256_hex(elf, sz, hex);
		snprintf(want, sizeof(want), "/sys/fs/bpf/xgate/t/prog_%s_%.16s", roles[i].name,
			 hex);
		xg_prog_pin_path(&m, roles[i].role, pins[i], sizeof(pins[i]));
		CHECK(!strcmp(pins[i], want), "%s: pinned as %s (the embedded object's %.16s)",
		      roles[i].name, pins[i], hex);
	}
	for (size_t i = 0; i < 5; i++)
		for (size_t j = i + 1; j < 5; j++)
			CHECK(strcmp(pins[i], pins[j]), "%s and %s pin apart", roles[i].name,
			      roles[j].name);
	return unit_summary();
}
