"""50 bad endings of `tipc run` and `tipc check` leave no process behind (issue 15).

A tiny repo (no Paddle) whose training step starts a grandchild that leaves the process group (setsid) and
another that stays in it, then hangs, or exits at once leaving both behind. Every process of an ending
carries a token in its environment; after tipc ends, the processes holding it are counted. The endings:
SIGINT, SIGTERM, SIGHUP and SIGKILL of tipc while the step hangs, a step timeout, and a step that exits
leaving a setsid grandchild; sandboxed (the run's own PID namespace) and, where a subreaper does the work,
with --no-sandbox (SIGKILL of tipc is covered only by the PID namespace).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.config.fixtures import COMPACT, make_repo
from tests.helpers.processes import alive_with
from tests.serve.fake_serving import stdlib_python

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process namespaces are Linux's"),
]

TRAIN = """\
import os, subprocess, sys, time
subprocess.Popen(["sleep", "300"], start_new_session=True)  # leaves the step's process group
subprocess.Popen(["sleep", "300"])
print("spawned", flush=True)
if os.environ.get("ORPHAN_EXIT") == "1":
    sys.exit(0)
time.sleep(300)
"""
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGHUP": signal.SIGHUP}


@dataclass(frozen=True)
class Ending:
    verb: str  # run | check
    how: str  # SIGINT | SIGTERM | SIGHUP | SIGKILL | timeout | setsid-exit
    sandbox: bool = True


def _endings(pid_namespace: bool) -> list[Ending]:
    plan = [
        ("run", True, {"SIGINT": 4, "SIGTERM": 4, "SIGHUP": 4, "SIGKILL": 5, "timeout": 3, "setsid-exit": 3}),
        ("run", False, {"SIGINT": 2, "SIGTERM": 2, "SIGHUP": 2, "timeout": 2, "setsid-exit": 2}),
        (
            "check",
            True,
            {"SIGINT": 3, "SIGTERM": 3, "SIGHUP": 3, "SIGKILL": 4, "timeout": 2, "setsid-exit": 2},
        ),
    ]
    out = []
    for verb, sandboxed, counts in plan:
        for how, n in counts.items():
            if how == "SIGKILL" and not pid_namespace:
                continue  # nothing but a PID namespace outlives a SIGKILL of tipc: not claimed without one
            out += [Ending(verb, how, sandboxed)] * n
    return out


def _settled(token: str, timeout_s: float = 5.0) -> list[int]:
    """The token's processes once the kernel has finished killing (a namespace dies asynchronously)."""
    deadline = time.monotonic() + timeout_s
    alive = alive_with(token)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = alive_with(token)
    return alive


def _one(n: int, ending: Ending, root: Path, python: str) -> tuple[Ending, int | None, list[int], str]:
    repo = make_repo(
        root / f"r{n}", {"test_tipc/configs/m/train_infer_python.txt": COMPACT, "train.py": TRAIN}
    )
    token = f"tipc-ending-{os.getpid()}-{n}-{time.monotonic_ns()}"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TIPC_ENDING_TOKEN=token)
    if ending.how == "setsid-exit":
        env["ORPHAN_EXIT"] = "1"
    argv = [sys.executable, "-m", "tipc", ending.verb, str(repo), "--python", python, "--no-color"]
    argv += ["--no-prepare"] + (["--only", "train"] if ending.verb == "run" else [])
    argv += ["--pass-env", "ORPHAN_EXIT"]  # the sandbox gives steps only allowlisted variables
    argv += [] if ending.sandbox else ["--no-sandbox"]
    if ending.how == "timeout":
        argv += ["--step-timeout", "1"]
    log = root / f"r{n}.log"
    with open(log, "w", encoding="utf-8") as sink:
        tipc = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if ending.how in SIGNALS or ending.how == "SIGKILL":
            deadline = time.monotonic() + 60
            while len(alive_with(token)) < 4 and time.monotonic() < deadline:  # tipc, step, 2 grandchildren
                assert tipc.poll() is None, log.read_text()
                time.sleep(0.05)
            tipc.send_signal(SIGNALS.get(ending.how, signal.SIGKILL))
        code = tipc.wait(timeout=90)
    finally:
        if tipc.poll() is None:
            tipc.kill()
            tipc.wait()
    left = _settled(token)
    for pid in left:  # never leave them to the next test
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return ending, code, left, log.read_text(encoding="utf-8", errors="replace")


def _pid_namespace_here() -> bool:
    return os.geteuid() == 0 or Path("/proc/sys/kernel/unprivileged_userns_clone").read_text().strip() == "1"


def test_fifty_bad_endings_leave_no_process_behind(tmp_path: Path) -> None:
    python = stdlib_python(tmp_path / "bin")
    endings = _endings(_pid_namespace_here())
    assert len(endings) == 50 or not _pid_namespace_here()
    with ThreadPoolExecutor(max_workers=6) as pool:
        done = list(pool.map(lambda item: _one(item[0], item[1], tmp_path, python), enumerate(endings)))
    expected = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129, "SIGKILL": -9}
    problems = []
    for ending, code, left, output in done:
        if left:
            problems.append(f"{ending}: {len(left)} process(es) left: {output[-1500:]}")
        wanted = expected.get(ending.how)
        if wanted is not None and code != wanted:
            problems.append(f"{ending}: exit {code}, expected {wanted}: {output[-1500:]}")
        if ending.how in ("timeout", "setsid-exit") and code not in (0, 1):
            problems.append(f"{ending}: exit {code}: {output[-1500:]}")
        if ending.sandbox and "own PID namespace" not in output and code != -9:
            problems.append(f"{ending}: the run had no PID namespace: {output[-800:]}")
    left_total = sum(len(left) for _, _, left, _ in done)
    assert not problems, f"{left_total} process(es) left in all;\n" + "\n".join(problems[:6])
