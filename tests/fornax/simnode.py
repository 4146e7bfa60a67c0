#!/usr/bin/python3
"""Simulated node agents for fornaxd's node link (proto/fornax.md section 2),
written against the spec with python3-websockets: they register, answer the
full sync, and play the node's part of every command (no real pods).

  simnode.py run URL[,URL...] NAME DIR [--join T] [--count N] [options]
      Several URLs: a link to every core, as nodeagentd keeps; reports go to
      all of them, commands are obeyed only from the core that says it leads
      with the highest term said (proto/fornax.md "Several cores"); a command
      from another is printed "refused TYPE from URL" and dropped.
      N nodes (NAME, or NAME-0..NAME-N-1 with --count) on one event loop.
      Each keeps its state in DIR/NODE.json (credential, revision, pods,
      sessions), so a restarted simulator, or one whose fornaxd restarted,
      comes back with the same credential and state. Reconnects on its own.
      PodCreate -> PodState Standby (podIP from the podCIDR);
      SessionOpen -> SessionState Available with accessEndPoints
      (publicIp, a port from portRange) and the session's owner as
      SessionOpen gave it; SessionClose -> Closed;
      PodTerminate -> Terminated.
      --hold-sessions: never answer SessionOpen (open timeouts)
      --stall: once ready, read nothing more (through a small receive
      buffer), to see fornaxd bound what it queues for a node
      --public-ip A (default 198.51.100.10)  --cpu M --memory B --pods N
  simnode.py once URL NAME [--join T | --cred C]
      register once; print the credential, or "refused CODE: MESSAGE"
  Before the command: --ca FILE (wss:// is verified against it).
  simnode.py idle URL
      connect and send nothing; print the seconds until fornaxd closes
  simnode.py raw URL TEXT...
      send the texts (after a good register with --join/--cred if given) and
      print "refused CODE: MESSAGE" or "closed"
"""
import argparse
import asyncio
import ipaddress
import json
import os
import socket
import ssl
import sys

import websockets

SUBPROTOCOL = "node.fornax.xgate.io.v1"
PATH = "/apis/core.fornax-serverless.centaurusinfra.io/v1/nodeagent"


def url_of(base):
    return base if base.count("/") > 2 else base + PATH


CA = None  # --ca FILE: wss:// verified against it


async def connect(url, small=False):
    ctx = ssl.create_default_context(cafile=CA) if url.startswith("wss://") else None
    if not small:
        return await websockets.connect(url_of(url), subprotocols=[SUBPROTOCOL], max_size=None,
                                        ssl=ctx, open_timeout=5, ping_interval=None)
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    return await websockets.connect(url_of(url), subprotocols=[SUBPROTOCOL], sock=sock,
                                    ssl=ctx, server_hostname=host if ctx else None,
                                    max_size=None, max_queue=1, read_limit=4096,
                                    open_timeout=5, ping_interval=None)


class Link:
    """one core's link: what it said of its lead, whether it synced"""

    def __init__(self, url):
        self.url, self.ws, self.ready, self.leader, self.term = url, None, False, False, 0

    async def send(self, msg):
        await self.ws.send(json.dumps(msg))


class Node:
    def __init__(self, args, name):
        self.args, self.name = args, name
        self.file = os.path.join(args.dir, name + ".json") if args.dir else None
        self.st = {"credential": None, "rev": 0, "pods": {}, "sessions": {}, "next_ip": 2,
                   "next_port": 0}
        if self.file and os.path.exists(self.file):
            with open(self.file) as f:
                self.st = json.load(f)
        self.cfg, self.max_term = None, 0
        self.links = [Link(u) for u in args.url.split(",")]

    def save(self):
        if not self.file:
            return
        tmp = self.file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.st, f)
        os.replace(tmp, self.file)

    def info(self):
        a = self.args
        return {"name": self.name, "ip": "192.0.2.1", "publicIp": a.public_ip,
                "labels": {"sim": "1"},
                "capacity": {"cpu": a.cpu, "memory": a.memory, "pods": a.pods}}

    def auth(self):
        if self.st["credential"]:
            return {"credential": self.st["credential"]}
        return {"join": self.args.join}

    async def send(self, msg):
        """a report: to every core linked"""
        for k in self.links:
            if k.ws is not None:
                try:
                    await k.send(msg)
                except websockets.exceptions.WebSocketException:
                    pass

    def bump(self):
        self.st["rev"] += 1
        return self.st["rev"]

    async def full(self, k, kind):
        await k.send({"type": kind, "nodeRevision": self.st["rev"], "node": self.info(),
                      "pods": list(self.st["pods"].values()),
                      "sessions": list(self.st["sessions"].values())})

    def lead(self, k, m):
        k.leader, k.term = m.get("leader", True), m.get("term", 0)
        if k.leader:
            self.max_term = max(self.max_term, k.term)

    async def on(self, k, m):
        t = m.get("type")
        if t == "NodeConfiguration":
            self.cfg = m
            self.lead(k, m)
            if m.get("credential"):
                self.st["credential"] = m["credential"]
                self.save()
            return
        if t == "CoreState":
            self.lead(k, m)
            return
        if t == "NodeFullSync":
            await self.full(k, "NodeState")
            if not k.ready:
                k.ready = True
                await self.full(k, "NodeReady")
                if self.args.stall:
                    print(f"{self.name}: stalled", file=sys.stderr, flush=True)
                    await asyncio.sleep(3600)
            return
        if t == "error":
            print(f"{self.name}: refused {m.get('code')}: {m.get('message')}", file=sys.stderr,
                  flush=True)
            return
        if not (k.leader and k.term >= self.max_term):
            print(f"{self.name}: refused {t} from {k.url}: not the leader (term {k.term}, "
                  f"the leader's {self.max_term})", file=sys.stderr, flush=True)
            return
        print(f"{self.name}: {t} from {k.url}", file=sys.stderr, flush=True)
        if t == "PodCreate":
            pod = m["pod"]
            net = ipaddress.ip_network(self.cfg["podCIDR"])
            ip = str(net.network_address + self.st["next_ip"])
            self.st["next_ip"] += 1
            p = {"podIdentifier": m["podIdentifier"], "application": pod["application"],
                 "state": "Standby", "podIP": ip, "ports": pod.get("ports", [])}
            self.st["pods"][p["podIdentifier"]] = p
            rev = self.bump()
            self.save()
            await self.send({"type": "PodState", "nodeRevision": rev, "pod": p})
        elif t == "PodTerminate":
            p = self.st["pods"].pop(m["podIdentifier"], None)
            if p is None:
                p = {"podIdentifier": m["podIdentifier"], "application": "default/unknown",
                     "reason": "NotFound"}
            for sid in [s for s, v in self.st["sessions"].items()
                        if v["podIdentifier"] == p["podIdentifier"]]:
                del self.st["sessions"][sid]
            p["state"] = "Terminated"
            rev = self.bump()
            self.save()
            await self.send({"type": "PodState", "nodeRevision": rev, "pod": p})
        elif t == "SessionOpen":
            if self.args.hold_sessions:
                return
            p = self.st["pods"].get(m["podIdentifier"])
            if p is None:
                rev = self.bump()
                await self.send({"type": "SessionState", "nodeRevision": rev, "session": {
                    "sessionIdentifier": m["sessionIdentifier"],
                    "podIdentifier": m["podIdentifier"], "state": "Closed",
                    "reason": "NotFound"}})
                return
            lo, hi = self.cfg["endpoints"]["portRange"]
            eps = []
            for port in p.get("ports") or [{"containerPort": 8080}]:
                eps.append({"protocol": port.get("protocol", "TCP"),
                            "ipAddress": self.args.public_ip,
                            "port": lo + self.st["next_port"] % (hi - lo + 1)})
                self.st["next_port"] += 1
            p["state"] = "Running"
            s = {"sessionIdentifier": m["sessionIdentifier"], "podIdentifier": p["podIdentifier"],
                 "state": "Available", "accessEndPoints": eps, "clientSessions": 0}
            # kept with the session and echoed in every report, as nodeagentd does
            if "owner" in m.get("session", {}):
                s["owner"] = m["session"]["owner"]
            self.st["sessions"][s["sessionIdentifier"]] = s
            rev = self.bump()
            self.save()
            await self.send({"type": "SessionState", "nodeRevision": rev, "session": s})
        elif t == "SessionClose":
            s = self.st["sessions"].pop(m["sessionIdentifier"], None) or {
                "sessionIdentifier": m["sessionIdentifier"],
                "podIdentifier": m["podIdentifier"], "reason": "NotFound"}
            s["state"] = "Closed"
            p = self.st["pods"].get(s["podIdentifier"])
            if p:
                p["state"] = "Standby"
            rev = self.bump()
            self.save()
            await self.send({"type": "SessionState", "nodeRevision": rev, "session": s})

    async def run_link(self, k):
        while True:
            try:
                ws = await connect(k.url, self.args.stall)
                k.ready, k.leader, k.term = False, False, 0
                await ws.send(json.dumps({"type": "NodeRegister", "v": 1, "auth": self.auth(),
                                          "nodeRevision": self.st["rev"], "node": self.info()}))
                k.ws = ws
                async for text in ws:
                    await self.on(k, json.loads(text))
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError):
                pass
            k.ws, k.leader = None, False
            await asyncio.sleep(0.2)

    async def run(self):
        await asyncio.gather(*(self.run_link(k) for k in self.links))


async def run(args):
    names = [args.name] if args.count == 1 else [f"{args.name}-{i}" for i in range(args.count)]
    await asyncio.gather(*(Node(args, n).run() for n in names))


async def refused_or(ws, first):
    try:
        while True:
            m = json.loads(await asyncio.wait_for(ws.recv(), 5))
            if m.get("type") == "error":
                return f"refused {m.get('code')}: {m.get('message')}"
            if first and m.get("type") == "NodeConfiguration":
                return m
    except websockets.exceptions.ConnectionClosed:
        return "closed"


async def once(args):
    ws = await connect(args.url)
    auth = {"credential": args.cred} if args.cred else {"join": args.join}
    await ws.send(json.dumps({"type": "NodeRegister", "v": 1, "auth": auth, "nodeRevision": 0,
                              "node": {"name": args.name, "ip": "192.0.2.9",
                                       "capacity": {"cpu": 1000, "memory": 1 << 30,
                                                    "pods": 10}}}))
    r = await refused_or(ws, True)
    print(r.get("credential", "") if isinstance(r, dict) else r)


async def idle(args):
    ws = await connect(args.url)
    t0 = asyncio.get_running_loop().time()
    try:
        await asyncio.wait_for(ws.wait_closed(), 30)
        print(f"{asyncio.get_running_loop().time() - t0:.0f}")
    except asyncio.TimeoutError:
        print("open")


async def raw(args):
    ws = await connect(args.url)
    if args.join or args.cred:
        auth = {"credential": args.cred} if args.cred else {"join": args.join}
        await ws.send(json.dumps({"type": "NodeRegister", "v": 1, "auth": auth,
                                  "nodeRevision": 0,
                                  "node": {"name": args.name, "ip": "192.0.2.9",
                                           "capacity": {"cpu": 1000, "memory": 1 << 30,
                                                        "pods": 10}}}))
    for t in args.texts:
        await ws.send(t)
    r = await refused_or(ws, False)
    print(r)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("url")
    r.add_argument("name")
    r.add_argument("dir")
    r.add_argument("--join")
    r.add_argument("--count", type=int, default=1)
    r.add_argument("--hold-sessions", action="store_true")
    r.add_argument("--stall", action="store_true")
    r.add_argument("--public-ip", default="198.51.100.10")
    r.add_argument("--cpu", type=int, default=4000)
    r.add_argument("--memory", type=int, default=8 << 30)
    r.add_argument("--pods", type=int, default=100)
    o = sub.add_parser("once")
    o.add_argument("url")
    o.add_argument("name")
    o.add_argument("--join")
    o.add_argument("--cred")
    i = sub.add_parser("idle")
    i.add_argument("url")
    w = sub.add_parser("raw")
    w.add_argument("url")
    w.add_argument("texts", nargs="+")
    w.add_argument("--name", default="raw-node")
    w.add_argument("--join")
    w.add_argument("--cred")
    ap.add_argument("--ca", help="the CA file wss:// is verified against")
    args = ap.parse_args()
    global CA
    CA = args.ca
    if args.cmd == "run":
        os.makedirs(args.dir, exist_ok=True)
        asyncio.run(run(args))
    elif args.cmd == "once":
        asyncio.run(once(args))
    elif args.cmd == "idle":
        asyncio.run(idle(args))
    else:
        asyncio.run(raw(args))


if __name__ == "__main__":
    main()
