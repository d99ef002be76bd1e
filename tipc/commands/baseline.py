"""`tipc baseline record|update|diff`: baselines under review.

`record` runs the chain N times (each a normal `tipc run` in a child process, so each is sandboxed and leaves
its run record), seeded by default (`--seed`, tipc.execute.seeding), and writes one YAML file per model,
config, mode and machine class; it refuses to overwrite. Every measured run, and the bands, go to the history
database every model CI verb shares (the default one unless `--history` names another).
`update` does the same over an existing file and prints the unified diff for review: nothing is updated
silently. `diff OLD NEW` (or `diff FILE`, against the version committed in git) shows old -> new per metric.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.commands import _modelci, _sandboxed, add_mode, non_negative_int, positive_int
from tipc.core.errors import UserError
from tipc.core.fs import atomic_write_text
from tipc.judge.baseline.stats import DOCUMENTED_RUNS

if TYPE_CHECKING:
    from collections.abc import Callable

    from tipc.core.progress import Progress
    from tipc.execute.record import RunRecord
    from tipc.judge.baseline.metrics import RunMetrics
    from tipc.judge.baseline.store import Baseline
    from tipc.modelci.history.db import History

EXIT_CHAIN_FAILED = 1


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("repo", metavar="REPO", help="the model repo (or a train_infer_python config inside it)")
    p.add_argument(
        "--repeat",
        "-n",
        type=positive_int,
        default=DOCUMENTED_RUNS,
        help="measured runs of the chain (default: %(default)s; docs/model-ci.md says why)",
    )
    p.add_argument(
        "--warmup",
        type=non_negative_int,
        default=1,
        help="runs of the chain first whose numbers are discarded: the first run after an install or a "
        "reboot pays for cold caches (default: %(default)s)",
    )
    p.add_argument(
        "--baseline-dir", metavar="DIR", help="where baselines live (default: REPO/test_tipc/baselines)"
    )
    p.add_argument("--config", "-c", help="config file (default: the repo's one train_infer_python config)")
    add_mode(p, default="lite_train_lite_infer")
    p.add_argument("--python", help="interpreter to run in place of the config's python")
    p.add_argument("--device", choices=("cpu",), help="rewrite the device slots to run on CPU")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    _sandboxed.add_repeated_run_arguments(
        p, seed_default="default: seed 0, recorded in the baseline", history_for="each run and the bands"
    )
    _modelci.add_clock_argument(p)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    rec = sub.add_parser("record", help="run the chain N times and write a new baseline file")
    _run_options(rec)
    upd = sub.add_parser("update", help="re-record an existing baseline and print the file diff to review")
    _run_options(upd)
    dif = sub.add_parser(
        "diff", help="old -> new per metric between two baseline files (or FILE vs git HEAD)"
    )
    dif.add_argument("old", metavar="OLD|FILE")
    dif.add_argument("new", metavar="NEW", nargs="?")


def run_flags(args: argparse.Namespace) -> list[str]:
    """The `tipc run` switches a model CI verb passes on to each chain it runs (seeded by default)."""
    from tipc.execute.seeding import chosen_seed

    argv: list[str] = []
    for flag, value in (("--config", args.config), ("--device", args.device)):
        if value:
            argv += [flag, value]
    for flag, items in (
        ("--set", getattr(args, "sets", [])),
        ("--paddle-compat", getattr(args, "paddle_compat", [])),
        ("--args", getattr(args, "stage_args", [])),
    ):
        for item in items:
            argv += [flag, item]
    if getattr(args, "no_prepare", False):
        argv.append("--no-prepare")
    seed = chosen_seed(getattr(args, "seed", None), bool(getattr(args, "no_seed", False)), model_ci=True)
    argv += ["--no-seed"] if seed is None else ["--seed", str(seed)]
    return argv


def _child_argv(args: argparse.Namespace, repo: str) -> list[str]:
    argv = [sys.executable, "-m", "tipc", "run", repo, "--mode", args.mode, "--no-color"]
    if args.python:
        argv += ["--python", args.python]
    return argv + run_flags(args)


def chain_problem(record: RunRecord) -> str:
    """Why a run cannot be measured ("" when it can): a step outside prepare.sh that did not pass (one
    skipped as not applicable on this machine is fine)."""
    bad = [
        f"{r.step_id} {r.status.value}"
        for r in record.results
        if r.step_id != "prepare"
        and not (r.status.value == "passed" or (r.status.value == "skipped" and r.reason))
    ]
    return ", ".join(bad)


def _newest_record(repo: Path, since: float, mode: str) -> Path | None:
    found = [
        p
        for p in (repo / "test_tipc" / "output").glob("**/tipc_run.json")
        if p.stat().st_mtime >= since - 1 and f"/{mode}/" in p.as_posix()
    ]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


@dataclass(frozen=True)
class ChainRuns:
    records: list[RunRecord]  # the run record of each measured run
    runs: list[RunMetrics]  # the metrics of each
    load: float | None  # the machine's median load per CPU after the measured runs (None where unknown)


def run_chain_times(args: argparse.Namespace, repo: Path) -> ChainRuns:
    """Run the chain `args.warmup` times (numbers discarded), then `args.repeat` times, measured. A failing
    chain raises _ChainFailed (exit 1)."""
    from tipc.report.progress import make_progress

    planned = [(f"warm-up run {k}/{args.warmup}", False) for k in range(1, args.warmup + 1)]
    planned += [(f"baseline run {k}/{args.repeat}", True) for k in range(1, args.repeat + 1)]
    with make_progress() as progress:
        return _chain_times(args, repo, planned, progress)


def _chain_times(
    args: argparse.Namespace, repo: Path, planned: list[tuple[str, bool]], progress: Progress
) -> ChainRuns:
    import statistics

    from tipc.commands._children import run_child
    from tipc.execute.record import load_record
    from tipc.judge.baseline import store
    from tipc.judge.baseline.metrics import extract

    records: list[RunRecord] = []
    runs: list[RunMetrics] = []
    loads: list[float] = []
    for label, measured in planned:
        started = time.time()
        tail: list[str] = []
        shown = label + ("" if measured else " (its numbers are discarded)")
        res = run_child(_child_argv(args, str(repo)), repo, shown, progress, tail)
        if res.interrupted:
            raise KeyboardInterrupt
        path = _newest_record(repo, started, args.mode)
        record = load_record(path) if path is not None else None
        problem = chain_problem(record) if record is not None else f"no run record (exit {res.exit_code})"
        if problem:
            sys.stderr.write("\n".join(tail[-25:]) + "\n")
            raise _ChainFailed(
                f"{label} of the chain did not pass ({problem}): a baseline is recorded only from a chain "
                "whose steps all pass"
            )
        assert record is not None
        failed_prepare = record.result("prepare")
        if failed_prepare is not None and failed_prepare.status.value != "passed" and not measured:
            sys.stderr.write(
                "tipc: warning: prepare.sh did not pass (what it fetches is not reachable here?); the chain "
                "after it passed, so its runs are measured\n"
            )
        if not measured:
            continue
        load = store.load_per_cpu()
        if load is not None:
            loads.append(load)
        records.append(record)
        runs.append(extract(record, repo))

        def write(db: History, r: RunRecord = record, m: RunMetrics = runs[-1]) -> object:
            return db.store_run(r, m, kind="baseline-run", repo=repo)

        _store(args, write)
    return ChainRuns(records, runs, round(statistics.median(loads), 2) if loads else None)


def _store(args: argparse.Namespace, write: Callable[[History], object]) -> None:
    """Into the history (--history, else the default one every model CI verb shares); a history that
    cannot be written is said on stderr and changes nothing else."""
    from tipc.modelci.history import open_history

    try:
        with open_history(args.history) as db:
            write(db)
    except UserError as exc:
        sys.stderr.write(f"tipc: warning: history not stored: {exc.render()}\n")


class _ChainFailed(Exception):
    pass


def _record(args: argparse.Namespace, update: bool) -> int:
    from tipc.commands._target import resolve_target
    from tipc.judge.baseline import diff, store

    repo, _config = resolve_target(args.repo, args.config)
    repo = repo.resolve()
    directory = store.baseline_dir(repo, args.baseline_dir)
    try:
        with _modelci.measuring_clock(args, sys.stderr):
            chain = run_chain_times(args, repo)
    except _ChainFailed as exc:
        sys.stderr.write(f"tipc: {exc}\n")
        return EXIT_CHAIN_FAILED
    records, runs = chain.records, chain.runs
    last = records[-1]
    path = store.baseline_path(
        directory,
        last.plan.model_name,
        last.plan.config_path,
        last.plan.mode,
        store.machine_class(last.environment),
    )
    previous = store.load(path) if path.is_file() else None
    if previous is not None and not update:
        raise UserError(
            f"{path}: a baseline already exists; `tipc baseline update` re-records it and prints the diff"
        )
    if previous is None and update:
        sys.stderr.write(f"tipc: no baseline at {path} yet: recording a new one\n")
    base = store.build(last, runs, [store.run_id(r) for r in records], previous, chain.load)
    text = base.dumps()
    old_text = path.read_text(encoding="utf-8") if path.is_file() else ""
    atomic_write_text(path, text)  # a baseline is committed: never half of one
    from tipc.modelci.identity import repo_identity

    bands = {n: (m.summary.reference, m.margin) for n, m in base.metrics.items()}
    key = repo_identity(repo)
    _store(args, lambda db: db.store_band(str(repo), base.model, base.mode, base.machine_class, bands, key))
    shown = path.relative_to(repo) if path.is_relative_to(repo) else path
    for line in diff.metric_lines(previous, base):
        sys.stdout.write(line + "\n")
    if update and previous is not None:
        sys.stdout.write(diff.file_diff(old_text, text, str(shown)))
        sys.stderr.write(f"tipc: updated {path}: review the diff above and commit it\n")
    else:
        sys.stderr.write(f"tipc: wrote {path} ({len(base.metrics)} metrics from {len(runs)} runs)\n")
    _warnings(base, len(runs))
    return 0


def _warnings(base: Baseline, runs: int) -> None:
    """What the reviewer of a new baseline must know: unstable metrics (not judged), too few runs, and how
    many effect metrics are judged exactly."""
    from tipc.judge.baseline import stats

    unstable = [f"{n} ({m.summary.relative_spread:.0%})" for n, m in base.metrics.items() if not m.is_stable]
    if unstable:
        sys.stderr.write(
            f"tipc: warning: unstable over the {runs} runs (robust spread above "
            f"{stats.UNSTABLE_SPREAD:.0%} of the median, or missing in some runs), so they are not judged "
            f"until a re-recording finds them stable: {', '.join(unstable)}\n"
        )
    if runs < DOCUMENTED_RUNS:
        sys.stderr.write(
            f"tipc: warning: {runs} runs: margins from fewer than {DOCUMENTED_RUNS} runs are wide (the "
            "prediction interval's t factor grows fast below that; docs/model-ci.md)\n"
        )
    deterministic = sorted(n for n, m in base.metrics.items() if m.kind == "effect" and m.summary.identical)
    effect = sorted(n for n, m in base.metrics.items() if m.kind == "effect")
    if effect:
        sys.stderr.write(
            f"tipc: {len(deterministic)} of {len(effect)} effect metrics were identical in every run "
            f"(seed {base.provenance.get('seed')}): judged exactly\n"
        )


def _git_head_text(path: Path) -> str | None:
    from tipc.execute import safegit

    code, out = safegit.capture(["cat-file", "blob", f"HEAD:./{path.name}"], cwd=path.parent, timeout_s=30)
    return out if code == 0 else None


def _diff(args: argparse.Namespace) -> int:
    import tempfile

    from tipc.judge.baseline import diff, store

    old_path = Path(args.old)
    if args.new is None:
        new = store.load(old_path)
        head = _git_head_text(old_path.resolve())
        if head is None:
            raise UserError(f"{old_path}: not committed in git; give two files: tipc baseline diff OLD NEW")
        with tempfile.TemporaryDirectory() as tmp:
            committed = Path(tmp) / old_path.name
            committed.write_text(head, encoding="utf-8")
            old = store.load(committed)
    else:
        old, new = store.load(old_path), store.load(Path(args.new))
    lines = diff.metric_lines(old, new)
    sys.stdout.write("\n".join(lines) + ("\n" if lines else "no differences\n"))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "diff":
        return _diff(args)
    return _record(args, update=args.action == "update")
