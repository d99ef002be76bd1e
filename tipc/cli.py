"""The argparse tree and the one error handler. No logic lives here.

Each verb is a module in `tipc.commands` exposing `add_arguments(parser)` and `run(args) -> int`; its line
of help is in VERBS. `tipc`, `tipc --help` and `tipc --version` import nothing but this module (not even
argparse), so they answer as fast as Python starts; a verb imports argparse and its own module only.
Command modules keep their top-level imports light (no paddle, no rich).
"""

from __future__ import annotations

import errno
import gc
import sys

from tipc.core.exit_codes import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from tipc.core.version import __version__

TYPE_CHECKING = False  # not `typing`: it imports re and enum, a third of `tipc --help`'s own cost
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import ModuleType

# verb -> its line in `tipc --help` (and its parser's description); tipc.commands.<verb> does the work.
VERBS: dict[str, str] = {
    "lint": "check TIPC configs for the traps their bash scripts fall into",
    "plan": "show the ordered steps the repo's test_train_inference_python.sh would run",
    "run": "run a repo's TIPC chain for real: steps, real exit codes, timeouts, logs and a run record",
    "check": "check a repo against the TIPC spec: lint, run the chain, evaluate the rules, write a report",
    "init": "scaffold a test_tipc/ folder (config, scripts, docs) from the repo's own scripts",
    "serve": (
        "serve an exported Paddle inference model over HTTP (Paddle Serving pipeline + Open "
        "Inference v2)"
    ),
    "converge": (
        "convergence regression: gather checkpoint segments of a known-good run, then "
        "re-run and compare them"
    ),
    "baseline": "record, update and compare model CI baselines (metrics with tolerances from repeated runs)",
    "history": (
        "show the trend of a repo's stored run metrics (terminal, or --html for a "
        "self-contained page)"
    ),
    "matrix": (
        "run the chain under several Paddle versions (managed envs) and report the version "
        "x metric table"
    ),
    "review": (
        "review many submissions (folders, archives, git repo@ref) in parallel sandboxes, "
        "into one summary"
    ),
}
DESCRIPTION = "Check a PaddlePaddle model repo's training and inference pipeline (TIPC)."
EPILOG = (
    "Exit codes: 0 ok, 1 a check failed, 2 usage or config error, 3 internal error or a missing part\n"
    "of tipc (what to install is said), 129 hung up (SIGHUP), 130 interrupted (Ctrl-C), 143 terminated\n"
    "(SIGTERM).\n"
    "`tipc` may be another program on PATH (iproute2's /usr/sbin/tipc): `python -m tipc` is always this one."
)
# The options tipc takes before a verb: (flags, help).
GLOBAL_OPTIONS: tuple[tuple[str, str], ...] = (
    ("-h, --help", "show this help message and exit"),
    ("--version", "show program's version number and exit"),
    ("--debug", "show tracebacks of internal errors"),
)
# This process is tipc's own (console entry point), so it may enter a sandbox's namespaces itself; the words
# of the current invocation let a library caller's sandboxed command re-run as a child tipc.
IS_CONSOLE = False


def _command(verb: str) -> ModuleType:
    import importlib

    return importlib.import_module(f"tipc.commands.{verb}")


def help_text() -> str:
    """What `tipc --help` prints: the verbs and the global options, from VERBS and GLOBAL_OPTIONS."""
    verb_width = max(len(v) for v in VERBS) + 2
    option_width = max(len(flags) for flags, _ in GLOBAL_OPTIONS) + 2
    lines = [
        "usage: tipc [-h] [--version] [--debug] VERB ...",
        "",
        DESCRIPTION,
        "",
        "verbs (`tipc VERB --help` shows a verb's options):",
        *(f"  {verb:<{verb_width}}{text}" for verb, text in VERBS.items()),
        "",
        "options:",
        *(f"  {flags:<{option_width}}{text}" for flags, text in GLOBAL_OPTIONS),
        "",
        EPILOG,
    ]
    return "\n".join(lines) + "\n"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, only that verb's module is imported and its arguments built (the others' can
    cost imports: `tipc init` loads the scaffolder to list its slots). `only=""` builds none."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            # argparse exits 2 itself; keep that code but route through our format.
            self.print_usage(sys.stderr)
            sys.stderr.write(f"tipc: error: {message}\n")
            raise SystemExit(EXIT_USAGE)

    parser = _Parser(prog="tipc", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"tipc {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for verb, text in VERBS.items():
        p = sub.add_parser(verb, help=text, description=text)
        if only is None or only == verb:
            module = _command(verb)
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


def _without_verb(words: list[str]) -> int | None:
    """`tipc`, `tipc --help`, `tipc --version` (and --debug beside them) answered without argparse; None for
    anything else (argparse then says what is wrong)."""
    if any(w not in ("-h", "--help", "--version", "--debug") for w in words):
        return None
    if "-h" in words or "--help" in words:
        sys.stdout.write(help_text())
        return EXIT_OK
    if "--version" in words:
        sys.stdout.write(f"tipc {__version__}\n")
        return EXIT_OK
    sys.stdout.write(help_text())
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_output()
    words = join_option_values(list(sys.argv[1:] if argv is None else argv))
    # the verb is the first word that is not an option (the global options take no value)
    verb = next((w for w in words if not w.startswith("-")), "")
    if not verb:
        answered = _without_verb(words)
        if answered is not None:
            return answered
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
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from tipc.core import interrupts
    from tipc.core.errors import TipcError

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
            try:
                reconfigure(errors="replace")
            except (ValueError, OSError):  # a stream that cannot change its errors (no contextlib: --help)
                continue


def console_main() -> None:
    global IS_CONSOLE
    IS_CONSOLE = True
    code = main()
    # About to exit: spare the collector's last passes over every object of every module imported (tens of
    # ms at each exit). Files are closed where they are used and atexit handlers still run.
    gc.freeze()
    sys.exit(code)
