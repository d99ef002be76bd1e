"""`tipc matrix REPO --paddle 2.6.2 --paddle 3.3.1` (or `--bisect FROM TO`): the chain under each Paddle
version, in managed and cached environments, as a version x metric table with the first broken version (see
tipc.modelci.matrix).

Exit codes: 0 no version broke (a stage failed, or an effect metric left its baseline margin); 1 some
version broke; 2 usage error, or a version that could not be installed or set up (and none broke).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.commands import _modelci, _sandboxed, add_mode
from tipc.core.errors import UserError

if TYPE_CHECKING:
    from tipc.core.progress import Progress
    from tipc.execute.record import RunRecord
    from tipc.judge.baseline.metrics import RunMetrics
    from tipc.modelci.matrix import Column, Env


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "repo", metavar="REPO", help="the model repo (or a train_infer_python config inside it)"
    )
    parser.add_argument(
        "--paddle",
        action="append",
        default=[],
        metavar="VERSION",
        help="a Paddle version to run under (repeatable, in the order to report them)",
    )
    parser.add_argument(
        "--bisect",
        nargs=2,
        metavar=("FROM", "TO"),
        help="find the first broken release between FROM (working) and TO (broken), both included, among "
        "the releases pip can install; environments are cached as for --paddle",
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="PATH|VERSION=PATH",
        help="interpreter for every version, or for one (default: Python 3.9 for Paddle 2.x, else this one)",
    )
    parser.add_argument(
        "--baseline",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="judge each version against the repo's baseline (default DIR: REPO/test_tipc/baselines)",
    )
    parser.add_argument(
        "--config", "-c", help="config file (default: the repo's one train_infer_python config)"
    )
    add_mode(parser, default="lite_train_lite_infer")
    parser.add_argument("--device", choices=("cpu",), help="rewrite the device slots to run on CPU")
    _sandboxed.add_repeated_run_arguments(
        parser, seed_default="default: seed 0, as baselines are recorded", history_for="each version's run"
    )
    _modelci.add_clock_argument(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")


def _tail(record: RunRecord, repo: Path) -> str:
    from tipc.judge.baseline.metrics import log_file

    for r in record.results:
        if r.status.value in ("failed", "timeout") and r.log and r.step_id != "prepare":
            path = log_file(record, repo, r.log)
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            except OSError:
                continue
            return f"{r.step_id}: " + " | ".join(lines[-3:])[-400:]
    return ""


def _chain(
    args: argparse.Namespace, repo: Path, env: Env, version: str, progress: Progress
) -> tuple[int | None, RunRecord | None]:
    """`tipc run` of the repo under the environment's interpreter, as a phase of the progress: (exit code,
    its record or None)."""
    from tipc.commands._children import run_child
    from tipc.commands.baseline import _newest_record, run_flags
    from tipc.execute.record import load_record

    argv = [sys.executable, "-m", "tipc", "run", str(repo), "--mode", args.mode, "--no-color"]
    argv += ["--python", str(env.python), *run_flags(args)]
    started = time.time()
    res = run_child(argv, repo, f"Paddle {version}: the chain", progress)
    if res.interrupted:
        raise KeyboardInterrupt
    path = _newest_record(repo, started, args.mode)
    return res.exit_code, (load_record(path) if path is not None else None)


def _judged(args: argparse.Namespace, repo: Path, column: Column, record: RunRecord, run: RunMetrics) -> None:
    from tipc.judge.baseline import judge, store

    directory = store.baseline_dir(repo, args.baseline)
    base_path, _machine = judge.find_baseline(directory, record)
    if not base_path.is_file():
        sys.stderr.write(f"tipc: no baseline at {base_path}: versions are compared by stage only\n")
        return
    base = store.load(base_path)
    j = judge.judge_metrics(base, run, record.environment)
    column.verdicts = {r.metric: r.verdict for r in j.rows}
    column.kinds = {n: m.kind for n, m in base.metrics.items()}
    column.load = j.load


def _run_version(
    args: argparse.Namespace, repo: Path, version: str, python: str, reqs: list[str], progress: Progress
) -> Column:
    from tipc.core.progress import phase
    from tipc.judge.baseline.metrics import extract
    from tipc.modelci import matrix

    try:
        with phase(progress, f"Paddle {version}: environment") as ph:
            env = matrix.ensure_env(version, python, reqs, on_line=ph.update)
    except matrix.NotInstallable as exc:
        sys.stderr.write(f"tipc: {exc.render()}\n")
        return matrix.Column(version, None, None, not_installable=exc.reason)
    except UserError as exc:
        return matrix.Column(version, None, None, problem=exc.render())
    sys.stderr.write(f"tipc: Paddle {version}: {'reusing' if env.reused else 'created'} {env.path}\n")
    code, record = _chain(args, repo, env, version, progress)
    if record is None:
        return matrix.Column(version, env, code, problem="the chain left no run record")
    run = extract(record, repo)
    column = matrix.Column(
        version,
        env,
        code,
        dict(run.stages),
        {n: m.value for n, m in run.metrics.items()},
        error_tail=_tail(record, repo),
        kinds={n: m.kind for n, m in run.metrics.items()},
        repo_commit=record.git_commit,
    )
    if args.baseline is not None:
        _judged(args, repo, column, record, run)
    _store(args, record, run, repo)
    return column


def _store(args: argparse.Namespace, record: RunRecord, run: RunMetrics, repo: Path) -> None:
    from tipc.modelci.history import open_history

    try:
        with open_history(args.history) as db:
            db.store_run(record, run, kind="matrix", repo=repo)
    except UserError as exc:
        sys.stderr.write(f"tipc: warning: history not stored: {exc.render()}\n")


def _text(repo: Path, columns: list[Column], first: Column | None, bisected: bool) -> str:
    from tipc.modelci import matrix

    commits = sorted({c.repo_commit for c in columns if c.repo_commit})
    out = [
        f"repo {repo} at commit {', '.join(commits) or 'unknown (not a git repo)'}\n",
        matrix.table(columns),
    ]
    for c in columns:
        if c.not_installable:
            out.append(f"Paddle {c.version}: not installable: {c.not_installable}\n")
            continue
        if c.broken:
            out.append(f"Paddle {c.version}: " + "; ".join(c.broken) + "\n")
            if c.error_tail:
                out.append(f"  {c.error_tail}\n")
        if c.moved:
            out.append(
                f"Paddle {c.version}: timings or resources outside their band (not counted as broken): "
                + "; ".join(c.moved)
                + (f" ({c.load})" if c.load else "")
                + "\n"
            )
    if first is not None:
        out.append(f"first broken version: Paddle {first.version}\n")
    elif bisected:
        out.append("no broken version found between the two (the newest works, or the oldest is broken)\n")
    elif all(c.not_installable for c in columns):
        out.append("no version could be installed\n")
    else:
        out.append("no broken version\n")
    return "".join(out)


def _bisected(
    args: argparse.Namespace, repo: Path, reqs: list[str], progress: Progress
) -> tuple[Column | None, list[Column]]:
    """--bisect FROM TO: the first broken release between the two (or None) and the columns probed, oldest
    first."""
    from tipc.modelci import matrix

    low, high = args.bisect
    for v in (low, high):
        matrix.paddle_major(v)
    tool = matrix.pythons_for([high], args.python)[high]
    versions = matrix.releases_between(matrix.available_versions(tool), low, high)
    if not versions:
        raise UserError(f"--bisect {low} {high}: pip lists no release between them")
    sys.stderr.write(f"tipc: bisecting over {len(versions)} releases: {', '.join(versions)}\n")
    pythons = matrix.pythons_for(versions, args.python)
    first, probed = matrix.bisect(versions, lambda v: _run_version(args, repo, v, pythons[v], reqs, progress))
    return first, sorted(probed, key=lambda c: matrix.version_key(c.version) or ())


def run(args: argparse.Namespace) -> int:
    from tipc.commands._target import resolve_target
    from tipc.modelci import matrix

    if not args.paddle and not args.bisect:
        raise UserError("give the Paddle versions to run (--paddle VERSION, repeatable) or --bisect FROM TO")
    if args.paddle and args.bisect:
        raise UserError("--paddle and --bisect: give one or the other")
    _sandboxed.seed_env(_sandboxed.chain_options(args))  # a bad --seed is a usage error before anything runs
    repo, _config = resolve_target(args.repo, args.config)
    repo = repo.resolve()
    reqs = matrix.requirements(repo)
    from tipc.report.progress import make_progress

    first = None
    with _modelci.measuring_clock(args, sys.stderr), make_progress() as progress:
        if args.bisect:
            first, columns = _bisected(args, repo, reqs, progress)
        else:
            versions = list(dict.fromkeys(args.paddle))
            for v in versions:
                matrix.paddle_major(v)
            pythons = matrix.pythons_for(versions, args.python)
            columns = [_run_version(args, repo, v, pythons[v], reqs, progress) for v in versions]
            first = matrix.first_broken(columns)
    if args.format == "json":
        data = matrix.to_json(columns)
        data["first_broken"] = first.version if first is not None else None
        data["bisect"] = list(args.bisect) if args.bisect else None
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(_text(repo, columns, first, bool(args.bisect)))
    if first is not None:
        return 1
    return 2 if any(c.not_installable or c.problem for c in columns) else 0
