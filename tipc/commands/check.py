"""`tipc check`: lint the config, run the chain (or reuse a run), evaluate the spec rules, report a verdict.

Exit codes: 0 every error-severity rule PASSes (SKIP, N-A and WARN allowed) and lint found no error;
1 a rule FAILed or lint found an error; 2 usage or config error (bad arguments, unreadable config,
ruleset or tipc.yaml; nothing is run); 3 internal error (a check broke, the runner failed);
130 interrupted (reports of what ran are still written).

Everything the command writes goes into the report folder (default
`<repo>/test_tipc/output/<model>/tipc_report/`); the chain itself writes only under its output folder.
The collaborators (config discovery, lint, planner, runner, check registry) are reached through `Seams`
so tests can replace them.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tipc.commands import _acceptance, _modelci, _reports, _sandboxed, add_log_limit, add_mode, log_limit_of
from tipc.commands._target import choose_python, config_pythons, parse_sets, resolve_target
from tipc.core.errors import InfraError, TipcError, UserError

if TYPE_CHECKING:
    from tipc.core.causes import Cause
    from tipc.core.findings import Finding
    from tipc.core.paths import PathMap
    from tipc.core.steps import Overrides, Plan
    from tipc.execute.observer import Observer
    from tipc.execute.record import RunRecord
    from tipc.execute.runner import RunOptions
    from tipc.execute.sandbox import SandboxOptions, Session
    from tipc.judge.checks.base import CheckContext, CheckOutcome
    from tipc.judge.checks.settings import Settings
    from tipc.judge.rules.evaluate import RuleResult
    from tipc.judge.rules.model import Ruleset
    from tipc.report.model import Report

DEFAULT_RULESETS: tuple[str, ...] = ("tipc-basic", "competition")
FORMAT_CHOICES: tuple[str, ...] = ("text", "json", "markdown", "junit", "html")

EPILOG = """\
exit codes: 0 every error-severity rule passed (SKIP, N-A and WARN are allowed), 1 a rule failed or the
config has a lint error, 2 usage or config error (nothing is run), 3 internal error or a missing part of
tipc (the serve extra, Paddle: one line says what to install), 130 interrupted (143 SIGTERM, 129 SIGHUP).
Reports (report.json, report.md, report.junit.xml, report.html) go to --report-dir, by default a folder
per check in the run folder, <repo>/test_tipc/output/tipc/<model>/<config>/<mode>/reports/<UTC time>/, with
reports/latest pointing at the newest (later runs keep them; the oldest beyond 20 are removed); with
--no-sandbox <repo>/test_tipc/output/<model>/tipc_report/. The chain runs in a sandbox: see `tipc run
--help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("repo", metavar="REPO", help="the model repo to check (or a config file inside it)")
    parser.add_argument(
        "--config", "-c", help="config file (default: the repo's one train_infer_python config)"
    )
    add_mode(parser)
    parser.add_argument(
        "--ruleset",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="built-in ruleset name (tipc-basic, competition, modelzoo) or a ruleset YAML file; repeatable "
        f"(default: {' + '.join(DEFAULT_RULESETS)})",
    )
    parser.add_argument(
        "--reuse-run",
        action="store_true",
        help="reuse the run record of the same config and mode if there is one",
    )
    parser.add_argument("--report-dir", metavar="DIR", help="where to write the report files")
    parser.add_argument(
        "--format",
        choices=FORMAT_CHOICES,
        default="text",
        help="what to print on stdout (default: %(default)s)",
    )
    parser.add_argument("--device", choices=("cpu",), help="rewrite the device slots to run on CPU")
    parser.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="override a config value"
    )
    parser.add_argument("--python", help="interpreter to run in place of the config's python")
    parser.add_argument(
        "--load", action="store_true", help="the serving check's full load test (no time budget)"
    )
    parser.add_argument("--dialect", help="force a dialect profile instead of detecting it")
    parser.add_argument(
        "--step-timeout",
        type=float,
        default=None,
        metavar="S",
        help="per-step limit (default: 600 s in lite modes, else 1800 s)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        metavar="N",
        help="model-side checks that do not depend on each other (agreement/ONNX and serving, predict/infer) "
        "run side by side, at most N at once (default: min(2, cores); 1 runs them one after another)",
    )
    parser.add_argument("--no-color", action="store_true", help="no colour in the output")
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="the text report lists every rule (by default PASS, SKIP and N/A rules fold into a count line)",
    )
    add_log_limit(parser)
    _sandboxed.add_arguments(parser)
    _acceptance.add_arguments(parser)
    _modelci.add_arguments(parser)


# --- seams ----------------------------------------------------------------------------------------------


@dataclass
class Seams:
    """What `tipc check` calls outside tipc.judge.rules and tipc.report (defaults: `default_seams()`)."""

    find_configs: Callable[[Path], list[Path]]
    lint_paths: Callable[..., list[Finding]]
    plan: Callable[..., Plan]
    execute: Callable[[Plan, RunOptions, Observer], RunRecord]
    run_options: Callable[..., RunOptions]  # RunOptions(**kwargs)
    find_record: Callable[[Path, Plan], Path | None]
    load_record: Callable[[Path], RunRecord]
    load_settings: Callable[[Path], Settings]
    checks: Mapping[str, Callable[..., CheckOutcome]]
    # check name -> lane: the checks that may run beside each other with --jobs > 1 (tipc.judge.checks.LANES)
    lanes: Mapping[str, str] = field(default_factory=dict)
    make_observer: Callable[[bool], Observer] = field(default=lambda no_color: _null_observer())
    notes: list[str] = field(default_factory=list)  # problems found while wiring (shown in the report)
    # (repo, train config) -> the serving config to run after the train chain, or None (r2-serve).
    find_serving_config: Callable[[Path, Path], Path | None] = field(default=lambda repo, config: None)
    # Whether the chain runs in tipc's sandbox (the real collaborators); fakes run in place.
    sandboxed: bool = False


def _null_observer() -> Observer:
    from tipc.execute.observer import NullObserver

    return NullObserver()


def default_seams() -> Seams:
    """The real collaborators. Imported here, not at module import, so `tipc --help` stays instant."""
    try:
        from tipc.config.discover import find_configs
        from tipc.execute.observation import plan_for_run as plan
        from tipc.execute.runner import RunOptions, execute, find_record
        from tipc.planning.lint import lint_paths
    except ImportError as exc:
        raise InfraError(f"this tipc build lacks a component `tipc check` needs: {exc}") from None
    from tipc.execute.record import load_record

    notes: list[str] = []
    try:
        import tipc.judge.checks as checks_pkg

        checks: Mapping[str, Callable[..., CheckOutcome]] = checks_pkg.CHECKS
        lanes: Mapping[str, str] = getattr(checks_pkg, "LANES", {})
    except (ImportError, AttributeError):
        checks, lanes = {}, {}
        notes.append(
            "the check registry tipc.judge.checks.CHECKS is missing: rules that delegate to it are SKIP"
        )
    from tipc.judge.checks.settings import load_settings

    def make_observer(no_color: bool) -> Observer:
        try:
            from tipc.report.progress import make_observer

            return make_observer(no_color=no_color)  # on stderr: rich on a terminal, else plain lines
        except ImportError:
            return _null_observer()

    from tipc.planning.serving import find_serving_config

    return Seams(
        sandboxed=True,
        find_serving_config=find_serving_config,
        find_configs=find_configs,
        lint_paths=lint_paths,
        plan=plan,
        execute=execute,
        run_options=RunOptions,
        find_record=find_record,
        load_record=load_record,
        load_settings=load_settings,
        checks=checks,
        lanes=lanes,
        make_observer=make_observer,
        notes=notes,
    )


# --- the command ----------------------------------------------------------------------------------------


def safe_dirname(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return cleaned or "model"


def _check_report_dir(report_dir: Path) -> None:
    """Refuse a report folder that cannot be written before anything runs (a run lost to a typo is costly)."""
    from tipc.commands import unwritable_dir

    problem = unwritable_dir(report_dir) or _cannot_create(report_dir)
    if problem is not None:
        raise UserError(f"{report_dir}: {problem} (--report-dir)")


def _cannot_create(folder: Path) -> str | None:
    """Why a folder cannot be made at `folder`, found by trying: permission bits say /proc is writable to
    root, yet nothing can be made there. Leaves nothing behind."""
    import os
    import tempfile

    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None or not existing.is_dir():
        return None
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".tipc-probe-", dir=existing))
    except OSError as exc:
        return f"cannot create anything in {existing} ({exc.strerror or exc})"
    return None


def _check_output_dir(repo: Path, output_dir: str) -> None:
    from tipc.commands import unwritable_dir

    problem = unwritable_dir(repo / output_dir)
    if problem is not None:
        raise UserError(f"{repo / output_dir}: {problem} for the run's logs and record")


def _run_folder(repo: Path, the_plan: Plan) -> Path:
    from tipc.execute.sandbox import run_folder, run_key

    return run_folder(repo, run_key(the_plan.model_name, the_plan.config_path, the_plan.mode))


def default_report_dir(repo: Path, model_name: str) -> Path:
    return repo / "test_tipc" / "output" / safe_dirname(model_name) / "tipc_report"


def load_rulesets(
    names: list[str], checks: Mapping[str, Callable[..., CheckOutcome]] | None = None
) -> list[Ruleset]:
    from tipc.judge.rules.schema import load_rulesets as load

    return load(names, DEFAULT_RULESETS, checks=checks)


def _before_run(repo: Path) -> dict[str, object]:
    """What checks must read of the repo as its author left it, before the sandbox hides it."""
    from tipc.judge.checks.status_log import shipped_status_logs

    return {"status_logs": shipped_status_logs(repo)}


def _judged_against(findings: list[Finding], plan: Plan) -> list[Finding]:
    """Lint findings in the light of the plan that ran (tipc.planning.observe.choose)."""
    from tipc.planning.observe.choose import misplaced_keys_read_as_commands

    return misplaced_keys_read_as_commands(findings, plan)


def _lint_findings(findings: list[Finding], plan_findings: tuple[Finding, ...]) -> list[Finding]:
    from tipc.core.findings import Level

    out: list[Finding] = []
    seen: set[tuple[object, ...]] = set()
    for f in [*findings, *plan_findings]:
        key = (f.path, f.line, f.col, f.code, f.message)
        if f.level is Level.INFO or key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out


def _check_options(args: argparse.Namespace) -> None:
    """A bad --step-timeout, --jobs or --repeat is found before anything runs (exit 2); --mode is checked
    by argparse (tipc.commands.add_mode)."""
    if args.step_timeout is not None and not 0 < args.step_timeout < float("inf"):
        raise UserError("--step-timeout must be a positive number of seconds")
    check_jobs(getattr(args, "jobs", None))
    _modelci.options(args).check()  # --repeat without --baseline
    _acceptance.check_arguments(args)


def _require_extras(
    args: argparse.Namespace,
    serving_plan: Plan | None,
    rulesets: list[Ruleset],
    given_python: str | None,
    config: Path,
) -> None:
    """tipc's own parts this check needs (the serve extra, Paddle): MissingExtra (exit 3, one line) before
    anything runs."""
    from tipc.commands import _extras

    _extras.check_serving(serving_plan, rulesets)
    if not args.reuse_run:
        _extras.require_paddle(given_python, config_pythons(config))


def _read_outside(args: argparse.Namespace, repo: Path) -> tuple[Path, ...]:
    """Folders outside the repo the check reads inside the sandbox: the --baseline directory."""
    given = getattr(args, "baseline", None)
    if not given:
        return ()
    from tipc.judge.baseline.store import baseline_dir

    where = baseline_dir(repo, given)
    return () if where.is_relative_to(repo.resolve()) else (where,)


def _binds(
    the_plan: Plan, serving_plan: Plan | None, report_dir: Path, repo: Path, role: str
) -> tuple[dict[str, str], tuple[Path, ...]]:
    """The folders the chain may write: by role, those in the repo (repo-relative), and those outside it
    (a --report-dir elsewhere)."""
    binds = {"logs": the_plan.output_dir}
    if serving_plan is not None:
        binds["serving"] = serving_plan.output_dir
    if report_dir.is_relative_to(repo):
        binds[role] = report_dir.relative_to(repo).as_posix()
        return binds, ()
    return binds, (report_dir,)


def check(
    args: argparse.Namespace,
    seams: Seams,
    *,
    stdout: IO[str],
    stderr: IO[str],
    launch: _sandboxed.Launch | None = None,
    hand_back: Callable[[dict[str, object]], None] | None = None,
) -> int:
    """`tipc check` in this process up to the sandbox: the chain and the rules run here (in place, or in
    tipc's own process) or in a child tipc `launch` starts. `hand_back` hears the report as JSON
    (tipc.report's "tipc.report/1"), wherever it was made (a child hands it back on a private channel)."""
    from tipc.core.steps import Overrides

    _check_options(args)
    chain = _sandboxed.chain_options(args)
    sandbox_options = _sandboxed.sandbox_options(chain, in_place=not seams.sandboxed)
    stage_timeouts = _sandboxed.stage_timeouts(chain)
    forced_env = _sandboxed.compat_env(chain)
    # Everything that can be wrong with the input is found before anything runs.
    rulesets = load_rulesets(list(args.ruleset), seams.checks)
    overrides = Overrides(device=args.device, sets=parse_sets(list(args.sets)), python=args.python)
    # REPO may be a config inside the repo (`tipc check path/to/test_tipc/configs/m/train_infer_python.txt`).
    repo, config = resolve_target(args.repo, args.config, seams.find_configs)
    repo, config = repo.resolve(), config.resolve()
    from tipc.planning.planner import default_mode

    args.mode = args.mode or default_mode(config)  # a serving config checks its serving_infer chain
    chain = replace(chain, mode=args.mode)
    given_python = args.python
    python_choice = choose_python(args.python, config_pythons(config))  # ours (has paddle) over bare python
    args.python = python_choice.python
    overrides = replace(overrides, python=args.python)
    settings = seams.load_settings(repo)
    findings = list(seams.lint_paths([config], dialect=args.dialect))
    the_plan, prepare_notes = _sandboxed.plan_to_run(
        seams.plan, chain, repo, config, overrides, sandbox_options, stage_timeouts
    )
    if seams.sandboxed:
        _sandboxed.check_output_links(repo, the_plan.output_dir)
    report_dir = (
        Path(args.report_dir).resolve() if args.report_dir else default_report_dir(repo, the_plan.model_name)
    )
    _check_report_dir(report_dir)
    _check_output_dir(repo, the_plan.output_dir)
    notes = list(seams.notes)
    serving_plan = _serving_plan(args, repo, config, rulesets, seams, sandbox_options)
    if seams.sandboxed:  # tipc's own parts this check needs, before anything runs (exit 3, one line)
        _require_extras(args, serving_plan, rulesets, given_python, config)
    extra = _extra_plans(
        args, repo, config, rulesets, the_plan, overrides, seams, sandbox_options, stage_timeouts
    )

    from tipc.execute import sandbox
    from tipc.modelci import hooks

    model_ci = _modelci.options(args)
    in_child = _sandboxed.in_child()
    if sandbox.must_reexec(sandbox_options) or hooks.outside_needed(
        model_ci, sandbox_options, in_child=in_child
    ):
        code = _sandboxed.rerun_as_child(sandbox_options, launch, hand_back).exit_code
        # history and notification from outside the sandbox (it has no network, keeps no outside writes)
        return hooks.after_child(model_ci, repo, the_plan, code, stderr) if model_ci.wanted else code
    stderr.write(f"tipc: {python_choice.why}\n")
    notes.append(python_choice.why)
    if seams.sandboxed:
        from tipc.commands import _explain

        notes.extend(_explain.readiness(the_plan, args.python, repo, stderr))
    # A sandboxed check keeps its reports in a folder of their own in the run folder (tipc.commands._reports):
    # later runs of the same config and mode never delete them.
    stamped = not args.report_dir and sandbox_options.backend != "none"
    role = _reports.new_role(_run_folder(repo, the_plan)) if stamped else "report"
    binds, outside = _binds(the_plan, serving_plan, report_dir, repo, role)
    binds.update(extra.binds())
    # Read before the sandbox hides them behind the run's fresh output folder.
    shipped = _sandboxed.committed_results(the_plan) if sandbox_options.backend != "none" else []
    before_run = _before_run(repo)
    if stamped:
        for line in _reports.point_latest(_run_folder(repo, the_plan), role):
            stderr.write(f"tipc: {line}\n")
    with _sandboxed.stop_signals():
        try:
            # One check at a time per run folder (a second one waits): each report agrees with its exit code.
            session = _sandboxed.enter(
                the_plan,
                sandbox_options,
                binds,
                fresh=not args.reuse_run,
                writable=outside,
                wait=True,
                python=args.python,
                read_only=_read_outside(args, repo),
            )
        except KeyboardInterrupt:
            stderr.write("tipc: interrupted before the chain started\n")
            return _sandboxed.interrupted_exit()
        if session.backend == "copy":
            view_config = session.view / config.relative_to(repo)
            repo, config = session.view, view_config
            the_plan, prepare_notes = _sandboxed.plan_to_run(
                seams.plan, chain, repo, config, overrides, sandbox_options, stage_timeouts
            )
            if report_dir.is_relative_to(session.repo) and not args.report_dir and session.folder is not None:
                report_dir = session.folder / role  # beside the copy, not in it: a fresh copy keeps it
            serving_plan = _serving_plan(args, repo, config, rulesets, seams, sandbox_options)
            extra = _extra_plans(
                args, repo, config, rulesets, the_plan, overrides, seams, sandbox_options, stage_timeouts
            )
        notes.extend((*session.notes, *prepare_notes, *shipped))
        from tipc.execute import proc

        args.forced_env = forced_env
        try:
            # --paddle-compat holds for everything the check starts (predict/infer and the engine workers).
            with proc.child_env(_sandboxed.child_defaults(forced_env)):
                return _checked(
                    args,
                    seams,
                    stdout,
                    stderr,
                    rulesets,
                    repo,
                    settings,
                    findings,
                    the_plan,
                    serving_plan,
                    report_dir,
                    notes,
                    session,
                    role,
                    extra,
                    before_run=before_run,
                    hand_back=hand_back,
                )
        finally:
            sandbox.release()  # at once where this process goes on (a library caller)


def _train_record(
    args: argparse.Namespace, seams: Seams, repo: Path, the_plan: Plan, notes: list[str]
) -> tuple[RunRecord, str | None, bool]:
    """The train chain's record: reused (--reuse-run, when one is found) or run now; (record, its path when
    reused, reused)."""
    if args.reuse_run:
        found = seams.find_record(repo, the_plan)
        if found is not None:
            return seams.load_record(found), str(found), True
        notes.append("--reuse-run: no run record of this config and mode was found, so the chain was run")
    if not the_plan.steps:
        notes.append(f"mode {args.mode} yields no steps for this config: nothing was run")
    return _execute(args, the_plan, seams, "the runner failed"), None, False


def _interrupted(*records: RunRecord | None) -> bool:
    from tipc.core.steps import Status

    return any(r.status is Status.INTERRUPTED for rec in records if rec is not None for r in rec.results)


def _evaluate(
    args: argparse.Namespace,
    seams: Seams,
    rulesets: list[Ruleset],
    ctx: CheckContext,
    after_interrupt: bool,
    notes: list[str],
) -> tuple[list[RuleResult], bool]:
    """The rules' results, and whether Ctrl-C stopped the checks. After an interrupt nothing new starts:
    checks that would start a process (predict/infer, a server) are SKIP; those that only read the record
    and the logs still judge what ran."""
    from tipc.execute import proc
    from tipc.judge.checks.serving import full_load
    from tipc.judge.rules.evaluate import evaluate
    from tipc.report.progress import announced_checks

    checks = full_load(seams.checks) if getattr(args, "load", False) else seams.checks
    observer = seams.make_observer(args.no_color)
    if after_interrupt:
        checks = {name: _not_after_interrupt(fn) for name, fn in checks.items()}
        with proc.refusing("the run was interrupted, and nothing new is started after an interrupt"):
            return evaluate(rulesets, ctx, checks=announced_checks(checks, observer)), False
    try:
        results = evaluate(
            rulesets,
            ctx,
            checks=announced_checks(checks, observer),
            jobs=check_jobs(getattr(args, "jobs", None)),
            lanes=seams.lanes,
        )
    except KeyboardInterrupt:
        # Ctrl-C while checks ran side by side: every child they started was stopped. Judge what ran,
        # as after an interrupted run: checks that would start a process are SKIP.
        notes.append("interrupted while the checks ran: the checks that start a process are SKIP")
        checks = {name: _not_after_interrupt(fn) for name, fn in checks.items()}
        with proc.refusing("the check was interrupted, and nothing new is started after an interrupt"):
            return evaluate(rulesets, ctx, checks=checks), True
    return results, False


def _write_and_show(
    args: argparse.Namespace,
    report: Report,
    report_dir: Path,
    stdout: IO[str],
    stderr: IO[str],
    session: Session | None,
    role: str = "report",
) -> None:
    """Write the report files, print the report, and say where the reports and the logs are."""
    from tipc.core.console import use_color
    from tipc.execute.sandbox import writing_outside
    from tipc.report import render, write_reports

    try:
        with writing_outside(report_dir):  # a --report-dir no command can reach: with tipc's own rights
            written = write_reports(report, report_dir)
    except OSError as exc:
        raise UserError(f"{report_dir}: cannot write the reports: {exc.strerror or exc}") from None
    color = args.format == "text" and use_color(args.no_color) and stdout.isatty()
    stdout.write(render(report, args.format, color=color, verbose=getattr(args, "verbose", False)))
    stdout.flush()
    shown_dir = session.real(role) if session is not None and not args.report_dir else None
    stderr.write(
        f"tipc: reports written to {shown_dir or report_dir} ({', '.join(p.name for p in written)})\n"
    )

    logs = session.real("logs") if session is not None else None
    if logs is not None:
        stderr.write(f"tipc: logs and run record in {logs}\n")


def _judged_record(
    args: argparse.Namespace, seams: Seams, repo: Path, the_plan: Plan, notes: list[str], stderr: IO[str]
) -> tuple[RunRecord, str | None, bool]:
    """The train chain's record the rules judge (as _train_record), a reused one's causes found anew, and
    with --baseline the chain run --repeat times; (record, its path when reused, reused)."""
    record, record_path, reused = _train_record(args, seams, repo, the_plan, notes)
    if reused and seams.sandboxed:
        from tipc.commands import _explain

        record = _explain.explained(record, repo)  # the causes as the catalogue finds them now
    if getattr(args, "baseline", None) is not None and not reused:
        from tipc.modelci import hooks

        # --repeat N: the chain N times, the baseline rule judges the medians (model CI)
        record = hooks.repeat_chain(
            _modelci.options(args),
            repo,
            record,
            lambda: _execute(args, the_plan, seams, "the runner failed"),
            stderr,
        )
    return record, record_path, reused


def _serving_records(
    args: argparse.Namespace,
    seams: Seams,
    repo: Path,
    serving_plan: Plan | None,
    notes: list[str],
    *,
    stopped: bool,
) -> dict[str, RunRecord]:
    """The serving chain's record (by chain name), run after the train chain unless Ctrl-C stopped it."""
    records: dict[str, RunRecord] = {}
    if serving_plan is not None and stopped:
        notes.append("serving chain: not started, the run was interrupted")  # nothing new after Ctrl-C
    elif serving_plan is not None:
        records["serving"] = _run_serving(args, repo, serving_plan, seams, notes)
    return records


def _extra_records(
    args: argparse.Namespace,
    seams: Seams,
    repo: Path,
    extra: _acceptance.Extra,
    notes: list[str],
    *,
    stopped: bool,
) -> dict[str, RunRecord]:
    """The documented and pretrained chains' records, run after the others unless Ctrl-C stopped the run."""
    notes.extend(extra.notes)
    if stopped:
        notes.append("documented and pretrained chains: not started, the run was interrupted")
        return {}
    return _run_extra(args, repo, extra, seams, notes)


def _checked(
    args: argparse.Namespace,
    seams: Seams,
    stdout: IO[str],
    stderr: IO[str],
    rulesets: list[Ruleset],
    repo: Path,
    settings: Settings,
    findings: list[Finding],
    the_plan: Plan,
    serving_plan: Plan | None,
    report_dir: Path,
    notes: list[str],
    session: Session | None,
    role: str = "report",
    extra: _acceptance.Extra | None = None,
    *,
    before_run: dict[str, object] | None = None,
    hand_back: Callable[[dict[str, object]], None] | None = None,
) -> int:
    from tipc.judge.checks.base import CheckContext
    from tipc.report import build_report

    record, record_path, reused = _judged_record(args, seams, repo, the_plan, notes, stderr)
    stopped = _interrupted(record)
    records = _serving_records(args, seams, repo, serving_plan, notes, stopped=stopped)
    if extra is not None and extra.plans():
        records.update(
            _extra_records(
                args, seams, repo, extra, notes, stopped=stopped or _interrupted(*records.values())
            )
        )
    ctx = CheckContext(
        repo=repo, record=record, settings=settings, records=records, before_run=before_run or {}
    )
    results, checks_stopped = _evaluate(
        args, seams, rulesets, ctx, stopped or _interrupted(*records.values()), notes
    )
    from tipc.execute import own_parts

    notes.extend(own_parts.drain_notes())  # where tipc's own parts ran, when not the repo's interpreter
    if getattr(args, "baseline", None) is not None:
        from tipc.modelci import hooks

        results = [*results, hooks.rule_result(ctx, args.baseline)]
    report = build_report(
        repo=str(repo),
        rulesets=[rs.name for rs in rulesets],
        results=results,
        record=record,
        findings=_lint_findings(
            _judged_against(findings, record.plan if record is not None else the_plan),
            (
                *the_plan.findings,
                *(serving_plan.findings if serving_plan is not None else ()),
                *(extra.pretrained.findings if extra is not None and extra.pretrained is not None else ()),
            ),
        ),
        reused=reused,
        record_path=record_path,
        notes=notes,
        paths=_shown_paths(session, repo) if seams.sandboxed else None,
        did=_run_did(record, repo) if seams.sandboxed else (),
        rule_causes=_rule_causes(results, record, repo) if seams.sandboxed else None,
    )
    _write_and_show(args, report, report_dir, stdout, stderr, session, role)
    _hand_back(report, hand_back)
    if _interrupted(record, *records.values()) or checks_stopped:
        stderr.write("tipc: the run was interrupted; the verdict covers only what ran\n")
        return _sandboxed.interrupted_exit()
    if session is None or session.backend == "none":  # in place: store and notify here (else the parent does)
        from tipc.modelci import hooks

        model_ci = _modelci.options(args)
        if model_ci.wanted:
            hooks.after(model_ci, repo, record, report.exit_code, stderr)
    return report.exit_code


def _hand_back(report: Report, hand_back: Callable[[dict[str, object]], None] | None) -> None:
    """The report as JSON (what every report format is made from) to whoever asked for it."""
    if hand_back is None:
        return
    import json

    from tipc.report.json import render_json

    hand_back(json.loads(render_json(report)))


def _shown_paths(session: Session | None, repo: Path) -> PathMap:
    from tipc.execute.shown import path_map

    return path_map(session, repo)


def _rule_causes(
    results: list[RuleResult], record: RunRecord | None, repo: Path
) -> dict[str, tuple[Cause, ...]] | None:
    if record is None:
        return None
    from tipc.commands import _explain

    return _explain.rule_causes(results, record, repo)


def _run_did(record: RunRecord, repo: Path) -> list[str]:
    from tipc.report.did import run_did

    try:
        return run_did(record, repo)
    except Exception:  # a statement about the run, never a reason to lose the report
        return []


def check_jobs(jobs: int | None) -> int:
    """--jobs, validated; by default min(2, cores): model-side checks are CPU-heavy, two at once already
    fill a small machine."""
    import os

    if jobs is None:
        return max(1, min(2, os.cpu_count() or 1))
    if jobs < 1:
        raise UserError(f"--jobs {jobs}: expected a positive number of concurrent checks")
    return jobs


def _not_after_interrupt(check: Callable[..., CheckOutcome]) -> Callable[..., CheckOutcome]:
    from tipc.execute import proc

    def checked(*args: object, **kwargs: object) -> CheckOutcome:
        try:
            return check(*args, **kwargs)
        except proc.Refused as exc:
            from tipc.judge.checks.base import CheckOutcome, Verdict

            return CheckOutcome(Verdict.SKIP, f"not checked: {exc}")

    return checked


def _execute(
    args: argparse.Namespace, plan: Plan, seams: Seams, failure: str, **overrides: object
) -> RunRecord:
    """Run a plan through the runner seam; a runner that breaks is an internal error (exit 3)."""
    settings: dict[str, object] = {
        "step_timeout_s": _sandboxed.step_timeout(_sandboxed.chain_options(args), plan.mode),
        "python": args.python,
        "no_color": args.no_color,
        "forced_env": tuple(sorted(getattr(args, "forced_env", {}).items())),
        "log_limit_bytes": log_limit_of(args),
    }
    if seams.sandboxed:
        from tipc.commands import _explain

        settings["explain"] = _explain.explainer()
    options = seams.run_options(**{**settings, **overrides})
    try:
        return seams.execute(plan, options, seams.make_observer(args.no_color))
    except (TipcError, KeyboardInterrupt):
        raise
    except Exception as exc:
        raise InfraError(f"{failure}: {type(exc).__name__}: {exc}") from exc


# --- the documented and pretrained chains (seed 004 §4.1.3): run after the others when a rule reads them ---


def _extra_plans(
    args: argparse.Namespace,
    repo: Path,
    config: Path,
    rulesets: list[Ruleset],
    the_plan: Plan,
    overrides: Overrides,
    seams: Seams,
    sandbox_options: SandboxOptions | None,
    timeouts: Mapping[str, float],
) -> _acceptance.Extra:
    from tipc.judge.rules.evaluate import chains_named

    chains = chains_named(rulesets)
    return _acceptance.plan_extra(
        args, repo, config, chains, the_plan, overrides, seams.plan, sandbox_options, timeouts
    )


def _run_extra(
    args: argparse.Namespace, repo: Path, extra: _acceptance.Extra, seams: Seams, notes: list[str]
) -> dict[str, RunRecord]:
    def run(plan: Plan, options: dict[str, object]) -> RunRecord:
        return _execute(args, plan, seams, f"the runner failed on the {plan.mode} chain", **options)

    return _acceptance.run_extra(args, repo, extra, run, seams.find_record, seams.load_record, notes)


# --- the serving chain: run after the train chain when a rule reads its record ----------------


def _serving_plan(
    args: argparse.Namespace,
    repo: Path,
    config: Path,
    rulesets: list[Ruleset],
    seams: Seams,
    sandbox_options: SandboxOptions | None = None,
) -> Plan | None:
    """The repo's serving chain, planned (and isolated) before anything runs, or None when not needed."""
    from tipc.core.steps import SERVING_MODE, Overrides
    from tipc.judge.rules.evaluate import chains_named
    from tipc.planning.planner import isolate

    if "serving" not in chains_named(rulesets):
        return None
    serving_config = seams.find_serving_config(repo, config)
    if serving_config is None:
        return None
    # --set names the train config's keys, so only --device and --python carry over.
    overrides = Overrides(device=args.device, python=args.python)
    served = seams.plan(serving_config, SERVING_MODE, repo=repo, overrides=overrides)
    in_place = sandbox_options is None or sandbox_options.backend == "none"
    return isolate(served) if in_place else served


def _run_serving(
    args: argparse.Namespace, repo: Path, plan: Plan, seams: Seams, notes: list[str]
) -> RunRecord:
    record: RunRecord | None = None
    if args.reuse_run:
        found = seams.find_record(repo, plan)
        if found is not None:
            record = seams.load_record(found)
            notes.append(f"serving chain: reused the run record {found}")
        else:
            notes.append("--reuse-run: no run record of the serving chain was found, so it was run")
    if record is None:
        record = _execute(args, plan, seams, "the runner failed on the serving chain")
    statuses = ", ".join(f"{r.step_id} {r.status.value}" for r in record.results) or "no step ran"
    notes.append(f"serving chain {plan.config_path} ({plan.output_dir}): {statuses}")
    return record


def run(args: argparse.Namespace) -> int:
    from tipc.execute import handback

    # A child check (re-run to enter the sandbox) hands its report back to its parent on a private channel.
    with _modelci.measuring_clock(args, sys.stderr, wanted=args.baseline is not None):
        return check(args, default_seams(), stdout=sys.stdout, stderr=sys.stderr, hand_back=handback.writer())
