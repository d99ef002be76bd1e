"""One module per CLI verb, exposing add_arguments(parser) and run(args) -> int (its help: cli.VERBS)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tipc.core.steps import Mode


def unwritable_dir(path: Path) -> str | None:
    """Why `path` cannot be (created and) written as a folder, or None. Checked before any work starts, so a
    typo in an output path costs an error message, not a run whose results cannot be saved."""
    if path.exists():
        if not path.is_dir():
            return f"{path} is a file, expected a folder"
        return None if os.access(path, os.W_OK) else f"{path} is not writable"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is a file, expected a folder"
            return None if os.access(parent, os.W_OK) else f"{parent} is not writable"
    return None


def mode_type(text: str) -> Mode:
    """argparse type of every verb's --mode: one of the TIPC modes (serving_infer included), with the closest
    one suggested for a misspelling (usage error, exit 2)."""
    import difflib

    from tipc.core.steps import ALL_MODES, Mode

    mode = text.strip()
    if mode in ALL_MODES:
        return Mode(mode)
    close = difflib.get_close_matches(mode, [str(m) for m in ALL_MODES], n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise argparse.ArgumentTypeError(f"unknown mode {text!r}{hint} (one of: {', '.join(ALL_MODES)})")


def add_mode(parser: Any, *, default: str | None = None, what: str | None = None, short: bool = True) -> None:
    """--mode (and -m): the same list, the same check and the same words in every verb."""
    from tipc.core.steps import ALL_MODES

    if what is None:
        what = (
            f"TIPC mode (default: {default})"
            if default
            else "TIPC mode (default: serving_infer for a serving config, else lite_train_lite_infer)"
        )
    flags = ("--mode", "-m") if short else ("--mode",)
    parser.add_argument(
        *flags, type=mode_type, default=default, metavar="MODE", help=f"{what}; one of {', '.join(ALL_MODES)}"
    )


def non_negative_int(text: str) -> int:
    """argparse type for counts that may be zero: a whole number >= 0 (usage error, exit 2, otherwise)."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def positive_int(text: str) -> int:
    """argparse type for counts and limits: a whole number >= 1 (usage error, exit 2, otherwise)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


MIN_LOG_LIMIT = 64 << 10


def log_limit(text: str) -> int:
    """argparse type of --log-limit: a size (`64M`, `1G`, bytes) of at least 64 KiB."""
    from tipc.execute.sandbox.limits import parse_size

    try:
        value = parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < MIN_LOG_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r}: a step log keeps at least 64K")
    return value


def add_log_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-limit",
        type=log_limit,
        default=None,
        metavar="SIZE",
        help="most a step's log keeps of its output, e.g. 16M (default 64M): the first and the last half, "
        "with the bytes dropped between them stated in the log and the record",
    )


def log_limit_of(args: argparse.Namespace) -> int:
    from tipc.execute.proc import DEFAULT_LOG_LIMIT

    value: int | None = getattr(args, "log_limit", None)
    return DEFAULT_LOG_LIMIT if value is None else value
