#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Mesh status and per-gateway counters of the multi-cluster topology, as tables.

usage: gwtable.py XGATE PREFIX RUNDIR CLUSTER...
Reads each gatewayd's control socket (xgate gw status|peers -o json) and the
gateway program's per-reason counters (xgate -N NETNS stats -o json).
"""
import json
import subprocess
import sys


def xgate(xg, *args):
    out = subprocess.run([xg, *args, "-o", "json"], capture_output=True, text=True)
    if out.returncode:
        return None
    return json.loads(out.stdout)


def table(title, cols, rows):
    print(title)
    w = [max(len(str(c)), *(len(str(r[i])) for r in rows)) for i, c in enumerate(cols)]
    for r in [cols] + rows:
        print("  " + "  ".join(str(v).rjust(w[i]) if isinstance(v, int) else str(v).ljust(w[i])
                               for i, v in enumerate(r)).rstrip())
    print()


def main():
    xg, prefix, run, clusters = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    mesh, peers, xdp = [], [], []
    for c in clusters:
        sock = f"{run}/gw{c}.sock"
        st = xgate(xg, "gw", "status", "--socket", sock)
        if st is None:
            mesh.append([f"gw{c}", f"edge-{c}", "-", "gatewayd not running", "-"])
        else:
            mesh.append([st["name"], st["cluster"], st["public"],
                         f'{st["peers_up"]}/{st["peers"]} up', st["routes"]])
        for p in xgate(xg, "gw", "peers", "--socket", sock) or []:
            peers.append([f"gw{c}", p["name"], p["state"], p["routes"], p["tx_packets"],
                          p["rx_packets"], p["rx_dropped"],
                          "-" if p["key_age_s"] is None else p["key_age_s"],
                          p.get("cipher") or p.get("mode", "-")])
        tot = {}
        for dev in xgate(xg, "-N", f"{prefix}-c{c}gw", "stats") or []:
            for reason, v in dev["counters"].items():
                tot[reason] = tot.get(reason, 0) + v["packets"]
        drops = {r: n for r, n in tot.items() if r.startswith("drop_")}
        worst = max(drops, key=drops.get) if drops else "-"
        xdp.append([f"gw{c}", f"edge-{c}", tot.get("gw_encap", 0), tot.get("gw_to_worker", 0),
                    tot.get("gw_decap", 0), sum(drops.values()), worst])
    table("Mesh (gatewayd control sockets)",
          ["GATEWAY", "CLUSTER", "PUBLIC", "PEERS", "ROUTES"], mesh)
    table("Per peer (data plane: packets through the tunnel)",
          ["GATEWAY", "PEER", "STATE", "ROUTES", "TX_PKTS", "RX_PKTS", "RX_DROPPED", "KEY_AGE_S",
           "CIPHER"],
          peers)
    table("Gateway XDP program (both NICs)",
          ["GATEWAY", "CLUSTER", "ENCAP", "TO_CRYPTD", "DECAP", "DROPPED", "TOP_DROP_REASON"], xdp)


if __name__ == "__main__":
    main()
