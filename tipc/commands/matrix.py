"""`tipc matrix REPO --paddle 2.6.2 --paddle 3.3.1`: the chain under each Paddle version, in managed and
cached environments, as a version x metric table with the first broken version (see tipc.modelci.matrix).

Exit codes: 0 every version ran its chain and no metric left its baseline margin; 1 some version broke
(a stage failed or a metric FAILed); 2 usage error or an environment that could not be set up.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from tipc.core.errors import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "repo", metavar="REPO", help="the model repo (or a train_infer_python config inside it)"
    )
    parser.add_argument(
        "--paddle",
        action="append",
        default=[],
        metavar="VERSION",
        required=True,
        help="a Paddle version to run under (repeatable, in the order to report them)",
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
    parser.add_argument(
        "--mode", "-m", default="lite_train_lite_infer", help="TIPC mode (default: %(default)s)"
    )
    parser.add_argument("--device", choices=("cpu",), help="rewrite the device slots to run on CPU")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def _tail(record: Any, repo: Path) -> str:
    from tipc.judge.baseline.metrics import log_file

    for r in record.results:
        if r.status.value in ("failed", "timeout") and r.log:
            path = log_file(record, repo, r.log)
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            except OSError:
                continue
            return f"{r.step_id}: " + " | ".join(lines[-3:])[-400:]
    return ""


def _run_version(args: argparse.Namespace, repo: Path, version: str, python: str, reqs: list[str]) -> Any:
    from tipc.commands.baseline import _newest_record
    from tipc.execute import proc
    from tipc.execute.record import load_record
    from tipc.judge.baseline import judge, store
    from tipc.judge.baseline.metrics import extract
    from tipc.modelci import matrix

    try:
        env = matrix.ensure_env(version, python, reqs)
    except UserError as exc:
        return matrix.Column(version, None, None, problem=exc.render())
    sys.stderr.write(f"tipc: Paddle {version}: {'reusing' if env.reused else 'created'} {env.path}\n")
    argv = [
        sys.executable,
        "-m",
        "tipc",
        "run",
        str(repo),
        "--mode",
        args.mode,
        "--no-color",
        "--python",
        str(env.python),
    ]
    for flag, value in (("--config", args.config), ("--device", args.device)):
        if value:
            argv += [flag, value]
    started = time.time()
    res = proc.run(argv, cwd=repo)
    if res.interrupted:
        raise KeyboardInterrupt
    path = _newest_record(repo, started, args.mode)
    if path is None:
        return matrix.Column(version, env, res.exit_code, problem="the chain left no run record")
    record = load_record(path)
    run = extract(record, repo)
    column = matrix.Column(
        version,
        env,
        res.exit_code,
        dict(run.stages),
        {n: m.value for n, m in run.metrics.items()},
        error_tail=_tail(record, repo),
    )
    if args.baseline is not None:
        directory = store.baseline_dir(repo, args.baseline)
        base_path, _machine = judge.find_baseline(directory, record)
        if base_path.is_file():
            j = judge.judge_metrics(store.load(base_path), run, record.environment)
            column.verdicts = {r.metric: r.verdict for r in j.rows}
        else:
            sys.stderr.write(f"tipc: no baseline at {base_path}: versions are compared by stage only\n")
    return column


def run(args: argparse.Namespace) -> int:
    from tipc.commands._target import resolve_target
    from tipc.modelci import matrix

    repo, _config = resolve_target(args.repo, args.config)
    repo = repo.resolve()
    versions = list(dict.fromkeys(args.paddle))
    for v in versions:
        matrix.paddle_major(v)
    pythons = matrix.pythons_for(versions, args.python)
    reqs = matrix.requirements(repo)
    columns = [_run_version(args, repo, v, pythons[v], reqs) for v in versions]
    first = matrix.first_broken(columns)
    if args.format == "json":
        sys.stdout.write(json.dumps(matrix.to_json(columns), indent=2) + "\n")
    else:
        sys.stdout.write(matrix.table(columns))
        for c in columns:
            if c.broken:
                sys.stdout.write(f"Paddle {c.version}: " + "; ".join(c.broken) + "\n")
                if c.error_tail:
                    sys.stdout.write(f"  {c.error_tail}\n")
        sys.stdout.write(
            f"first broken version: Paddle {first.version}\n" if first else "every version passed\n"
        )
    if any(c.problem and c.env is None for c in columns) and first is not None and first.env is None:
        return 2
    return 1 if first is not None else 0
