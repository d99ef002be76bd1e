"""The local pool: jobs in parallel up to its slots, a budget that stops a job's whole tree (a grandchild in
its own session included), and stop() for an interrupted review."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import psutil
import pytest

from tipc.review.executor import Job, LocalPool, Outcome

ROOT = Path(__file__).resolve().parents[2]


def _job(tmp_path: Path, key: str, code: str, budget: float = 60.0) -> Job:
    area = tmp_path / key
    (area / "report").mkdir(parents=True)
    return Job(
        key=key,
        name=key,
        argv=(sys.executable, "-c", code),
        cwd=str(area),
        report_dir=str(area / "report"),
        log_path=str(area / "check.log"),
        budget_s=budget,
    )


WRITE_REPORT = (
    "import json, time; time.sleep({sleep}); "
    "json.dump({{'rules': [], 'overall': 'PASS'}}, open('report/report.json', 'w')); print('done')"
)


# Each job notes when it starts, then waits (up to 60 s) for the other's note: with two slots both get there.
MEET = (
    "import json, os, time; open('../' + os.path.basename(os.getcwd()) + '.here', 'w').close(); "
    "deadline = time.monotonic() + 60\n"
    "while len([n for n in os.listdir('..') if n.endswith('.here')]) < 2 and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)\n"
    "met = len([n for n in os.listdir('..') if n.endswith('.here')]) == 2\n"
    "json.dump({'rules': [], 'overall': 'PASS' if met else 'FAIL'}, open('report/report.json', 'w')); "
    "print('done')"
)


def test_jobs_run_in_parallel_up_to_the_slots(tmp_path: Path) -> None:
    jobs = [_job(tmp_path, f"j{i}", MEET) for i in range(2)]
    events: list[tuple[str, str]] = []
    outcomes = list(LocalPool(2).run(jobs, lambda e, k, d: events.append((e, k))))
    # both at once: each saw the other running (one after the other, the first would wait in vain)
    assert sorted(o.key for o in outcomes) == ["j0", "j1"]
    assert all(o.exit_code == 0 and o.report == {"rules": [], "overall": "PASS"} for o in outcomes)
    assert all(o.log_tail[-1] == "done" for o in outcomes)
    assert sorted(events) == [("started", "j0"), ("started", "j1")]


def test_each_stage_a_check_reports_is_an_event(tmp_path: Path) -> None:
    """The check's own progress lines (its steps, its checks) reach the review as `stage` events; the rest
    of its output only its log."""
    code = (
        "print('tipc: Paddle 3.3.1 (cpu build)'); print('[1/2] train/norm ...'); "
        "print('[1/2] train/norm: PASSED (1.0s)'); print('tipc: check agreement ...'); print('    | noise')"
    )
    events: list[tuple[str, str, str]] = []
    def on_event(event: str, key: str, details: Mapping[str, Any]) -> None:
        events.append((event, key, str(details.get("text", ""))))

    outcomes = list(LocalPool(1).run([_job(tmp_path, "j", code)], on_event))
    assert outcomes[0].exit_code == 0
    assert [t for e, _k, t in events if e == "stage"] == [
        "[1/2] train/norm ...",
        "[1/2] train/norm: PASSED (1.0s)",
        "check agreement ...",
    ]


def test_budget_stops_the_whole_tree(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
        "                     start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(600)\n"
    )
    [outcome] = list(LocalPool(1).run([_job(tmp_path, "hang", code, budget=2.0)], lambda e, k, d: None))
    assert outcome.timed_out and outcome.exit_code is None
    assert outcome.wall_s < 300  # stopped at its budget, not waited out (the child sleeps 600 s)
    grandchild = int(pid_file.read_text())
    # its own session escaped the group kill; run_job found it in the tree and killed it
    assert outcome.killed_leftovers >= 1
    assert not psutil.pid_exists(grandchild) or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE


def test_stop_ends_running_jobs_and_drops_the_rest(tmp_path: Path) -> None:
    taken: list[str] = []

    def jobs() -> Iterator[Job]:  # lazily, as the review hands them over
        for i in range(3):
            taken.append(f"j{i}")
            yield _job(tmp_path, f"j{i}", "import time; time.sleep(600)")

    pool = LocalPool(1)
    started = threading.Event()
    outcomes: list[Outcome] = []

    def consume() -> None:
        outcomes.extend(pool.run(jobs(), lambda e, k, d: started.set()))

    worker = threading.Thread(target=consume)
    worker.start()
    assert started.wait(30)
    t0 = time.monotonic()
    pool.stop()
    worker.join(30)
    assert not worker.is_alive() and time.monotonic() - t0 < 300  # not the 600 s the job sleeps
    # the running one stopped; the others were never taken from the queue (no outcome, no work area)
    assert [o.key for o in outcomes] == ["j0"] and outcomes[0].exit_code != 0
    assert taken == ["j0"]


def test_a_process_left_in_the_checks_cgroup_is_killed_and_the_group_removed(tmp_path: Path) -> None:
    """A check that dies leaving a process outside its tree (its own session, re-parented away) but still in
    the cgroup the check created: run_job finds that group by the tag it gave the check, kills what is in
    it and removes it."""
    from tipc.execute.sandbox import limits

    own = limits.own_group("pids")
    if own is None or not os.access(own, os.W_OK):
        pytest.skip("no writable pids cgroup here: a run's limits cannot be applied")
    pid_file = tmp_path / "daemon.pid"
    code = (
        "import os, time\n"
        "from tipc.execute.sandbox.limits import Limits\n"
        "Limits(None, 1000).apply()\n"  # as a check does: its own group, which it never gets to remove
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        # off the check's output pipe, which would otherwise hold the pipe's reader for its 5 s grace
        "        _null = os.open(os.devnull, os.O_RDWR)\n"
        "        for _fd in (0, 1, 2):\n"
        "            os.dup2(_null, _fd)\n"
        f"        open({str(pid_file)!r} + '.tmp', 'w').write(str(os.getpid()))\n"
        f"        os.rename({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\n"
        "        time.sleep(600)\n"
        "    os._exit(0)\n"
        f"while not os.path.exists({str(pid_file)!r}):\n"
        "    time.sleep(0.05)\n"
    )
    job = _job(tmp_path, "left", code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    job = dataclasses.replace(job, env=env)
    [outcome] = list(LocalPool(1).run([job], lambda e, k, d: None))
    assert outcome.exit_code == 0, outcome.log_tail
    daemon = int(pid_file.read_text())
    assert outcome.killed_leftovers >= 1
    assert not psutil.pid_exists(daemon) or psutil.Process(daemon).status() == psutil.STATUS_ZOMBIE
    assert not list(own.glob("tipc-review-left-*")), "the check's cgroup was left behind"
