#!/usr/bin/python3
# A fake fornaxd core for tests/e2e/nodeagent.sh: it serves the node link
# (proto/fornax.md "The node link"), starts nodeagentd itself (so that it
# can kill -9 and restart it), and drives the scenario, printing one
# "ok"/"not ok" line per check. Runs inside the node's namespace.
# usage: nodeagent_core.py PORT   (environment: NAD CONF ECHO XGATE NODE CLI CG TMP)
import asyncio, base64, ctypes, json, os, signal, socket, ssl, subprocess, sys, time
import websockets

PORT = int(sys.argv[1])
E = os.environ
TOKEN = "join-token-0123456789abcdef"
CRED = "c" * 43
FAILED = 0
PROCS = []
CORE_B = None  # the second core of two_cores


def ok(cond, what):
    global FAILED
    print(("ok - " if cond else "not ok - ") + what, flush=True)
    if not cond:
        FAILED += 1
    return cond


def start_nad(n, conf="CONF"):
    log = open(f"{E['TMP']}/nad{n}.log", "w")
    p = subprocess.Popen([E["NAD"], "-c", E[conf]], stdout=log, stderr=subprocess.STDOUT)
    with open(f"{E['TMP']}/pids", "a") as f:
        f.write(f"{p.pid}\n")
    PROCS.append(p)
    return p


def sh(*args, timeout=10):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


def curl(port):
    r = sh("ip", "netns", "exec", E["CLI"], "curl", "-s", "--max-time", "5",
           f"http://10.88.0.1:{port}/")
    return r.stdout if r.returncode == 0 else None


def ingress():
    r = sh(E["XGATE"], "-N", E["NODE"], "ingress", "ls", "-o", "json")
    return json.loads(r.stdout) if r.returncode == 0 else None


def cg(ctrl, f):
    try:
        with open(f"/sys/fs/cgroup/{ctrl}/{E['CG']}/slot0/{f}") as fh:
            return fh.read().strip()
    except OSError:
        return None


class Link:
    """One node link: messages in a queue, revisions checked as they come."""

    def __init__(self, ws, core):
        self.ws, self.core, self.q = ws, core, asyncio.Queue()
        self.tls = ws.transport.get_extra_info("sslcontext") is not None

    async def send(self, **m):
        await self.ws.send(json.dumps(m))

    async def pump(self):
        try:
            async for raw in self.ws:
                m = json.loads(raw)
                t = m.get("type")
                r = m.get("nodeRevision")
                if t in ("PodState", "SessionState", "IngressState"):
                    if r != self.core.rev + 1:
                        self.core.rev_gaps.append((t, r, self.core.rev))
                    self.core.rev = max(self.core.rev, r)
                await self.q.put(m)
        except websockets.ConnectionClosed:
            pass
        await self.q.put({"type": "closed"})

    async def expect(self, pred, what, timeout=20):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                ok(False, what + " (timed out)")
                return None
            try:
                m = await asyncio.wait_for(self.q.get(), left)
            except asyncio.TimeoutError:
                continue
            if pred(m):
                ok(True, what)
                return m
            if m.get("type") == "closed":
                ok(False, what + " (link closed)")
                return None


def pod_is(state, reason=None):
    return lambda m: (m.get("type") == "PodState" and m["pod"]["state"] == state and
                      (reason is None or m["pod"]["reason"] == reason))


def sess_is(sid, state):
    return lambda m: (m.get("type") == "SessionState" and
                      m["session"]["sessionIdentifier"] == sid and m["session"]["state"] == state)


class Core:
    def __init__(self):
        self.links = asyncio.Queue()
        self.rev = 0
        self.rev_gaps = []

    async def handler(self, ws, path):
        ok(path.endswith("/nodeagent"), f"the node dials the link path ({path})")
        ok(ws.subprotocol == "node.fornax.xgate.io.v1", "the node asks for the link's protocol")
        link = Link(ws, self)
        await self.links.put(link)
        await link.pump()


def conf_msg(cred, state_s=60):
    m = {"type": "NodeConfiguration", "node": "node-a", "podCIDR": "10.1.1.0/24", "vni": 100,
         "gateway": "10.1.1.1", "endpoints": {"form": 1, "portRange": [30000, 30099]},
         "stateSeconds": state_s}
    if cred:
        m["credential"] = CRED
    return m


POD = {"application": "default/echo", "usingNodeSessionService": True,
       "configData": {"greeting": "hello"},
       "containers": [{"name": "echo", "command": [E.get("ECHO", "")], "args": ["--port", "8080"],
                       "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                       "resources": {"limits": {"cpu": "500m", "memory": "64Mi"}}}]}


# what fornaxd sends as session.owner (opaque to the node: kept and echoed)
OWNER = "891a34b312e96c1ef91e775d3f4ea78f"


def b64(s):
    return base64.b64encode(s.encode()).decode()


async def scenario(core):
    nad = start_nad(1)
    link = await asyncio.wait_for(core.links.get(), 20)
    reg = await link.expect(lambda m: m.get("type") == "NodeRegister", "NodeRegister")
    ok(reg and reg["auth"] == {"join": TOKEN} and reg["nodeRevision"] == 0 and
       reg["node"]["name"] == "node-a" and reg["node"]["publicIp"] == "10.88.0.1",
       "a first register joins with the token at revision 0")
    await link.send(**conf_msg(True))
    await link.send(type="NodeFullSync")
    st = await link.expect(lambda m: m.get("type") == "NodeState", "NodeState answers the sync")
    ok(st and st["pods"] == [] and st["sessions"] == [], "a new node has no pods")
    await link.expect(lambda m: m.get("type") == "NodeReady", "NodeReady once the network is up")

    # a standby pod: it runs, frozen, in its cgroup with its limits
    await link.send(type="PodCreate", podIdentifier="default/echo-1", pod=POD, standby=True)
    await link.expect(pod_is("Creating"), "PodState Creating")
    m = await link.expect(pod_is("Standby"), "PodState Standby once its port listens", 30)
    ok(m and m["pod"]["podIP"] == "10.1.1.2", "the pod has the first address of the pod CIDR")
    ok(cg("freezer", "freezer.state") == "FROZEN", "the standby pod's cgroup is FROZEN")
    procs = (cg("freezer", "cgroup.procs") or "").split()
    ok(len(procs) >= 1, f"the pod's process runs in its cgroup ({procs})")
    ok(cg("memory", "memory.limit_in_bytes") == str(64 << 20), "memory limit 64Mi")
    ok(cg("cpu", "cpu.cfs_quota_us") == "50000", "cpu quota 500m (50 ms per 100 ms)")

    # a session: thawed, entry in place before Available, curl gets its data
    await link.send(type="SessionOpen", sessionIdentifier="default/s1",
                    podIdentifier="default/echo-1",
                    session={"sessionData": b64("hello-s1"), "closeGracePeriodSeconds": 5,
                             "killInstanceWhenSessionClosed": False})
    await link.expect(sess_is("default/s1", "Starting"), "SessionState Starting")
    await link.expect(pod_is("Activating"), "the standby pod is Activating for it")
    m = await link.expect(sess_is("default/s1", "Available"), "SessionState Available")
    await link.expect(pod_is("Running"), "and Running once its session is Available")
    ing = ingress()
    ok(ing is not None and any(r["public"] == "10.88.0.1:30000" for r in ing),
       f"the ingress entry is in place when Available ({ing})")
    eps = m and m["session"]["accessEndPoints"]
    ok(eps == [{"protocol": "TCP", "ipAddress": "10.88.0.1", "port": 30000, "podPort": 8080}],
       f"the endpoint: the public address and the first port of the range ({eps})")
    ok(cg("freezer", "freezer.state") == "THAWED", "the pod is thawed")
    ok(curl(30000) == "hello-s1", "curl from the client through the endpoint gets the session data")
    await link.expect(sess_is("default/s1", "InUse"), "the pod reported a client (InUse)")

    # close: entry removed, then the pod back to standby (frozen)
    await link.send(type="SessionClose", sessionIdentifier="default/s1",
                    podIdentifier="default/echo-1", gracePeriodSeconds=5)
    await link.expect(sess_is("default/s1", "Closing"), "SessionState Closing")
    await link.expect(sess_is("default/s1", "Closed"), "SessionState Closed")
    ok(ingress() == [], "the ingress entry is removed on close")
    await link.expect(pod_is("Standby"), "the pod went back to the pool (Standby)")
    ok(cg("freezer", "freezer.state") == "FROZEN", "and is frozen again")
    ok(curl(30000) is None or curl(30000) != "hello-s1", "the closed endpoint no longer reaches the pod")

    # a pod of two containers: each its own process tree in the pod's cgroup
    # and namespace, each its own log; Running once both listen. The second
    # is chatty: its log passes the test's LogMaxBytes (4096) and rotates.
    chat = ("import socket, sys, threading\n"
            "t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "t.bind(('0.0.0.0', 8085)); t.listen()\n"
            "def serve():\n"
            "    while True:\n"
            "        c, _ = t.accept(); c.sendall(b'HTTP/1.0 200 OK\\r\\n\\r\\nchat'); c.close()\n"
            "threading.Thread(target=serve, daemon=True).start()\n"
            "import time\n"
            "while True:\n"
            "    sys.stdout.write('x' * 199 + '\\n'); sys.stdout.flush(); time.sleep(0.002)\n")
    multi = {"application": "default/multi", "usingNodeSessionService": False,
             "containers": [{"name": "echo", "command": [E["ECHO"]], "args": ["--port", "8084"],
                             "ports": [{"containerPort": 8084, "protocol": "TCP"}],
                             "resources": {"limits": {"memory": "64Mi"}}},
                            {"name": "chat", "command": ["/usr/bin/python3", "-u", "-c", chat],
                             "ports": [{"containerPort": 8085, "protocol": "TCP"}],
                             "resources": {"limits": {"memory": "32Mi"}}}]}
    await link.send(type="PodCreate", podIdentifier="default/multi-1", pod=multi, standby=False)
    m = await link.expect(lambda m: pod_is("Running")(m) and
                          m["pod"]["podIdentifier"] == "default/multi-1",
                          "a pod of two containers is Running once both listen", 30)
    ok(m and [(p["containerPort"], p["protocol"]) for p in m["pod"]["ports"]] ==
       [(8084, "TCP"), (8085, "TCP")], f"its ports are both containers' ({m and m['pod']['ports']})")
    mslot = int(m["pod"]["podIP"].split(".")[-1]) - 2 if m else 1
    mns = f"{E['NODE'][:-5]}-p{mslot}"
    mdir = f"{E['TMP']}/run/pods/slot{mslot}"
    mprocs = (open(f"/sys/fs/cgroup/freezer/{E['CG']}/slot{mslot}/cgroup.procs").read().split()
              if os.path.exists(f"/sys/fs/cgroup/freezer/{E['CG']}/slot{mslot}") else [])
    cmds = []
    for p in mprocs:
        try:
            cmds.append(open(f"/proc/{p}/cmdline").read())
        except OSError:
            pass
    ok(any("fornax-echo" in c for c in cmds) and any("python3" in c for c in cmds),
       f"both containers run in the pod's one cgroup ({len(mprocs)} processes)")
    ok(cg("memory", "memory.limit_in_bytes") == str(64 << 20) and
       open(f"/sys/fs/cgroup/memory/{E['CG']}/slot{mslot}/memory.limit_in_bytes").read().strip()
       == str(96 << 20), "the pod's memory limit is the sum of its containers' (96Mi)")
    r1 = sh("ip", "netns", "exec", mns, "curl", "-s", "--max-time", "5", "http://127.0.0.1:8084/")
    r2 = sh("ip", "netns", "exec", mns, "curl", "-s", "--max-time", "5", "http://127.0.0.1:8085/")
    ok(r1.returncode == 0 and r2.stdout == "chat",
       f"both containers answer in the pod's namespace ({r1.stdout!r}, {r2.stdout!r})")
    ok(os.path.exists(f"{mdir}/echo.log") and os.path.exists(f"{mdir}/chat.log"),
       "each container writes its own log (echo.log, chat.log)")
    for _ in range(40):
        if os.path.exists(f"{mdir}/chat.log.2"):
            break
        await asyncio.sleep(0.25)
    await asyncio.sleep(1)
    logs = sorted(f for f in os.listdir(mdir) if f.startswith("chat.log"))
    ok(logs == ["chat.log", "chat.log.1", "chat.log.2"],
       f"the chatty container's log rotated, LogFiles (2) copies kept ({logs})")
    size1 = os.path.getsize(f"{mdir}/chat.log.1")
    ok(size1 > 4096 and open(f"{mdir}/chat.log.1").read(200) == "x" * 199 + "\n",
       f"a rotated copy holds what passed the cap ({size1} bytes)")

    # a second session, then kill -9 of the agent while it is open
    t0 = time.monotonic()
    await link.send(type="SessionOpen", sessionIdentifier="default/s2",
                    podIdentifier="default/echo-1",
                    session={"sessionData": b64("hello-s2"), "closeGracePeriodSeconds": 5,
                             "killInstanceWhenSessionClosed": True, "owner": OWNER})
    m = await link.expect(sess_is("default/s2", "Available"), "the second session is Available")
    ok(m and m["session"].get("owner") == OWNER,
       f"its report echoes the owner SessionOpen gave it ({m and m['session'].get('owner')})")
    # (information, not a check: this run's machine and build, ASan included)
    print(f"# open of a session on a frozen standby pod: {(time.monotonic() - t0) * 1000:.1f} ms"
          " from SessionOpen sent to Available received", flush=True)
    port = m and m["session"]["accessEndPoints"][0]["port"]
    ok(curl(port) == "hello-s2", f"curl through the second session's endpoint (:{port})")
    await link.expect(sess_is("default/s2", "Available"), "back to Available after the client")
    rev_before = core.rev
    nad.send_signal(signal.SIGKILL)
    nad.wait()
    ok(curl(port) == "hello-s2", "with nodeagentd killed (-9) the session keeps serving")

    nad = start_nad(2)
    link = await asyncio.wait_for(core.links.get(), 20)
    reg = await link.expect(lambda m: m.get("type") == "NodeRegister", "NodeRegister after the restart")
    ok(reg and reg["auth"] == {"credential": CRED}, "the restart registers with the stored credential")
    ok(reg and reg["nodeRevision"] == rev_before,
       f"the revision continues ({reg and reg['nodeRevision']} == {rev_before})")
    # a command before the node is configured and ready: refused
    await link.send(type="PodCreate", podIdentifier="default/early", pod=POD, standby=True)
    await link.expect(pod_is("Failed", "NodeNotReady"), "a PodCreate before NodeReady is refused")
    await link.send(**conf_msg(False))
    await link.send(type="NodeFullSync")
    st = await link.expect(lambda m: m.get("type") == "NodeState", "NodeState after the restart")
    ok(st and sorted((p["podIdentifier"], p["state"]) for p in st["pods"]) ==
       [("default/echo-1", "Running"), ("default/multi-1", "Running")] and
       [(s["sessionIdentifier"], s["state"]) for s in st["sessions"]] == [("default/s2", "Available")],
       "the agent adopted the running pod and its session")
    ok(st and [s.get("owner") for s in st["sessions"]] == [OWNER],
       "the restarted agent still reports the session's owner (kept in its store)")
    await link.expect(lambda m: m.get("type") == "NodeReady", "NodeReady after the restart")
    ok(curl(port) == "hello-s2", "the adopted session still serves")
    await link.expect(sess_is("default/s2", "Available"), "the adopted pod's session service reports again")

    # the two containers were adopted; one of them killed: the pod is Failed,
    # and the other goes with it
    nadlog = open(f"{E['TMP']}/nad2.log").read()
    ok("pod default/multi-1: adopted (2 container(s)" in nadlog,
       "the restarted agent adopted both containers of the pod")
    echo_pid = [p for p in mprocs if "fornax-echo" in open(f"/proc/{p}/cmdline").read()] \
        if all(os.path.exists(f"/proc/{p}") for p in mprocs) else []
    for p in mprocs:
        if "python3" in open(f"/proc/{p}/cmdline").read():
            os.kill(int(p), signal.SIGKILL)
    m = await link.expect(lambda m: pod_is("Failed", "Exited")(m) and
                          m["pod"]["podIdentifier"] == "default/multi-1",
                          "one container killed: the pod is Failed (Exited)")
    ok(m and "container chat" in m["pod"]["message"],
       f"its message names the container ({m and m['pod']['message']})")
    for _ in range(50):  # (a zombie until init reaps it: the agent was not its parent)
        if not echo_pid or not os.path.exists(f"/proc/{echo_pid[0]}"):
            break
        await asyncio.sleep(0.1)
    ok(echo_pid and not os.path.exists(f"/proc/{echo_pid[0]}"),
       f"the pod's other container is killed with it ({echo_pid})")
    for _ in range(50):
        if mns not in sh("ip", "netns", "list").stdout:
            break
        await asyncio.sleep(0.1)
    ok(mns not in sh("ip", "netns", "list").stdout, "the failed pod's namespace is gone")

    # an app without the session service, behind the wrapper: ready once
    # its port accepts, its session data in a file; closed with
    # killInstanceWhenSessionClosed: the pod is terminated
    data_file = f"{E['TMP']}/wrapped.data"
    wrapped = {"application": "default/wrapped", "usingNodeSessionService": True,
               "containers": [{"name": "w", "command": [E["WRAPPER"]],
                               "args": ["--port", "8081", "--", E["ECHO"], "--port", "8081"],
                               "env": [{"name": "FORNAX_SESSION_DATA_FILE", "value": data_file}],
                               "ports": [{"containerPort": 8081, "protocol": "TCP"}]}]}
    await link.send(type="PodCreate", podIdentifier="default/wrapped-1", pod=wrapped,
                    standby=False)
    m = await link.expect(pod_is("Running"), "a pod not on standby is Running once it listens")
    ok(m and m["pod"]["podIP"] == "10.1.1.3", "it has the next address")
    await link.send(type="SessionOpen", sessionIdentifier="default/w1",
                    podIdentifier="default/wrapped-1",
                    session={"sessionData": b64("wrapped-data"), "closeGracePeriodSeconds": 5})
    m = await link.expect(sess_is("default/w1", "Available"),
                          "the wrapper reports ready once the app's port accepts")
    wport = m and m["session"]["accessEndPoints"][0]["port"]
    ok(curl(wport) == "no session\n", "curl reaches the wrapped app through its endpoint")
    ok(open(data_file).read() == "wrapped-data" if os.path.exists(data_file) else False,
       "the wrapper wrote the session data for the app")
    await link.send(type="SessionClose", sessionIdentifier="default/w1",
                    podIdentifier="default/wrapped-1")
    await link.expect(sess_is("default/w1", "Closed"), "the wrapped session is Closed")
    await link.expect(pod_is("Terminated", "SessionClosed"),
                      "killInstanceWhenSessionClosed (the default): the pod is Terminated")

    # a pod terminated while it holds a session is Evacuating: the session
    # is closed through its session service first, then the pod stops
    await link.send(type="PodCreate", podIdentifier="default/evac-1", pod=POD, standby=False)
    await link.expect(pod_is("Running"), "a running pod to evacuate", 30)
    await link.send(type="SessionOpen", sessionIdentifier="default/e1",
                    podIdentifier="default/evac-1",
                    session={"sessionData": b64("hello-e1"), "killInstanceWhenSessionClosed": False})
    await link.expect(sess_is("default/e1", "Available"), "its session is Available")
    await link.send(type="PodTerminate", podIdentifier="default/evac-1", gracePeriodSeconds=5)
    await link.expect(pod_is("Evacuating", "TerminatedByCore"), "PodTerminate: the pod is Evacuating")
    await link.expect(sess_is("default/e1", "Closing"), "its session is Closing")
    m = await link.expect(sess_is("default/e1", "Closed"), "then Closed")
    ok(m and m["session"]["reason"] == "", f"closed by the app as asked ({m and m['session']['reason']})")
    await link.expect(pod_is("Terminating", "TerminatedByCore"), "then the pod is Terminating")
    await link.expect(pod_is("Terminated", "TerminatedByCore"), "and Terminated")

    # the session service's ping (every 1 s here, 2 misses): a pod that
    # answers keeps serving; stopped (SIGSTOP), it answers nothing: its
    # session is Closed and the pod Failed, both NoHeartbeat
    await link.send(type="PodCreate", podIdentifier="default/stopped-1", pod=POD, standby=False)
    m = await link.expect(pod_is("Running"), "a running pod for the ping", 30)
    sslot = int(m["pod"]["podIP"].split(".")[-1]) - 2 if m else 0
    await link.send(type="SessionOpen", sessionIdentifier="default/p1",
                    podIdentifier="default/stopped-1",
                    session={"sessionData": b64("hello-p1"), "killInstanceWhenSessionClosed": False})
    m = await link.expect(sess_is("default/p1", "Available"), "its session is Available")
    pport = m and m["session"]["accessEndPoints"][0]["port"]
    await asyncio.sleep(3.5)
    ok(curl(pport) == "hello-p1", "after 3 ping periods the answering pod still serves")
    for p in open(f"/sys/fs/cgroup/freezer/{E['CG']}/slot{sslot}/cgroup.procs").read().split():
        os.kill(int(p), signal.SIGSTOP)
    m = await link.expect(lambda m: sess_is("default/p1", "Closed")(m) and
                          m["session"]["reason"] == "NoHeartbeat",
                          "the stopped pod's session is Closed (NoHeartbeat)")
    m = await link.expect(pod_is("Failed", "NoHeartbeat"), "the stopped pod is Failed (NoHeartbeat)")
    ok(m and "none of 2 pings" in m["pod"]["message"], f"its message says why ({m and m['pod']['message']})")
    ok(curl(pport) != "hello-p1", "its endpoint no longer reaches it")
    # a pod that reads the socket and never answers: the same, without a session
    silent = ("import os, socket\n"
              "u = socket.socket(socket.AF_UNIX); u.bind(os.environ['FORNAX_SESSION_SOCKET']); u.listen()\n"
              "t = socket.socket(); t.bind(('0.0.0.0', 8083)); t.listen()\n"
              "c, _ = u.accept()\n"
              "while c.recv(4096): pass\n")
    await link.send(type="PodCreate", podIdentifier="default/silent-1", standby=False,
                    pod={"application": "default/silent", "usingNodeSessionService": True,
                         "containers": [{"name": "s", "command": ["/usr/bin/python3", "-c", silent],
                                         "ports": [{"containerPort": 8083, "protocol": "TCP"}]}]})
    await link.expect(pod_is("Running"), "a pod that never answers a ping is Running", 30)
    await link.expect(pod_is("Failed", "NoHeartbeat"), "then Failed (NoHeartbeat)")

    # a standby (frozen) pod terminated by the core: thawed so that it can die
    await link.send(type="PodCreate", podIdentifier="default/echo-3", pod=POD, standby=True)
    m = await link.expect(pod_is("Standby"), "a third standby pod", 30)
    slot = int(m["pod"]["podIP"].split(".")[-1]) - 2 if m else 0
    await link.send(type="PodTerminate", podIdentifier="default/echo-3", gracePeriodSeconds=1)
    await link.expect(pod_is("Terminating"), "PodTerminate: Terminating")
    await link.expect(pod_is("Terminated", "TerminatedByCore"), "then Terminated")
    ok(not os.path.exists(f"/sys/fs/cgroup/freezer/{E['CG']}/slot{slot}"),
       "the terminated pod's cgroup is removed")

    # unknown pod and session: answered with their state, never ignored
    await link.send(type="PodTerminate", podIdentifier="default/nope", gracePeriodSeconds=0)
    await link.expect(pod_is("Terminated", "NotFound"), "PodTerminate of an unknown pod: NotFound")
    await link.send(type="SessionClose", sessionIdentifier="default/nope",
                    podIdentifier="default/nope")
    await link.expect(lambda m: m.get("type") == "SessionState" and
                      m["session"]["reason"] == "NotFound", "SessionClose of an unknown session: NotFound")

    bad = json.loads(json.dumps(POD))
    bad["containers"][0]["resources"]["limits"]["memory"] = "64MB"
    await link.send(type="PodCreate", podIdentifier="default/bad", pod=bad, standby=True)
    m = await link.expect(pod_is("Failed", "InvalidSpec"), "a pod spec the node cannot run: InvalidSpec")
    ok(m and "pod.containers[0].resources.limits.memory" in m["pod"]["message"],
       f"its message names the field ({m and m['pod']['message']})")
    # quoted values and a long application name are cut between characters:
    # the report is JSON, and text that is not UTF-8 would lose it
    bad = json.loads(json.dumps(POD))
    bad["containers"][0]["name"] = "a" * 63 + "\u00e9"
    await link.send(type="PodCreate", podIdentifier="default/bad-name", pod=bad, standby=True)
    m = await link.expect(pod_is("Failed", "InvalidSpec"), "a name cut inside a character in the error: reported")
    ok(m and "pod.containers[0].name '" + "a" * 63 + "'" in m["pod"]["message"],
       f"quoting it up to the character ({m and m['pod']['message']})")
    bad = json.loads(json.dumps(POD))
    bad["application"] = "a" * 253 + "\u00e9"
    bad["containers"][0]["resources"]["limits"]["memory"] = "64MB"
    await link.send(type="PodCreate", podIdentifier="default/bad-app", pod=bad, standby=True)
    m = await link.expect(pod_is("Failed", "InvalidSpec"), "an application name past the limit: reported")
    ok(m and m["pod"]["application"] == "a" * 253, "cut between characters")

    # the pod crashes: its session is Closed, the pod Failed, the entry gone
    for p in (cg("freezer", "cgroup.procs") or "").split():
        os.kill(int(p), signal.SIGKILL)
    await link.expect(sess_is("default/s2", "Closed"), "the crashed pod's session is Closed")
    await link.expect(pod_is("Failed"), "the crashed pod is Failed")
    # what fornaxd's full sync repeats: the stop and the close, answered
    # with the states as they are (the reason kept), nothing done twice
    await link.send(type="PodTerminate", podIdentifier="default/echo-1", gracePeriodSeconds=1)
    m = await link.expect(lambda m: m.get("type") == "PodState" and
                          m["pod"]["podIdentifier"] == "default/echo-1", "a repeated PodTerminate is answered")
    ok(m and m["pod"]["state"] == "Failed" and m["pod"]["reason"] == "Exited",
       f"with the pod's state and reason as they were ({m and (m['pod']['state'], m['pod']['reason'])})")
    await link.send(type="SessionClose", sessionIdentifier="default/s2", podIdentifier="default/echo-1",
                    gracePeriodSeconds=1)
    await link.expect(sess_is("default/s2", "Closed"), "a repeated SessionClose is answered Closed")
    ok(ingress() == [], "its ingress entry is removed")
    ok(not core.rev_gaps, f"every PodState/SessionState revision is the last + 1 ({core.rev_gaps})")
    for _ in range(50):
        if "xgt" not in sh("ip", "netns", "list").stdout.replace(E["NODE"], "").replace(E["CLI"], ""):
            break
        await asyncio.sleep(0.1)
    ok(f"{E['NODE'][:-5]}-p0" not in sh("ip", "netns", "list").stdout,
       "the failed pod's namespace is gone")
    # form 2's command to a node of the pod role: answered, not taken
    await link.send(type="IngressOpen", sessionIdentifier="default/i1", podIdentifier="default/y",
                    vni=100, podIP="10.1.1.5", host="10.200.0.2", ports=[{"containerPort": 80}])
    await link.expect(lambda m: m.get("type") == "IngressState" and
                      m["ingress"]["state"] == "Closed" and m["ingress"]["reason"] == "NotIngressHost",
                      "an IngressOpen to a pod node: Closed (NotIngressHost)")
    # a malformed command: refused (bad-message naming the field), link closed
    await link.send(type="SessionOpen", sessionIdentifier="default/x", podIdentifier="default/y",
                    session={"closeGracePeriodSeconds": "soon"})
    m = await link.expect(lambda m: m.get("type") in ("error", "closed"), "a malformed command is refused")
    ok(m and m.get("code") == "bad-message" and "session.closeGracePeriodSeconds" in m.get("message", ""),
       f"bad-message naming the field ({m})")

    # a malformed owner: refused the same way (the link closed again)
    link = await asyncio.wait_for(core.links.get(), 20)
    await link.expect(lambda m: m.get("type") == "NodeRegister", "the node reconnects by itself")
    await link.send(type="SessionOpen", sessionIdentifier="default/x", podIdentifier="default/y",
                    session={"owner": "not an id"})
    m = await link.expect(lambda m: m.get("type") in ("error", "closed"), "a malformed owner is refused")
    ok(m and m.get("code") == "bad-message" and "session.owner 'not an id'" in m.get("message", ""),
       f"bad-message naming session.owner, quoting it ({m})")

    # the node links again by itself; then it loses its store: it starts
    # again at revision 0 with the join token, and what the lost store ran
    # (its pod's processes and cgroup, namespace, ingress entry) is gone
    link = await asyncio.wait_for(core.links.get(), 20)
    reg = await link.expect(lambda m: m.get("type") == "NodeRegister", "the node reconnects by itself")
    await link.send(**conf_msg(False))
    await link.send(type="NodeFullSync")
    await link.expect(lambda m: m.get("type") == "NodeReady", "NodeReady again")
    await link.send(type="PodCreate", podIdentifier="default/echo-2", pod=POD, standby=True)
    await link.expect(pod_is("Standby"), "another standby pod", 30)
    await link.send(type="SessionOpen", sessionIdentifier="default/s3",
                    podIdentifier="default/echo-2", session={"sessionData": b64("hello-s3")})
    m = await link.expect(sess_is("default/s3", "Available"), "its session is Available")
    p3 = m and m["session"]["accessEndPoints"][0]["port"]
    ok(curl(p3) == "hello-s3", "and serves")
    nad.send_signal(signal.SIGTERM)
    nad.wait()
    ok(curl(p3) == "hello-s3", "a stopped (SIGTERM) nodeagentd leaves the session serving")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{E['TMP']}/node.db{suffix}"):
            os.unlink(f"{E['TMP']}/node.db{suffix}")
    nad = start_nad(3, "CONF_TLS")
    link = await asyncio.wait_for(core.links.get(), 20)
    ok(link.tls, "the new node links over wss:// (its CA verified the core)")
    reg = await link.expect(lambda m: m.get("type") == "NodeRegister", "NodeRegister with a new store")
    ok(reg and reg["auth"] == {"join": TOKEN} and reg["nodeRevision"] == 0,
       "a node that lost its store joins again at revision 0")
    core.rev = 0
    await link.send(**conf_msg(True, state_s=1))
    await link.send(type="NodeFullSync")
    st = await link.expect(lambda m: m.get("type") == "NodeState", "NodeState of the new store")
    ok(st and st["pods"] == [] and st["sessions"] == [], "it knows no pods")
    await link.expect(lambda m: m.get("type") == "NodeReady", "NodeReady with the new store")
    await link.expect(lambda m: m.get("type") == "NodeState", "a NodeState every stateSeconds", 5)
    ok(cg("freezer", "cgroup.procs") is None, "the lost store's pod: its cgroup is gone")
    ok(f"{E['NODE'][:-5]}-p0" not in sh("ip", "netns", "list").stdout, "its namespace is gone")
    ok(ingress() == [], "its ingress entry is gone")
    ok(curl(p3) != "hello-s3", "its endpoint no longer reaches it")
    nad.send_signal(signal.SIGTERM)
    nad.wait()
    await two_cores(core, CORE_B)


async def quiet(link, pred, secs):
    """nothing matching pred comes on link within secs"""
    end = time.monotonic() + secs
    while (left := end - time.monotonic()) > 0:
        try:
            m = await asyncio.wait_for(link.q.get(), left)
        except asyncio.TimeoutError:
            break
        if pred(m) or m.get("type") == "closed":
            return False
    return True


async def two_cores(core, core_b):
    """Two cores (proto/fornax.md "Several cores"): the node links to both
    and reports to both; it obeys only the one that says it leads with the
    highest term: a standby's command and a deposed leader's are refused."""
    nad = start_nad(4, "CONF_HA")
    la = await asyncio.wait_for(core.links.get(), 20)
    lb = await asyncio.wait_for(core_b.links.get(), 20)
    for link, name in ((la, "A"), (lb, "B")):
        reg = await link.expect(lambda m: m.get("type") == "NodeRegister", f"the node links to core {name}")
        ok(reg and reg["auth"] == {"credential": CRED}, f"with its credential ({name})")
    await la.send(**conf_msg(False), leader=True, term=7)
    await la.send(type="NodeFullSync")
    await lb.send(**conf_msg(False), leader=False, term=0)
    await lb.send(type="NodeFullSync")
    await la.expect(lambda m: m.get("type") == "NodeReady", "NodeReady to A, the leader (term 7)")
    await lb.expect(lambda m: m.get("type") == "NodeReady", "and to B, the standby")
    await lb.send(type="PodCreate", podIdentifier="default/from-b", pod=POD, standby=True)
    is_b = lambda m: m.get("type") == "PodState" and m["pod"]["podIdentifier"] == "default/from-b"
    ok(await quiet(lb, is_b, 2), "a PodCreate from the standby B is not obeyed (not even answered)")
    ok(cg("freezer", "cgroup.procs") is None, "no pod runs for it")
    await la.send(type="PodCreate", podIdentifier="default/echo-9", pod=POD, standby=True)
    await la.expect(pod_is("Standby"), "A's PodCreate is obeyed: Standby, reported to A", 30)
    await lb.expect(pod_is("Standby"), "and to B (reports go to every core)")
    # B takes the lead with a higher term: A, still saying it leads, is deposed
    await lb.send(type="CoreState", leader=True, term=9)
    # the links are two sockets: the full sync's answer on B's says CoreState was read
    await lb.send(type="NodeFullSync")
    await lb.expect(lambda m: m.get("type") == "NodeState", "B says it leads at term 9 (and syncs)")
    await la.send(type="PodTerminate", podIdentifier="default/echo-9", gracePeriodSeconds=0)
    ok(await quiet(la, pod_is("Terminated"), 2), "B leads at term 9: the deposed A's PodTerminate is refused")
    await lb.send(type="PodTerminate", podIdentifier="default/echo-9", gracePeriodSeconds=0)
    await lb.expect(pod_is("Terminated"), "B's is obeyed: Terminated", 20)
    with open(f"{E['TMP']}/nad4.log") as f:
        log = f.read()
    ok("PodCreate from ws://127.0.0.1:" in log and "not the leader" in log and
       "a deposed leader" in log, "the node logs both refusals")
    nad.send_signal(signal.SIGTERM)
    nad.wait()


def listen_in_node(port):
    """The core's socket on the node namespace's loopback (setns for the
    socket() call only: the rest of this process stays where it is)."""
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open(f"/run/netns/{E['NODE']}", os.O_RDONLY)
    if libc.setns(there, 0x40000000):
        raise OSError(ctypes.get_errno(), "setns")
    try:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
    finally:
        libc.setns(here, 0x40000000)
        os.close(here)
        os.close(there)
    return s


async def main():
    global CORE_B
    core, CORE_B = Core(), Core()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(f"{E['TMP']}/srv.pem", f"{E['TMP']}/srv.key")
    async with websockets.serve(core.handler, sock=listen_in_node(PORT),
                                subprotocols=["node.fornax.xgate.io.v1"]), \
            websockets.serve(core.handler, sock=listen_in_node(PORT + 1), ssl=ctx,
                             subprotocols=["node.fornax.xgate.io.v1"]), \
            websockets.serve(CORE_B.handler, sock=listen_in_node(PORT + 2),
                             subprotocols=["node.fornax.xgate.io.v1"]):
        try:
            await asyncio.wait_for(scenario(core), 240)
        except asyncio.TimeoutError:
            ok(False, "the scenario finished in time")
    for p in PROCS:
        if p.poll() is None:
            p.kill()
    sys.exit(1 if FAILED else 0)


asyncio.run(main())
