"""The review itself with a stand-in executor (no real checks): work areas, the checks' command lines,
skipping unchanged submissions, --force, resuming after an interrupt, rejected archives, bad input."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tipc.core.errors import UserError
from tipc.review import engine
from tipc.review.engine import (
    THREAD_VARS,
    ReviewOptions,
    default_jobs,
    per_check_memory,
    review,
    thread_share,
)
from tipc.review.executor import Event, Job, Outcome
from tipc.review.progress import PlainReviewObserver


class FakeChecks:
    """Judges a submission by its VERDICT file; `interrupt_after` raises Ctrl-C after that many results."""

    name = "fake"
    slots = 1

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.ran: list[str] = []
        self.argvs: list[tuple[str, ...]] = []
        self.envs: list[dict[str, str]] = []
        self.areas_when_taken: list[list[str]] = []  # the work areas that existed as each job was taken
        self.interrupt_after = interrupt_after
        self.stopped = False

    def run(self, jobs: Iterable[Job], events: Event) -> Iterator[Outcome]:
        for n, job in enumerate(jobs):
            if self.interrupt_after is not None and n == self.interrupt_after:
                raise KeyboardInterrupt
            areas = Path(job.cwd).parent
            self.areas_when_taken.append(sorted(a.name.rsplit("-", 1)[0] for a in areas.iterdir()))
            self.envs.append(dict(job.env or {}))
            repo = Path(job.argv[4])
            verdict = (repo / "VERDICT").read_text().strip()
            self.ran.append(repo.name)  # the work area's copy (src), never the submission itself
            self.argvs.append(job.argv)
            events("started", job.key, {})
            report = {
                "rulesets": ["r"],
                "rules": [
                    {
                        "ruleset": "r",
                        "id": "r.one",
                        "verdict": verdict,
                        "severity": "error",
                        "summary": "because",
                    }
                ],
            }
            yield Outcome(job.key, 0 if verdict == "PASS" else 1, False, False, 0.1, None, report)

    def stop(self) -> None:
        self.stopped = True


def _sub(root: Path, name: str, verdict: str) -> Path:
    repo = root / name
    repo.mkdir(parents=True)
    (repo / "VERDICT").write_text(verdict)
    (repo / "NAME").write_text(name)  # submissions differ by name
    return repo


def _options(tmp_path: Path, subs: list[Path], **kw: Any) -> ReviewOptions:
    return ReviewOptions(
        submissions=[str(s) for s in subs], out=tmp_path / "out", rulesets=["tipc-basic"], **kw
    )


def _review(options: ReviewOptions, fake: FakeChecks) -> tuple[Any, bool]:
    return review(options, PlainReviewObserver(io.StringIO()), executor=fake)


def test_review_checks_each_submission_in_its_own_area(tmp_path: Path) -> None:
    good, bad = _sub(tmp_path, "good", "PASS"), _sub(tmp_path, "bad", "FAIL")
    fake = FakeChecks()
    summary, interrupted = _review(_options(tmp_path, [good, bad], memory_limit=1 << 30), fake)
    assert not interrupted and not summary.passed
    assert [(r.name, r.verdict, r.first_failure) for r in summary.rows] == [
        ("good", "PASS", None),
        ("bad", "FAIL", "r.one"),
    ]
    argv = fake.argvs[0]
    # `python -c <run the module tipc>`, never `-m` (which would import a `tipc/` from the working folder)
    assert argv[1] == "-c" and "run_module('tipc'" in argv[2] and argv[3] == "check"
    repo = Path(argv[4])
    assert repo.is_relative_to(tmp_path / "out" / "areas") and repo != good
    assert argv[argv.index("--report-dir") + 1] == str(repo.parent / "report")
    assert argv[argv.index("--ruleset") + 1] == "tipc-basic"
    assert argv[argv.index("--memory-limit") + 1] == str(1 << 30)


def test_work_areas_are_laid_out_as_the_executor_takes_each_job(tmp_path: Path) -> None:
    subs = [_sub(tmp_path, f"s{i}", "PASS") for i in range(3)]
    fake = FakeChecks()
    summary, _ = _review(_options(tmp_path, subs), fake)
    assert summary.passed
    # unpacking the next submission overlaps the running checks instead of delaying the first one
    assert fake.areas_when_taken == [["s0"], ["s0", "s1"], ["s0", "s1", "s2"]]


def _no_thread_vars(monkeypatch: pytest.MonkeyPatch, cores: int) -> None:
    for var in THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(engine, "cpu_count", lambda: cores)


def test_checks_side_by_side_get_their_share_of_the_cores_as_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert thread_share(2, cores=2) == 1 and thread_share(1, cores=8) == 8 and thread_share(3, cores=8) == 2
    assert thread_share(4, cores=2) == 1
    _no_thread_vars(monkeypatch, cores=8)
    good = _sub(tmp_path, "good", "PASS")
    fake = FakeChecks()
    summary, _ = _review(_options(tmp_path, [good], jobs=3), fake)
    assert all(fake.envs[0][v] == "2" for v in THREAD_VARS)
    note = next(n for n in summary.notes if n.startswith("threads:"))
    assert "=2 (its share of 8 core(s) at --jobs" in note and "--threads-per-submission" in note
    # one check at a time has every core: the libraries keep their own defaults
    alone = FakeChecks()
    summary, _ = _review(_options(tmp_path, [good], jobs=1, force=True), alone)
    assert not any(v in alone.envs[0] for v in THREAD_VARS)
    assert any("left as they are (one check at a time has all 8 cores)" in n for n in summary.notes)


def test_thread_counts_the_reviewer_set_are_kept_unless_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_thread_vars(monkeypatch, cores=4)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    good = _sub(tmp_path, "good", "PASS")
    fake = FakeChecks()
    summary, _ = _review(_options(tmp_path, [good], jobs=2), fake)
    assert fake.envs[0]["OMP_NUM_THREADS"] == "3" and fake.envs[0]["MKL_NUM_THREADS"] == "2"
    assert any("kept from the reviewer's environment: OMP_NUM_THREADS=3" in n for n in summary.notes)
    given = FakeChecks()
    _review(_options(tmp_path, [good], jobs=2, threads=1), given)
    assert len(given.ran) == 1  # an explicit count is another question: not taken from the stored state
    assert all(given.envs[0][v] == "1" for v in THREAD_VARS)
    untouched = FakeChecks()
    summary, _ = _review(_options(tmp_path, [good], jobs=2, threads=0), untouched)
    assert untouched.envs[0]["OMP_NUM_THREADS"] == "3" and "MKL_NUM_THREADS" not in untouched.envs[0]
    assert any("left as they are (--threads-per-submission 0)" in n for n in summary.notes)


def test_unchanged_submissions_are_skipped_unless_forced(tmp_path: Path) -> None:
    good, bad = _sub(tmp_path, "good", "PASS"), _sub(tmp_path, "bad", "FAIL")
    _review(_options(tmp_path, [good, bad]), FakeChecks())
    again = FakeChecks()
    summary, _ = _review(_options(tmp_path, [good, bad]), again)
    assert again.ran == [] and all(r.cached for r in summary.rows)
    assert [r.verdict for r in summary.rows] == ["PASS", "FAIL"]
    (bad / "VERDICT").write_text("PASS\n")  # fixed: only it is checked again
    fixed = FakeChecks()
    summary, _ = _review(_options(tmp_path, [good, bad]), fixed)
    assert fixed.ran == ["src"] and summary.passed
    forced = FakeChecks()
    _review(_options(tmp_path, [good, bad], force=True), forced)
    assert len(forced.ran) == 2
    other_rules = FakeChecks()  # another ruleset is another question
    _review(ReviewOptions([str(good)], tmp_path / "out", rulesets=["competition"]), other_rules)
    assert len(other_rules.ran) == 1


def test_identical_submissions_are_checked_once(tmp_path: Path) -> None:
    one, two = _sub(tmp_path / "a", "same", "FAIL"), _sub(tmp_path / "b", "same", "FAIL")
    fake = FakeChecks()
    summary, _ = _review(_options(tmp_path, [one, two]), fake)
    assert len(fake.ran) == 1
    assert [(r.name, r.source, r.verdict) for r in summary.rows] == [
        ("same", str(one), "FAIL"),
        ("same#2", str(two), "FAIL"),
    ]


def test_an_interrupted_review_goes_on_where_it_stopped(tmp_path: Path) -> None:
    subs = [_sub(tmp_path, f"s{i}", "PASS") for i in range(3)]
    first = FakeChecks(interrupt_after=1)
    summary, interrupted = _review(_options(tmp_path, subs), first)
    assert interrupted and first.stopped and len(first.ran) == 1
    assert "interrupted: 2 submission(s) not checked" in summary.notes[-1]
    assert [r.verdict for r in summary.rows] == ["PASS", "STOPPED", "STOPPED"]
    second = FakeChecks()
    summary, interrupted = _review(_options(tmp_path, subs), second)
    assert not interrupted and len(second.ran) == 2 and summary.passed
    assert [r.cached for r in summary.rows] == [True, False, False]


def test_a_hostile_archive_is_rejected_and_the_rest_reviewed(tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        info = tarfile.TarInfo("../../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    good = _sub(tmp_path, "good", "PASS")
    fake = FakeChecks()
    summary, _ = _review(_options(tmp_path, [evil, good]), fake)
    assert [(r.name, r.verdict) for r in summary.rows] == [("evil", "REJECTED"), ("good", "PASS")]
    assert "escapes the work area" in (summary.rows[0].cause or "")
    assert len(fake.ran) == 1 and not (tmp_path / "escape.txt").exists()


def test_bad_input_is_found_before_anything_runs(tmp_path: Path) -> None:
    good = _sub(tmp_path, "good", "PASS")
    fake = FakeChecks()
    with pytest.raises(UserError, match="no such file or folder"):
        _review(_options(tmp_path, [good, tmp_path / "missing"]), fake)
    with pytest.raises(UserError, match="must not be inside the submission"):
        _review(ReviewOptions([str(good)], good / "out", rulesets=["tipc-basic"]), fake)
    with pytest.raises(UserError, match="no built-in ruleset"):
        _review(ReviewOptions([str(good)], tmp_path / "out", rulesets=["no-such-rules"]), fake)
    assert fake.ran == []


def test_default_jobs_follow_cores_and_memory() -> None:
    gib = 1 << 30
    assert default_jobs(2 * gib, cpus=8, available=64 * gib) == 8
    assert default_jobs(2 * gib, cpus=8, available=5 * gib) == 2
    assert default_jobs(2 * gib, cpus=2, available=1 * gib) == 1
    assert per_check_memory(2, 2 * gib, total=20 * gib) == int(20 * gib * 0.85) // 2
    assert per_check_memory(16, 2 * gib, total=20 * gib) == 2 * gib


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from tipc.cli import main; code = main(sys.argv[1:]); "
        "assert 'ray' not in sys.modules, 'ray imported'; sys.exit(code)"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )


def test_cli_bad_input_exits_2_with_a_message(tmp_path: Path) -> None:
    res = _cli("review", str(tmp_path / "nope"), "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert (
        res.returncode == 2 and "nope: no such file or folder" in res.stderr and "Traceback" not in res.stderr
    )
    res = _cli("review", str(tmp_path), "--jobs", "0", cwd=tmp_path)
    assert res.returncode == 2 and "--jobs must be at least 1" in res.stderr
    res = _cli("review", str(tmp_path), "--address", "auto", cwd=tmp_path)
    assert res.returncode == 2 and "--address is for --executor ray" in res.stderr
    res = _cli("review", str(tmp_path), "--threads-per-submission", "-1", cwd=tmp_path)
    assert res.returncode == 2 and "--threads-per-submission must be 0" in res.stderr
