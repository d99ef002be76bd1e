"""`evaluate(..., jobs=N, lanes=...)`: lane checks computed side by side, rules read in order; the results are
those of a sequential evaluation, and Ctrl-C stops every child the lanes started."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.judge.rules.conftest import with_fakes
from tipc.execute import proc
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict
from tipc.judge.rules import evaluate, parse_ruleset

SLEEP_S = 0.4

RULESET = """\
schema: tipc.ruleset/1
name: par
rules:
  - id: engines
    source: s
    severity: error
    description: d
    check: {check: {name: slow_a, args: {n: 1}}}
  - id: scripts
    source: s
    severity: warning
    description: d
    check: {check: {name: slow_b}}
  - id: gated-off
    source: s
    severity: error
    description: d
    applies_if: {file_exists: {path: missing.txt}}
    check: {check: {name: slow_c}}
  - id: both
    source: s
    severity: error
    description: d
    check:
      all_of:
        - check: {name: slow_a, args: {n: 1}}
        - file_exists: {path: present.txt}
  - id: alternatives
    source: s
    severity: error
    description: d
    check:
      any_of:
        - file_exists: {path: present.txt}
        - check: {name: slow_c}
  - id: broken
    source: s
    severity: error
    description: d
    check: {check: {name: explodes}}
"""

LANES = {"slow_a": "engines", "slow_b": "scripts", "slow_c": "serving", "explodes": "scripts"}


FAKES = with_fakes("slow_a", "slow_b", "slow_c", "explodes", "first", "second")


def _fakes(calls: Counter[str], peak: list[int] | None = None) -> dict[str, Callable[..., CheckOutcome]]:
    """`peak[0]`: the most slow checks that were running at once (side by side, as a count, not a time)."""
    lock = threading.Lock()
    running = [0]

    def slow(name: str, verdict: Verdict) -> Callable[..., CheckOutcome]:
        def check(ctx: CheckContext, **args: Any) -> CheckOutcome:
            with lock:
                calls[name] += 1
                running[0] += 1
                if peak is not None:
                    peak[0] = max(peak[0], running[0])
            time.sleep(SLEEP_S)
            with lock:
                running[0] -= 1
            return CheckOutcome(verdict, f"{name} {sorted(args.items())}", data={"args": args})

        return check

    def explodes(ctx: CheckContext, **args: Any) -> CheckOutcome:
        with lock:
            calls["explodes"] += 1
        raise ZeroDivisionError("bug in a check")

    return {
        "slow_a": slow("slow_a", Verdict.PASS),
        "slow_b": slow("slow_b", Verdict.FAIL),
        "slow_c": slow("slow_c", Verdict.PASS),
        "explodes": explodes,
    }


def _run(
    repo: Path, jobs: int, peak: list[int] | None = None
) -> tuple[list[tuple[Any, ...]], float, Counter[str]]:
    calls: Counter[str] = Counter()
    rs = parse_ruleset(RULESET, "par.yaml", checks=FAKES)
    started = time.perf_counter()
    results = evaluate([rs], CheckContext(repo=repo), checks=_fakes(calls, peak), jobs=jobs, lanes=LANES)
    wall = time.perf_counter() - started
    seen = [(r.ruleset, r.rule.id, r.verdict, r.outcome.to_json(), r.error) for r in results]
    return seen, wall, calls


def test_two_jobs_give_the_sequential_results_side_by_side(tree: Callable[..., Path]) -> None:
    repo = tree({"present.txt": "x"})
    seq_peak, par_peak = [0], [0]
    seq, _, seq_calls = _run(repo, jobs=1, peak=seq_peak)
    par, _, par_calls = _run(repo, jobs=2, peak=par_peak)
    assert par == seq  # same rules, order, verdicts, summaries, evidence and errors
    verdicts = {rule: verdict for _, rule, verdict, _, _ in par}
    assert verdicts == {
        "engines": Verdict.PASS,
        "scripts": Verdict.WARN,
        "gated-off": Verdict.NA,
        "both": Verdict.PASS,
        "alternatives": Verdict.PASS,
        "broken": Verdict.SKIP,
    }
    assert "ZeroDivisionError" in (par[-1][4] or "")
    # Nothing runs that the sequential evaluation does not run: not the gated-off rule's check, nor an
    # any_of alternative after one that passed. A repeated call is made once.
    assert "slow_c" not in par_calls and "slow_c" not in seq_calls
    assert par_calls == Counter({"slow_a": 1, "slow_b": 1, "explodes": 1})
    assert seq_calls["slow_a"] == 2
    # sequential: slow_a, slow_b, slow_a again; side by side: slow_a beside slow_b (counted, not timed:
    # the time it saves is the timing tier's)
    assert seq_peak == [1] and par_peak == [2]


@pytest.mark.timing
def test_two_jobs_take_about_half_the_time(tree: Callable[..., Path]) -> None:
    repo = tree({"present.txt": "x"})
    _, seq_wall, _ = _run(repo, jobs=1)
    _, par_wall, _ = _run(repo, jobs=2)
    assert seq_wall >= 3 * SLEEP_S
    assert par_wall < 0.6 * seq_wall, (seq_wall, par_wall)


def test_durations_include_the_lane_time_each_rule_read(tree: Callable[..., Path]) -> None:
    par, _, _ = _run(tree({"present.txt": "x"}), jobs=2)
    rs = parse_ruleset(RULESET, "par.yaml", checks=FAKES)
    results = evaluate([rs], CheckContext(repo=tree({})), checks=_fakes(Counter()), jobs=2, lanes=LANES)
    by_id = {r.rule.id: r.duration_s or 0.0 for r in results}
    assert by_id["engines"] >= SLEEP_S * 0.9 and by_id["scripts"] >= SLEEP_S * 0.9
    assert by_id["both"] < SLEEP_S / 2  # read what the lane computed for `engines`
    assert par


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def test_ctrl_c_stops_every_child_the_lanes_started(tree: Callable[..., Path], tmp_path: Path) -> None:
    leaders: list[int] = []
    lock = threading.Lock()

    def sleeper(ctx: CheckContext, **args: Any) -> CheckOutcome:
        def started(pid: int) -> None:
            with lock:
                leaders.append(pid)

        # a child that has a child of its own in its group
        res = proc.run(["sh", "-c", "sleep 60 & sleep 60; wait"], cwd=tmp_path, on_start=started)
        return CheckOutcome(Verdict.PASS if res.exit_code == 0 else Verdict.FAIL, f"exit {res.exit_code}")

    rs = parse_ruleset(
        """\
schema: tipc.ruleset/1
name: ctrl-c
rules:
  - {id: one, source: s, severity: error, description: d, check: {check: {name: first}}}
  - {id: two, source: s, severity: error, description: d, check: {check: {name: second}}}
""",
        "c.yaml",
        checks=FAKES,
    )

    def interrupt_when_both_run() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with lock:
                if len(leaders) == 2:
                    break
            time.sleep(0.02)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_when_both_run, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        evaluate(
            [rs],
            CheckContext(repo=tree({})),
            checks={"first": sleeper, "second": sleeper},
            jobs=2,
            lanes={"first": "a", "second": "b"},
        )
    assert len(leaders) == 2
    assert time.monotonic() - started < 45  # stopped, not waited out (each child sleeps 60 s)
    deadline = time.monotonic() + 5
    while any(_group_alive(pid) for pid in leaders) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in leaders if _group_alive(pid)]
    with proc._registry_lock:
        assert not set(leaders) & proc._ours
