"""One executor interface, two implementations: a local pool of worker threads, and Ray (review.ray_exec,
which builds on this module; tipc.review.engine picks one).

A `Job` is one submission's `tipc check`, fully described by plain data (argv, folders, budgets), so it
crosses to a Ray worker unchanged. `run_job` runs it where it lands: the check in its own process group
through tipc.execute.proc with the submission's wall-clock budget, its tree's peak memory sampled by
tipc.execute.monitor,
and afterwards whatever the check left running (a step's process that escaped the group, anything still in
the check's cgroup) is killed, so a review leaves no process behind. The check's report comes back inside the
`Outcome`, so the driver needs no shared file system to build the summary.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# Events the executors report to the observer: (event, job key, details).
Event = Callable[[str, str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class Job:
    key: str  # the review-state key of the submission
    name: str
    argv: tuple[str, ...]  # the `python -m tipc check ...` command
    cwd: str  # the submission's work area
    report_dir: str
    log_path: str
    budget_s: float  # wall-clock budget of the whole check
    env: Mapping[str, str] | None = None
    memory_bytes: int | None = None  # reserved on Ray; the check's own --memory-limit enforces the limit
    cpus: float = 1.0
    gpus: float = 0.0


@dataclass(frozen=True)
class Outcome:
    key: str
    exit_code: int | None  # None: stopped (budget or interrupt) before it exited by itself
    timed_out: bool
    interrupted: bool
    wall_s: float
    peak_rss_bytes: int | None
    report: dict[str, Any] | None  # the check's report.json, when it wrote one
    log_tail: tuple[str, ...] = ()
    killed_leftovers: int = 0  # processes still alive after the check ended, killed by run_job
    node: str = field(default_factory=socket.gethostname)
    error: str | None = None  # the job could not be run at all


LOG_TAIL_LINES = 20


def _tail(path: str, lines: int = LOG_TAIL_LINES) -> tuple[str, ...]:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(text.splitlines()[-lines:])


def _kill_leftovers(tag: str, seen: Sequence[Any]) -> int:
    """SIGKILL what a check left alive: the members of its tree the monitor saw (psutil objects, safe against
    pid reuse) and whatever is in the cgroups it created (named by its cgroup tag), then remove those
    groups. Returns how many processes were killed."""
    import psutil

    from tipc.execute.sandbox import limits

    victims: dict[int, Any] = {}
    for p in seen:
        with contextlib.suppress(psutil.Error):
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                victims[p.pid] = p
    groups = limits.tagged_groups(tag)
    for group in groups:
        for other in limits.group_members(group):
            if other != os.getpid() and other not in victims:
                with contextlib.suppress(psutil.Error):
                    victims[other] = psutil.Process(other)
    for p in victims.values():
        with contextlib.suppress(psutil.Error):
            p.kill()
    if victims:
        psutil.wait_procs(list(victims.values()), timeout=2)
    for group in groups:  # empty now; a check that ended cleanly removed its own
        with contextlib.suppress(OSError):
            group.rmdir()
    return len(victims)


def cgroup_tag(key: str) -> str:
    """The cgroup tag of one run of the job `key` (tipc.execute.sandbox.limits.TAG_ENV): unique per run."""
    return f"review-{''.join(c for c in key if c.isalnum())[:12]}-{os.urandom(4).hex()}"


def run_job(job: Job, on_start: Callable[[int], None] | None = None) -> Outcome:
    """Run one submission's check to its end or its budget; never raises for the check's own failures."""
    from tipc.execute import proc
    from tipc.execute.monitor import Monitor

    monitor: Monitor | None = None

    def started(pid: int) -> None:
        nonlocal monitor
        monitor = Monitor(pid, gpu=False).start()
        if on_start is not None:
            on_start(pid)

    from tipc.execute.sandbox.limits import TAG_ENV

    tag = cgroup_tag(job.key)
    env = dict(job.env) if job.env is not None else proc.base_env()
    env[TAG_ENV] = tag  # the groups the check creates carry it: found after it ends
    t0 = time.monotonic()
    try:
        res = proc.run(
            job.argv,
            cwd=job.cwd,
            env=env,
            timeout_s=job.budget_s,
            log_path=job.log_path,
            on_start=started,
        )
    except OSError as exc:
        return Outcome(job.key, None, False, False, time.monotonic() - t0, None, None, error=str(exc))
    wall = time.monotonic() - t0
    peak = None
    killed = 0
    if monitor is not None:
        resources = monitor.stop()
        peak = resources.peak_rss_bytes
        killed = _kill_leftovers(tag, monitor.processes())
    report = None
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(Path(job.report_dir, "report.json").read_text(encoding="utf-8"))
        report = loaded if isinstance(loaded, dict) else None
    return Outcome(
        job.key,
        res.exit_code,
        res.timed_out,
        res.interrupted,
        round(wall, 3),
        peak,
        report,
        log_tail=_tail(job.log_path),
        killed_leftovers=killed,
    )


class Executor(Protocol):
    """Runs jobs, yielding each Outcome as it finishes; `stop()` (from another thread or a signal handler's
    caller) stops what runs and drops what has not started (no Outcome for it). `jobs` is taken one at a
    time, in the thread iterating `run`, only when a slot is free: the review lays out a submission's work
    area as it hands the job over, so that work overlaps the checks already running."""

    name: str
    slots: int

    def run(self, jobs: Iterable[Job], events: Event) -> Iterator[Outcome]: ...

    def stop(self) -> None: ...


class LocalPool:
    """Up to `slots` checks at once on this machine, each a child process group watched by a thread."""

    name = "local"

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._running: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def _one(self, job: Job, events: Event) -> Outcome:
        def on_start(pid: int) -> None:
            with self._lock:
                self._running[job.key] = pid
            events("started", job.key, {"pid": pid})
            if self._stopping.is_set():  # stop() ran between the hand-over and the start
                self._signal(pid)

        try:
            return run_job(job, on_start)
        finally:
            with self._lock:
                self._running.pop(job.key, None)

    @staticmethod
    def _signal(pid: int) -> None:
        # SIGTERM: the check stops its steps as on Ctrl-C and writes its record; run_job kills what is left.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)

    def run(self, jobs: Iterable[Job], events: Event) -> Iterator[Outcome]:
        queue = iter(jobs)
        with ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="tipc-review") as pool:
            pending: set[Future[Outcome]] = set()
            try:
                while True:
                    # hand over the next jobs only as slots free up (after a stop, none)
                    while len(pending) < self.slots and not self._stopping.is_set():
                        job = next(queue, None)
                        if job is None:
                            break
                        pending.add(pool.submit(self._one, job, events))
                    if not pending:
                        return
                    # returns the moment one finishes; the timeout only lets a Ctrl-C in
                    done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    for fut in done:
                        yield fut.result()
            finally:
                if pending:
                    self.stop()
                    wait(pending)

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            pids = list(self._running.values())
        for pid in pids:
            self._signal(pid)
