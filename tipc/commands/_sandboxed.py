"""What `tipc run` and `tipc check` share about running a chain safely: the sandbox switches, entering the
sandbox (or re-running tipc as a child that enters it), the repo's prepare.sh as the first step, SIGTERM and
SIGHUP handled like Ctrl-C, and step time limits that fit the mode.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core import interrupts
from tipc.core.errors import UserError

if TYPE_CHECKING:
    from tipc.core.steps import Overrides, Plan
    from tipc.execute.sandbox import SandboxOptions, Session

LITE_STEP_TIMEOUT_S = 600.0  # lite data: a step that needs longer is stuck
WHOLE_STEP_TIMEOUT_S = 1800.0
PREPARE_SCRIPT = "test_tipc/prepare.sh"
# Lines of prepare.sh that reach the network or install packages: listed before the run, because in the
# sandbox (no network by default) they fail and what depends on them fails next.
_NETWORK_ACTION = re.compile(
    r"\b(wget|curl|git\s+clone|pip[0-9.]*\s+install|-m\s+pip\s+install|hub\.download)\b"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sandbox and environment")
    group.add_argument(
        "--sandbox",
        choices=("auto", "overlay", "copy"),
        default="auto",
        help="how the repo is kept untouched: overlay (copy-on-write, private namespaces), copy (a plain "
        "copy of the working tree), auto (overlay where the kernel allows it, else copy; default)",
    )
    group.add_argument(
        "--no-sandbox", action="store_true", help="run in place in the repo (writes land in the repo itself)"
    )
    group.add_argument("--network", action="store_true", help="let the chain reach the network")
    group.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="give the chain this variable of tipc's environment (a name or a glob such as WANDB_*; "
        "repeatable); by default it gets only what a Paddle chain needs (PATH, locale, CUDA_*, FLAGS_*, ...)",
    )
    group.add_argument(
        "--disk-limit",
        metavar="SIZE",
        help="what the run may write in all: files in the repo's tree, /tmp, HOME and logs, e.g. 20G "
        "(default: 8G); a step over it fails with that cause",
    )
    group.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="memory limit for the run, e.g. 8G (default: 85%% of the machine's memory)",
    )
    group.add_argument(
        "--max-processes",
        type=int,
        metavar="N",
        help="limit on the run's processes and threads (default: 16384)",
    )
    group.add_argument("--no-prepare", action="store_true", help="do not run test_tipc/prepare.sh first")
    group.add_argument(
        "--paddle-compat",
        action="append",
        default=[],
        metavar="NAME",
        help="a compatibility switch for older repos on a newer Paddle, e.g. `export` "
        "(FLAGS_enable_pir_api=0: Paddle 3 exports the old inference.pdmodel format); repeatable",
    )
    add_seed_arguments(group, "default: off; with --baseline, seed 0")
    group.add_argument(
        "--args",
        dest="stage_args",
        action="append",
        default=[],
        metavar="STAGE=ARGS",
        help="extra arguments for every command of a stage, e.g. `train=--no-pretrained` when the weights "
        "a script downloads at run time are not needed (repeatable; shown in the plan and the record)",
    )
    group.add_argument(
        "--stage-timeout",
        action="append",
        default=[],
        metavar="STAGE=S",
        help="time limit for the steps of one stage, e.g. train=1200 (repeatable)",
    )


@dataclass(frozen=True)
class ChainOptions:
    """How `tipc run` and `tipc check` run a chain: one typed value built from argparse (`chain_options`);
    the helpers below read it, never a Namespace."""

    mode: str | None = None  # None until the verb picks the config's default mode
    dialect: str | None = None
    step_timeout: float | None = None
    stage_timeout: tuple[str, ...] = ()  # STAGE=S words
    stage_args: tuple[str, ...] = ()  # STAGE=ARGS words
    sandbox: str = "auto"
    no_sandbox: bool = False
    network: bool = False
    pass_env: tuple[str, ...] = ()
    disk_limit: str | None = None
    memory_limit: str | None = None
    max_processes: int | None = None
    no_prepare: bool = False
    paddle_compat: tuple[str, ...] = ()
    seed: int | None = None
    no_seed: bool = False
    model_ci: bool = False  # judged against a baseline: seeded unless --no-seed
    own_process: bool = False  # tipc's console process (tipc.cli): it may enter namespaces itself
    invocation: tuple[str, ...] = ()  # the command's words, for a child that enters them


def chain_options(args: argparse.Namespace) -> ChainOptions:
    """The chain switches of a verb's arguments (a verb without some of them: their defaults)."""

    def words(name: str) -> tuple[str, ...]:
        return tuple(getattr(args, name, None) or ())

    return ChainOptions(
        mode=getattr(args, "mode", None),
        dialect=getattr(args, "dialect", None),
        step_timeout=getattr(args, "step_timeout", None),
        stage_timeout=words("stage_timeout"),
        stage_args=words("stage_args"),
        sandbox=getattr(args, "sandbox", None) or "auto",
        no_sandbox=bool(getattr(args, "no_sandbox", False)),
        network=bool(getattr(args, "network", False)),
        pass_env=words("pass_env"),
        disk_limit=getattr(args, "disk_limit", None),
        memory_limit=getattr(args, "memory_limit", None),
        max_processes=getattr(args, "max_processes", None),
        no_prepare=bool(getattr(args, "no_prepare", False)),
        paddle_compat=words("paddle_compat"),
        seed=getattr(args, "seed", None),
        no_seed=bool(getattr(args, "no_seed", False)),
        model_ci=getattr(args, "baseline", None) is not None,
        own_process=bool(getattr(args, "own_process", False)),
        invocation=words("invocation"),
    )


def sandbox_options(opts: ChainOptions, *, in_place: bool = False) -> SandboxOptions:
    from tipc.execute.sandbox import DEFAULT_DISK_LIMIT, SandboxOptions
    from tipc.execute.sandbox.limits import parse_size

    no_sandbox = in_place or opts.no_sandbox
    memory = opts.memory_limit
    tasks = opts.max_processes
    try:
        memory_bytes = parse_size(memory) if memory is not None else None
    except ValueError as exc:
        raise UserError(f"--memory-limit {exc}") from None
    if tasks is not None and tasks <= 0:
        raise UserError("--max-processes must be a positive number")
    disk = opts.disk_limit
    try:
        disk_bytes = parse_size(disk) if disk is not None else DEFAULT_DISK_LIMIT
    except ValueError as exc:
        raise UserError(f"--disk-limit {exc}") from None
    words = (n.strip() for item in opts.pass_env for n in item.split(","))
    pass_env = tuple(n for n in words if n)
    for name in pass_env:
        if not re.fullmatch(r"[A-Za-z_*?][A-Za-z0-9_*?]*", name):
            raise UserError(f"--pass-env {name!r}: expected a variable name or a glob such as WANDB_*")
    return SandboxOptions(
        backend="none" if no_sandbox else opts.sandbox,
        network=opts.network,
        memory_bytes=memory_bytes,
        max_tasks=tasks,
        disk_bytes=disk_bytes,
        pass_env=pass_env,
        # tipc's console process, or the child it re-ran itself as: either may enter namespaces
        own_process=opts.own_process or in_child(),
        invocation=opts.invocation,
    )


def add_repeated_run_arguments(parser: Any, *, seed_default: str, history_for: str) -> None:
    """The switches of the verbs that run the chain for model CI (baseline record, matrix): what every run
    gets as `tipc run` would (--paddle-compat, --args, --no-prepare, the seed) and the history database."""
    parser.add_argument(
        "--paddle-compat",
        action="append",
        default=[],
        metavar="NAME",
        help="a compatibility switch for every run, as for `tipc run` (e.g. export); repeatable",
    )
    parser.add_argument(
        "--args",
        dest="stage_args",
        action="append",
        default=[],
        metavar="STAGE=ARGS",
        help="extra arguments for every command of a stage, as for `tipc run`; repeatable",
    )
    parser.add_argument("--no-prepare", action="store_true", help="do not run test_tipc/prepare.sh first")
    add_seed_arguments(parser, seed_default)
    parser.add_argument(
        "--history",
        metavar="PATH|URL",
        help=f"the history database for {history_for} (default: $TIPC_HISTORY or "
        "~/.local/share/tipc/history.sqlite3, the one every model CI verb uses)",
    )


def add_seed_arguments(parser: Any, default_text: str) -> None:
    """--seed N / --no-seed (model CI: tipc.execute.seeding), for every verb that runs a chain."""
    parser.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="seed Python's random, NumPy and Paddle in every step and set Paddle's deterministic flags, so "
        f"repeated runs can give identical effect metrics ({default_text})",
    )
    parser.add_argument("--no-seed", action="store_true", help="do not seed the steps")


def seed_env(opts: ChainOptions) -> dict[str, str]:
    """The steps' seeding variables --seed / --no-seed ask for (default: seeded for a --baseline check)."""
    from tipc.execute.seeding import chosen_seed
    from tipc.execute.seeding import seed_env as variables

    return variables(chosen_seed(opts.seed, opts.no_seed, opts.model_ci))


def compat_env(opts: ChainOptions) -> dict[str, str]:
    """What every step gets over its environment: the --paddle-compat switches and the seeding variables."""
    names = [n.strip() for item in opts.paddle_compat for n in item.split(",") if n.strip()]
    seeded = seed_env(opts)
    if not names:
        return seeded
    from tipc.execute.compat import compat_env as switches_env

    return {**switches_env(names), **seeded}


def step_timeout(opts: ChainOptions, mode: str) -> float:
    """--step-timeout, else a default that fits the mode's data (lite modes: 10 minutes)."""
    if opts.step_timeout is not None:
        return opts.step_timeout
    return LITE_STEP_TIMEOUT_S if mode.startswith("lite_") else WHOLE_STEP_TIMEOUT_S


def stage_timeouts(opts: ChainOptions) -> dict[str, float]:
    from tipc.core.steps import Stage

    stages = {s.value for s in Stage}
    out: dict[str, float] = {}
    for item in opts.stage_timeout:
        name, sep, value = item.partition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not sep or name.strip() not in stages or not seconds > 0 or seconds == float("inf"):
            raise UserError(
                f"--stage-timeout {item!r}: expected STAGE=SECONDS, STAGE one of {', '.join(sorted(stages))}"
            )
        out[name.strip()] = seconds
    return out


def stage_args(opts: ChainOptions) -> dict[str, tuple[str, ...]]:
    """--args STAGE=ARGS, parsed (ARGS split as a POSIX shell splits words)."""
    import shlex

    from tipc.core.steps import Stage

    stages = {s.value for s in Stage}
    out: dict[str, tuple[str, ...]] = {}
    for item in opts.stage_args:
        name, sep, value = item.partition("=")
        try:
            words = tuple(shlex.split(value))
        except ValueError as exc:
            raise UserError(f"--args {item!r}: {exc}") from None
        if not sep or name.strip() not in stages or not words:
            raise UserError(f"--args {item!r}: expected STAGE=ARGS, STAGE one of {', '.join(sorted(stages))}")
        out[name.strip()] = out.get(name.strip(), ()) + words
    return out


def with_stage_args(plan: Plan, extra: Mapping[str, tuple[str, ...]]) -> Plan:
    """Every command of a stage with the --args words appended (argv and the status command alike)."""
    import shlex

    if not extra:
        return plan
    steps = []
    for step in plan.steps:
        words = extra.get(step.stage.value, ())
        if not words or step.not_applicable:
            steps.append(step)
            continue
        if step.shell and len(step.argv) >= 3 and step.argv[-2] == "-c":
            argv = (*step.argv[:-1], step.argv[-1] + " " + shlex.join(words))
        else:
            argv = (*step.argv, *words)
        status = (step.status_command + " " + shlex.join(words)) if step.status_command else ""
        steps.append(replace(step, argv=argv, status_command=status))
    return replace(plan, steps=tuple(steps))


def with_stage_timeouts(plan: Plan, timeouts: Mapping[str, float]) -> Plan:
    if not timeouts:
        return plan
    steps = tuple(
        replace(s, timeout_s=timeouts[s.stage.value]) if s.stage.value in timeouts and not s.background else s
        for s in plan.steps
    )
    return replace(plan, steps=steps)


def with_prepare(plan: Plan, opts: ChainOptions) -> tuple[Plan, list[str]]:
    """The plan with the repo's `test_tipc/prepare.sh CONFIG MODE` as its first step (stage prepare), and
    notes listing what prepare.sh would fetch or install. Its failure blocks nothing by itself: what it
    failed to make is named as the cause of the step that fails next."""
    from tipc.core.steps import Stage, Step

    repo = Path(plan.repo)
    script = repo / PREPARE_SCRIPT
    if opts.no_prepare or plan.chain != "train_infer_python" or not script.is_file():
        return plan, []
    try:
        config = Path(plan.config_path).resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        config = str(Path(plan.config_path).resolve())
    notes = []
    try:
        lines = script.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    actions = [
        f"{PREPARE_SCRIPT}:{n}: {line.strip()[:160]}"
        for n, line in enumerate(lines, 1)
        if _NETWORK_ACTION.search(line) and not line.lstrip().startswith("#")
    ]
    if actions:
        where = (
            "allowed (--network)" if opts.network else "not reachable in the sandbox (--network allows it)"
        )
        notes.append(
            f"prepare.sh fetches or installs (network {where}):\n  "
            + "\n  ".join(actions[:12])
            + (f"\n  ... and {len(actions) - 12} more" if len(actions) > 12 else "")
        )
    env: tuple[tuple[str, str], ...] = ()
    if not opts.network:
        env = (("PIP_NO_INDEX", "1"), ("PIP_DISABLE_PIP_VERSION_CHECK", "1"))
    step = Step(
        id="prepare",
        stage=Stage.PREPARE,
        argv=("bash", PREPARE_SCRIPT, config, plan.mode),
        env=env,
        log=f"{plan.output_dir.rstrip('/')}/prepare.log",
        status_command=f"bash {PREPARE_SCRIPT} {config} {plan.mode}",
    )
    return replace(plan, steps=(step, *plan.steps)), notes


def committed_results(plan: Plan) -> list[str]:
    """Notes on status logs the repo itself ships where this run writes its own (a committed
    results_python.log full of "Run successfully" lines): a run never reads or appends to them."""
    notes = []
    repo = Path(plan.repo)
    for rel in dict.fromkeys([plan.results_log, f"{plan.output_dir.rstrip('/')}/results_python.log"]):
        path = repo / rel
        if not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        ok = sum("Run successfully" in line for line in lines)
        notes.append(
            f"the repo ships {rel} ({len(lines)} line(s), {ok} saying 'Run successfully'): it is not this "
            "run's result; tipc ignores it and writes this run's status lines in a fresh file"
        )
    return notes


def enter(
    plan: Plan,
    options: SandboxOptions,
    binds: Mapping[str, str],
    *,
    fresh: bool,
    writable: tuple[Path, ...] = (),
    wait: bool = False,
    python: str | None = None,
    read_only: tuple[Path, ...] = (),
) -> Session:
    """Enter the sandbox of `plan`'s run: key (model, config stem, mode); `binds` maps a role (logs, serving,
    report) to the repo-relative folder that must outlive the run; `python`: the run's interpreter (its
    folders stay reachable whatever the sandbox masks); `read_only`: folders outside the repo tipc reads in
    the sandbox (a --baseline DIR under /tmp or $HOME, which the sandbox covers). A weak sandbox is said in
    one loud line."""
    import sys

    from tipc.execute import sandbox

    key = sandbox.run_key(plan.model_name, plan.config_path, plan.mode)
    session = sandbox.enter(
        Path(plan.repo),
        key,
        binds,
        options,
        fresh=fresh,
        writable=writable,
        wait=wait,
        keep=(*sandbox.python_prefixes(python), *(p for p in read_only if p.is_dir())),
    )
    if session.weaknesses and session.backend != "none":
        sys.stderr.write(weak_line(session.weaknesses) + "\n")
    return session


def weak_line(weaknesses: list[str]) -> str:
    """The one loud line of a run whose sandbox is weaker than tipc's full one."""
    return "tipc: WARNING: WEAK SANDBOX: " + "; ".join(weaknesses)


def check_output_links(repo: Path, output_dir: str) -> None:
    """Refuse (exit 2) an output folder or run folder that a link leads out of the repo, before anything
    is made there."""
    from tipc.execute import sandbox

    repo = repo.resolve()
    for rel in (output_dir, sandbox.RUNS_DIR):
        if rel.strip("/"):
            sandbox.inside_repo(repo, repo / rel.strip("/"))


# ---------------------------------------------------------------- signals

# SIGTERM/SIGHUP as Ctrl-C: one implementation for every verb (tipc.core.interrupts).
stop_signals = interrupts.stop_signals
interrupted_exit = interrupts.interrupted_exit


@dataclass(frozen=True)
class Launch:
    """How a verb runs the sandboxed child it re-runs itself as: by default on this terminal (the CLI);
    a library caller (tipc.api) hears the child's output line by line (`on_line`), within `timeout_s`."""

    on_line: Callable[[str], None] | None = None
    timeout_s: float | None = None


@dataclass(frozen=True)
class ChildOutcome:
    exit_code: int
    document: dict[str, object] | None  # what the child handed back (tipc.execute.handback); None: nothing


def run_child(options: SandboxOptions, launch: Launch | None, *, wanted: bool) -> ChildOutcome:
    """Re-run the command as a child tipc that enters the sandbox; with `wanted`, the child hands its
    result back on a private channel (never its stdout)."""
    from tipc.core.exit_codes import EXIT_INTERNAL
    from tipc.execute import handback, proc, sandbox

    argv = sandbox.reexec_argv(options)
    channel = handback.Channel() if wanted else None
    try:
        env = {**child_env(), **(channel.env if channel is not None else {})}
        fds = channel.fds if channel is not None else ()
        if launch is None or launch.on_line is None:
            code = proc.run_attached(argv, env=env, pass_fds=fds)
        else:
            res = proc.run(
                argv,
                cwd=Path.cwd(),
                env=env,
                timeout_s=launch.timeout_s,
                on_line=launch.on_line,
                pass_fds=fds,
            )
            if res.interrupted:
                raise KeyboardInterrupt
            code = res.exit_code if res.exit_code is not None else EXIT_INTERNAL
        return ChildOutcome(code, channel.received() if channel is not None else None)
    finally:
        if channel is not None:
            channel.close()


def rerun_as_child(
    options: SandboxOptions, launch: Launch | None, hand_back: Callable[[dict[str, object]], None] | None
) -> ChildOutcome:
    """`run_child`, its document passed on to `hand_back` (this process being a child itself, or a library
    caller's); a channel is opened only where someone reads it."""
    child = run_child(options, launch, wanted=hand_back is not None or launch is not None)
    if child.document is not None and hand_back is not None:
        hand_back(child.document)
    return child


def in_child() -> bool:
    """Whether this process is the sandboxed child a verb re-ran itself as (`child_env`)."""
    from tipc.execute.sandbox import CHILD_ENV

    return os.environ.get(CHILD_ENV) == "1"


def child_env() -> dict[str, str]:
    from tipc.execute.sandbox import CHILD_ENV

    return dict(os.environ, **{CHILD_ENV: "1"})


def child_defaults(forced_env: Mapping[str, str]) -> dict[str, str]:
    """What every process a check starts beside the chain (predict/infer, engine workers) must see, as the
    chain's steps do: the --paddle-compat switches and the auto_log shim last on PYTHONPATH."""
    from tipc.execute.compat import pythonpath_with_shim
    from tipc.execute.seeding import SEED_VARIABLES

    # Not the seeding variables: the runner gives them to each step, whose record then names the seed.
    kept = {k: v for k, v in forced_env.items() if k not in SEED_VARIABLES}
    return {**kept, "PYTHONPATH": pythonpath_with_shim(os.environ.get("PYTHONPATH"))}


def plan_to_run(
    planner: Callable[..., Plan],
    opts: ChainOptions,
    repo: Path,
    config: Path,
    overrides: Overrides,
    options: SandboxOptions,
    timeouts: Mapping[str, float],
) -> tuple[Plan, list[str]]:
    """The plan `tipc run` and `tipc check` execute, and notes on prepare.sh: the planner's commands (in a
    sandbox nothing needs redirecting; with --no-sandbox, writes outside the output folder are redirected
    into it, TIPC910 findings), prepare.sh first, then the --args words (so `--args prepare=...` reaches
    prepare.sh too) and the --stage-timeout limits."""
    from tipc.planning.planner import isolate

    if opts.mode is None:
        raise ValueError("plan_to_run: the verb picks the mode first")
    the_plan = planner(config, opts.mode, repo=repo, overrides=overrides, dialect=opts.dialect)
    if options.backend == "none":
        the_plan = isolate(the_plan)
    the_plan, notes = with_prepare(the_plan, opts)
    the_plan = with_stage_args(the_plan, stage_args(opts))
    return with_stage_timeouts(the_plan, timeouts), notes
