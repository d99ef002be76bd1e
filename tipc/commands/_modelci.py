"""The model CI switches of `tipc check` (--baseline, --history, --notify, --repeat): argparse here, the
work in tipc.modelci.hooks, which gets them as one typed value (`options`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tipc.modelci.hooks import ModelCiOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="judge the run against its baseline (default DIR: REPO/test_tipc/baselines): "
        "PASS/FAIL/IMPROVED per metric; a regression exits 1",
    )
    parser.add_argument(
        "--history",
        metavar="PATH|URL",
        help="store this check in a history database (SQLite file or postgresql:// URL); with --baseline "
        "it is stored in the default one ($TIPC_HISTORY or ~/.local/share/tipc/history.sqlite3)",
    )
    parser.add_argument("--notify", metavar="URL", help="POST the baseline verdict as JSON to this webhook")
    parser.add_argument(
        "--repeat",
        type=_positive,
        default=1,
        metavar="N",
        help="with --baseline: run the chain N times and judge the median of each metric (a narrower "
        "prediction interval; timings survive a transient load); default: %(default)s",
    )


def _positive(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def options(args: argparse.Namespace) -> ModelCiOptions:
    """The switches as tipc.modelci.hooks takes them (a verb without some of them: their defaults)."""
    from tipc.modelci.hooks import ModelCiOptions

    return ModelCiOptions(
        baseline=getattr(args, "baseline", None),
        history=getattr(args, "history", None),
        notify=getattr(args, "notify", None),
        repeat=getattr(args, "repeat", 1) or 1,
    )
