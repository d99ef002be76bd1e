"""`tipc history REPO`: the trend of each stored metric for a repo, in the terminal or as an HTML page.

Runs are stored by `tipc baseline record`, `tipc check --baseline`, `tipc matrix` (all in the default
database unless `--history` names another) and `tipc run --history`, keyed by the repo's identity (its
remote or root commit: tipc.modelci.identity), so the folder a CI checked a commit out into does not matter.
Each model, config and mode is its own trend. The baseline band drawn is the repo's baseline file for the
machine class of the latest run (else the last band stored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tipc.commands import add_mode
from tipc.core.errors import UserError
from tipc.core.fs import atomic_write_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", metavar="REPO", help="the model repo whose runs to show")
    parser.add_argument(
        "--history",
        metavar="PATH|URL",
        help="history database: a SQLite file or a postgresql:// URL (default: $TIPC_HISTORY or "
        "~/.local/share/tipc/history.sqlite3)",
    )
    parser.add_argument("--metric", action="append", default=[], metavar="NAME", help="only this metric")
    parser.add_argument("--model", help="only this model (default: all models of the repo)")
    add_mode(parser, what="only this mode", short=False)
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML page here")
    parser.add_argument(
        "--baseline-dir", metavar="DIR", help="baselines for the bands (default: REPO/test_tipc/baselines)"
    )


def bands_from_files(directory: Path, runs: list[Any]) -> dict[str, tuple[float, float]]:
    """(mean, margin) per metric from the baseline file matching the latest run's model, mode and machine."""
    from tipc.judge.baseline import store

    if not runs or not directory.is_dir():
        return {}
    latest = runs[-1]
    for path in sorted(directory.glob("**/*.yaml")):
        if path.stem != latest.machine_class:
            continue
        try:
            base = store.load(path)
        except Exception:
            continue
        if base.model == latest.model and base.mode == latest.mode:
            return {n: (m.summary.reference, m.margin) for n, m in base.metrics.items()}
    return {}


def run(args: argparse.Namespace) -> int:
    from tipc.modelci.history import open_history, trend

    repo = Path(args.repo).resolve()
    if not repo.is_dir():
        raise UserError(f"{args.repo}: no such repo folder")
    from tipc.modelci.identity import repo_identities

    keys = repo_identities(repo)
    with open_history(args.history) as db:
        runs = db.runs(repo=str(repo), model=args.model, mode=args.mode, repo_keys=keys)
        bands = db.bands(str(repo), args.model, repo_keys=keys)
        where = db.where
    directory = Path(args.baseline_dir) if args.baseline_dir else repo / "test_tipc" / "baselines"
    bands.update(bands_from_files(directory, runs))
    names = list(args.metric)
    if names and runs:
        known = {n for r in runs for n in r.metrics}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UserError(
                f"--metric {unknown[0]}: not stored for this repo (known: {', '.join(sorted(known))})"
            )
    sys.stderr.write(f"tipc: history {where}, repo {' or '.join(keys)}\n")
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for r in runs:
        groups.setdefault((r.model, Path(r.config).stem, r.mode), []).append(r)
    for (model, config, mode), members in groups.items():
        if len(groups) > 1:
            sys.stdout.write(f"== {model} / {config} / {mode}\n")
        sys.stdout.write(trend.render(members, names, bands))
    if not groups:
        sys.stdout.write(trend.render([], names, bands))
    if args.html:
        from tipc.modelci.history import html

        out = Path(args.html)
        atomic_write_text(out, html.render(runs, f"tipc history: {repo.name}", names, bands))
        sys.stderr.write(f"tipc: wrote {out}\n")
    return 0
