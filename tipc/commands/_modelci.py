"""The model CI switches of `tipc check` (--baseline, --history, --notify, --repeat): argparse here, the
work in tipc.modelci.hooks, which gets them as one typed value (`options`)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

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
    add_clock_argument(parser)


def add_clock_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-hold-clock",
        action="store_true",
        help="do not hold the CPUs at full clock while measuring (held by default where tipc runs as root: "
        "an idle CPU of a virtual machine slows down; docs/model-ci.md)",
    )


@contextlib.contextmanager
def measuring_clock(args: argparse.Namespace, stderr: IO[str], *, wanted: bool = True) -> Iterator[None]:
    """Model CI measures at full clock (tipc.execute.clock) unless --no-hold-clock, and every run records
    the clock it ran at: the sandbox has no PM QoS device, so the state goes to the children as TIPC_CLOCK.
    Nothing is held in a sandboxed child (its parent holds it) or where `wanted` is false."""
    import os

    from tipc.commands._sandboxed import in_child
    from tipc.execute import clock

    with contextlib.ExitStack() as stack:
        if wanted and not in_child() and not getattr(args, "no_hold_clock", False):
            why_not = stack.enter_context(clock.hold())
            if why_not is not None:
                stderr.write(f"tipc: note: the CPUs' clock is {clock.describe(why_not)}\n")
        now, before = clock.state(), os.environ.get(clock.ENV)
        if now is not None:  # in the environment: every child is started from it, the sandboxed one too
            os.environ[clock.ENV] = now
        try:
            yield
        finally:
            if before is None:
                os.environ.pop(clock.ENV, None)
            else:
                os.environ[clock.ENV] = before


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
