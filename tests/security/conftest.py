"""The attack suite's fixtures: hostile copies of the demo repo, run through tipc's CLI as root or as a
non-root reviewer, and the host-side evidence of what they changed.

- `Reviewer` (fixture `reviewer`, parametrised root / user; `root_reviewer` for root only): who runs tipc.
  Everything a test makes for it lives in a fresh world-traversable folder `base` under /var/tmp (not /tmp
  and not HOME, which the sandbox gives copy-on-write layers: a write that lands there proves nothing): the
  repo copy, the reviewer's HOME with credential files, and `host/`, the folder the hostile code aims at.
  As `user`, tipc runs as uid USER_UID in a private mount namespace where the folders its interpreter lives
  under (here /root/.pyenv, under a 0700 /root) are reachable, as on a machine where that user owns its
  Python; the suite skips that variant, with the reason, where the kernel or the tools do not allow it.
- `HostileRepo`: a demo copy whose train.py (and/or prepare.sh, test script, config) is hostile; `.lines()`
  reads the `ATTACK <name> <result>` lines the hostile code printed into the run's logs.
- `Listener`: a loopback TCP listener of the host; `.received()` is what reached it.
- `hole(reason)`: the mark of a test that fails today because the sandbox does not hold (issue 22). It is
  `xfail(strict=True, raises=Breach)`: only a `Breach` (raised by `contained(...)` on host-side evidence or a
  missing verdict) counts as the expected failure; anything else (a broken fixture, a payload that did not
  run) fails the test for real, and a test that passes once the hole is closed fails until its mark goes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.children import tipc_env
from tests.helpers.demo import copy_demo
from tests.helpers.trees import tree_hashes
from tests.security.hostile import payload

USER_UID = 1998000001  # no name in /etc/passwd: a uid nothing else on the machine runs as
OUTPUT = Path("test_tipc") / "output"
SCRIPT = Path("test_tipc") / "test_train_inference_python.sh"
CONFIG = Path("test_tipc") / "configs" / "lenet_digits" / "train_infer_python.txt"
PREPARE = Path("test_tipc") / "prepare.sh"


class Breach(AssertionError):
    """The sandbox did not hold (or did not say so): the failure issue 22 is about."""


def hole(reason: str) -> pytest.MarkDecorator:
    """A test that fails today because of an open hole of issue 22 (see the module docstring)."""
    return pytest.mark.xfail(strict=True, raises=Breach, reason=f"issue 22: {reason}")


def contained(ok: bool, what: str) -> None:
    if not ok:
        raise Breach(what)


# ------------------------------------------------------------------------------------------- reviewers


def _traversable_by_others(path: Path) -> bool:
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in [path, *path.parents] if p.exists())


def _hidden_roots(paths: list[Path]) -> dict[Path, list[Path]]:
    """For each needed path another uid cannot reach: the highest folder above it that others cannot
    traverse (e.g. /root), mapped to the needed paths under it."""
    hidden: dict[Path, list[Path]] = {}
    for path in paths:
        if _traversable_by_others(path):
            continue
        blocker = next(p for p in reversed([path, *path.parents]) if not os.stat(p).st_mode & stat.S_IXOTH)
        hidden.setdefault(blocker, []).append(path)
    return hidden


def _needed_paths() -> list[Path]:
    out = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.executable).resolve().parent}
    out.add(Path(__file__).resolve().parents[2])  # the checkout (tipc is installed editable)
    return sorted(out)


def _user_problem() -> str | None:
    """Why tipc cannot be run here as a non-root reviewer (None: it can)."""
    if os.geteuid() != 0:
        return None  # this process already is one
    for tool in ("unshare", "setpriv", "mount"):
        if shutil.which(tool) is None:
            return f"`{tool}` (util-linux) is missing: cannot switch to uid {USER_UID}"
    probe = subprocess.run(
        [
            "setpriv",
            f"--reuid={USER_UID}",
            f"--regid={USER_UID}",
            "--clear-groups",
            "unshare",
            "--user",
            "--map-root-user",
            "--mount",
            "true",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"the kernel refuses user namespaces to an unprivileged uid: {probe.stderr.strip()[-200:]}"
    return None


@dataclass
class Reviewer:
    kind: str  # root | user
    uid: int
    base: Path  # a fresh folder for this test, traversable by the reviewer
    home: Path = field(init=False)
    host: Path = field(init=False)  # what the hostile code aims at: nothing may appear here

    def __post_init__(self) -> None:
        self.home = self.base / "home"
        self.host = self.base / "host"
        for folder in (self.home, self.host):
            folder.mkdir()
        self.give(self.base)

    def give(self, *paths: Path) -> None:
        """Make `paths` (recursively) the reviewer's own."""
        if self.kind != "user" or os.geteuid() != 0:
            return
        for path in paths:
            for root, dirs, files in os.walk(path):
                for name in [*dirs, *files]:
                    os.lchown(Path(root, name), self.uid, self.uid)
            os.lchown(path, self.uid, self.uid)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = tipc_env()
        env["HOME"] = str(self.home)
        env.update(extra or {})
        return env

    def command(self, argv: list[str]) -> list[str]:
        """`argv` as this reviewer runs it."""
        if self.kind == "root" or os.geteuid() != 0:
            return argv
        lines = ["set -e"]
        for n, (blocker, needed) in enumerate(sorted(_hidden_roots(_needed_paths()).items())):
            staged = []
            for m, path in enumerate(needed):
                stage = self.base / f".stage{n}_{m}"
                stage.mkdir(exist_ok=True)
                lines.append(f"mount --bind {shlex.quote(str(path))} {shlex.quote(str(stage))}")
                staged.append((stage, path))
            lines.append(f"mount -t tmpfs -o mode=755,size=1m tmpfs {shlex.quote(str(blocker))}")
            for stage, path in staged:
                lines.append(f"mkdir -p {shlex.quote(str(path))}")
                lines.append(f"mount --bind {shlex.quote(str(stage))} {shlex.quote(str(path))}")
        ids = f"--reuid={self.uid} --regid={self.uid} --clear-groups --inh-caps=-all"
        lines.append(f'exec setpriv {ids} "$@"')
        return [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            "\n".join(lines),
            "tipc-as-user",
            *argv,
        ]

    def tipc(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """`python -m tipc ARGS` as this reviewer (cwd: `base`)."""
        return subprocess.run(
            self.command([sys.executable, "-m", "tipc", *args]),
            capture_output=True,
            text=True,
            env=self.env(env),
            cwd=self.base,
            timeout=timeout,
            check=False,
        )


@contextlib.contextmanager
def _reviewer(kind: str) -> Iterator[Reviewer]:
    if kind == "root" and os.geteuid() != 0:
        pytest.skip("the root reviewer needs this suite to run as root")
    if kind == "user":
        problem = _user_problem()
        if problem is not None:
            pytest.skip(f"no non-root reviewer here: {problem}")
    parent = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    base = Path(tempfile.mkdtemp(prefix="tipc-attack-", dir=parent)).resolve()
    base.chmod(0o755)
    try:
        uid = USER_UID if kind == "user" and os.geteuid() == 0 else os.geteuid()
        yield Reviewer(kind, uid, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["root", "user"])
def reviewer(request: pytest.FixtureRequest) -> Iterator[Reviewer]:
    with _reviewer(request.param) as made:
        yield made


@pytest.fixture(scope="module", params=["root", "user"])
def module_reviewer(request: pytest.FixtureRequest) -> Iterator[Reviewer]:
    """A reviewer for the whole module: one hostile run that many tests read (the suite stays cheap)."""
    with _reviewer(request.param) as made:
        yield made


@pytest.fixture(scope="module")
def module_root_reviewer() -> Iterator[Reviewer]:
    with _reviewer("root") as made:
        yield made


@pytest.fixture
def root_reviewer() -> Iterator[Reviewer]:
    with _reviewer("root") as made:
        yield made


# ------------------------------------------------------------------------------------------ the repo


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file and link under `root` but tipc's output folder (what must stay unchanged)."""
    return tree_hashes(root, skip=OUTPUT, links=True, pycache=False)


@dataclass
class HostileRepo:
    repo: Path
    reviewer: Reviewer
    sentinel: str  # a string no honest file or variable holds: the secrets carry it
    before: dict[str, str] = field(default_factory=dict)

    def train(self, *actions: str, **options: Any) -> HostileRepo:
        """train.py becomes a hostile script that tries `actions` (see tests.security.hostile)."""
        (self.repo / "train.py").write_text(payload(actions, sentinel=self.sentinel, **options))
        return self

    def tool(self, name: str, *actions: str, **options: Any) -> str:
        """A hostile script at tools/NAME.py (for prepare.sh or the test script to call); its repo path."""
        (self.repo / "tools" / f"{name}.py").write_text(payload(actions, sentinel=self.sentinel, **options))
        return f"tools/{name}.py"

    def script_line(self, line: str, *, rel: Path = SCRIPT) -> HostileRepo:
        """Insert `line` as the second line of a bash script of the repo (the test script by default)."""
        path = self.repo / rel
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join([lines[0], line.rstrip("\n") + "\n", *lines[1:]]))
        return self

    def config_value(self, key: str, value: str) -> HostileRepo:
        path = self.repo / CONFIG
        lines = path.read_text().splitlines()
        hits = [n for n, line in enumerate(lines) if line.split(":", 1)[0] == key]
        assert hits, f"{key} is not a key of {path}"
        lines[hits[0]] = f"{key}:{value}"
        path.write_text("\n".join(lines) + "\n")
        return self

    def seal(self) -> HostileRepo:
        """Done editing: hand the copy to the reviewer and remember its hashes."""
        self.reviewer.give(self.repo)
        self.before = file_hashes(self.repo)
        return self

    def unchanged(self) -> bool:
        return file_hashes(self.repo) == self.before

    def changed_files(self) -> list[str]:
        now = file_hashes(self.repo)
        return sorted(k for k in {*now, *self.before} if now.get(k) != self.before.get(k))

    def lines(self) -> dict[str, list[str]]:
        """{attack name: [results]} from every ATTACK line in the run's logs (all files under the output
        folder, wherever the run folder puts them)."""
        found: dict[str, list[str]] = {}
        out = self.repo / OUTPUT
        for path in sorted(out.rglob("*")) if out.is_dir() else []:
            if not path.is_file() or path.is_symlink():
                continue
            with path.open("rb") as fh:  # a huge log (a hostile step's): its head and its tail
                data = fh.read(1 << 20)
                size = path.stat().st_size
                if size > 2 << 20:
                    fh.seek(size - (1 << 20))
                    data += b"\n" + fh.read()
                else:
                    data += fh.read()
            for line in data.decode("utf-8", errors="replace").splitlines():
                if line.startswith("ATTACK "):
                    name, _, result = line[len("ATTACK ") :].partition(" ")
                    found.setdefault(name, []).append(result.strip())
        return found

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted((self.repo / OUTPUT).rglob("tipc_run.json"))]


@pytest.fixture
def hostile_demo(reviewer: Reviewer) -> HostileRepo:
    return _hostile(reviewer)


@pytest.fixture
def root_hostile_demo(root_reviewer: Reviewer) -> HostileRepo:
    return _hostile(root_reviewer)


def _hostile(reviewer: Reviewer) -> HostileRepo:
    repo = copy_demo(reviewer.base / "lenet_digits")
    return HostileRepo(repo, reviewer, sentinel=f"tipcsecret{uuid.uuid4().hex}")


# ----------------------------------------------------------------------------------------- the host


class Listener:
    """A TCP listener on the host's loopback: a sandboxed step must not reach it."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.port: int = self._sock.getsockname()[1]
        self._data: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                self._data.append(b"<connection>")
                with contextlib.suppress(OSError):
                    while chunk := conn.recv(65536):
                        self._data.append(chunk)

    def received(self) -> bytes:
        return b"".join(self._data)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    made = Listener()
    try:
        yield made
    finally:
        made.close()


@dataclass
class Attacked:
    """One hostile run that several tests read: the repo, what tipc printed, and the host's evidence gathered
    right after the run (the listener, the processes left)."""

    repo: HostileRepo
    done: subprocess.CompletedProcess[str]
    received: bytes  # what reached the host's loopback listener
    left: list[int]  # processes still holding the sentinel some seconds after tipc ended
    markers: dict[str, Path]  # name -> a host path the hostile code aimed at

    @property
    def reviewer(self) -> Reviewer:
        return self.repo.reviewer

    def lines(self) -> dict[str, list[str]]:
        return self.repo.lines()


def left_alive(sentinel: str, wait_s: float = 10.0) -> list[int]:
    """The processes holding `sentinel` that are still alive after up to `wait_s`."""
    import time

    from tests.helpers.processes import alive_with

    deadline = time.monotonic() + wait_s
    while alive_with(sentinel) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive_with(sentinel)


# --------------------------------------------------------------------------------------- the verdicts


def recorded_violations(repo: HostileRepo) -> list[dict[str, Any]]:
    """The denied calls the run records list: `sandbox.violations` of each run record, each an object
    `{"step": <step id>, "calls": [<syscall name>, ...]}` (the format proposed in
    /work/notes/containment_design.md; it does not exist yet)."""
    out: list[dict[str, Any]] = []
    for record in repo.records():
        sandbox = record.get("sandbox") or {}
        out.extend(v for v in sandbox.get("violations", []) if isinstance(v, dict))
    return out


def expect_recorded(repo: HostileRepo, step: str, calls: set[str]) -> None:
    """A run record names step `step` (a step id prefix: prepare, train, ...) and at least `calls`."""
    found = recorded_violations(repo)
    contained(
        any(str(v.get("step", "")).startswith(step) and calls <= set(v.get("calls", [])) for v in found),
        f"no run record names the denied calls {sorted(calls)} of step {step}: {found}",
    )


def violation_rule(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `sandbox.violations` rule of a check report (under whatever ruleset prefix)."""
    for rule in report.get("rules", []):
        if rule.get("id") == "sandbox.violations" or str(rule.get("id", "")).endswith(".sandbox.violations"):
            return dict(rule)
    return None


def expect_violation_rule(report: Mapping[str, Any], step: str, calls: set[str]) -> None:
    rule = violation_rule(report)
    contained(rule is not None, "the report has no sandbox.violations rule")
    assert rule is not None
    text = json.dumps([rule.get("summary"), rule.get("evidence")])
    contained(rule.get("verdict") == "FAIL", f"sandbox.violations is {rule.get('verdict')}, not FAIL")
    contained(
        step in text and all(c in text for c in calls),
        f"sandbox.violations names neither {step} nor {calls}: {text[:500]}",
    )


def json_out(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.stdout.strip(), f"no JSON on stdout (exit {done.returncode}):\n{done.stderr[-3000:]}"
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def ended(done: subprocess.CompletedProcess[str], *codes: int) -> None:
    """tipc ended by itself with one of `codes`, without a traceback of its own (a failed step's log tail,
    which tipc prints indented, may hold one)."""
    assert not re.search(r"^Traceback \(most recent call last\)", done.stderr, re.M), done.stderr[-3000:]
    assert done.returncode in codes, f"exit {done.returncode}, expected {codes}:\n{done.stderr[-3000:]}"
