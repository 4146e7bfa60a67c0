#!/usr/bin/env python3
"""Many connections that never finish a request, held open from one process.

usage: holders.py PORT KIND:N [KIND:N ...] [--max S]
kinds:
  connect  a CONNECT request, then nothing (the client waits for a tunnel)
  method   a request line with a method HTTP does not define, then nothing
  header   a request line, then one more header line a second, never the end
  body     POST headers with Content-Length: 1000, then one body byte a second
Prints "held N" once every connection is open, then, when the server has
closed them all or after --max seconds (default 90), one line per kind:
"KIND N closed C codes CODE,CODE..." (the status code of each answer, in
the order the connections closed; "-" for a close without an answer).
"""
import resource
import selectors
import socket
import sys
import time

FIRST = {
    "connect": b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    "method": b"BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    "header": b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
    "body": b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 1000\r\n\r\n",
}
DRIP = {"header": b"X-Slow: 1\r\n", "body": b" "}


def main():
    port = int(sys.argv[1])
    args = sys.argv[2:]
    limit = 90.0
    if "--max" in args:
        i = args.index("--max")
        limit = float(args[i + 1])
        del args[i : i + 2]
    want = [(k, int(n)) for k, n in (a.split(":") for a in args)]
    total = sum(n for _, n in want)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < total + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, total + 64), hard))
    sel = selectors.DefaultSelector()
    conns = []
    for kind, n in want:
        for _ in range(n):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            c = {"kind": kind, "s": s, "sent": False, "got": b"", "open": True}
            conns.append(c)
            sel.register(s, selectors.EVENT_WRITE, c)
    start = time.monotonic()
    pending = total
    held = False
    closed = {k: [] for k, _ in want}
    next_drip = start + 1
    while pending and time.monotonic() - start < limit:
        for key, ev in sel.select(timeout=0.2):
            c = key.data
            if ev & selectors.EVENT_WRITE and not c["sent"]:
                try:
                    c["s"].send(FIRST[c["kind"]])
                except OSError:
                    pass
                c["sent"] = True
                sel.modify(c["s"], selectors.EVENT_READ, c)
                continue
            try:
                b = c["s"].recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                b = b""
            if b:
                c["got"] += b
                continue
            sel.unregister(c["s"])
            c["s"].close()
            c["open"] = False
            pending -= 1
            got = c["got"].split(b" ", 2)
            code = got[1].decode() if len(got) > 1 and got[0].startswith(b"HTTP/") else "-"
            closed[c["kind"]].append(code)
        if not held and all(c["sent"] for c in conns):
            held = True
            print("held", total, flush=True)
        if time.monotonic() >= next_drip:
            next_drip += 1
            for c in conns:
                if c["open"] and c["sent"] and c["kind"] in DRIP:
                    try:
                        c["s"].send(DRIP[c["kind"]])
                    except OSError:
                        pass
    if not held:
        print("held", sum(c["sent"] for c in conns), flush=True)
    for kind, n in want:
        print(kind, n, "closed", len(closed[kind]), "codes", ",".join(closed[kind]) or "none")
    for c in conns:
        if c["open"]:
            c["s"].close()


main()
