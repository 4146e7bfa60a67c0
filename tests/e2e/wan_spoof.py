#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""An attacker on the WAN router of the multi-cluster topology.

  wan_spoof.py capture IFACE SRC DST POD_NETNS TARGET PCAP
      sniff IFACE for one genuine tunnel packet SRC -> DST (UDP 6082) while
      pod POD_NETNS pings TARGET, and save it to PCAP
  wan_spoof.py send IFACE DST_MAC PCAP
      send variants of it out of IFACE to the gateway at DST_MAC:
      the genuine packet twice (replays), a copy with one inner byte flipped
      (tag unchanged), and a copy from a stranger's address.
Run inside the router's namespace.
"""
import subprocess
import sys
import time

from scapy.all import AsyncSniffer, Ether, IP, UDP, get_if_hwaddr, rdpcap, sendp, wrpcap

TUN_PORT = 6082


def capture(iface, src, dst, pod_ns, target, out):
    def genuine(p):
        return IP in p and UDP in p and p[IP].src == src and p[IP].dst == dst and \
            p[UDP].dport == TUN_PORT

    sn = AsyncSniffer(iface=iface, lfilter=genuine, count=1, store=True)
    sn.start()
    time.sleep(0.5)
    subprocess.run(["ip", "netns", "exec", pod_ns, "ping", "-c2", "-i0.2", "-W1", target],
                   stdout=subprocess.DEVNULL, check=False)
    sn.join(timeout=5)
    if not sn.results:
        sys.exit(f"no tunnel packet {src} -> {dst} seen on {iface}")
    wrpcap(out, sn.results[:1])
    print(f"captured {len(sn.results[0])} bytes, counter "
          f"{int.from_bytes(bytes(sn.results[0][UDP].payload)[8:16], 'big')}")


def send(iface, dst_mac, pcap):
    orig = rdpcap(pcap)[0]
    ip = orig[IP].copy()
    mine = get_if_hwaddr(iface)
    replay = Ether(src=mine, dst=dst_mac) / ip
    body = bytearray(bytes(ip[UDP].payload))
    body[-1] ^= 0x01  # last inner byte: the tag no longer matches
    tampered = Ether(src=mine, dst=dst_mac) / IP(bytes(ip)[:20] + bytes(ip[UDP])[:8] + bytes(body))
    stranger = Ether(src=mine, dst=dst_mac) / ip.copy()
    stranger[IP].src = "198.18.9.9"
    del stranger[IP].chksum
    sendp([replay, replay, tampered, stranger], iface=iface, verbose=False)
    print("sent 2 replays, 1 tampered, 1 from a stranger")


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[1] == "capture":
        capture(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "send":
        send(*sys.argv[2:])
    else:
        sys.exit(__doc__)
