"""`tipc run`: plan a repo's TIPC chain and run it for real, with real exit codes and a run record."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

# Only what building the parser needs at module level: `tipc run --help` must not import the planner and the
# config stack (they load where a run needs them).
from tipc.commands import _explain, _sandboxed, add_log_limit, add_mode, log_limit_of
from tipc.core.errors import UserError

if TYPE_CHECKING:
    from tipc.core.steps import Overrides, Plan
    from tipc.execute.record import RunRecord
    from tipc.execute.sandbox import SandboxOptions, Session

EPILOG = """\
exit codes: 0 every step passed, 1 a step failed / timed out / was blocked, 2 usage or config error,
130 interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP (the record is written and --resume continues it).

By default the chain runs in a sandbox: the repo is a read-only lower layer, whatever the chain writes lands
in <repo>/test_tipc/output/tipc/<model>/<config>/<mode>/ (upper/: files written in the repo's tree; logs/:
the output folder with the logs, results_python.log and the run record), and the network is off."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "repo", metavar="REPO", help="the model repo (or a train_infer_python config inside it)"
    )
    parser.add_argument(
        "--config", "-c", help="config file (default: the repo's one train_infer_python config)"
    )
    add_mode(parser)
    parser.add_argument("--dialect", help="force a dialect profile instead of detecting it")
    parser.add_argument("--device", choices=("cpu",), help="rewrite the device slots to run on CPU")
    parser.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="override a config value"
    )
    parser.add_argument("--python", help="interpreter to run in place of the config's python")
    parser.add_argument("--timeout", type=float, metavar="S", help="time limit for the whole run in seconds")
    parser.add_argument(
        "--step-timeout",
        type=float,
        default=None,
        metavar="S",
        help="per-step limit (default: 600 s in lite modes, else 1800 s)",
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="STAGE", help="run only this stage (repeatable)"
    )
    parser.add_argument("--rerun-failed", action="store_true", help="reuse passed steps of the last run")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run from its record")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and run nothing")
    parser.add_argument(
        "--no-color", action="store_true", help="no colour on screen or in results_python.log"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--history",
        metavar="PATH|URL",
        help="store this run and its metrics in a history database (SQLite file or postgresql:// URL)",
    )
    add_log_limit(parser)
    _sandboxed.add_arguments(parser)


MAX_FINDINGS_SHOWN = 10


def _show_findings(the_plan: Plan, stream: IO[str]) -> None:
    """Warnings and errors the planner found in the config (the full list is `tipc lint`'s job)."""
    from tipc.core.findings import Level

    shown = [f for f in the_plan.findings if f.level in (Level.ERROR, Level.WARNING) or f.code == "TIPC910"]
    for finding in shown[:MAX_FINDINGS_SHOWN]:
        stream.write(f"tipc: {finding.format()}\n")
    if len(shown) > MAX_FINDINGS_SHOWN:
        stream.write(f"tipc: ... and {len(shown) - MAX_FINDINGS_SHOWN} more; `tipc lint` lists them all\n")


def _only_stages(args: argparse.Namespace) -> tuple[str, ...]:
    """Check the flags that need no repo; the --only stages, in order, without duplicates."""
    from tipc.core.steps import Stage

    stages = {s.value for s in Stage}
    only = tuple(dict.fromkeys(s.strip() for item in args.only for s in item.split(",") if s.strip()))
    for stage in only:
        if stage not in stages:
            raise UserError(f"--only {stage!r}: expected one of {', '.join(sorted(stages))}")
    if args.rerun_failed and args.resume:
        raise UserError("--rerun-failed and --resume are alternatives; pick one")
    for flag, value in (("--timeout", args.timeout), ("--step-timeout", args.step_timeout)):
        if value is not None and not 0 < value < float("inf"):
            raise UserError(f"{flag} must be a positive number of seconds")
    return only


def _print_plan(the_plan: Plan, only: tuple[str, ...], output_format: str, stdout: IO[str]) -> None:
    """--dry-run: the plan of the selected stages, as JSON or text."""
    from tipc.planning.planner import select_stages

    the_plan = select_stages(the_plan, only)
    if output_format == "json":
        stdout.write(json.dumps(the_plan.to_json(), indent=2) + "\n")
    else:
        from tipc.planning.planner import format_plan

        stdout.write(format_plan(the_plan) + "\n")


@dataclass(frozen=True)
class _Target:
    """What the run was planned from; the copy sandbox plans it again inside its view."""

    repo: Path
    config: Path
    overrides: Overrides
    sandbox_options: SandboxOptions
    stage_timeouts: dict[str, float]
    chain: _sandboxed.ChainOptions


def _replan_in_view(target: _Target, view: Path) -> tuple[Plan, list[str]]:
    from tipc.execute.observation import plan_for_run

    return _sandboxed.plan_to_run(
        plan_for_run,
        target.chain,
        view,
        _in_view(target.config, target.repo, view),
        target.overrides,
        target.sandbox_options,
        target.stage_timeouts,
    )


def _execute(
    args: argparse.Namespace,
    the_plan: Plan,
    prepare_notes: list[str],
    target: _Target,
    only: tuple[str, ...],
    forced_env: dict[str, str],
    stderr: IO[str],
) -> tuple[RunRecord, Session] | int:
    """Enter the sandbox and run the chain: (record, session), or the exit code of an early Ctrl-C."""
    from tipc.execute.runner import RunOptions, execute
    from tipc.report.progress import PlainObserver, make_observer

    fresh = not (args.resume or args.rerun_failed)
    # Read before the sandbox hides them behind the run's fresh output folder.
    shipped = _sandboxed.committed_results(the_plan) if target.sandbox_options.backend != "none" else []
    with _sandboxed.stop_signals():
        try:
            session = _sandboxed.enter(
                the_plan,
                target.sandbox_options,
                {"logs": the_plan.output_dir},
                fresh=fresh,
                python=args.python,
            )
            if session.backend == "copy":
                the_plan, prepare_notes = _replan_in_view(target, session.view)
            for note in (*session.notes, *prepare_notes, *shipped):
                stderr.write(f"tipc: {note}\n")
            options = RunOptions(
                step_timeout_s=_sandboxed.step_timeout(target.chain, the_plan.mode),
                run_timeout_s=args.timeout,
                python=args.python,
                only_stages=only,
                rerun_failed=args.rerun_failed,
                resume=args.resume,
                no_color=args.no_color,
                forced_env=tuple(sorted(forced_env.items())),
                log_limit_bytes=log_limit_of(args),
                explain=_explain.explainer(),
            )
            observer = (
                PlainObserver(stderr)
                if args.format == "json"
                else make_observer(no_color=args.no_color, stream=stderr)
            )
            record = execute(the_plan, options, observer)
        except KeyboardInterrupt:
            stderr.write("tipc: interrupted before the chain started\n")
            return _sandboxed.interrupted_exit()
    return record, session


def _show_record(
    args: argparse.Namespace, record: RunRecord, session: Session, stdout: IO[str], stderr: IO[str]
) -> None:
    """The record as JSON, or the environment header and where the logs and the changed files are."""
    if args.format == "json":
        stdout.write(json.dumps(record.to_json(), indent=2) + "\n")  # environment, sandbox, paths: all in it
    elif record.environment:
        from tipc.execute.envinfo import EnvInfo
        from tipc.report.did import run_did

        for line in [*EnvInfo.from_json(record.environment).header_lines(), *run_did(record)]:
            stderr.write(f"tipc: {line}\n")
    logs = session.real("logs")
    if logs is not None and args.format != "json":
        changed = (record.sandbox or {}).get("changes_total", 0)
        stderr.write(
            f"tipc: logs and run record in {logs}; the run wrote {changed} file(s) in the repo's tree "
            f"(kept in {session.folder}/upper, the repo is unchanged)\n"
        )


@dataclass(frozen=True)
class RunOutcome:
    exit_code: int
    record: dict[str, Any] | None  # the run record as JSON (what `--format json` prints); None: nothing ran


def run(args: argparse.Namespace) -> int:
    from tipc.execute import handback

    # A child run (re-run to enter the sandbox) hands its record back to its parent on a private channel.
    return run_chain(args, stdout=sys.stdout, stderr=sys.stderr, hand_back=handback.writer()).exit_code


def run_chain(
    args: argparse.Namespace,
    *,
    stdout: IO[str],
    stderr: IO[str],
    launch: _sandboxed.Launch | None = None,
    hand_back: Callable[[dict[str, Any]], None] | None = None,
) -> RunOutcome:
    """`tipc run` in this process up to the sandbox: the chain runs here (--no-sandbox, or in tipc's own
    process) or in a child tipc `launch` starts, which hands its record back. The outcome carries the
    record; `hand_back` hears it too (this process being such a child)."""
    from tipc.commands._target import choose_python, config_pythons, parse_sets, resolve_target
    from tipc.core.steps import Overrides
    from tipc.execute.observation import plan_for_run
    from tipc.planning.planner import default_mode

    only = _only_stages(args)
    chain = _sandboxed.chain_options(args)
    sandbox_options = _sandboxed.sandbox_options(chain)
    stage_timeouts = _sandboxed.stage_timeouts(chain)
    forced_env = _sandboxed.compat_env(chain)
    repo, config = resolve_target(args.repo, args.config)
    args.mode = args.mode or default_mode(config)
    chain = replace(chain, mode=args.mode)
    given_python = args.python
    python_choice = choose_python(args.python, config_pythons(config))  # ours (has paddle) over bare python
    args.python = python_choice.python
    overrides = Overrides(device=args.device, sets=parse_sets(args.sets), python=args.python)
    the_plan, prepare_notes = _sandboxed.plan_to_run(
        plan_for_run, chain, repo, config, overrides, sandbox_options, stage_timeouts
    )
    if args.dry_run:
        from tipc.commands import _upfront
        from tipc.planning.planner import select_stages

        shown = select_stages(the_plan, only)
        found = _upfront.lines(
            shown, python=args.python, given=given_python, written=config_pythons(config), device=args.device
        )
        _upfront.say(found, stderr)
        _print_plan(the_plan, only, args.format, stdout)
        return RunOutcome(0, None)
    _sandboxed.check_output_links(Path(the_plan.repo), the_plan.output_dir)
    from tipc.commands import _extras

    # tipc's own parts the run needs (exit 3, one line): Paddle for the chain, `tipc serve` for its server
    _extras.require_paddle(given_python, config_pythons(config))
    if _extras.runs_tipc_serve(the_plan):
        _extras.require_serve(f"the serving chain of {config} (its server is `tipc serve`)")
    _show_findings(the_plan, stderr)
    if not any(s.stage.value != "prepare" for s in the_plan.steps):
        stderr.write(
            f"tipc: {config}: mode {args.mode} yields no steps; nothing was run, so nothing is verified\n"
        )
        return RunOutcome(1, None)

    from tipc.execute import sandbox
    from tipc.modelci import hooks
    from tipc.modelci.hooks import ModelCiOptions

    model_ci = ModelCiOptions(history=args.history)
    in_child = _sandboxed.in_child()
    if sandbox.must_reexec(sandbox_options) or hooks.outside_needed(
        model_ci, sandbox_options, in_child=in_child
    ):
        child = _sandboxed.rerun_as_child(sandbox_options, launch, hand_back)
        if model_ci.wanted:
            hooks.after_child(model_ci, repo, the_plan, child.exit_code, stderr, kind="run")
        return RunOutcome(child.exit_code, child.document)
    stderr.write(f"tipc: {python_choice.why}\n")

    from tipc.commands import unwritable_dir
    from tipc.execute.runner import exit_code

    problem = unwritable_dir(Path(the_plan.repo) / the_plan.output_dir)
    if problem is not None:
        raise UserError(
            f"{Path(the_plan.repo) / the_plan.output_dir}: {problem} for the run's logs and record"
        )
    _explain.readiness(the_plan, args.python, repo, stderr)
    target = _Target(repo, config, overrides, sandbox_options, stage_timeouts, chain)
    outcome = _execute(args, the_plan, prepare_notes, target, only, forced_env, stderr)
    if isinstance(outcome, int):
        return RunOutcome(outcome, None)
    record, session = outcome
    _show_record(args, record, session, stdout, stderr)
    document = record.to_json()
    if hand_back is not None:
        hand_back(document)
    code = exit_code(record)
    if args.history is not None and sandbox_options.backend == "none":
        hooks.after(model_ci, repo, record, code, stderr, kind="run")
    if code == 130:
        stderr.write("tipc: interrupted; the record is written, `tipc run --resume` continues the run\n")
        return RunOutcome(_sandboxed.interrupted_exit(), document)
    return RunOutcome(code, document)


def _in_view(path: Path, repo: Path, view: Path) -> Path:
    """`path` (inside `repo`) at the same place inside the copy `view`."""
    return view / path.resolve().relative_to(repo.resolve())
