"""`tipc review` proper: submissions -> work areas -> checks on an executor -> one summary.

Every input problem (a path that names nothing, a bad ref, an unknown ruleset, an output folder inside a
submission) is found before anything runs. Then each submission is hashed; an unchanged one with a stored
row is taken from the review state (unless `force`); the others are unpacked into their own work area
`<out>/areas/<name>-<hash>/` and checked by `python -m tipc check` in its own sandbox, `jobs` at a time.
A work area is laid out only when the executor has a free slot for it, so unpacking the next submission
overlaps the checks already running instead of delaying the first one. Rows are stored as they finish, so an
interrupted review run again goes on where it stopped.

When checks run side by side, each gets its share of the cores as its math libraries' thread count
(OMP_NUM_THREADS and the like, as Ray does for its tasks): the libraries otherwise size their thread pools to
the whole machine in every process of every check, and the checks fight over the cores.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipc.core.errors import UserError
from tipc.core.version import __version__
from tipc.execute.proc import shielded
from tipc.review.executor import Executor, Job, LocalPool
from tipc.review.sources import Rejected, Source, content_hash, materialise, parse_source
from tipc.review.store import Store, job_key
from tipc.review.summary import Row, Summary, rejected_row, row_from_outcome

DEFAULT_ESTIMATE_BYTES = 2 << 30  # what one check of a small model repo needs (Paddle + ONNX Runtime)
DEFAULT_BUDGET_S = 3600.0
# tipc check's default rulesets, and seed 001's submission artefacts for every submission
DEFAULT_RULESETS: tuple[str, ...] = ("tipc-basic", "competition", "submission-artefacts")


@dataclass
class ReviewOptions:
    submissions: list[str]
    out: Path
    rulesets: list[str] = field(default_factory=list)  # names or paths; empty: DEFAULT_RULESETS
    jobs: int | None = None
    budget_s: float = DEFAULT_BUDGET_S
    memory_limit: int | None = None  # per submission; None: a share of the machine
    estimate_bytes: int = DEFAULT_ESTIMATE_BYTES
    max_processes: int | None = None
    cpus: float = 1.0
    gpus: float = 0.0
    executor: str = "local"
    address: str | None = None
    force: bool = False
    check_args: list[str] = field(default_factory=list)  # passed to every `tipc check` as they are
    threads: int | None = None  # per check; None: its share of the cores; 0: the variables left as they are


@dataclass
class Planned:
    source: Source
    name: str
    content_hash: str
    key: str


def _meminfo(field_name: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_jobs(estimate_bytes: int, *, cpus: int | None = None, available: int | None = None) -> int:
    """What the machine allows: one check per core, and no more than its free memory holds at `estimate`."""
    cores = cpus if cpus is not None else cpu_count()
    free = available if available is not None else _meminfo("MemAvailable")
    by_memory = max(1, free // estimate_bytes) if free else cores
    return max(1, min(cores, by_memory))


def per_check_memory(jobs: int, estimate_bytes: int, total: int | None = None) -> int | None:
    """The --memory-limit each check gets by default: its share of 85% of the machine, at least `estimate`."""
    total = total if total is not None else _meminfo("MemTotal")
    if not total:
        return None
    share = int(total * 0.85) // max(1, jobs)
    return min(int(total * 0.85), max(estimate_bytes, share))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"


def tipc_pythonpath(current: str | None) -> str | None:
    """PYTHONPATH for the checks: this tipc's folder first (so `python -m tipc` is this tipc), unless tipc is
    an installed package (a site-packages folder on PYTHONPATH would shadow the repos' own packages)."""
    from tipc.core.resources import package_parent

    here = str(package_parent())
    parts = [p for p in (current or "").split(os.pathsep) if p]
    if Path(here).name in ("site-packages", "dist-packages") or here in parts:
        return current
    return os.pathsep.join([here, *parts])


# The thread-count variables of the math libraries Paddle and NumPy use on the CPU (OpenMP, MKL, OpenBLAS).
THREAD_VARS: tuple[str, ...] = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def thread_share(slots: int, cores: int | None = None) -> int:
    """The threads one of `slots` checks running side by side gets: its share of the cores, at least 1."""
    return max(1, (cores if cores is not None else cpu_count()) // max(1, slots))


def check_env(threads: int | None = None, *, explicit: bool = False) -> dict[str, str]:
    """The environment of every check: this one, the sandbox marker removed, tipc importable, and
    THREAD_VARS set to `threads` (those the reviewer set keep their value unless `explicit`)."""
    from tipc.execute.sandbox import CHILD_ENV

    env = {k: v for k, v in os.environ.items() if k != CHILD_ENV}  # each check enters its own sandbox
    path = tipc_pythonpath(env.get("PYTHONPATH"))
    if path:
        env["PYTHONPATH"] = path
    if threads:
        for var in THREAD_VARS:
            if explicit or var not in env:
                env[var] = str(threads)
    return env


def threads_note(threads: int | None, explicit: bool, slots: int, executor: str) -> str:
    """What the summary says about the checks' thread counts (and how to change them)."""
    if not threads:
        why = "--threads-per-submission 0" if explicit else f"one check at a time has all {cpu_count()} cores"
        return f"threads: each check's {'/'.join(THREAD_VARS)} left as they are ({why})"
    kept = [f"{v}={os.environ[v]}" for v in THREAD_VARS if v in os.environ and not explicit]
    why = (
        "--threads-per-submission"
        if explicit
        else (
            "its --cpus-per-submission"
            if executor == "ray"
            else f"its share of {cpu_count()} core(s) at --jobs {slots}"
        )
    )
    text = f"threads: each check runs with {'/'.join(THREAD_VARS)}={threads} ({why})"
    if kept:
        text += f"; kept from the reviewer's environment: {', '.join(kept)}"
    return text + "; --threads-per-submission N sets another count, 0 leaves them as they are"


def resolve_rulesets(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ruleset names the checks will report, and a digest of each ruleset file (an edited ruleset makes
    every submission worth checking again). Errors in a ruleset file are found here (exit 2)."""
    import hashlib

    from tipc.judge.rules.schema import load_rulesets

    loaded = load_rulesets(list(names), DEFAULT_RULESETS)
    digests = []
    for rs in loaded:
        try:
            digests.append(hashlib.sha256(Path(rs.path).read_bytes()).hexdigest()[:16])
        except OSError:
            digests.append(rs.name)
    return [rs.name for rs in loaded], digests


def plan(options: ReviewOptions, ruleset_digests: Sequence[str] = ()) -> list[Planned]:
    sources = [parse_source(text) for text in options.submissions]
    out = options.out.resolve()
    for s in sources:
        if s.kind in ("folder", "git") and (out == s.path or out.is_relative_to(s.path)):
            raise UserError(
                f"--out {options.out}: the review folder must not be inside the submission {s.text}"
            )
    fingerprint = ["rulesets", *options.rulesets, *ruleset_digests, "check-args", *options.check_args]
    from tipc.review.packages import checks_python, packages_digest

    python = checks_python(options.check_args)
    fingerprint += ["packages", python, packages_digest(python)]  # what is installed, not only where
    if options.threads is not None:  # an explicit count may change what a check computes; a derived one
        fingerprint += ["threads", str(options.threads)]  # follows --jobs, which must not void the state
    planned: list[Planned] = []
    used: dict[str, int] = {}
    for s in sources:
        digest = content_hash(s)
        name = s.label
        used[name] = used.get(name, 0) + 1
        if used[name] > 1:
            name = f"{name}#{used[name]}"
        planned.append(Planned(s, name, digest, job_key(digest, __version__, fingerprint)))
    return planned


def check_argv(repo: Path, report_dir: Path, options: ReviewOptions, memory: int | None) -> tuple[str, ...]:
    from tipc.execute.proc import module_argv

    argv = module_argv(
        sys.executable, "tipc", "check", str(repo), "--report-dir", str(report_dir), "--no-color"
    )
    for rs in options.rulesets:
        argv += ["--ruleset", rs]
    if memory is not None:
        argv += ["--memory-limit", str(memory)]
    if options.max_processes is not None:
        argv += ["--max-processes", str(options.max_processes)]
    # Submissions already run side by side (review --jobs): one lane each inside, and a documented chain
    # within the budget; a later --check-arg wins (argparse keeps the last value).
    argv += ["--jobs", "1", *docs_budget(options.budget_s), *options.check_args]
    return tuple(argv)


# Shares of a submission's budget its documented chain may take: the full-recipe trainings docs give run
# until stopped, and with check's own defaults (1200 s in all) a 600 s budget stopped every such submission
# as TIMEOUT, a verdict on the budget rather than on the submission.
DOCS_SHARE = 0.4
DOCS_STEP_SHARE = 0.15


def docs_budget(budget_s: float) -> list[str]:
    """`--docs-timeout`/`--docs-step-timeout` for a check of `budget_s`, each where check's default would not
    fit in its share of the budget."""
    from tipc.planning import DOCS_STEP_TIMEOUT_S, DOCS_TIMEOUT_S

    out: list[str] = []
    for flag, default, share in (
        ("--docs-timeout", DOCS_TIMEOUT_S, DOCS_SHARE),
        ("--docs-step-timeout", DOCS_STEP_TIMEOUT_S, DOCS_STEP_SHARE),
    ):
        if default > budget_s * share:
            out += [flag, f"{budget_s * share:g}"]
    return out


class Observer:
    """What review() tells as it goes (tipc.review.progress implements it)."""

    def notice(self, text: str) -> None: ...
    def queued(self, names: list[str]) -> None: ...
    def started(self, name: str) -> None: ...
    def stage(self, name: str, text: str) -> None: ...
    def finished(self, row: Row) -> None: ...
    def close(self) -> None: ...


def _job_for(
    p: Planned, out: Path, options: ReviewOptions, memory: int | None, env: dict[str, str]
) -> Job | Row:
    """The check job of one submission in a fresh work area, or its REJECTED row when it cannot be laid
    out there."""
    area = out / "areas" / f"{_safe(p.name)}-{p.content_hash[:12]}"
    if area.exists():
        shutil.rmtree(area)  # a fresh area for every check: nothing stale from an earlier one
    area.mkdir(parents=True)
    try:
        repo = materialise(p.source, area)
    except Rejected as exc:
        row = rejected_row(p.name, p.source.text, p.content_hash, str(exc))
        row.work_area = str(area)
        return row
    report_dir = area / "report"
    return Job(
        key=p.key,
        name=p.name,
        argv=check_argv(repo, report_dir, options, memory),
        cwd=str(area),
        report_dir=str(report_dir),
        log_path=str(area / "check.log"),
        budget_s=options.budget_s,
        env=env,
        # what Ray reserves: the limit when one is given, else the expected need (a share of this
        # machine could exceed what a node offers, and the task would never be placed)
        memory_bytes=options.memory_limit or options.estimate_bytes,
        cpus=options.cpus,
        gpus=options.gpus,
    )


def _stop_the_rest(planned: list[Planned], rows: dict[int, Row]) -> None:
    """After an interrupt, a STOPPED row for every submission whose check did not end."""
    for index, p in enumerate(planned):
        if index not in rows:
            rows[index] = Row(
                p.name,
                p.source.text,
                p.content_hash,
                "STOPPED",
                first_failure="review.interrupted",
                cause="the review was interrupted before this submission's check ended",
            )


def _sort_out(
    planned: list[Planned], options: ReviewOptions, store: Store, record: Callable[[int, Row], None]
) -> tuple[list[Planned], dict[str, list[int]]]:
    """Decide what needs no check (a stored result: `record`ed at once, twins too) and what does; (the
    submissions to check, indices of `planned` by key: identical submissions are checked once)."""
    to_run: list[Planned] = []
    twins: dict[str, list[int]] = {}
    decided: dict[int, Row] = {}
    for index, p in enumerate(planned):
        if p.key in twins:
            twins[p.key].append(index)
            continue
        twins[p.key] = [index]
        stored = None if options.force else store.get(p.key)
        if stored is not None:
            row = Row.from_json(stored)
            row.name, row.source, row.cached = p.name, p.source.text, True
            decided[index] = row
            record(index, row)
        else:
            to_run.append(p)
    # a twin of a submission with a stored row takes that row
    for indices in twins.values():
        if indices[0] in decided:
            for other in indices[1:]:
                _record_twin(planned, other, decided[indices[0]], record)
    return to_run, twins


def _record_twin(planned: list[Planned], index: int, row: Row, record: Callable[[int, Row], None]) -> None:
    twin = Row.from_json(row.to_json())
    twin.name, twin.source = planned[index].name, planned[index].source.text
    record(index, twin)


def _record_all(
    planned: list[Planned], indices: list[int], row: Row, record: Callable[[int, Row], None]
) -> None:
    """`row` for the first of identical submissions, a copy under its own name for each twin."""
    record(indices[0], row)
    for index in indices[1:]:
        _record_twin(planned, index, row, record)


def _settings(options: ReviewOptions, n_planned: int) -> tuple[int, int | None, int]:
    """(checks at once, each check's memory limit, each check's thread count)."""
    ray = options.executor == "ray"
    jobs_n = options.jobs or (n_planned if ray else default_jobs(options.estimate_bytes))
    memory = options.memory_limit or per_check_memory(1 if ray else jobs_n, options.estimate_bytes)
    threads = options.threads
    if threads is None:  # a Ray task's share is what it declares; a local check's, the cores over --jobs
        threads = max(1, int(options.cpus)) if ray else thread_share(jobs_n)
        if not ray and threads >= cpu_count():
            # A cap only: a check with every core to itself keeps the libraries' own defaults (measured on
            # the demo at --jobs 1: OMP_NUM_THREADS=2 on 2 cores cost ~7% more CPU for the same wall time).
            threads = 0
    return jobs_n, memory, threads


def _lazy_jobs(
    to_run: list[Planned],
    build: Callable[[Planned], Job | Row],
    on_job: Callable[[Planned, Job], None],
    on_rejected: Callable[[Planned, Row], None],
) -> Iterator[Job]:
    """The check jobs, each work area laid out only when the executor asks for the next job (a slot is
    free): unpacking overlaps the checks already running. A rejected submission gets its row instead."""
    for p in to_run:
        job = build(p)
        if isinstance(job, Row):
            on_rejected(p, job)
        else:
            on_job(p, job)
            yield job


def _run_checks(
    runner: Executor,
    jobs: Iterator[Job],
    by_key: dict[str, tuple[Planned, Job]],
    events: Callable[[str, str, Any], None],
    on_row: Callable[[Planned, Row], None],
) -> bool:
    """Run the jobs on `runner`, each finished check's row to `on_row`; True when interrupted (Ctrl-C)."""
    outcomes = runner.run(jobs, events)
    try:
        for outcome in outcomes:
            p, job = by_key[outcome.key]
            on_row(
                p,
                row_from_outcome(
                    outcome,
                    name=p.name,
                    source=p.source.text,
                    content_hash=p.content_hash,
                    budget_s=job.budget_s,
                    work_area=job.cwd,
                    report_dir=job.report_dir,
                    log_path=job.log_path,
                ),
            )
    except KeyboardInterrupt:
        with shielded():  # a second Ctrl-C must not leave checks half-stopped
            runner.stop()
            close = getattr(outcomes, "close", None)
            if close is not None:
                close()  # the executor waits for its stopped checks and kills what they left
        return True
    return False


def review(
    options: ReviewOptions, observer: Any, *, executor: Executor | None = None
) -> tuple[Summary, bool]:
    """Run the review; (summary, interrupted). KeyboardInterrupt stops the running checks and returns what
    finished (stored, so a second run goes on from there)."""
    t0 = time.monotonic()
    if not options.rulesets:
        options.rulesets = list(DEFAULT_RULESETS)
    rulesets, digests = resolve_rulesets(options.rulesets)
    planned = plan(options, digests)
    out = options.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    store = Store(out)
    notes: list[str] = [store.note] if store.note else []
    jobs_n, memory, threads = _settings(options, len(planned))
    env = check_env(threads, explicit=options.threads is not None)
    rows: dict[int, Row] = {}  # by position in `planned`
    observer.queued([p.name for p in planned])

    def record(index: int, row: Row) -> None:
        rows[index] = row
        observer.finished(row)

    to_run, twins = _sort_out(planned, options, store, record)
    cached = sum(1 for r in rows.values() if r.cached)
    if cached:
        observer.notice(
            f"{cached} of {len(planned)} submission(s) unchanged since an earlier review: results reused "
            "(--force checks them again)"
        )
    runner = executor or _make_executor(options.executor, jobs_n, options.address)
    by_key: dict[str, tuple[Planned, Job]] = {}

    def on_job(p: Planned, job: Job) -> None:
        by_key[job.key] = (p, job)

    def on_row(p: Planned, row: Row) -> None:  # a check's result, or a submission rejected before one
        if row.verdict != "STOPPED":
            store.put(p.key, row.to_json())
        _record_all(planned, twins[p.key], row, record)

    def events(event: str, key: str, details: Any) -> None:
        if event == "started" and key in by_key:
            observer.started(by_key[key][0].name)
        elif event == "stage" and key in by_key:
            stage = getattr(observer, "stage", None)  # an observer of an older shape tells starts only
            if stage is not None:
                stage(by_key[key][0].name, str(details.get("text", "")))

    interrupted = False
    if to_run:
        jobs = _lazy_jobs(to_run, lambda p: _job_for(p, out, options, memory, env), on_job, on_row)
        interrupted = _run_checks(runner, jobs, by_key, events, on_row)
        notes.append(threads_note(threads, options.threads is not None, runner.slots, runner.name))
    if interrupted:
        _stop_the_rest(planned, rows)
    ordered = [rows[i] for i in range(len(planned)) if i in rows]
    if interrupted:
        missing = sum(1 for r in ordered if r.verdict == "STOPPED")
        notes.append(f"interrupted: {missing} submission(s) not checked; run the same review again to go on")
    summary = Summary(
        rows=ordered,
        rulesets=rulesets,
        tipc_version=__version__,
        executor=runner.name,
        jobs=runner.slots,
        wall_s=time.monotonic() - t0,
        notes=notes,
    )
    return summary, interrupted


def _make_executor(kind: str, slots: int, address: str | None = None) -> Executor:
    """`local` or `ray` (Ray is imported only here, only for `ray`)."""
    if kind == "ray":
        from tipc.review.ray_exec import RayExecutor

        return RayExecutor(slots, address=address)
    return LocalPool(slots)
