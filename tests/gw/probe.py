#!/usr/bin/env python3
"""Clients that misbehave on gatewayd's peer port (tests/gw/harden.sh).

  probe.py trickle PORT MAX_BYTES INTERVAL   HELLO bytes one at a time; exit 0 once
                                             gatewayd closes, 1 if it never did
  probe.py flood PORT N PID [SOURCES]        N silent connections at once, from SOURCES
                                             loopback addresses (127.0.0.1...); prints
                                             "threads=T closed=C" (gatewayd's threads
                                             while they are open, how many it closed)
  probe.py hold PORT N SECONDS               keeps N silent connections open (from 20
                                             loopback addresses), opening a new one for
                                             each that is closed
  probe.py hellos PORT KEY_B64 INTERVAL SECONDS
                                             a HELLO naming KEY (a peer's public key) on
                                             a new connection every INTERVAL (from 20
                                             loopback addresses), each held open; prints
                                             how many were answered
  probe.py ctlhold SOCKET N SECONDS          N silent clients on the control socket
  probe.py ctl SOCKET REQUEST                one request, its reply printed
"""
import base64
import os
import select
import socket
import sys
import time


def hello(static_pub):
    # "XGW1" | version 1 | role 0 (initiator) | reserved | static | ephemeral
    return b"XGW1" + bytes([1, 0, 0, 0]) + static_pub + os.urandom(32)


def conn(port, source="127.0.0.1"):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    s.setblocking(False)
    return s


def closed(s):
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def trickle(port, max_bytes, interval):
    s = conn(port)
    msg = hello(os.urandom(32))
    for i in range(max_bytes):
        if closed(s):
            print(f"closed by gatewayd after {i} bytes")
            return 0
        try:
            s.send(msg[i:i + 1])
        except OSError:
            print(f"closed by gatewayd after {i} bytes")
            return 0
        time.sleep(interval)
    print(f"still open after {max_bytes} bytes")
    return 1


def threads(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def flood(port, n, pid, sources):
    socks = []
    for i in range(n):
        try:
            socks.append(conn(port, f"127.0.0.{1 + i % sources}"))
        except OSError:
            pass
    time.sleep(1.5)
    t = threads(pid)
    c = sum(closed(s) for s in socks)
    print(f"threads={t} closed={c} opened={len(socks)}")
    for s in socks:
        s.close()
    return 0


def hold(port, n, seconds):
    socks, i = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        socks = [s for s in socks if not closed(s) or s.close()]
        while len(socks) < n:
            i += 1
            try:
                socks.append(conn(port, f"127.0.0.{1 + i % 20}"))
            except OSError:
                break
        time.sleep(0.1)
    return 0


def hellos(port, key, interval, seconds):
    pub = base64.b64decode(key)
    socks, answered, i = [], 0, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        i += 1
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2,
                                         source_address=(f"127.0.0.{2 + i % 20}", 0))
            s.sendall(hello(pub))
            if select.select([s], [], [], 2)[0] and len(s.recv(72)) > 0:
                answered += 1
            socks.append(s)
        except OSError:
            pass
        time.sleep(interval)
    print(f"{answered} hellos answered")
    return 0


def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


def ctlhold(path, n, seconds):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)  # blocking: waits in a full listen queue
        socks.append(s)
    time.sleep(seconds)
    for s in socks:
        s.close()
    return 0


def ctl(path, request):
    s = unix(path)
    s.sendall(request.encode())
    s.shutdown(socket.SHUT_WR)
    reply = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        reply += b
    print(reply.decode())
    return 0


def main(a):
    if a[0] == "trickle":
        return trickle(int(a[1]), int(a[2]), float(a[3]))
    if a[0] == "flood":
        return flood(int(a[1]), int(a[2]), int(a[3]), int(a[4]) if len(a) > 4 else 1)
    if a[0] == "hold":
        return hold(int(a[1]), int(a[2]), float(a[3]))
    if a[0] == "hellos":
        return hellos(int(a[1]), a[2], float(a[3]), float(a[4]))
    if a[0] == "ctlhold":
        return ctlhold(a[1], int(a[2]), float(a[3]))
    if a[0] == "ctl":
        return ctl(a[1], a[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
