#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Independent decoder for type 1 (AEAD) tunnel frames, proto/xgtun.md.

Written from proto/xgtun.md ("Tunnel header", "Type 1: AEAD"), not from
userspace/tun/: OpenSSL's ChaCha20-Poly1305 and AES-256-GCM through
python3-cryptography. It decodes frames xgt_aead_tool seals with the C
library and checks every field; it builds frames the library's receiver must
accept; and it builds hostile frames the receiver must refuse and count by
reason.

usage: aead_decoder.py XGT_AEAD_TOOL | --vector
"""
import os
import struct
import subprocess
import sys

from cryptography.exceptions import InvalidTag

from xgtun import TYPE_AEAD, Checks, aead, build, decode

CTR_LIMIT = 1 << 52
MAX_INNER = 1536
WINDOW = 192
CHECKS = Checks()
check = CHECKS.check


def tool(*args, stdin=None):
    r = subprocess.run([TOOL, *args], input=stdin, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout.split("\n")


def inner_frame(n, seed):
    """An Ethernet frame of n bytes with a recognisable payload."""
    eth = bytes.fromhex("020000000001" "020000000002" "0800")
    body = (b"xgate-known-payload-%d-" % seed) * (n // 20 + 1)
    return (eth + body)[:n]


def seal_side(cipher):
    key, salt = os.urandom(32), os.urandom(4)
    cases = [(3, 100, 1, 14), (3, 0xFFFFFF, 2, 64), (250, 1, 0xFFFFFFFFFFFFF, 1400),
             (0, 4242, 77, MAX_INNER)]
    for key_id, vni, ctr, n in cases:
        inner = inner_frame(n, ctr)
        rc, out = tool("seal", cipher, key.hex(), salt.hex(), str(key_id), str(vni), str(ctr),
                       inner.hex())
        what = "%s: key %d VNI %d counter %d inner %d B" % (cipher, key_id, vni, ctr, n)
        if rc:
            check(False, what + ": sealed (" + " ".join(out) + ")")
            continue
        frame = bytes.fromhex(out[0])
        check(len(frame) == 32 + n, what + ": length = 32 + inner")
        try:
            d = decode(cipher, key, salt, frame)
        except InvalidTag:
            check(False, what + ": tag verifies with salt | counter and header[0:16] as AD")
            continue
        check(True, what + ": tag verifies with salt | counter and header[0:16] as AD")
        check(d["ver"] == 1 and d["type"] == TYPE_AEAD and d["flags"] == 0 and d["rsv"] == 0,
              what + ": version 1, type 1, flags 0, reserved 0")
        check(d["key_id"] == key_id and d["vni"] == vni and d["counter"] == ctr,
              what + ": key id, VNI and counter as asked")
        check(d["inner"] == inner, what + ": opens to the inner frame byte for byte")
        check(b"xgate-known-payload" not in frame, what + ": no plaintext on the wire")
        # the nonce is salt | counter, not the counter alone
        try:
            aead(cipher, key).decrypt(bytes(4) + frame[8:16], frame[32:] + frame[16:32],
                                      frame[:16])
            check(False, what + ": the salt is part of the nonce")
        except InvalidTag:
            check(True, what + ": the salt is part of the nonce")
    rc, out = tool("seal", cipher, key.hex(), salt.hex(), "1", "5", "0", inner_frame(60, 0).hex())
    check(rc == 3 and "DROP_GW_BAD_HDR" in out[0], cipher + ": counter 0 is not sealed")
    rc, out = tool("seal", cipher, key.hex(), salt.hex(), "1", "5", "9",
                   inner_frame(MAX_INNER + 1, 0).hex())
    check(rc == 3 and "DROP_GW_TOO_BIG" in out[0], cipher + ": an inner frame over 1536 B is not sealed")


def receive_side(cipher):
    k1, s1, k2, s2 = os.urandom(32), os.urandom(4), os.urandom(32), os.urandom(4)
    other = os.urandom(32)  # another peer's key, same id
    frames, expect = [], []

    def add(frame, want):
        frames.append(frame.hex())
        expect.append(want)

    good = []
    for i, (kid, key, salt) in enumerate([(1, k1, s1), (2, k2, s2), (1, k1, s1)]):
        inner = inner_frame(60 + 300 * i, i)
        add(build(cipher, key, salt, kid, 100 + i, 10 + i, inner), "ok " + inner.hex())
        good.append(inner)
    f = bytearray(build(cipher, k1, s1, 1, 100, 20, inner_frame(100, 20)))
    f[40] ^= 1
    add(f, "drop DROP_GW_BAD_MAC")                                   # ciphertext
    f = bytearray(build(cipher, k1, s1, 1, 100, 21, inner_frame(100, 21)))
    f[20] ^= 1
    add(f, "drop DROP_GW_BAD_MAC")                                   # tag
    f = bytearray(build(cipher, k1, s1, 1, 100, 22, inner_frame(100, 22)))
    f[6] ^= 1
    add(f, "drop DROP_GW_BAD_MAC")                                   # header (VNI)
    add(build(cipher, k1, s1, 9, 100, 23, inner_frame(100, 23)), "drop DROP_GW_BAD_KEY")
    add(build(cipher, other, s1, 1, 100, 24, inner_frame(100, 24)), "drop DROP_GW_BAD_MAC")
    add(build(cipher, k1, s2, 1, 100, 25, inner_frame(100, 25)), "drop DROP_GW_BAD_MAC")  # salt
    add(bytes.fromhex(frames[0]), "drop DROP_GW_REPLAY")             # replay of the first
    add(build(cipher, k1, s1, 1, 100, 26, inner_frame(100, 26), typ=0), "drop DROP_GW_BAD_HDR")
    add(build(cipher, k1, s1, 1, 100, 27, inner_frame(100, 27), flags=1), "drop DROP_GW_BAD_HDR")
    add(build(cipher, k1, s1, 1, 100, 28, inner_frame(100, 28), rsv=1), "drop DROP_GW_BAD_HDR")
    add(build(cipher, k1, s1, 1, 100, 1000, inner_frame(100, 29)), "ok " + inner_frame(100, 29).hex())
    add(build(cipher, k1, s1, 1, 100, 1000 - WINDOW, inner_frame(100, 30)), "drop DROP_GW_TOO_OLD")
    add(build(cipher, k1, s1, 1, 100, 1000 - WINDOW + 1, inner_frame(100, 31)),
        "ok " + inner_frame(100, 31).hex())
    add(build(cipher, k1, s1, 1, 100, 1001, inner_frame(8, 0)), "drop DROP_GW_TRUNC")
    rc, out = tool("rx", cipher, k1.hex(), s1.hex(), "1", k2.hex(), s2.hex(), "2",
                   stdin="\n".join(frames) + "\n")
    check(rc == 0, cipher + ": receiver ran")
    for i, want in enumerate(expect):
        got = out[i] if i < len(out) else ""
        check(got == want, "%s: frame %d: %s" % (cipher, i, want[:40]))
    counts = {l.split()[1]: int(l.split()[2]) for l in out if l.startswith("count ")}
    check(counts == {"DROP_GW_BAD_MAC": 5, "DROP_GW_BAD_KEY": 1, "DROP_GW_REPLAY": 1,
                     "DROP_GW_BAD_HDR": 3, "DROP_GW_TOO_OLD": 1, "DROP_GW_TRUNC": 1},
          cipher + ": every refusal counted by its reason: %s" % counts)
    check("accepted 5" in out, cipher + ": the five good frames counted as accepted")


def vector():
    """The frame vector of tests/unit/test_tun_aead.c, computed here."""
    key, salt = bytes(range(32)), bytes.fromhex("a1b2c3d4")
    inner = bytes.fromhex("0200000000010200000000020800") + bytes(range(50))
    for c in ("chacha20-poly1305", "aes-256-gcm"):
        f = build(c, key, salt, 3, 0x123456, 0x0102030405, inner)
        print(c, "tag", f[16:32].hex(), "ct", f[32:].hex())


if __name__ == "__main__":
    if sys.argv[1:] == ["--vector"]:
        vector()
        sys.exit(0)
    TOOL = sys.argv[1]
    rc, out = tool("ciphers")
    ciphers = out[0].split()
    check("chacha20-poly1305" in ciphers, "the library offers ChaCha20-Poly1305")
    for c in ciphers:
        seal_side(c)
        receive_side(c)
    if "aes-256-gcm" not in ciphers:
        print("# no AES-NI/PCLMUL: AES-256-GCM not checked")
    print("%s" % ("FAIL" if CHECKS.failures else "PASS"))
    sys.exit(1 if CHECKS.failures else 0)
