#!/usr/bin/python3
"""An independent child of the edgeclusterd hub protocol (proto/edgecluster.md,
"Hub protocol"), written against the spec with python3-websockets rather than
libwebsockets: tree.sh uses it as a fake child that reports state, to check
authentication, and to throw garbage at the hub.

  hubclient.py join URL NAME TOKEN               print the credential issued
  hubclient.py refused URL NAME (--join T | --cred C | --none)
                                                 print "CODE CLOSE" of the refusal
  hubclient.py garbage URL KIND [--join T]       print the close code
  hubclient.py child URL NAME TOKEN DIR          a long-running child: its missions go
                                                 to DIR/missions, "mission=value" lines
                                                 in DIR/state are reported, its log is
                                                 DIR/log; with --stall FILE it reads
                                                 nothing after the welcome while FILE
                                                 exists (heartbeats go on), through a
                                                 small receive buffer
Options: --ca FILE (wss).
"""
import argparse
import asyncio
import hashlib
import json
import os
import socket
import ssl
import sys
import time
import uuid

import websockets

SUBPROTOCOL = "edge.xgate.io.v1"
HUB_PATH = "/apis/edge.xgate.io/v1/hub"


def url_of(base):
    return base if base.count("/") > 2 else base + HUB_PATH


async def connect(args, small=False):
    ctx = None
    if args.url.startswith("wss://"):
        ctx = ssl.create_default_context(cafile=args.ca)
    if not small:
        return await websockets.connect(url_of(args.url), subprotocols=[SUBPROTOCOL], ssl=ctx,
                                        max_size=None, open_timeout=5, ping_interval=None)
    # a child that stops reading: little room for what the hub sends before it backs up
    host, port = args.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    return await websockets.connect(url_of(args.url), subprotocols=[SUBPROTOCOL], ssl=ctx,
                                    sock=sock, server_hostname=host if ctx else None,
                                    max_size=None, max_queue=1, read_limit=4096,
                                    open_timeout=5, ping_interval=None)


def hello(name, auth, register=False, digest=""):
    return {"type": "hello", "v": 1, "name": name, "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
            "created": "2025-01-01T00:00:00Z", "labels": {"role": "py"},
            "spec": {"distro": "none", "driver": "local"}, "auth": auth, "register": register,
            "digest": digest}


def digest_of(missions):
    """BLAKE2b-256 over "name\\nuid\\nrv\\n" per mission, in byte order of name."""
    h = hashlib.blake2b(digest_size=32)
    for name in sorted(missions, key=lambda n: n.encode()):
        m = missions[name]["metadata"]
        h.update(("%s\n%s\n%s\n" % (name, m["uid"], m["resourceVersion"])).encode())
    return h.hexdigest()


async def until_closed(ws, limit=10):
    """Read until the hub closes; returns (last error message, close code)."""
    err = None

    async def reader():
        nonlocal err
        try:
            while True:
                m = json.loads(await ws.recv())
                if m.get("type") == "error":
                    err = m
        except websockets.ConnectionClosed:
            pass

    try:
        await asyncio.wait_for(reader(), limit)
    except asyncio.TimeoutError:
        return err, "timeout"
    return err, ws.close_code


async def cmd_join(args):
    ws = await connect(args)
    await ws.send(json.dumps(hello(args.name, {"join": args.token}, register=True)))
    m = json.loads(await ws.recv())
    await ws.close()
    if m.get("type") != "welcome" or "credential" not in m:
        print("no credential: %s" % m, file=sys.stderr)
        return 1
    print(json.dumps(m["credential"]))
    return 0


async def cmd_refused(args):
    ws = await connect(args)
    auth = {"join": args.join} if args.join else {"credential": args.cred} if args.cred else None
    h = hello(args.name, auth)
    if auth is None:
        del h["auth"]
    await ws.send(json.dumps(h))
    err, code = await until_closed(ws)
    print("%s %s" % (err["code"] if err else "none", code))
    return 0


async def cmd_garbage(args):
    ws = await connect(args)
    k = args.kind
    if k in ("unknown-type", "second-hello", "bad-state", "binary-after"):
        await ws.send(json.dumps(hello(args.name, {"join": args.join})))
        m = json.loads(await ws.recv())
        assert m["type"] == "welcome", m
    if k == "binary" or k == "binary-after":
        await ws.send(os.urandom(300))
    elif k == "badjson":
        await ws.send('{"type": "hello", "v": 1, ')
    elif k == "notobject":
        await ws.send('[1, 2, 3]')
    elif k == "first-not-hello":
        await ws.send(json.dumps({"type": "heartbeat", "ack": 0}))
    elif k == "oversize":
        await ws.send(json.dumps({"type": "hello", "pad": "x" * 70000}))
    elif k == "unknown-type":
        await ws.send(json.dumps({"type": "reboot-everything"}))
    elif k == "second-hello":
        await ws.send(json.dumps(hello(args.name, {"join": args.join})))
    elif k == "bad-state":
        await ws.send(json.dumps({"type": "state", "seq": "x", "items": 5}))
    err, code = await until_closed(ws)
    print("%s %s" % (err["code"] if err else "none", code))
    return 0


class Child:
    """Joins once, then keeps a link with its credential: applies missions,
    heartbeats with its digest, reports the state file's lines."""

    def __init__(self, args):
        self.args = args
        self.cred = None
        self.missions = {}
        self.ack = 0
        self.seq = 0
        self.reported = {}
        self.lists = 0
        self.log = open(os.path.join(args.dir, "log"), "a", buffering=1)

    def say(self, *a):
        print(time.strftime("%H:%M:%S"), *a, file=self.log)

    def write_missions(self):
        tmp = os.path.join(self.args.dir, "missions.tmp")
        with open(tmp, "w") as f:
            for n in sorted(self.missions):
                m = self.missions[n]
                f.write("%s %s %s\n" % (n, m["metadata"]["resourceVersion"],
                                        json.dumps(m["spec"], sort_keys=True)))
        os.replace(tmp, os.path.join(self.args.dir, "missions"))

    def wanted_state(self):
        try:
            with open(os.path.join(self.args.dir, "state")) as f:
                lines = [l.strip().split("=", 1) for l in f if "=" in l]
        except FileNotFoundError:
            return {}
        return {k: v for k, v in lines}

    async def report(self, ws, force=False):
        want = self.wanted_state()
        items = [{"mission": m, "state": {self.args.name: v}} for m, v in want.items()
                 if force or self.reported.get(m) != v]
        if items:
            self.seq += 1
            await ws.send(json.dumps({"type": "state", "seq": self.seq, "items": items}))
            self.say("state", self.seq, items)
            self.reported.update({i["mission"]: i["state"][self.args.name] for i in items})

    async def heartbeat(self, ws):
        await ws.send(json.dumps({
            "type": "heartbeat", "ack": self.ack, "digest": digest_of(self.missions),
            "cluster": {"apiVersion": "edge.xgate.io/v1", "kind": "EdgeCluster",
                        "metadata": {"name": self.args.name,
                                     "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, self.args.name)),
                                     "creationTimestamp": "2025-01-01T00:00:00Z",
                                     "labels": {"role": "py"}},
                        "spec": {"distro": "none", "driver": "local"},
                        "state": {"health": "ok", "children": [], "edgeClusters": {},
                                  "nodes": [], "edgeNodes": [],
                                  "missions": {"known": len(self.missions), "matched": 0,
                                               "active": 0}}},
            "descendants": []}))

    def stalled(self):
        return self.args.stall and os.path.exists(self.args.stall)

    async def session(self):
        ws = await connect(self.args, small=bool(self.args.stall))
        auth = {"credential": self.cred} if self.cred else {"join": self.args.token}
        await ws.send(json.dumps(hello(self.args.name, auth, digest=digest_of(self.missions))))
        w = json.loads(await ws.recv())
        if w.get("type") != "welcome":
            self.say("refused", w)
            await ws.close()
            return
        if "credential" in w:
            self.cred = w["credential"]["value"]
        self.say("welcome", w.get("name"), "resync", w.get("resync"))
        self.ack = 0
        await self.heartbeat(ws)
        await self.report(ws, force=bool(w.get("resync")))
        next_hb = time.monotonic() + 1
        while True:
            if self.stalled():  # heartbeats only: nothing is read
                self.say("stalled: not reading")
                while self.stalled():
                    await self.heartbeat(ws)
                    await asyncio.sleep(1)
                self.say("reading again")
                next_hb = time.monotonic() + 1
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=max(0.05, next_hb - time.monotonic()))
            except asyncio.TimeoutError:
                await self.heartbeat(ws)
                await self.report(ws)
                next_hb = time.monotonic() + 1
                continue
            m = json.loads(raw)
            t = m.get("type")
            if t == "list":
                self.lists += 1
                names = {i["name"]: i for i in m["items"]}
                for n in list(self.missions):
                    if n not in names:
                        del self.missions[n]
                fetch = [n for n, i in names.items()
                         if n not in self.missions
                         or self.missions[n]["metadata"]["uid"] != i["uid"]
                         or self.missions[n]["metadata"]["resourceVersion"] != i["rv"]]
                self.say("list", len(names), "fetch", fetch)
                if fetch:
                    await ws.send(json.dumps({"type": "fetch", "names": fetch}))
                self.ack = m["seq"]
                self.write_missions()
            elif t == "missions":
                for o in m["upsert"]:
                    self.missions[o["metadata"]["name"]] = o
                for d in m["delete"]:
                    self.missions.pop(d["name"], None)
                self.ack = m["seq"]
                self.say("missions", [o["metadata"]["name"] for o in m["upsert"]],
                         [d["name"] for d in m["delete"]])
                self.write_missions()
            elif t == "state-ack":
                with open(os.path.join(self.args.dir, "acked"), "w") as f:
                    f.write("%d\n" % m["seq"])
            elif t == "heartbeat-ack":
                if "credential" in m:
                    self.cred = m["credential"]["value"]
            elif t == "error":
                self.say("error", m)

    async def run(self):
        while True:
            try:
                await self.session()
            except (OSError, websockets.WebSocketException, asyncio.TimeoutError) as e:
                self.say("link down:", repr(e))
            await asyncio.sleep(0.5)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ca")
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("join")
    j.add_argument("url")
    j.add_argument("name")
    j.add_argument("token")
    r = sub.add_parser("refused")
    r.add_argument("url")
    r.add_argument("name")
    r.add_argument("--join")
    r.add_argument("--cred")
    r.add_argument("--none", action="store_true")
    g = sub.add_parser("garbage")
    g.add_argument("url")
    g.add_argument("kind")
    g.add_argument("--join")
    g.add_argument("--name", default="junk")
    c = sub.add_parser("child")
    c.add_argument("url")
    c.add_argument("name")
    c.add_argument("token")
    c.add_argument("dir")
    c.add_argument("--stall")
    args = p.parse_args()
    if args.cmd == "child":
        asyncio.run(Child(args).run())
        return 0
    return asyncio.run({"join": cmd_join, "refused": cmd_refused, "garbage": cmd_garbage}[args.cmd](args))


if __name__ == "__main__":
    sys.exit(main())
