#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The far side of a one-NIC gateway (tests/gw/one_nic.sh), run in the
network namespace at the other end of the gateway's only NIC, where both its
cluster and its peer gateway are. Frames are built and read with raw
packet sockets, the cipher from proto/xgtun.md with python3-cryptography.

  one_nic.py seal DEV GW_MAC KEY_ID KEY_HEX SALT_HEX
      a divider's Geneve frame (10.99.1.9 -> the gateway's 10.99.1.1, VNI
      100) with an inner frame for the peer's subnet; the gateway must send
      it on as type 1, key KEY_ID, that opens with KEY/SALT, the payload
      not in clear on the wire
  one_nic.py open DEV GW_MAC KEY_ID KEY_HEX SALT_HEX
      a peer's type 1 frame (10.97.0.2 -> 10.97.0.1:6082) sealed with
      KEY/SALT as KEY_ID, counter 1; the gateway must open it and hand the
      inner frame to its cluster as Geneve to the bouncer 10.99.1.9
  one_nic.py seal|open ... none
      the same frame, which the gateway must not send on at all (its key is
      past its limits)
Prints ok/not ok lines; exit 1 on any failure.
"""
import socket
import struct
import sys
import time

from xgtun import Checks, build, decode

ETH_P_ALL = 3
PACKET_OUTGOING = 4
CIPHER = "chacha20-poly1305"
CHECKS = Checks()
check = CHECKS.check


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip4(a):
    return socket.inet_aton(a)


def ipv4(src, dst, payload, proto=17):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, proto, 0,
                    ip4(src), ip4(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def udp(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def eth(dst, src, payload, proto=0x0800):
    return dst + src + struct.pack("!H", proto) + payload


def inner(src, dst, marker):
    return eth(b"\x02\0\0\0\0\x02", b"\x02\0\0\0\0\x01",
               ipv4(src, dst, udp(40000, 5001, marker + bytes(64))))


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def frames(sock, want, seconds=3):
    """Frames received (not sent) until want(frame) is true: that frame."""
    end = time.time() + seconds
    while time.time() < end:
        sock.settimeout(max(0.05, end - time.time()))
        try:
            f, addr = sock.recvfrom(65535)
        except socket.timeout:
            break
        if addr[2] != PACKET_OUTGOING and want(f):
            return f
    return None


def main():
    how, dev, gw_mac, key_id = sys.argv[1], sys.argv[2], mac(sys.argv[3]), int(sys.argv[4])
    key, salt = bytes.fromhex(sys.argv[5]), bytes.fromhex(sys.argv[6])
    none = sys.argv[7:] == ["none"]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((dev, 0))
    me = s.getsockname()[4]
    if how == "seal":
        marker = b"ONE-NIC-SEAL-%d" % time.time_ns()
        gnv = struct.pack("!BBHI", 0, 0, 0x6558, 100 << 8) + inner("10.1.0.5", "10.2.0.7", marker)
        s.send(eth(gw_mac, me, ipv4("10.99.1.9", "10.99.1.1", udp(12345, 6081, gnv))))
        f = frames(s, lambda f: len(f) > 74 and f[12:14] == b"\x08\x00" and f[23] == 17
                   and f[26:30] == ip4("10.97.0.1") and f[36:38] == struct.pack("!H", 6082),
                   1.5 if none else 3)
        if none:
            check(f is None, "the Geneve frame did not leave the gateway")
            return
        check(f is not None, "the Geneve frame left the gateway's one NIC as a tunnel frame")
        if f is None:
            return
        ver, typ, kid, flags, vni, ctr = struct.unpack("!BBBBIQ", f[42:58])
        check((ver, typ, kid, flags, vni >> 8) == (1, 1, key_id, 0, 100),
              "type 1, key %d, VNI 100 (got ver %d type %d key %d vni %d)" %
              (key_id, ver, typ, kid, vni >> 8))
        check(marker not in f, "the payload is not on the wire in clear")
        try:
            pt = decode(CIPHER, key, salt, f[42:])["inner"]
        except Exception as e:  # InvalidTag
            pt = b""
            print("# decrypt: %r" % e)
        check(marker in pt and pt[26:34] == ip4("10.1.0.5") + ip4("10.2.0.7"),
              "it opens with the gateway's sending key: the inner frame, counter %d" % ctr)
    else:
        marker = b"ONE-NIC-OPEN-%d" % time.time_ns()
        tun = build(CIPHER, key, salt, key_id, 100, 1, inner("10.2.0.7", "10.1.0.5", marker))
        s.send(eth(gw_mac, me, ipv4("10.97.0.2", "10.97.0.1", udp(0xC123, 6082, tun))))
        f = frames(s, lambda f: len(f) > 50 and f[23] == 17 and
                   f[26:34] == ip4("10.99.1.1") + ip4("10.99.1.9") and
                   f[36:38] == struct.pack("!H", 6081), 1.5 if none else 3)
        if none:
            check(f is None, "the type 1 frame did not reach the cluster")
            return
        check(f is not None, "the type 1 frame came back out of the one NIC as Geneve to the "
              "bouncer")
        if f is not None:
            check(marker in f, "with the inner frame opened")


main()
sys.exit(1 if CHECKS.failures else 0)
