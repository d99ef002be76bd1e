"""Execute a Plan for real: one step at a time, real exit codes, timeouts, process-group shutdown.

Every step runs from its argv through `tipc.execute.proc` (a shell only where `Step.shell` says so), in its
own
process group, with stdout+stderr in a log file under the plan's output dir. Outcomes are values: a failing,
crashing or hanging step becomes a StepResult, never an exception. Steps whose inputs did not pass are BLOCKED
(not run). After every step the run record is written atomically, so an interrupted run can be resumed.
Facts the steps do not need (paddle's version, the repo's commit, the host) are gathered beside the first
step, not before it. Nothing here knows about dialects: formats, names and paths all come from the Plan.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tipc.core.causes import Cause
from tipc.core.errors import ConfigError, UserError
from tipc.core.poll import poll
from tipc.core.results import append_status_line, log_field, status_line
from tipc.core.steps import Plan, Stage, Status, Step
from tipc.core.version import __version__
from tipc.execute import lineage, proc
from tipc.execute.monitor import Monitor, host_info
from tipc.execute.observer import NullObserver, Observer
from tipc.execute.own_parts import paddle_version_on_path as _paddle_version_on_path
from tipc.execute.record import RecordWriter, Resources, RunRecord, StepResult, load_record, record_location
from tipc.execute.serving.ready import probe

DEFAULT_STEP_TIMEOUT_S = 1800.0
DEFAULT_READY_TIMEOUT_S = 120.0
TIPC_LOG_DIR = "tipc_logs"
LOCK_FILENAME = ".tipc_run.lock"
_PYTHON_NAME = re.compile(r"^python[0-9.]*$")
# Statuses that mean "this step ran to a conclusion"; --resume keeps them, --rerun-failed keeps only PASSED.
_CONCLUDED = frozenset({Status.PASSED, Status.FAILED, Status.TIMEOUT})
# A dependency in one of these states lets its dependents run (SKIPPED = left out by --only: its outputs are
# expected on disk from an earlier run).
_SATISFIED = frozenset({Status.PASSED, Status.SKIPPED})


Explainer = Callable[[RunRecord, Step, StepResult, Path], Sequence[Cause]]


@dataclass(frozen=True)
class RunOptions:
    """How to run a plan. A background step's `timeout_s` (else `ready_timeout_s`) bounds its readiness wait;
    once ready it runs until its last dependent finishes."""

    step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S  # default per step; Step.timeout_s overrides it
    run_timeout_s: float | None = None  # whole run; steps not started by then are BLOCKED
    python: str | None = None  # force this interpreter for every python step (--python)
    only_stages: tuple[str, ...] = ()  # Stage values to run; the others are SKIPPED
    rerun_failed: bool = False  # reuse PASSED results of the last record of the same config+mode
    resume: bool = False  # reuse every concluded result of the last record (continue an interrupted run)
    no_color: bool = False  # write results_python.log without the ANSI codes
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S  # background steps: deadline to answer on ready_url
    monitor: bool = True  # sample resources (psutil / NVML)
    probe_versions: bool = True  # ask the run's python for paddle's version, git for the commit
    extra_env: tuple[tuple[str, str], ...] = field(default=(("PYTHONUNBUFFERED", "1"),))
    forced_env: tuple[tuple[str, str], ...] = ()  # set for every step over the environment (--paddle-compat)
    log_limit_bytes: int = proc.DEFAULT_LOG_LIMIT  # each step's log keeps its head and tail (--log-limit)
    # Finds the plain causes of a failed step (the record so far, the step, its result, its log file); the
    # commands hand in tipc.judge.causes.explain_step. None: failed steps get no causes here.
    explain: Explainer | None = field(default=None, compare=False)


def _notice(observer: Observer, message: str) -> None:
    notice = getattr(observer, "notice", None)
    if callable(notice):
        notice(message)


def _sanitise(step_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", step_id).strip("_") or "step"


def _rel(repo: Path, path: Path) -> str:
    try:
        return str(path.relative_to(repo))
    except ValueError:
        return str(path)


def _within(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name} (exit {code})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


# ---------------------------------------------------------------- interpreter substitution


def _command_string(step: Step) -> str | None:
    """The shell command text of a shell step (argv = [sh, -c, cmd])."""
    if step.shell and len(step.argv) >= 3 and step.argv[-2] == "-c":
        return step.argv[-1]
    return None


def _interpreter_of(step: Step) -> str | None:
    cmd = _command_string(step)
    if cmd is not None:
        words = cmd.split(None, 1)
        first = words[0] if words else ""
    else:
        first = step.argv[0] if step.argv else ""
    return first if _PYTHON_NAME.match(os.path.basename(first)) else None


def _unusable(interpreter: str) -> str | None:
    """Why `interpreter` cannot run here, or None if it runs (a pyenv shim can be on PATH and still fail)."""
    found = shutil.which(interpreter)
    if found is None:
        return "is not on PATH"
    if sys.executable and os.path.realpath(found) == os.path.realpath(sys.executable):
        return None  # the very binary running tipc now: it runs, no need to start it to find out
    code, out = proc.capture([interpreter, "-c", "pass"], cwd=Path.cwd(), timeout_s=60)
    if code == 0:
        return None
    first = next((ln.strip() for ln in out.splitlines() if ln.strip()), "")
    return f"is on PATH but does not run (exit {code}{': ' + first if first else ''})"


def python_substitutions(plan: Plan, options: RunOptions) -> tuple[dict[str, str], list[str]]:
    """{interpreter as written in the config: interpreter to run} and a notice per substitution.

    `--python` replaces every python interpreter; otherwise only one that cannot run here is replaced, by
    sys.executable, because `python3.7` in a config usually means "the python of that CI image".
    """
    mapping: dict[str, str] = {}
    notes: list[str] = []
    checked: set[str] = set()
    for step in plan.steps:
        written = _interpreter_of(step)
        if written is None or written in checked:
            continue
        checked.add(written)
        if options.python is not None:
            if options.python != written:
                mapping[written] = options.python
                notes.append(f"running '{options.python}' in place of the config's '{written}' (--python)")
            continue
        why = _unusable(written)
        if why is not None:
            mapping[written] = sys.executable
            notes.append(
                f"'{written}' (the config's python) {why}; running {sys.executable} instead "
                "(choose another with --python)"
            )
    return mapping, notes


def missing_interpreters(plan: Plan, python: str | None) -> list[str]:
    """One line per interpreter the plan's commands name that cannot run here, saying what `tipc run` runs
    in its place (as `python_substitutions` decides at run time), or that those steps cannot run."""
    counts: dict[str, int] = {}
    for step in plan.steps:
        written = _interpreter_of(step)
        if written is not None and not step.not_applicable:
            counts[written] = counts.get(written, 0) + 1
    lines: list[str] = []
    for written, n in counts.items():
        why = _unusable(written)
        if why is None:
            continue
        instead = python or sys.executable
        if _unusable(instead) is not None:
            lines.append(
                f"'{written}' (the interpreter of {n} step(s)) {why}: those steps cannot run here; "
                "name one that runs with --python"
            )
            continue
        lines.append(
            f"'{written}' (the interpreter of {n} step(s)) {why}; tipc run runs {instead} in its place "
            "(choose another with --python)"
        )
    return lines


def _substituted(step: Step, mapping: Mapping[str, str]) -> tuple[tuple[str, ...], str]:
    """(argv to run, status command to print) after interpreter substitution."""
    status = step.status_command or shlex.join(step.argv)
    written = _interpreter_of(step)
    if written is None or written not in mapping:
        return step.argv, status
    new = mapping[written]
    if status.startswith(written + " ") or status == written:
        status = new + status[len(written) :]
    cmd = _command_string(step)
    if cmd is not None:
        stripped = cmd.lstrip()
        new_cmd = shlex.quote(new) + stripped[len(written) :]
        return (*step.argv[:-1], new_cmd), status
    return (new, *step.argv[1:]), status


# Standalone scripts run under the step's / run's interpreter (any Python 3.7+; see tipc/execute/probes/).
_PROBES = Path(__file__).resolve().parent / "probes"
_FIND_MODULES = _PROBES / "findmodules.py"  # prints the modules it cannot find, exits 1 if any
_PADDLE_VERSION = _PROBES / "paddleversion.py"  # metadata first, importing paddle only without it

# ---------------------------------------------------------------- facts about the run


# Distribution names as installed folders spell them (`<name>-<version>.dist-info`), GPU build first.
def _is_this_python(python: str) -> bool:
    """Whether `python` is the interpreter running tipc, started the same way (so it sees the same path)."""
    flags = sys.flags
    if not sys.executable or flags.isolated or flags.no_site or flags.ignore_environment:
        return False
    found = shutil.which(python) or python
    # abspath, not realpath: a venv's python is a link to the base one, but sees other packages
    return os.path.abspath(found) == os.path.abspath(sys.executable)


def paddle_version(python: str, cwd: Path, on_start: Callable[[int], None] | None = None) -> str | None:
    """Paddle's version as the run's interpreter sees it (paddle is never imported here).

    For tipc's own interpreter the installed folders on its path say it; otherwise, or when they do not,
    that interpreter is asked in a subprocess.
    """
    if _is_this_python(python):
        version = _paddle_version_on_path(sys.path, cwd)
        if version is not None:
            return version
    code, out = proc.capture([python, str(_PADDLE_VERSION)], cwd=cwd, timeout_s=180, on_start=on_start)
    if code != 0:
        return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    if lines and re.match(r"^\d+\.\d+", lines[-1]):
        return lines[-1]
    return None


def git_commit(repo: Path, on_start: Callable[[int], None] | None = None) -> str | None:
    from tipc.execute import safegit  # the repo's own git config names commands: none of them may run

    if not safegit.available():
        return None
    code, out = safegit.capture(["rev-parse", "HEAD"], cwd=repo, timeout_s=30, on_start=on_start)
    sha = out.strip().splitlines()[-1] if out.strip() else ""
    return sha if code == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def _config_key(plan: Plan) -> tuple[str, str, str, str]:
    # config_path is "as given by the user" (relative to some cwd), so compare by name, model and mode.
    return (os.path.basename(plan.config_path), plan.model_name, plan.mode, plan.chain)


def record_path(plan: Plan) -> Path:
    return Path(plan.repo) / record_location(plan)


def find_record(repo: Path, plan: Plan) -> Path | None:
    """The run record of the same config and mode under `repo`, if a readable one exists."""
    path = repo / record_location(plan)
    if not path.is_file():
        return None
    try:
        old = load_record(path)
    except ConfigError:
        return None
    return path if _config_key(old.plan) == _config_key(plan) else None


# ---------------------------------------------------------------- readiness


class _Facts:
    """Facts for the record that steps do not need: paddle's version, the repo's commit, the host.

    Gathered in a thread beside the first step rather than before it (together ~0.1 s: a python start-up,
    a git call, importing psutil and NVML), so the chain does not wait for them.
    """

    def __init__(
        self, python: str, repo: Path, probe_versions: bool, env: Mapping[str, str] | None = None
    ) -> None:
        self.python = python
        self.repo = repo
        self.probe_versions = probe_versions
        self.env = env
        # tipc.execute.envinfo, as the steps' interpreter sees it
        self.environment: dict[str, object] | None = None
        self.paddle_version: str | None = None
        self.git_commit: str | None = None
        self.host: dict[str, object] = {}
        self._running: int | None = None  # pid of the probe running now
        self._cancelled = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._gather, name="tipc-facts", daemon=True)

    def start(self) -> _Facts:
        self._thread.start()
        return self

    def _gather(self) -> None:
        with contextlib.suppress(Exception):  # a fact we cannot learn stays None; it never fails the run
            self.host = host_info()
        if not self.probe_versions:
            return
        with contextlib.suppress(Exception):
            self.paddle_version = paddle_version(self.python, self.repo, on_start=self._started)
        self._ended()
        if self._cancelled:
            return
        with contextlib.suppress(Exception):
            self.git_commit = git_commit(self.repo, on_start=self._started)
        self._ended()
        if self._cancelled:
            return
        with contextlib.suppress(Exception):
            from tipc.execute.envinfo import collect

            self.environment = collect(
                self.python, cwd=self.repo, env=self.env, on_start=self._started
            ).to_json()
        self._ended()

    def _started(self, pid: int) -> None:
        with self._lock:
            self._running = pid

    def _ended(self) -> None:
        with self._lock:
            self._running = None

    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout_s: float | None = None) -> bool:
        self._thread.join(timeout_s)
        return self.done()

    def cancel(self) -> None:
        """Stop the probe running now, if any (its own process group: nothing else is touched)."""
        with self._lock:
            self._cancelled = True
            if self._running is not None:
                proc.kill_group(self._running, grace_s=0.5)


@dataclass
class _Server:
    step: Step
    index: int
    handle: proc.Background
    monitor: Callable[[], Resources]
    result: StepResult
    log: Path


@dataclass(frozen=True)
class _Launched:
    """A background step's process, just started: what its readiness wait and outcome need."""

    handle: proc.Background
    stop_monitor: Callable[[], Resources]
    base: StepResult  # FAILED, with its start time and pid
    port: int | None  # the port its ready_url names on this machine


def _server_refused(step: Step, cwd: Path, base: StepResult) -> StepResult | None:
    """Why a background step cannot even start: a missing working directory or an unusable ready_url."""
    if not cwd.is_dir():
        return replace(base, reason=f"working directory {step.cwd} does not exist")
    if step.ready_url and urllib.parse.urlsplit(step.ready_url).scheme not in ("http", "https", "tcp"):
        return replace(
            base, reason=f"ready_url {step.ready_url!r}: expected http://, https:// or tcp://host:port"
        )
    return None


def _port_taken(port: int | None, base: StepResult) -> StepResult | None:
    """FAILED if something already listens on the server's port before it starts."""
    from tipc.execute.sandbox import ports

    holder = ports.taken_by(port) if port is not None and ports.readable() else None
    if port is not None and holder is not None:
        # Whatever answers there is not this run's server, which cannot bind the port: never a pass.
        return replace(
            base,
            started=time.time(),
            ended=time.time(),
            reason=f"port {port} was already in use before the server started (held by {holder}); "
            "the server cannot bind it and what answers there is not the repo's server",
        )
    return None


def _not_ready(launched: _Launched, url: str | None, limit: float) -> StepResult:
    """A server that exited before it answered (FAILED) or never answered in time (TIMEOUT), stopped."""
    code = launched.handle.poll()
    with proc.shielded():
        stopped = launched.handle.stop()
    resources = launched.stop_monitor()
    base = replace(launched.base, log_dropped=launched.handle.log_dropped)
    if code is not None:
        return replace(
            base,
            ended=time.time(),
            exit_code=code,
            resources=resources,
            reason=f"server {_describe_exit(code)} before it answered at {url}",
        )
    return replace(
        base,
        status=Status.TIMEOUT,
        ended=time.time(),
        exit_code=None,
        resources=resources,
        reason=f"server never answered at {url} within {limit:g} s; stopped (exit {stopped})",
    )


class _Execution:
    def __init__(self, plan: Plan, options: RunOptions, observer: Observer) -> None:
        self.plan = plan
        self.options = options
        self.observer = observer
        self.repo = Path(plan.repo).resolve()
        self.out_dir = (self.repo / plan.output_dir).resolve()
        self.record_file = (self.repo / record_location(plan)).resolve()
        self.total = len(plan.steps)
        self.deadline = (
            None if options.run_timeout_s is None else time.monotonic() + max(0.0, options.run_timeout_s)
        )
        self.servers: dict[str, _Server] = {}
        self.last_dependent: dict[str, int] = {}
        for i, step in enumerate(plan.steps):
            for dep in step.depends_on:
                self.last_dependent[dep] = i
        # --only still starts the servers that a selected step talks to
        self.needed_servers = {
            dep
            for s in plan.steps
            if s.stage.value in options.only_stages
            for dep in s.depends_on
            if any(t.id == dep and t.background for t in plan.steps)
        }
        self.unmet_skips: set[str] = set()  # SKIPPED for a missing module: their dependents are skipped too
        self.requirement_cache: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self.notes: list[str] = []
        self.results_log = self._results_log_path()
        self.mapping: dict[str, str] = {}
        self.record: RunRecord
        self.writer = RecordWriter(self.record_file)
        # beside the record; tipc.judge.checks.lineage finds it there
        self.lineage_dir = lineage.dir_for(plan)
        # what each step wrote, as the sandbox's copy-on-write layers show it (native writers included)
        self.layer_watch = lineage.LayerWatch(_sandbox_layers(), ignore=(self.lineage_dir, self.record_file))
        self.facts: _Facts | None = None  # merged into the record once gathered
        self.first_python: str | None = None  # the first python the plan's steps name, if any

    # ---- paths

    def _results_log_path(self) -> Path:
        wanted = (self.repo / self.plan.results_log).resolve()
        if _within(wanted, self.out_dir):
            return wanted
        moved = self.out_dir / wanted.name
        self.notes.append(
            f"results log {self.plan.results_log} is outside the output dir; writing {_rel(self.repo, moved)}"
        )
        return moved

    def _log_path(self, step: Step) -> Path:
        named: str | None = getattr(step, "status_log", None)
        if not step.log and named and _within(self.repo / named, self.out_dir):
            # A console step whose status line names a log (PaddleOCR's copied train log): write the output
            # there, so the path in results_python.log points at a real file.
            return (self.repo / named).resolve()
        if step.log:
            wanted = (self.repo / step.log).resolve()
            if _within(wanted, self.out_dir):
                return wanted
            self._note(f"{step.id}: log {step.log} is outside the output dir; logging under {TIPC_LOG_DIR}/")
        return self.out_dir / TIPC_LOG_DIR / f"{_sanitise(step.id)}.log"

    # ---- record keeping

    def _note(self, message: str) -> None:
        if message in self.notes:
            return
        self.notes.append(message)
        _notice(self.observer, message)
        self.record = replace(self.record, notes=tuple(dict.fromkeys(self.notes)))

    def _save(self, result: StepResult) -> None:
        self.record = self.record.with_result(result)
        self._merge_facts(wait=False)
        self.record = replace(self.record, notes=tuple(dict.fromkeys(self.notes)))
        self.writer.write(self.record)

    def _merge_facts(self, *, wait: bool, timeout_s: float | None = None) -> None:
        facts = self.facts
        if facts is None or not (facts.wait(timeout_s) if wait else facts.done()):
            return
        self.facts = None
        self.record = replace(
            self.record,
            paddle_version=facts.paddle_version,
            git_commit=facts.git_commit,
            host=facts.host,
            environment=facts.environment,
        )
        if facts.probe_versions and facts.paddle_version is None and self.first_python is not None:
            self._note(
                f"paddle is not importable by {facts.python}: steps that import it will fail "
                "(pick the interpreter with --python)"
            )

    def _status_log(self, step: Step, result: StepResult) -> str:
        # `status_log` (newer Step field): the log the script names in its status line when it differs from
        # the one receiving the output (e.g. PaddleOCR's copied train log).
        named: str | None = getattr(step, "status_log", None)
        return named or step.log or result.log or _rel(self.repo, self._log_path(step))

    def _status_line(self, step: Step, result: StepResult, status_command: str) -> None:
        if result.reused or result.status in (Status.SKIPPED, Status.INTERRUPTED):
            return
        if step.stage is Stage.PREPARE:
            return  # prepare.sh is not a command of the script's chain: its log has no line for it
        line = status_line(
            self.plan.status_format,
            ok=result.status is Status.PASSED,
            command=status_command,
            model_name=self.plan.model_name,
            log_path=log_field(self.plan.status_format, self._status_log(step, result), str(self.repo)),
            color=not self.options.no_color,
        )
        try:
            append_status_line(self.results_log, line)
        except OSError as exc:  # the repo's code may have put a link or a folder there
            self._note(
                f"cannot write the status line of {step.id} to {self.results_log}: {exc.strerror or exc}"
            )

    def _finish(self, index: int, step: Step, result: StepResult, status_command: str) -> None:
        result = self._explained(step, result)
        if result.started is not None and not result.reused:
            with contextlib.suppress(OSError):  # lineage is evidence for checks; it never fails the run
                self.layer_watch.finish(self.lineage_dir, step.id)
                lineage.finish_step(self.lineage_dir, step.id)
        self._save(result)
        self._status_line(step, result, status_command)
        self.observer.step_finished(index, self.total, step, result)

    # ---- environment

    def _env(self, step: Step) -> tuple[dict[str, str], tuple[tuple[str, str | None], ...]]:
        base = proc.base_env()
        extra = {k: v for k, v in self.options.extra_env if k not in base and k not in step.unset_env}
        wanted = {**extra, **self._forced_env(), **step.env_dict}
        # Every step's Python processes record the files they read and write (tipc.execute.lineage); the
        # recorder
        # goes first on PYTHONPATH, after it whatever the step would have had.
        inherited = None if "PYTHONPATH" in step.unset_env else base.get("PYTHONPATH")
        wanted.update(lineage.start_step(self.lineage_dir, step.id, wanted.get("PYTHONPATH", inherited)))
        if step.stage is not Stage.PREPARE:
            from tipc.execute.compat import pythonpath_with_shim

            # AutoLog is not on PyPI: a compatible module, last on the path, so an installed one wins.
            wanted["PYTHONPATH"] = pythonpath_with_shim(wanted.get("PYTHONPATH"))
        if step.stage is Stage.PREPARE:
            shims = self._interpreter_shims()
            if shims is not None:
                wanted["PATH"] = f"{shims}{os.pathsep}{base.get('PATH', '')}"
        env = proc.build_env(base, wanted, step.unset_env)
        delta: list[tuple[str, str | None]] = [(k, v) for k, v in sorted(wanted.items()) if base.get(k) != v]
        delta += [(k, None) for k in step.unset_env if k in base and k not in wanted]
        return env, tuple(delta)

    def _timeout(self, step: Step) -> tuple[float, str]:
        limit = step.timeout_s if step.timeout_s is not None else self.options.step_timeout_s
        why = f"the step limit of {limit:g} s"
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining < limit:
                return max(0.0, remaining), f"the run limit of {self.options.run_timeout_s:g} s"
        return limit, why

    # ---- the gate before a step

    def _gate(self, step: Step) -> StepResult | None:
        """A SKIPPED/BLOCKED result if `step` must not run, else None."""
        not_applicable: str = getattr(step, "not_applicable", "")
        if not_applicable:
            self.unmet_skips.add(step.id)  # its dependents are skipped with this reason too
            return StepResult(step.id, Status.SKIPPED, reason=f"not applicable: {not_applicable}")
        only = self.options.only_stages
        if only and step.stage.value not in only and step.id not in self.needed_servers:
            return StepResult(
                step.id, Status.SKIPPED, reason=f"stage {step.stage.value} not in --only {','.join(only)}"
            )
        for dep in step.depends_on:
            server = self.servers.get(dep)
            if server is not None and server.handle.poll() is not None:
                self._stop_server(dep)  # it died while its dependents ran: record that before blocking
            dep_result = self.record.result(dep)
            if dep in self.unmet_skips and dep_result is not None:
                self.unmet_skips.add(step.id)  # and so on down the chain: infer after a skipped export
                return StepResult(
                    step.id,
                    Status.SKIPPED,
                    reason=f"not run: its input step {dep} was skipped ({dep_result.reason})",
                )
            if dep_result is None:
                known = any(s.id == dep for s in self.plan.steps)
                why = "has not run" if known else "is not a step of this plan"
                return StepResult(step.id, Status.BLOCKED, reason=f"not run: its input step {dep} {why}")
            if dep_result.status not in _SATISFIED:
                root = dep_result.reason.split("root cause: ", 1)
                cause = (
                    f"root cause: {root[1]}"
                    if len(root) == 2
                    else f"root cause: {dep} {dep_result.status.value}"
                )
                return StepResult(
                    step.id,
                    Status.BLOCKED,
                    reason=f"not run: its input step {dep} did not pass ({dep_result.status.value}); {cause}",
                )
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return StepResult(
                step.id,
                Status.BLOCKED,
                reason=f"not run: the run limit of {self.options.run_timeout_s:g} s was reached",
            )
        unmet = self._unmet_requirement(step)
        if unmet is not None:
            self.unmet_skips.add(step.id)
            return StepResult(step.id, Status.SKIPPED, reason=unmet)
        return None

    def _unmet_requirement(self, step: Step) -> str | None:
        """Why `step` cannot run here (a module its interpreter cannot import), or None.

        `requires_modules` / `requires_reason` are newer Step fields (e.g. Paddle Serving steps); the step's
        own interpreter is asked. If it cannot even start, None: the step then runs and fails with the real
        error.
        """
        modules: tuple[str, ...] = tuple(getattr(step, "requires_modules", ()) or ())
        if not modules:
            return None
        written = _interpreter_of(step)
        interpreter = self.mapping.get(written, written) if written is not None else sys.executable
        key = (interpreter, modules)
        if key not in self.requirement_cache:
            code, out = proc.capture(
                [interpreter, str(_FIND_MODULES), *modules], cwd=self.repo, timeout_s=120
            )
            lines = out.strip().splitlines()
            self.requirement_cache[key] = lines[-1] if code == 1 and lines else None
        missing = self.requirement_cache[key]
        if missing is None:
            return None
        why: str = (
            getattr(step, "requires_reason", "") or f"{interpreter} cannot import a module this step needs"
        )
        return f"{why} [needs {', '.join(missing.split())}]"

    def _fresh_results_log(self) -> None:
        """In a sandbox, this run's status lines start a new results log: one the repo ships (a committed
        results_python.log of "Run successfully" lines) stays in the committed tree, never appended to."""
        from tipc.execute import sandbox

        session = sandbox.current()
        if session is None or session.backend == "none" or self.options.resume or self.options.rerun_failed:
            return
        with contextlib.suppress(OSError):
            if self.results_log.is_file():
                self.results_log.unlink()

    def _explained(self, step: Step, result: StepResult) -> StepResult:
        """A failed step with its plain causes (RunOptions.explain), root cause first."""
        explain = self.options.explain
        if explain is None or result.reused or result.status not in _DIAGNOSED:
            return result
        # The interpreter's Paddle version is a precondition of some causes: wait for the facts (a failed
        # step has already stopped, so nothing else waits).
        self._merge_facts(wait=True, timeout_s=120.0)
        try:
            found = tuple(explain(self.record, step, result, self._log_path(step)))
        except Exception as exc:  # a broken catalogue never breaks the run; the log tail still shows
            self._note(f"{step.id}: its causes could not be found ({type(exc).__name__}: {exc})")
            return result
        return replace(result, causes=(*result.causes, *found))

    def _own_part(self, argv: tuple[str, ...], env: dict[str, str]) -> tuple[tuple[str, ...], dict[str, str]]:
        """A step that runs tipc itself (`python -m tipc serve ...`: a repo serving with tipc's server) runs
        it where it can run (tipc.execute.own_parts); where nowhere, as written, and the reason is noted."""
        from tipc.execute import own_parts

        try:
            placed = own_parts.for_command(argv)
        except own_parts.PartsMissing as exc:
            self._note(str(exc))
            return argv, env
        if placed is None:
            return argv, env
        if placed.note:
            self._note(placed.note)
        module_at = list(argv).index("-m") + 1
        return tuple(placed.argv(*argv[module_at:])), own_parts.step_env(env, placed)

    def _forced_env(self) -> dict[str, str]:
        """--paddle-compat switches: set for every step, whatever the environment says."""
        return dict(self.options.forced_env)

    def _interpreter_shims(self) -> Path | None:
        """A folder putting the config's python (e.g. python3.7) on PATH as the interpreter the chain runs,
        for prepare.sh, which calls it from bash where argv substitution cannot reach."""
        if not self.mapping:
            return None
        folder = self.out_dir / "tipc_bin"
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            for written, new in self.mapping.items():
                link = folder / os.path.basename(written)
                target = shutil.which(new) or new
                if link.is_symlink() or link.exists():
                    link.unlink()
                link.symlink_to(target)
            return folder
        return None

    # ---- running one step

    def _run_step(self, index: int, step: Step) -> StepResult:
        argv, _ = _substituted(step, self.mapping)
        log = self._log_path(step)
        log_rel = _rel(self.repo, log)
        env, delta = self._env(step)
        argv, env = self._own_part(argv, env)
        cwd = self.repo / step.cwd
        if not cwd.is_dir():
            return StepResult(
                step.id,
                Status.FAILED,
                log=log_rel,
                argv=argv,
                env_delta=delta,
                reason=f"working directory {step.cwd} does not exist",
            )
        timeout_s, limit_why = self._timeout(step)
        monitors: list[Monitor] = []
        pids: list[int] = []

        def started(pid: int) -> None:
            pids.append(pid)
            if self.options.monitor:
                with contextlib.suppress(Exception):  # no sampling is better than a step left running
                    monitors.append(Monitor(pid).start())

        def output(line: str) -> None:
            self.observer.step_output(step, line)

        watch = _DiskWatch()

        def begun(pid: int) -> None:
            started(pid)
            watch.start(pid)

        try:
            res = proc.run(
                argv,
                cwd=cwd,
                env=env,
                timeout_s=timeout_s,
                log_path=log,
                on_line=output,
                on_start=begun,
                label=step.id,
                log_limit=self.options.log_limit_bytes,
            )
        except OSError as exc:
            with contextlib.suppress(OSError):  # the log path itself may be what failed (a planted link)
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_text(f"tipc: cannot start {argv[0]!r}: {exc}\n", encoding="utf-8")
            return StepResult(
                step.id,
                Status.FAILED,
                started=time.time(),
                ended=time.time(),
                log=log_rel,
                argv=argv,
                env_delta=delta,
                reason=f"cannot start {argv[0]!r}: {exc.strerror or exc}",
            )
        finally:
            watch.stop()
        resources = Resources()
        if monitors:
            resources = monitors[0].stop()
        limits_hit = (*_limits_hit(), *_sandbox_causes(res.denied, watch.hit()))
        if res.interrupted:
            status, reason = Status.INTERRUPTED, "interrupted (Ctrl-C); its process group was stopped"
        elif res.timed_out:
            status, reason = (
                Status.TIMEOUT,
                f"timed out after {timeout_s:g} s ({limit_why}); its process group was stopped",
            )
        elif watch.hit() is not None:
            status, reason = Status.FAILED, f"stopped at the disk limit: {watch.hit()}"
        elif res.exit_code == 0:
            status, reason = Status.PASSED, ""
        else:
            status, reason = Status.FAILED, _describe_exit(res.exit_code if res.exit_code is not None else -1)
        return StepResult(
            step.id,
            status,
            exit_code=res.exit_code,
            started=res.started,
            ended=res.ended,
            log=log_rel,
            reason=reason,
            argv=argv,
            env_delta=delta,
            resources=resources,
            pid=res.pid,
            causes=limits_hit,
            log_dropped=res.log_dropped,
        )

    # ---- background steps

    def _start_server(self, index: int, step: Step) -> StepResult:
        argv, _ = _substituted(step, self.mapping)
        log = self._log_path(step)
        log_rel = _rel(self.repo, log)
        env, delta = self._env(step)
        argv, env = self._own_part(argv, env)
        cwd = self.repo / step.cwd
        base = StepResult(step.id, Status.FAILED, log=log_rel, argv=argv, env_delta=delta)
        refused = _server_refused(step, cwd, base)
        if refused is not None:
            return refused
        from tipc.execute.sandbox import ports

        port = ports.local_port(step.ready_url) if step.ready_url else None
        taken = _port_taken(port, base)
        if taken is not None:
            return taken
        started = time.time()
        try:
            handle = proc.Background(
                argv, cwd=cwd, env=env, log_path=log, log_limit=self.options.log_limit_bytes, label=step.id
            )
        except OSError as exc:
            return replace(
                base,
                started=started,
                ended=time.time(),
                reason=f"cannot start {argv[0]!r}: {exc.strerror or exc}",
            )
        launched = _Launched(
            handle, self._server_monitor(handle.pid), replace(base, started=started, pid=handle.pid), port
        )
        limit = self._ready_limit(step)
        t0 = time.monotonic()
        ready = self._await_ready(step, launched, limit)
        return self._server_outcome(index, step, log, launched, ready, limit, t0)

    def _server_monitor(self, pid: int) -> Callable[[], Resources]:
        """Stops the server's resource sampling and gives its numbers (nothing is sampled without monitor)."""
        if not self.options.monitor:
            return Resources
        return Monitor(pid).start().stop

    def _ready_limit(self, step: Step) -> float:
        """How long a background step may take to answer (its timeout_s, else ready_timeout_s), within the
        run limit."""
        limit = step.timeout_s if step.timeout_s is not None else self.options.ready_timeout_s
        if self.deadline is not None:
            limit = min(limit, max(0.0, self.deadline - time.monotonic()))
        return limit

    def _await_ready(self, step: Step, launched: _Launched, limit: float) -> bool:
        """Poll the step's ready_url until it answers, the server exits, or the limit passes (no ready_url:
        ready at once). Interrupted, the server and its sampling are stopped before the interrupt goes on."""
        url = step.ready_url
        ready = url is None
        if url is None:
            self.notes.append(f"{step.id}: background step without ready_url; not polled for readiness")
        handle = launched.handle
        try:
            if not ready:  # until it answers, exits, or the limit passes
                ready = bool(
                    poll(
                        lambda left: probe(url or "", min(2.0, left)) or None,
                        limit,
                        stop=lambda: handle.poll() is not None,
                        interval_s=0.05,
                    ).value
                )
        except BaseException:
            with proc.shielded():
                handle.stop()
                launched.stop_monitor()
            raise
        return ready

    def _server_outcome(
        self,
        index: int,
        step: Step,
        log: Path,
        launched: _Launched,
        ready: bool,
        limit: float,
        t0: float,
    ) -> StepResult:
        """PASSED (and kept running until its last dependent is done) if it answered and holds its port;
        else stopped, with why."""
        from tipc.execute.sandbox import ports

        handle, url = launched.handle, step.ready_url
        foreign = None
        if ready and handle.poll() is None and launched.port is not None:
            foreign = ports.held_by_others(launched.port, handle.tree())
        if foreign is not None:
            with proc.shielded():
                stopped = handle.stop()
            return replace(
                launched.base,
                ended=time.time(),
                exit_code=stopped,
                resources=launched.stop_monitor(),
                reason=f"something answered at {url}, but the port is not held by the server tipc started "
                f"(held by {foreign}); the server is not ready",
            )
        if ready and handle.poll() is None:
            waited = time.monotonic() - t0
            result = replace(
                launched.base,
                status=Status.PASSED,
                reason=f"running; ready after {waited:.1f} s" + (f" at {url}" if url else ""),
            )
            self.servers[step.id] = _Server(step, index, handle, launched.stop_monitor, result, log)
            return result
        return _not_ready(launched, url, limit)

    def _stop_server(self, step_id: str, *, interrupted: bool = False) -> None:
        server = self.servers.pop(step_id, None)
        if server is None:
            return
        died = server.handle.poll()
        with proc.shielded():
            code = server.handle.stop()
        resources = server.monitor()
        if died is not None:
            result = replace(
                server.result,
                log_dropped=server.handle.log_dropped,
                status=Status.FAILED,
                exit_code=died,
                ended=time.time(),
                resources=resources,
                reason=f"server {_describe_exit(died)} while its dependents ran",
            )
        else:
            why = "the run was interrupted" if interrupted else "its last dependent finished"
            result = replace(
                server.result,
                log_dropped=server.handle.log_dropped,
                status=Status.PASSED,
                exit_code=code,
                ended=time.time(),
                resources=resources,
                reason=f"{server.result.reason.replace('running; ', '')}; stopped by tipc after {why}",
            )
        _, status_command = _substituted(server.step, self.mapping)
        self._finish(server.index, server.step, result, status_command)

    def _stop_servers_done_with(self, index: int) -> None:
        for sid in list(self.servers):
            if self.last_dependent.get(sid, -1) <= index:
                self._stop_server(sid)

    # ---- the whole run

    def previous_results(self) -> dict[str, StepResult]:
        if not (self.options.resume or self.options.rerun_failed) or not self.record_file.is_file():
            return {}
        try:
            old = load_record(self.record_file)
        except ConfigError as exc:
            self.notes.append(f"cannot reuse the previous record: {exc.render()}")
            return {}
        if _config_key(old.plan) != _config_key(self.plan):
            self.notes.append("the previous record is of another config or mode; running every step")
            return {}
        keep = _CONCLUDED if self.options.resume else frozenset({Status.PASSED})
        old_steps = {s.id: s for s in old.plan.steps}
        reusable: dict[str, StepResult] = {}
        for step in self.plan.steps:
            prev = old.result(step.id)
            before = old_steps.get(step.id)
            if prev is None or before is None or step.background:
                continue
            if prev.status in keep and before.argv == step.argv and before.env == step.env:
                reusable[step.id] = replace(prev, reused=True)
        return reusable

    def run(self) -> RunRecord:
        reusable = self._begin()
        current: tuple[int, Step] | None = None
        interrupted = False
        try:
            for index, step in enumerate(self.plan.steps, start=1):
                current = (index, step)
                self._next(index, step, reusable)
                current = None
            for sid in list(self.servers):
                self._stop_server(sid)
        except KeyboardInterrupt:
            interrupted = True
            self._interrupted(current)
        finally:
            self._close(interrupted=interrupted)
        self.observer.plan_finished(self.plan, self.record)
        return self.record

    def _begin(self) -> dict[str, StepResult]:
        """Folders, interpreter substitution, the first record, facts gathering; the results to reuse."""
        plan, options = self.plan, self.options
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.record_file.parent.mkdir(parents=True, exist_ok=True)
        reusable = self.previous_results()
        self.mapping, subst_notes = python_substitutions(plan, options)
        self.notes.extend(subst_notes)
        for note in self.notes:
            _notice(self.observer, note)
        self.first_python, run_python = self._run_python()
        self._fresh_results_log()
        self.record = RunRecord(
            plan=plan,
            results=(),
            started=time.time(),
            tipc_version=__version__,
            python=run_python,
            notes=tuple(self.notes),
        )
        self.writer.write(self.record)
        facts_env = {**proc.base_env(), **dict(options.extra_env), **dict(options.forced_env)}
        self.facts = _Facts(run_python, self.repo, options.probe_versions, facts_env).start()
        self.observer.plan_started(plan)
        return reusable

    def _run_python(self) -> tuple[str | None, str]:
        """The first python the plan's steps name, and the interpreter the run reports (substituted)."""
        interpreters = [_interpreter_of(s) for s in self.plan.steps]
        first = next((p for p in interpreters if p is not None), None)
        run_python = self.mapping.get(first, first) if first is not None else sys.executable
        return first, shutil.which(run_python) or run_python

    def _next(self, index: int, step: Step, reusable: Mapping[str, StepResult]) -> None:
        """Reuse, gate or run one step; a step Ctrl-C cut short is recorded, then KeyboardInterrupt raised."""
        _, status_command = _substituted(step, self.mapping)
        if step.id in reusable:
            self._finish(index, step, reusable[step.id], status_command)
            return
        gated = self._gate(step)
        if gated is not None:
            self._finish(index, step, gated, status_command)
            self._stop_servers_done_with(index - 1)
            return
        self.observer.step_started(index, self.total, step)
        with contextlib.suppress(OSError):
            self.layer_watch.start()
        if step.background:
            result = self._start_server(index, step)
            if step.id in self.servers:
                self._save(result)  # provisional; the final status is written when it stops
                self.observer.step_finished(index, self.total, step, result)
            else:
                self._finish(index, step, result, status_command)
        else:
            result = self._run_step(index, step)
            self._finish(index, step, result, status_command)
            if result.status is Status.INTERRUPTED:
                raise KeyboardInterrupt
        self._stop_servers_done_with(index - 1)

    def _interrupted(self, current: tuple[int, Step] | None) -> None:
        """After Ctrl-C: the facts probes cancelled, the step it cut short recorded, the servers stopped."""
        with proc.shielded():
            if self.facts is not None:
                self.facts.cancel()
            if current is not None and self.record.result(current[1].id) is None:
                index, step = current
                self._finish(
                    index,
                    step,
                    StepResult(step.id, Status.INTERRUPTED, reason="interrupted (Ctrl-C)"),
                    "",
                )
            for sid in list(self.servers):
                self._stop_server(sid, interrupted=True)

    def _close(self, *, interrupted: bool) -> None:
        """Whatever happened: servers stopped, facts merged, the final record written."""
        with proc.shielded():
            for sid in list(self.servers):
                self._stop_server(sid, interrupted=True)
            # The probes end by themselves (each has a time limit); after Ctrl-C they are not waited for.
            self._merge_facts(wait=True, timeout_s=2.0 if interrupted else None)
            self.record = replace(
                self.record,
                ended=time.time(),
                notes=tuple(dict.fromkeys(self.notes)),
                sandbox=_sandbox_json(),
            )
            self.writer.write(self.record)


_DIAGNOSED = frozenset({Status.FAILED, Status.TIMEOUT})


def _limits_hit() -> tuple[Cause, ...]:
    """A cause per sandbox limit (memory, processes) the step just ran into."""
    from tipc.execute import sandbox

    session = sandbox.current()
    limits = getattr(session, "limits", None)
    if limits is None:
        return ()
    return tuple(
        Cause("resource-limit", text, "raise the limit, or make the step use less", None, "")
        for text in limits.hit_since_last()
    )


def _sandbox_causes(denied: Sequence[str], disk: str | None) -> tuple[Cause, ...]:
    """The step attempted calls the sandbox denies (it keeps its status: the attempt is the finding), or
    it went over the run's disk limit."""
    out: list[Cause] = []
    if denied:
        out.append(
            Cause(
                "sandbox-violation",
                f"attempted system calls the sandbox denies: {', '.join(denied)} (each answered EPERM)",
                "a chain never needs them: read what the step runs (rule sandbox.violations)",
                None,
                ", ".join(denied),
            )
        )
    if disk is not None:
        out.append(Cause("disk-limit", disk, "write less, or raise --disk-limit", "--disk-limit", ""))
    return tuple(out)


class _DiskWatch:
    """While a step runs: measure what the run wrote every `interval_s` and stop the step's process group
    when it is over --disk-limit; after it: measure once more. `hit()` is the cause (None: within)."""

    def __init__(self) -> None:
        from tipc.execute import sandbox

        session = sandbox.current()
        self.disk = getattr(session, "disk", None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._hit: str | None = None

    def start(self, pid: int) -> None:
        if self.disk is not None:
            self._thread = threading.Thread(target=self._loop, args=(pid,), name="tipc-disk", daemon=True)
            self._thread.start()

    def _loop(self, pid: int) -> None:
        assert self.disk is not None
        while not self._stop.wait(self.disk.interval_s()):
            if self._measure():
                proc.kill_group(pid, grace_s=1.0)
                return

    def _measure(self) -> bool:
        assert self.disk is not None
        with contextlib.suppress(OSError):
            used = self.disk.over()
            if used is not None:
                self._hit = self.disk.cause(used)
        return self._hit is not None

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.disk is not None and self._hit is None:
            self._measure()

    def hit(self) -> str | None:
        return self._hit


def _sandbox_layers() -> list[lineage.Layer]:
    """The copy-on-write layers of the sandbox this process runs in (none outside an overlay)."""
    from tipc.execute import sandbox

    session = sandbox.current()
    return [lineage.Layer(real, view) for real, view in session.layers()] if session is not None else []


def _sandbox_json() -> dict[str, object] | None:
    from tipc.execute import sandbox

    session = sandbox.current()
    if session is None:
        return None
    with contextlib.suppress(OSError):
        return session.to_json()
    return session.to_json(changes=())


def execute(plan: Plan, options: RunOptions = RunOptions(), observer: Observer | None = None) -> RunRecord:
    """Run every step of `plan`; returns the run record (also written to `<repo>/<record_location(plan)>`).

    Ctrl-C stops the running step's process group, records it INTERRUPTED and returns the record; callers map
    that to exit 130 (see `exit_code`).
    """
    execution = _Execution(plan, options, observer if observer is not None else NullObserver())
    execution.out_dir.mkdir(parents=True, exist_ok=True)
    # The lock stays per output dir, not per record: runs sharing an output dir still share its logs.
    with _exclusive(execution.out_dir / LOCK_FILENAME):
        return execution.run()


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One run per output dir at a time: two runs would interleave logs and overwrite each other's record."""
    import fcntl

    with open(lock_path, "a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise UserError(
                f"{lock_path.parent}: another tipc run is using this output folder ({holder}); "
                "wait for it or stop it first"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def exit_code(record: RunRecord) -> int:
    """0 all passed (or skipped), 130 interrupted, 1 anything failed, timed out or was blocked.

    The prepare step (the repo's prepare.sh) counts only when interrupted: what it fails to make shows in the
    step that needs it, and offline it often fails on a download the mode does not use."""
    prepare = {s.id for s in record.plan.steps if s.stage is Stage.PREPARE}
    statuses = {
        r.status for r in record.results if r.step_id not in prepare or r.status is Status.INTERRUPTED
    }
    if Status.INTERRUPTED in statuses:
        return 130
    return 0 if statuses <= _SATISFIED else 1
