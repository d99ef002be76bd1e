"""The argparse tree and the one error handler. No logic lives here.

Each verb is a module in `tipc.commands` exposing `HELP`, `add_arguments(parser)` and `run(args) -> int`.
Command modules keep their top-level imports light (no paddle, no rich) so `tipc --help` stays instant.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from tipc import __version__
from tipc.core import interrupts
from tipc.core.errors import EXIT_INTERNAL, EXIT_USAGE, TipcError

VERBS: tuple[str, ...] = (
    "lint",
    "plan",
    "run",
    "check",
    "init",
    "serve",
    "converge",
    "baseline",
    "history",
    "matrix",
    "review",
)
# This process is tipc's own (console entry point), so it may enter a sandbox's namespaces itself; the words
# of the current invocation let a library caller's sandboxed command re-run as a child tipc.
IS_CONSOLE = False
INVOCATION: list[str] = []


def _command(verb: str) -> ModuleType:
    return importlib.import_module(f"tipc.commands.{verb}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse exits 2 itself; keep that code but route through our format.
        self.print_usage(sys.stderr)
        sys.stderr.write(f"tipc: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, only that verb's arguments are built (the others' can cost imports:
    `tipc init` loads the scaffolder to list its slots). `only=""` builds none: enough for `tipc --help`."""
    parser = _Parser(
        prog="tipc",
        description="Check a PaddlePaddle model repo's training and inference pipeline (TIPC).",
        epilog="Exit codes: 0 ok, 1 a check failed, 2 usage or config error, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"tipc {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for verb in VERBS:
        module = _command(verb)
        p = sub.add_parser(verb, help=module.HELP, description=module.HELP)
        if only is None or only == verb:
            module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


# Options whose value is itself often an option: `--set --use_gpu=False` sets the config key `--use_gpu`.
_VALUE_MAY_LOOK_LIKE_OPTION = ("--set",)


def join_option_values(words: list[str]) -> list[str]:
    """`--set -X...` -> `--set=-X...`: argparse would read a value starting with `-` as an option (and
    reject `--set "--use_gpu=False"`), although the config keys of TIPC configs mostly start with `--`."""
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":  # everything after is positional
            out.extend(words[i:])
            break
        following = words[i + 1] if i + 1 < len(words) else None
        if word in _VALUE_MAY_LOOK_LIKE_OPTION and following is not None and following.startswith("-"):
            out.append(f"{word}={following}")
            i += 2
            continue
        out.append(word)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    global INVOCATION
    _tolerant_output()
    words = join_option_values(list(sys.argv[1:] if argv is None else argv))
    INVOCATION = words
    # the verb is the first word that is not an option (the global options take no value)
    verb = next((w for w in words if not w.startswith("-")), "")
    parser = build_parser(only=verb if verb in VERBS else "")
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    if args.verb is None:
        parser.print_help()
        return EXIT_USAGE
    # What a command that re-runs itself in a sandboxed child needs (tipc.execute.sandbox.SandboxOptions).
    args.own_process = IS_CONSOLE
    args.invocation = tuple(words)
    try:
        with interrupts.stop_signals():
            code: int = args._run(args)
        return code
    except TipcError as exc:
        sys.stderr.write(f"tipc: {exc.render()}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("tipc: interrupted\n")
        return interrupts.interrupted_exit()
    except BrokenPipeError:
        return 0
    except OSError as exc:
        # A path the user gave that no system call accepts (a name over NAME_MAX, a loop of links, a file
        # used as a folder) is bad input, not a bug.
        if exc.errno not in _USER_PATH_ERRNOS or getattr(args, "debug", False):
            return _internal(args, exc)
        where = f"{exc.filename}: " if exc.filename is not None else ""
        sys.stderr.write(f"tipc: {where}{exc.strerror or exc}\n")
        return EXIT_USAGE
    except Exception as exc:
        return _internal(args, exc)


_USER_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR})


def _internal(args: argparse.Namespace, exc: Exception) -> int:
    if getattr(args, "debug", False):
        raise exc
    sys.stderr.write(
        f"tipc: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in tipc; rerun with --debug for the traceback and report it.\n"
    )
    return EXIT_INTERNAL


def _tolerant_output() -> None:
    """Where stdout cannot encode every character (LANG=C with PYTHONIOENCODING=ascii, a latin-1 pipe),
    print what it can and `?` for the rest: a config path or a value in another script must not turn a
    finished command into exit 3."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding in ("utf8", "utf16", "utf32") or getattr(stream, "errors", "strict") != "strict":
            continue
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a stream that cannot change its errors
                reconfigure(errors="replace")


def console_main() -> None:
    global IS_CONSOLE
    IS_CONSOLE = True
    code = main()
    # About to exit: spare the collector's last passes over every object of every module imported (tens of
    # ms at each exit). Files are closed where they are used and atexit handlers still run.
    gc.freeze()
    sys.exit(code)
