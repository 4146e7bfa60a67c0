# SPDX-License-Identifier: BSD-2-Clause
"""Type 1 (AEAD) tunnel frames as proto/xgtun.md ("Tunnel header", "Type 1:
AEAD") defines them, written from the spec and not from userspace/tun/, and
the ok/not ok lines of the python tests that use them (tests/gw/aead_decoder.py,
tests/gw/one_nic.py): an independent decoder is the point of those tests.
"""
import struct

from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

HDR = struct.Struct("!BBBBIQ16s")  # version, type, key id, flags, VNI<<8|0, counter, tag
TYPE_AEAD = 1


class Checks:
    """ok/not ok lines, and how many were not ok (the exit status)."""

    def __init__(self):
        self.failures = 0

    def check(self, cond, what):
        print(("ok - " if cond else "not ok - ") + what)
        if not cond:
            self.failures += 1


def aead(cipher, key):
    return AESGCM(key) if cipher == "aes-256-gcm" else ChaCha20Poly1305(key)


def build(cipher, key, salt, key_id, vni, counter, inner, typ=TYPE_AEAD, flags=0, rsv=0):
    """A frame as the spec says: AD = header bytes 0..15, nonce = salt | counter."""
    ad = struct.pack("!BBBBIQ", 1, typ, key_id, flags, vni << 8 | rsv, counter)
    sealed = aead(cipher, key).encrypt(salt + ad[8:16], inner, ad)
    return ad + sealed[-16:] + sealed[:-16]


def decode(cipher, key, salt, frame):
    """Every field of the header, and the inner frame opened; raises on a bad tag."""
    ver, typ, key_id, flags, vni_rsv, counter, tag = HDR.unpack_from(frame)
    inner = aead(cipher, key).decrypt(salt + frame[8:16], frame[32:] + tag, frame[:16])
    return dict(ver=ver, type=typ, key_id=key_id, flags=flags, vni=vni_rsv >> 8,
                rsv=vni_rsv & 0xFF, counter=counter, inner=inner, ct=frame[32:])
