"""`tipc review`: check many submissions, each in its own work area and sandbox, in parallel; one summary.

Exit codes: 0 every submission PASSed; 1 one did not (FAIL, TIMEOUT, ERROR, REJECTED); 2 bad input (nothing
is run); 130 (143, 129) interrupted: what finished is kept, and the same command goes on from there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tipc.commands import add_mode
from tipc.core.errors import UserError

EPILOG = """\
A submission is a folder, a .tar.gz/.tgz/.tar/.zip archive, or a local git repository with a ref
(path/to/repo@main). Each is unpacked into its own work area under --out and checked by `tipc check` in its
own sandbox (no network, writes confined, memory and process limits) within a wall-clock budget.
The summary (summary.md, summary.csv, summary.json, summary.html linking every report) is written to --out;
--format chooses what is printed. Results are kept in --out/review-state.json: an interrupted review run
again goes on where it stopped, and an unchanged submission (same content, tipc version and options) is
not checked again unless --force.
exit codes: 0 every submission passed, 1 one did not, 2 bad input (nothing is run), 130 interrupted."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "submissions", nargs="+", metavar="SUBMISSION", help="folder, archive or git repo@ref"
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="N",
        help="checks at once (default: what the cores and free memory allow at --estimate-memory each)",
    )
    parser.add_argument(
        "--ruleset",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="ruleset for every check (repeatable; default: tipc-basic, competition, submission-artefacts)",
    )
    parser.add_argument(
        "--out",
        "-o",
        default="tipc-review",
        metavar="DIR",
        help="review folder: work areas, state, summaries (default: %(default)s)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "csv", "json", "html"),
        default="text",
        help="summary printed on stdout (default: %(default)s)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=3600.0,
        metavar="S",
        help="wall-clock budget of each submission's check, in seconds (default: %(default)g); a short one "
        "also bounds the documented commands (40%% of it in all, 15%% each if check's defaults exceed it)",
    )
    parser.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="memory limit of each check, e.g. 4G (default: its share of 85%% of the machine)",
    )
    parser.add_argument(
        "--estimate-memory",
        default="2G",
        metavar="SIZE",
        help="memory one check is expected to need, for the default --jobs (default: %(default)s)",
    )
    parser.add_argument("--max-processes", type=int, metavar="N", help="process/thread limit of each check")
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local process pool (default) or Ray tasks",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="Ray cluster to use (auto, HOST:PORT, ray://HOST:PORT; default: a private local one)",
    )
    parser.add_argument(
        "--cpus-per-submission",
        type=float,
        default=1.0,
        metavar="N",
        help="CPUs each check declares to Ray (default: %(default)g)",
    )
    parser.add_argument(
        "--gpus-per-submission",
        type=float,
        default=0.0,
        metavar="N",
        help="GPUs each check declares to Ray (default: %(default)g)",
    )
    parser.add_argument(
        "--threads-per-submission",
        type=int,
        metavar="N",
        help="OMP/MKL/OPENBLAS_NUM_THREADS of each check (default: its share of the cores, or its "
        "--cpus-per-submission on Ray; variables already set are kept; 0: leave them as they are)",
    )
    parser.add_argument("--force", action="store_true", help="check again submissions reviewed before")
    parser.add_argument(
        "--allow-weak-sandbox",
        action="store_true",
        help="review even where tipc's full sandbox cannot be built here (it then says what is missing); "
        "without it such a review is refused: submissions are untrusted code",
    )
    check = parser.add_argument_group("passed to every tipc check")
    add_mode(check, what="TIPC mode each check runs (default: its own)")
    check.add_argument("--python", help="interpreter to run in place of the configs' python")
    check.add_argument("--device", choices=("cpu",), help="rewrite the device slots to run on CPU")
    check.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    check.add_argument("--paddle-compat", action="append", default=[], metavar="NAME")
    check.add_argument("--step-timeout", type=float, metavar="S")
    check.add_argument("--no-prepare", action="store_true")
    check.add_argument(
        "--check-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="any other `tipc check` argument, as is (repeatable), e.g. --check-arg=--network",
    )
    parser.add_argument("--no-color", action="store_true", help="no colour in the output")


def _check_args(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    if args.mode:
        out += ["--mode", args.mode]
    if args.python:
        out += ["--python", args.python]
    if args.device:
        out += ["--device", args.device]
    for kv in args.sets:
        out += ["--set", kv]
    for name in args.paddle_compat:
        out += ["--paddle-compat", name]
    if args.step_timeout is not None:
        out += ["--step-timeout", str(args.step_timeout)]
    if args.no_prepare:
        out.append("--no-prepare")
    out += list(args.check_arg)
    return out


# `tipc check` arguments that weaken its sandbox (--sandbox copy gives up the overlay, --pass-env hands the
# reviewer's variables to strangers' code).
_WEAKENING = ("--no-sandbox", "--network", "--sandbox", "--pass-env")


def _full_sandbox(word: str, following: list[str]) -> bool:
    """`--sandbox auto` or `--sandbox overlay`: naming the full sandbox weakens nothing."""
    value = word.split("=", 1)[1] if "=" in word else (following[0] if following else "")
    return word.startswith("--sandbox") and value in ("auto", "overlay")


def _refuse_weak_sandbox(args: argparse.Namespace) -> None:
    """A review runs strangers' code: refused (exit 2) where the full sandbox cannot be built, or where
    --check-arg weakens it, unless --allow-weak-sandbox; allowed, it says so in one loud line."""
    from tipc.commands._sandboxed import weak_line
    from tipc.execute.sandbox.probe import weaknesses_here

    words = list(args.check_arg)
    weak = [
        f"--check-arg {word}{'' if '=' in word or n + 1 >= len(words) else ' ' + words[n + 1]}"
        for n, word in enumerate(words)
        if word.split("=", 1)[0] in _WEAKENING and not _full_sandbox(word, words[n + 1 : n + 2])
    ]
    if args.executor == "local":  # Ray's nodes build their own; this machine says nothing about them
        weak += weaknesses_here()
    if not weak:
        return
    if not args.allow_weak_sandbox:
        raise UserError(
            "tipc review runs untrusted code and the sandbox here is weaker than tipc's full one: "
            + "; ".join(weak)
            + ". Fix that (docs/security.md), or pass --allow-weak-sandbox to review anyway"
        )
    sys.stderr.write(weak_line(weak) + "\n")


def run(args: argparse.Namespace) -> int:
    from tipc.commands import _sandboxed, unwritable_dir
    from tipc.execute.sandbox.limits import parse_size
    from tipc.review import summary as summary_mod
    from tipc.review.engine import ReviewOptions, review
    from tipc.review.progress import make_review_observer

    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    if not 0 < args.budget < float("inf"):
        raise UserError("--budget must be a positive number of seconds")
    if args.threads_per_submission is not None and args.threads_per_submission < 0:
        raise UserError("--threads-per-submission must be 0 (leave the variables as they are) or more")
    if args.address and args.executor != "ray":
        raise UserError("--address is for --executor ray")
    try:
        memory = parse_size(args.memory_limit) if args.memory_limit else None
        estimate = parse_size(args.estimate_memory)
    except ValueError as exc:
        raise UserError(f"--memory-limit/--estimate-memory {exc}") from None
    out = Path(args.out)
    problem = unwritable_dir(out)
    if problem is not None:
        raise UserError(f"--out {out}: {problem}")
    _refuse_weak_sandbox(args)
    options = ReviewOptions(
        submissions=list(args.submissions),
        out=out,
        rulesets=list(args.ruleset),
        jobs=args.jobs,
        budget_s=args.budget,
        memory_limit=memory,
        estimate_bytes=estimate,
        max_processes=args.max_processes,
        cpus=args.cpus_per_submission,
        gpus=args.gpus_per_submission,
        executor=args.executor,
        address=args.address,
        force=args.force,
        check_args=_check_args(args),
        threads=args.threads_per_submission,
    )
    observer = make_review_observer(sys.stderr, no_color=args.no_color)
    try:
        with _sandboxed.stop_signals():
            summary, interrupted = review(options, observer)
    finally:
        observer.close()
    folder = out.resolve()
    written = summary_mod.write_all(summary, folder)
    sys.stdout.write(summary_mod.render(summary, args.format, folder))
    sys.stderr.write(f"review: summary written to {written['html']} (also .md, .csv, .json)\n")
    if interrupted:
        return _sandboxed.interrupted_exit()
    return 0 if summary.passed else 1
