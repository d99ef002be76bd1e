"""Plans observed from the repo's own script: the pure half (the effectful half, which runs the script in
the sandbox, is tipc.execute.observation).

    prepare(config, mode, *, repo, overrides, script, dialect, tools) -> Prepared   what to run, how
    stand_ins(tools, record, names, python) -> {path: (text, mode)}                  the recording stand-ins
    interpret(prepared, ran) -> Observation                                          what it ran, as a plan
    cross_check(profile, observed) -> list[Finding]
    plan_from(profile, obs, ...) -> Plan                  what `tipc run` / `tipc check` execute

The observation runs `bash test_tipc/test_train_inference_python.sh CONFIG MODE` in a copy-on-write view of
the repo (these scripts `sed -i`, `mkdir` and append logs), inside the sandbox, with recording stand-ins first
on PATH for every interpreter name the script may call, an instant `sleep`, and inert stand-ins for tools that
must not run (`nvidia-smi`, `wget`, `pip`, `git`...). Each stand-in call appends its argv, working directory,
environment and the files its stdout/stderr point at as one JSON line; the script's status lines give the
command text it logs. Everything read back is data a hostile script may have forged: it only ever becomes a
plan that runs in the same sandbox. The profiles (tipc.planning.planner) stay the fast path and the
explanation of which slot feeds which flag; the observation is the truth about an edited or unknown script.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shlex
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tipc.config.detect import FINGERPRINTS, MARKER, SCRIPT, known_script_dialect
from tipc.config.model import Slot, TipcConfig
from tipc.config.parse import ParsedFile, parse_file
from tipc.core.errors import TipcError
from tipc.core.findings import Finding, Level
from tipc.core.steps import MODES, Mode, Overrides, Plan, Stage, Step
from tipc.planning.corpus import status_text, tokens

__all__ = [
    "Observation",
    "Prepared",
    "Ran",
    "choose_plan",
    "cross_check",
    "interpret",
    "misplaced_keys_read_as_commands",
    "plan_from",
    "prepare",
    "script_identity",
    "stage_of_command",
    "stand_ins",
    "tipc_wrapper",
    "wants_observation",
]

# Tools a script may call that must not run for real (network, GPU, package or repo state); each is an inert
# stand-in that exits 0 without output.
INERT_TOOLS = (
    "nvidia-smi",
    "wget",
    "curl",
    "pip",
    "pip3",
    "git",
    "apt",
    "apt-get",
    "yum",
    "sudo",
    "conda",
    "docker",
    "ssh",
    "scp",
    "rsync",
    "hdfs",
    "pkill",
    "killall",
    "shutdown",
    "reboot",
    "tipc",  # tipc's own wrapper script delegates to `tipc run`: never start a real run while observing
)
_INTERPRETERS = ("python", "python2", "python3", *(f"python3.{n}" for n in range(5, 15)))
# Variables bash itself maintains: never a difference the script made on purpose.
_BASH_VARS = {"PWD", "OLDPWD", "SHLVL", "_"}

_TRAIN_SLOTS = ("norm_train", "pact_train", "fpgm_train", "distill_train", "trainer1", "trainer2")
_EXPORT_SLOTS = (
    "norm_export",
    "pact_export",
    "fpgm_export",
    "distill_export",
    "export1",
    "export2",
    "kl_quant_export",
    "infer_export",
)
_SLOT_STAGE: dict[str, Stage] = {
    **{name: Stage.TRAIN for name in _TRAIN_SLOTS},
    "eval": Stage.EVAL,
    **{name: Stage.EXPORT for name in _EXPORT_SLOTS},
    "inference": Stage.INFER,
}
_ORDER = {Stage.TRAIN: 0, Stage.EVAL: 1, Stage.EXPORT: 1, Stage.QUANT: 1, Stage.INFER: 2, Stage.OTHER: 3}

# The recorder every interpreter stand-in execs: one JSON line per call, written with a single append.
_RECORDER = r"""
import json, os, sys
def target(fd):
    try:
        return os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        return None
def record(path, name, argv, via):
    data = {"name": name, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
            "stdout": target(1), "stderr": target(2), "via": via}
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, (json.dumps(data) + "\n").encode())
    os.close(fd)
if __name__ == "__main__":
    record(sys.argv[1], sys.argv[2], sys.argv[3:], "stand-in")
"""

# A real interpreter the stand-ins cannot shadow (an absolute path written into the script) still imports
# `sitecustomize` from PYTHONPATH at start-up: it records the call the same way and exits before user code.
_SITECUSTOMIZE = """
import os, sys
sys.path.insert(0, {tools!r})
import _tipc_record
argv = list(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
_tipc_record.record({record!r}, argv[0], argv[1:], "site")
os._exit(0)
"""


@dataclass(frozen=True)
class Observation:
    steps: Plan  # the commands the script ran, as Steps (no steps when it ran none)
    script_output: str  # bash's own stdout+stderr
    why_nothing: str | None  # why the script ran no python command; None when it ran some
    findings: tuple[Finding, ...] = ()
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0  # wall time of the whole observation (copy, bash, read-back)
    script_s: float = 0.0  # wall time of bash alone
    ignored: tuple[str, ...] = field(default=())  # interpreter calls that are not steps (helpers, probes)

    @property
    def complete(self) -> bool:
        """True when the script ran to its end (not stopped at the timeout, not failed to start)."""
        return not self.timed_out and self.exit_code is not None


# ---------------------------------------------------------------------------------------------------------
# stand-ins


def stand_ins(tools: str, record: str, names: Iterable[str], python: str) -> dict[str, tuple[str, int]]:
    """The files of the stand-ins folder `tools` (path relative to it -> (text, mode)): one recording
    stand-in per interpreter name in `names` (they exec `python -I -S` on the recorder, appending to
    `record`), the sitecustomize that stops a real interpreter, an instant `sleep` and the inert tools."""
    recorder = f"{tools}/_tipc_record.py"
    # -I -S: the stand-in starts fast and never imports anything from the repo or the user's site.
    call = f"exec {shlex.quote(python)} -I -S {shlex.quote(recorder)} {shlex.quote(record)}"
    files: dict[str, tuple[str, int]] = {"_tipc_record.py": (_RECORDER, 0o644)}
    for name in names:
        files[name] = (f'#!/bin/sh\n{call} "$0" "$@"\n', 0o755)
    files["site/sitecustomize.py"] = (_SITECUSTOMIZE.format(tools=tools, record=record), 0o644)
    files["sleep"] = ("#!/bin/sh\nexit 0\n", 0o755)
    for name in INERT_TOOLS:
        files[name] = ("#!/bin/sh\nexit 0\n", 0o755)
    return files


# ---------------------------------------------------------------------------------------------------------
# reading the config the way the planner does


def _config_model(parsed: ParsedFile, config: Path, repo: Path, dialect: str | None) -> TipcConfig:
    from tipc.config import detect as detect_mod
    from tipc.config import dialects as dialects_mod
    from tipc.config import reader as load_mod

    name = dialect or detect_mod.detect(parsed, config, repo).dialect
    return load_mod.build(parsed, dialects_mod.get(name), root=repo)


def _rewrite_lines(parsed: ParsedFile, changed: Mapping[int, tuple[Slot, str]]) -> str:
    """The config text with each changed slot's value replaced on its own line (the key kept as written)."""
    out: list[str] = []
    for number, text in enumerate(parsed.physical, 1):
        if number in changed:
            slot, value = changed[number]
            cr = "\r" if text.endswith("\r") else ""
            head = text[: slot.col - 1] if slot.col > 0 else f"{slot.key}:"
            text = head + value + cr
        out.append(text)
    return "\n".join(out) + ("\n" if parsed.text.endswith("\n") else "")


# ---------------------------------------------------------------------------------------------------------
# observe


@dataclass(frozen=True)
class _Call:
    name: str  # argv[0] as the stand-in was invoked
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str]
    stdout: str | None
    stderr: str | None
    via: str = "stand-in"  # or "site": a real interpreter stopped by our sitecustomize


def parse_calls(text: str) -> list[_Call]:
    """The calls of a record file's text (one JSON object a line; a line that is not one is left out)."""
    calls: list[_Call] = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
            calls.append(
                _Call(
                    str(data["name"]),
                    tuple(str(a) for a in data["argv"]),
                    str(data["cwd"]),
                    {str(k): str(v) for k, v in data["env"].items()},
                    data.get("stdout") if isinstance(data.get("stdout"), str) else None,
                    data.get("stderr") if isinstance(data.get("stderr"), str) else None,
                    str(data.get("via", "stand-in")),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a call cut short by the timeout, or a line the script forged badly
    return calls


@dataclass(frozen=True)
class _Status:
    command: str
    log: str | None
    format: str
    results_log: Path | None  # None: read from bash's output


def status_lines(text: str, results_log: Path) -> list[_Status]:
    """The status lines a script appended to `results_log` (`text`: what it appended)."""
    from tipc.core.results import parse_status_line

    out: list[_Status] = []
    for line in text.splitlines():
        parsed = parse_status_line(line)
        if parsed is not None:
            out.append(_Status(parsed.command, parsed.log_path, parsed.format, results_log))
    return out


def _status_echoes(output: list[str]) -> list[_Status]:
    from tipc.core.results import parse_status_line

    out: list[_Status] = []
    for line in output:
        parsed = parse_status_line(line)
        if parsed is not None:
            out.append(_Status(parsed.command, parsed.log_path, parsed.format, None))
    return out


def _why_nothing(output: str, exit_code: int | None, timed_out: bool, mode: Mode, python: str) -> str:
    if timed_out:
        return "the script did not finish before the timeout and had run no python command by then"
    if exit_code is None:
        return "bash could not be started"
    causes: list[str] = []
    for line in output.splitlines():
        text = line.strip()
        if (
            any(
                cue in text
                for cue in (
                    "No such file or directory",
                    "command not found",
                    "syntax error",
                    "unbound variable",
                    "Permission denied",
                    "unexpected end of file",
                    "bad substitution",
                )
            )
            and text not in causes
        ):
            causes.append(text)
    if causes:
        shown = "; ".join(causes[:3])
        return f"the script runs no {python} command in mode {mode} (exit {exit_code}): {shown}"
    tail = " | ".join(line.strip() for line in output.strip().splitlines()[-3:])
    said = f"; its last output: {tail}" if tail else ", printing nothing"
    return f"the script ran to its end (exit {exit_code}) without calling {python} in mode {mode}{said}"


@dataclass(frozen=True)
class Prepared:
    """What an observation runs and how its output is read back (`prepare`)."""

    config: Path
    mode: Mode
    repo: Path  # resolved
    parsed: ParsedFile
    cfg: TipcConfig
    new_cfg: TipcConfig  # with the overrides applied
    notes: tuple[Finding, ...]  # what the overrides changed
    overrides: Overrides
    python_word: str  # the config's interpreter as written
    abs_python: str | None  # the config's interpreter when it is an absolute path (replaced by a stand-in)
    names: tuple[str, ...]  # interpreter names given a recording stand-in
    script_arg: str  # bash's first argument (repo-relative, or where the script is placed when outside)
    script_outside: Path | None  # a script outside the repo: placed at script_arg for the run
    config_arg: str  # the script's first argument
    config_rel: str | None  # the config's place in the repo (None: outside it, placed at config_arg)
    config_text: str | None  # the config as the script must read it (None: the repo's own, unchanged)
    script_given: bool  # the script was named by the caller (not the repo's own)


def prepare(
    config: Path,
    mode: Mode,
    *,
    repo: Path,
    tools: str,
    outside: str,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
    script: Path | None = None,
    dialect: str | None = None,
) -> Prepared:
    """What to run to observe `config` in `mode`: stand-ins will live in `tools`, files from outside the repo
    (a config, a script) are placed in `outside` (both as the script sees them)."""
    from tipc.planning.planner import apply_overrides

    config = Path(config)
    repo_abs = Path(repo).resolve()
    parsed = parse_file(config)
    cfg = _config_model(parsed, config, repo_abs, dialect)
    new_cfg, notes = apply_overrides(cfg, overrides, mode)
    changed: dict[int, tuple[Slot, str]] = {}
    for _name, slot in new_cfg.slots().items():
        if slot.overridden and slot.present:
            changed[slot.line] = (slot, slot.value)
    python_value = cfg.python.value.strip() or "python"
    python_word = python_value.split()[0] if python_value.split() else "python"
    names = set(_INTERPRETERS)
    abs_python: str | None = None
    if "/" in python_word:
        # An absolute interpreter would bypass PATH: the config the script reads names a stand-in instead.
        abs_python = python_word
        names.add("_tipc_abs_python")
        slot, value = changed.get(cfg.python.line, (cfg.python, cfg.python.value))
        changed[cfg.python.line] = (slot, value.replace(python_word, f"{tools}/_tipc_abs_python", 1))
    else:
        names.add(python_word)
    config_rel: str | None
    try:
        config_rel = config.resolve().relative_to(repo_abs).as_posix()
        config_arg = config_rel
    except ValueError:
        config_rel, config_arg = None, f"{outside}/{config.name}"
    text = _rewrite_lines(parsed, changed) if changed or config_rel is None else None
    script_path = Path(script) if script is not None else repo_abs / SCRIPT
    script_outside: Path | None = None
    try:
        script_arg = script_path.resolve().relative_to(repo_abs).as_posix()
    except ValueError:
        script_outside = script_path.resolve()
        script_arg = f"{outside}/script_{script_path.name}"
    return Prepared(
        config=config,
        mode=mode,
        repo=repo_abs,
        parsed=parsed,
        cfg=cfg,
        new_cfg=new_cfg,
        notes=tuple(notes),
        overrides=overrides,
        python_word=python_word,
        abs_python=abs_python,
        names=tuple(sorted(names)),
        script_arg=script_arg,
        script_outside=script_outside,
        config_arg=config_arg,
        config_rel=config_rel,
        config_text=text,
        script_given=script is not None,
    )


@dataclass(frozen=True)
class Ran:
    """What the script did, as read back from the sandbox it ran in."""

    calls: list[_Call]  # the stand-ins' records, in order
    statuses: list[_Status]  # status lines appended to results logs, in the order the logs were written
    output: list[str]  # bash's own stdout+stderr lines
    exit_code: int | None  # None: bash could not start, or was stopped at the timeout
    timed_out: bool
    root: Path  # where the repo was as the script saw it
    tools: Path  # the stand-ins' folder as the script saw it
    start_env: dict[str, str]  # the environment bash started with
    timeout_s: float
    duration_s: float  # the whole observation
    script_s: float  # bash alone
    denied: tuple[str, ...] = ()  # system calls the sandbox denied the script


def interpret(prepared: Prepared, ran: Ran) -> Observation:
    """The plan of what the script ran, with findings on how the observation went."""
    statuses = ran.statuses or _status_echoes(ran.output)  # a script that only echoes its status lines
    text = "\n".join(ran.output)
    built = _Builder(
        config=prepared.config,
        mode=prepared.mode,
        repo=prepared.repo,
        root=ran.root,
        tools=ran.tools,
        cfg=prepared.new_cfg,
        parsed=prepared.parsed,
        start_env=ran.start_env,
        abs_python=prepared.abs_python,
        overrides=prepared.overrides,
    ).build(ran.calls, statuses)
    findings = list(prepared.notes)
    steps_plan, ignored = built
    why: str | None = None
    where = str(prepared.config)
    script_arg = prepared.script_arg
    if ran.denied:
        findings.append(
            Finding(
                where,
                0,
                0,
                Level.ERROR,
                "TIPC045",
                f"observing {script_arg}: the script attempted system calls the sandbox denies "
                f"({', '.join(ran.denied)}); a test script never needs them",
            )
        )
    if ran.timed_out:
        findings.append(
            Finding(
                where,
                0,
                0,
                Level.WARNING,
                "TIPC043",
                f"observing {script_arg}: the script was stopped after {ran.timeout_s:g} s (a `read`, a loop "
                f"or a command that waits); {len(steps_plan.steps)} command(s) recorded before that",
            )
        )
    elif ran.exit_code is None:
        findings.append(
            Finding(where, 0, 0, Level.WARNING, "TIPC043", f"observing {script_arg}: {text.strip()[-500:]}")
        )
    if not steps_plan.steps:
        why = _why_nothing(text, ran.exit_code, ran.timed_out, prepared.mode, prepared.python_word)
        declared = tipc_wrapper(prepared.repo) if not prepared.script_given else None
        if declared is not None:
            why = (
                f"{SCRIPT} is tipc's own wrapper (`# tipc-dialect: {declared}`): it hands the run to "
                f"`tipc run --dialect {declared}`, so its commands are the {declared} profile plan "
                "(`tipc plan`)"
            )
        findings.append(Finding(where, 0, 0, Level.WARNING, "TIPC042", why))
    steps_plan = replace(steps_plan, findings=steps_plan.findings + tuple(findings))
    return Observation(
        steps=steps_plan,
        script_output=text,
        why_nothing=why,
        findings=tuple(findings),
        exit_code=ran.exit_code,
        timed_out=ran.timed_out,
        duration_s=ran.duration_s,
        script_s=ran.script_s,
        ignored=ignored,
    )


@dataclass
class _BuildState:
    """What `_Builder.build` carries from one observed call to the next."""

    steps: list[Step] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    used: int = 0  # status lines matched so far (they match in order)
    last_train: Step | None = None
    last_export: Step | None = None
    counts: Counter[str] = field(default_factory=Counter)
    status_format: str | None = None
    results_log: Path | None = None

    def depends(self, stage: Stage) -> tuple[str, ...]:
        """Training depends on nothing, inference on the last export (or training), the rest on training."""
        if stage is Stage.TRAIN:
            return ()
        if stage is Stage.INFER:
            prior = self.last_export or self.last_train
            return (prior.id,) if prior is not None else ()
        return (self.last_train.id,) if self.last_train is not None else ()

    def add(self, step: Step) -> None:
        self.steps.append(step)
        if step.stage is Stage.TRAIN:
            self.last_train, self.last_export = step, None
        elif step.stage is Stage.EXPORT:
            self.last_export = step


@dataclass
class _Builder:
    config: Path
    mode: Mode
    repo: Path
    root: Path
    tools: Path
    cfg: TipcConfig
    parsed: ParsedFile
    start_env: dict[str, str]
    abs_python: str | None
    overrides: Overrides

    def back(self, text: str) -> str:
        """A path or word from the copy, spelled for the user's repo (and the config's own interpreter)."""
        if self.abs_python:
            text = text.replace(str(self.tools / "_tipc_abs_python"), self.abs_python)
        return text.replace(str(self.root), str(self.repo))

    def rel(self, path: str) -> str:
        """Repo-relative spelling of a path inside the copy (absolute otherwise, mapped to the repo)."""
        if path == str(self.root):
            return "."
        if path.startswith(str(self.root) + "/"):
            path = path[len(str(self.root)) + 1 :]
        else:
            return self.back(path)
        while path.startswith("./"):
            path = path[2:]
        return path

    def log_of(self, target: str | None) -> str | None:
        if not target or not target.startswith("/"):
            return None  # a pipe to bash's output (the console), a socket
        if target.startswith("/dev/") and not target.startswith(str(self.tools.parent) + "/"):
            return None  # /dev/null, a terminal (the scratch itself may be on /dev/shm)
        if target.endswith(" (deleted)"):
            target = target[: -len(" (deleted)")]
        return self.rel(target)

    def interpreter(self, call: _Call) -> str:
        if call.name.startswith(str(self.tools) + "/"):
            base = call.name.rsplit("/", 1)[1]
            return self.abs_python if base == "_tipc_abs_python" and self.abs_python else base
        return call.name

    def env_diff(self, env: Mapping[str, str]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
        start = self.start_env
        set_vars: dict[str, str] = {}
        for key, value in env.items():
            if key in _BASH_VARS or start.get(key) == value:
                continue
            if key in ("PATH", "PYTHONPATH"):
                # The stand-ins' folders are ours, not the script's: drop them before comparing.
                ours = {str(self.tools), str(self.tools / "site")}
                parts = [p for p in value.split(os.pathsep) if p not in ours]
                base = [p for p in start[key].split(os.pathsep) if p not in ours]
                if parts == base:
                    continue
                value = os.pathsep.join(parts)
            set_vars[key] = self.back(value)
        unset = tuple(sorted(k for k in start if k not in env and k not in _BASH_VARS))
        return tuple(sorted(set_vars.items())), unset

    def slot_of(self, argv: tuple[str, ...]) -> tuple[str, Stage, int] | None:
        """(slot or key, stage, config line) of the config value that names this command's script.

        The longest config value found as consecutive words of argv wins (`train.py --test-only` is eval even
        though `train.py` is the trainer); lines the profile does not name are classified by their key.
        """
        by_line = {slot.line: name for name, slot in self.cfg.slots().items() if slot.present}
        words = [w for w in argv[1:]]
        best: tuple[int, str, Stage, int] | None = None
        for entry in self.parsed.entries():
            if entry.kind != "kv":
                continue
            value = entry.value.strip().rstrip("\r")
            try:
                want = shlex.split(value)
            except ValueError:
                want = value.split()
            if not want or not any(w.endswith(".py") or w == "-m" for w in want[:2]):
                continue
            if not _contains(words, want):
                continue
            name = by_line.get(entry.line, "")
            # The key the author wrote says what the command is for (`eval:train.py --test-only` is eval);
            # the profile's slot at that line only when the key says nothing (an edited config's lines can
            # sit where the profile expects another slot).
            stage = _stage_from_key(entry.key) or _SLOT_STAGE.get(name)
            if stage is None:
                continue
            score = len(want)
            if best is None or score > best[0]:
                best = (score, name or entry.key.strip(), stage, entry.line)
        return None if best is None else best[1:]

    def build(self, calls: list[_Call], statuses: list[_Status]) -> tuple[Plan, tuple[str, ...]]:
        state = _BuildState()
        for call in calls:
            argv = (self.interpreter(call), *(self.back(a) for a in call.argv))
            match = self.match_status(state, argv, statuses)
            slot = self.slot_of(argv)
            # A python tool the script runs by its shebang also reaches our sitecustomize: only a command
            # the config or a status line names is a step then.
            if slot is None and match is None and (_is_probe(argv) or call.via == "site"):
                state.ignored.append(shlex.join(argv))
                continue
            if match is not None:
                state.status_format = state.status_format or match.format
                state.results_log = state.results_log or match.results_log
            state.add(self.step_of(state, call, argv, match, slot))
        return self.plan_of(state), tuple(state.ignored)

    def match_status(
        self, state: _BuildState, argv: tuple[str, ...], statuses: list[_Status]
    ) -> _Status | None:
        """The next status line (after the last one matched) whose command is this call's."""
        repo_str = str(self.repo)
        want = tokens(shlex.join(argv), repo_str)
        for k in range(state.used, len(statuses)):
            if tokens(self.back(statuses[k].command), repo_str) == want:
                state.used = k + 1
                return statuses[k]
        return None

    def step_of(
        self,
        state: _BuildState,
        call: _Call,
        argv: tuple[str, ...],
        match: _Status | None,
        slot: tuple[str, Stage, int] | None,
    ) -> Step:
        log = self.log_of(call.stdout)
        # A command no config value names is labelled by what it is: its entry script, else the log the
        # script sends it to (`python_infer_cpu_*.log`), so an edited script's infer.py is inference.
        name, stage, line = slot if slot is not None else ("", stage_of_command(argv, log), 0)
        env, unset = self.env_diff(call.env)
        state.counts[f"{stage.value}/{name}"] += 1
        last_train = state.last_train
        return Step(
            id=f"{stage.value}/{name or 'command'}/{state.counts[f'{stage.value}/{name}']}",
            stage=stage,
            argv=argv,
            cwd=self.rel(call.cwd),
            env=env,
            unset_env=unset,
            log=log,
            depends_on=state.depends(stage),
            trainer=name if stage is Stage.TRAIN else (last_train.trainer if last_train else None),
            status_command=self.back(match.command) if match is not None else shlex.join(argv),
            status_log=self.status_log_of(match, log),
            source_lines=(line,) if line else (),
            writes=self.writes_of(stage, argv),
        )

    def status_log_of(self, match: _Status | None, log: str | None) -> str | None:
        """The log a status line names, when it is not the call's own stdout."""
        if match is None or not match.log:
            return None
        spelled = match.log.strip()
        status_log = self.rel(spelled) if spelled.startswith("/") else _strip_dot(spelled)
        return None if status_log == log else status_log

    def plan_of(self, state: _BuildState) -> Plan:
        results_log = state.results_log
        results_rel = self.rel(str(results_log)) if results_log is not None else _guess_results(state.steps)
        output_dir = results_rel.rsplit("/", 1)[0] if "/" in results_rel else "."
        return Plan(
            config_path=str(self.config),
            repo=str(self.repo),
            mode=self.mode,
            dialect=self.cfg.dialect,
            model_name=self.cfg.model_name.value,
            output_dir=output_dir,
            results_log=results_rel,
            status_format=state.status_format or _profile_status_format(self.cfg.dialect),
            steps=tuple(state.steps),
            overrides=self.overrides,
        )

    def writes_of(self, stage: Stage, argv: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        slot = {Stage.TRAIN: self.cfg.save_model, Stage.EXPORT: self.cfg.save_infer}.get(stage)
        if slot is None or not slot.key.strip() or slot.key.strip() == "null":
            return ()
        key = slot.key.strip()
        for word in argv:
            if word.startswith(key + "="):
                return ((key, word[len(key) + 1 :]),)
        return ()


def _is_probe(argv: tuple[str, ...]) -> bool:
    """An interpreter call that checks the environment rather than running a stage (`python -c ...`, pip)."""
    rest = argv[1:]
    return not rest or rest[0] in ("-c", "-V", "--version") or rest[:2] == ("-m", "pip")


def _strip_dot(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def _guess_results(steps: list[Step]) -> str:
    logs = [p for p in (s.log or s.status_log for s in steps) if p]
    folder = os.path.commonpath([os.path.dirname(p) for p in logs]) if logs else "test_tipc/output"
    return f"{folder or '.'}/results_python.log"


def _profile_status_format(dialect: str) -> str:
    from tipc.config import dialects as dialects_mod

    try:
        return dialects_mod.get(dialect).status_format
    except TipcError:
        return "template"


def _contains(words: list[str], want: list[str]) -> bool:
    n = len(want)
    return any(words[i : i + n] == want for i in range(len(words) - n + 1))


_SCRIPT_STAGES = (
    ("export", Stage.EXPORT),
    ("quant", Stage.QUANT),
    ("infer", Stage.INFER),
    ("eval", Stage.EVAL),
    ("train", Stage.TRAIN),
)


def stage_of_command(argv: tuple[str, ...], log: str | None = None) -> Stage:
    """What a command is by its entry script (`deploy/infer.py`, `tools/export_model.py`, `-m
    tools.train`), else by the name of the log it writes (`python_infer_cpu_batchsize_1.log`); OTHER when
    neither tells."""
    entry = next((a for a in argv[1:] if a.endswith(".py")), None)
    if entry is None and "-m" in argv[:-1]:
        entry = argv[argv.index("-m") + 1].replace(".", "/")
    for text in (entry, os.path.basename(log) if log else None):
        if not text:
            continue
        lowered = text.lower()
        name = os.path.basename(lowered)
        for word, stage in _SCRIPT_STAGES:
            if word in name:
                return stage
        # PaddleOCR-style inference scripts: tools/infer/predict_det.py, deploy/python/predict.py
        if "predict" in name and any(part in lowered for part in ("infer", "deploy")):
            return Stage.INFER
    return Stage.OTHER


def _stage_from_key(key: str) -> Stage | None:
    key = key.strip().lower()
    if "export" in key:
        return Stage.EXPORT
    if "eval" in key:
        return Stage.EVAL
    if "infer" in key or "predict" in key:
        return Stage.INFER
    if "train" in key:
        return Stage.TRAIN
    if "quant" in key:
        return Stage.QUANT
    return None


# ---------------------------------------------------------------------------------------------------------
# cross-check


def _commands(plan: Plan) -> list[list[str]]:
    """Each step's command as the corpus README normalises a status line (tipc.planning.corpus)."""
    from tipc.planning.planner import status_line

    return [tokens(status_text(status_line(plan, step), plan.model_name), plan.repo) for step in plan.steps]


def _norm_path(path: str | None, repo: str) -> str:
    if not path:
        return "(console)"
    return os.path.normpath(_strip_dot(path[len(repo) + 1 :] if path.startswith(repo + "/") else path))


def cross_check(profile: Plan, observed: Plan) -> list[Finding]:
    """A TIPC040 finding per difference between the profile plan and the observed plan.

    Steps are aligned on their normalised commands (missing or extra steps, then differing words); the output
    folder and each aligned step's log are compared as repo-relative paths.
    """
    where = profile.config_path
    findings: list[Finding] = []

    def note(step: Step | None, message: str) -> None:
        line = step.source_lines[0] if step is not None and step.source_lines else 0
        findings.append(Finding(where, line, 0, Level.WARNING, "TIPC040", message))

    mine = _commands(profile)
    theirs = _commands(observed)
    if _norm_path(profile.output_dir, profile.repo) != _norm_path(observed.output_dir, observed.repo):
        note(
            None,
            f"output folder: the profile plans {profile.output_dir}, the script writes {observed.output_dir}",
        )
    matcher = difflib.SequenceMatcher(
        a=[tuple(c) for c in mine], b=[tuple(c) for c in theirs], autojunk=False
    )
    pairs: list[tuple[int, int]] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            pairs.extend(zip(range(a0, a1), range(b0, b1), strict=True))
            continue
        common = min(a1 - a0, b1 - b0) if op == "replace" else 0
        for k in range(common):
            i, j = a0 + k, b0 + k
            pairs.append((i, j))
            gone = Counter(mine[i]) - Counter(theirs[j])
            new = Counter(theirs[j]) - Counter(mine[i])
            step = profile.steps[i]
            note(
                step,
                f"step {j + 1} ({observed.steps[j].stage.value}): the profile plans "
                f"{' '.join(gone.elements()) or '(nothing more)'}, the script runs "
                f"{' '.join(new.elements()) or '(nothing more)'} [{shlex.join(theirs[j])}]",
            )
        for i in range(a0 + common, a1):
            note(
                profile.steps[i],
                f"missing: the profile plans {profile.steps[i].stage.value} step `{shlex.join(mine[i])}`, "
                "which the script does not run",
            )
        for j in range(b0 + common, b1):
            note(
                None,
                f"extra: the script runs {observed.steps[j].stage.value} step `{shlex.join(theirs[j])}`, "
                "which the profile does not plan",
            )
    for i, j in sorted(pairs):
        a, b = profile.steps[i], observed.steps[j]
        if a.stage is not b.stage:
            note(
                a,
                f"step {j + 1}: the profile calls it {a.stage.value}, the observed command is "
                f"{b.stage.value} (by the config line naming its script)",
            )
        log_a = _norm_path(a.log, profile.repo)
        log_b = _norm_path(b.log, observed.repo)
        if log_a != log_b:
            note(
                a, f"step {j + 1} ({b.stage.value}) log: the profile plans {log_a}, the script writes {log_b}"
            )
    return findings


# ---------------------------------------------------------------------------------------------------------
# what run/check execute


def script_identity(repo: Path, script: Path | None = None) -> tuple[str, str] | None:
    """(dialect, reason) when the repo's script is known (exact or normalised fingerprint); else None."""
    path = Path(script) if script is not None else Path(repo) / SCRIPT
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()
    if digest in FINGERPRINTS:
        return FINGERPRINTS[digest], f"script fingerprint {digest[:10]}"
    known = known_script_dialect(data.decode("utf-8", errors="replace"))
    if known is not None:
        return known[0], f"normalised script fingerprint ({known[1]})"
    return None


def tipc_wrapper(repo: Path) -> str | None:
    """The dialect a `tipc init` wrapper script declares (it runs `tipc run --dialect X`); else None."""
    from tipc.config.dialects import names

    try:
        text = (Path(repo) / SCRIPT).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for match in MARKER.finditer(text):
        if match.group(1) in names():
            return match.group(1)
    return None


def plan_from(
    profile: Plan,
    obs: Observation | None,
    *,
    repo: Path,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
) -> Plan:
    """The plan `tipc run` / `tipc check` should execute (before `tipc.planning.planner.isolate`), from the
    profile plan and the observation of the repo's script (None: it was not observed):

    - no observation (no script in the repo, a serving config, a `tipc init` wrapper): the profile plan;
    - an observation that did not complete (timeout): the profile plan with the TIPC043 warning;
    - otherwise what the script was observed to run, whenever it differs from the profile plan, known
      script (fingerprint) or not: the observed plan, TIPC041 saying so and a TIPC040 per difference; a
      script that runs nothing gives a plan with no steps and a TIPC042 warning saying why. When the two
      agree, the profile plan (its steps are the script's, with the profile's names and slots).
    A script that attempted denied system calls while observed (TIPC045) says so in every case.
    """
    if obs is None:
        return profile
    return choose_plan(profile, obs, known=script_identity(Path(repo)), overrides=overrides, repo=Path(repo))


def choose_plan(
    profile: Plan, obs: Observation, *, known: tuple[str, str] | None, overrides: Overrides, repo: Path
) -> Plan:
    """Between the profile plan and what the script was observed to run: the one `tipc run` executes, with
    the differences as findings (see `plan_from`)."""
    where = str(profile.config_path)
    mine = tuple(f for f in obs.findings if f.code.startswith("TIPC04"))  # overrides are noted by `plan`
    if not obs.complete:
        return replace(profile, findings=profile.findings + mine)
    if not obs.steps.steps:
        return replace(profile, steps=(), findings=profile.findings + mine)
    diffs = tuple(cross_check(profile, obs.steps))
    if not diffs:
        said = ("TIPC042", "TIPC045")  # nothing run, calls denied: true of the profile plan too
        return replace(
            _with_script_env(profile, obs.steps),
            findings=profile.findings + tuple(f for f in mine if f.code in said),
        )
    if known is not None:
        what = f"{SCRIPT} is the {known[0]} script ({known[1]}), but it runs other commands than its profile"
    else:
        what = f"{SCRIPT} is not a known dialect (an edited or unknown copy)"
    summary = (
        f"{what}: tipc runs the {len(obs.steps.steps)} command(s) observed from it; {len(diffs)} "
        f"difference(s) from the {profile.dialect} profile plan follow"
    )
    note = Finding(where, 0, 0, Level.INFO, "TIPC041", summary)
    keep = tuple(f for f in profile.findings if f.code != "TIPC100")
    observed = replace(obs.steps, findings=(*keep, note, *diffs, *mine))
    return _on_cpu(observed, repo) if overrides.device == "cpu" else observed


def _with_script_env(profile: Plan, observed: Plan) -> Plan:
    """The profile plan with the variables the script exported for each of its commands (CAN_Paddle's
    `export PYTHONPATH=$PYTHONPATH:$CAN_DIR`), where the two plans run the same commands in the same order:
    without them the whole_infer export, whose commands matched the profile's, could not import the repo's
    own package, while the lite chain, observed, could."""
    if len(profile.steps) != len(observed.steps):
        return profile
    steps = []
    for mine, seen in zip(profile.steps, observed.steps, strict=True):
        have = {k for k, _ in mine.env} | set(mine.unset_env)
        added = tuple((k, v) for k, v in seen.env if k not in have)
        steps.append(replace(mine, env=(*mine.env, *added)) if added else mine)
    return replace(profile, steps=tuple(steps))


def misplaced_keys_read_as_commands(findings: Iterable[Finding], plan: Plan) -> list[Finding]:
    """Lint findings, judged against the plan that ran: a TIPC105 (a key in a slot meant for another) on a
    line whose value the plan runs as a command, built from that very line, is a warning, not an error. The
    script reads the line as the command it is whatever its key says (an observed plan shows that), so the
    key is a wrong label, not a shifted slot."""
    try:
        lines = Path(plan.config_path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return list(findings)
    out: list[Finding] = []
    for f in findings:
        ran = _runs_line(plan, lines, f.line) if f.code == "TIPC105" and f.level is Level.ERROR else None
        if ran is not None:
            f = Finding(
                f.path,
                f.line,
                f.col,
                Level.WARNING,
                f.code,
                f"{f.message}; but the repo's script reads this line as its {ran.stage.value} command "
                f"({ran.id} runs it), so only the key is misplaced",
            )
        out.append(f)
    return out


def _runs_line(plan: Plan, lines: list[str], line: int) -> Step | None:
    """The step the plan built from config line `line` whose command is that line's value."""
    if not 0 < line <= len(lines) or ":" not in lines[line - 1]:
        return None
    value = lines[line - 1].split(":", 1)[1].strip()
    try:
        want = shlex.split(value)
    except ValueError:
        want = value.split()
    if not want or not any(w.endswith(".py") or w == "-m" for w in want[:2]):
        return None
    for step in plan.steps:
        if line in step.source_lines and _contains(list(step.argv[1:]), want):
            return step
    return None


def wants_observation(profile: Plan, mode: Mode, repo: Path) -> bool:
    """Whether `plan_from` needs the repo's script observed for this plan."""
    if profile.chain != "train_infer_python" or mode not in MODES or not (Path(repo) / SCRIPT).is_file():
        return False
    return tipc_wrapper(Path(repo)) is None  # the wrapper runs this very plan through `tipc run`


_LAUNCHERS = ("paddle.distributed.launch", "paddle.distributed.fleet.launch", "fleetrun")


def _on_cpu(observed: Plan, repo: Path) -> Plan:
    """--device cpu on an observed plan, as the profile planner does it: multi-GPU launch steps stay in the
    plan but are not applicable, and every other command gets the CPU form of its script's device flag."""
    from tipc.planning.device_flags import add_cpu_flags

    steps = []
    for step in observed.steps:
        launcher = next((w for w in step.argv if w in _LAUNCHERS or w.endswith("/fleetrun")), None)
        if launcher is not None and not step.not_applicable:
            step = replace(
                step,
                not_applicable=f"the script runs it through {launcher} (a multi-GPU launch); "
                "--device cpu runs on the CPU only",
            )
        steps.append(step)
    edited, findings = add_cpu_flags(tuple(steps), repo, observed.config_path)
    return replace(observed, steps=edited, findings=(*observed.findings, *findings))


def observation_json(obs: Observation) -> dict[str, Any]:
    """What `tipc plan --observe --format json` prints."""
    return {
        **obs.steps.to_json(),
        "observed": True,
        "why_nothing": obs.why_nothing,
        "exit_code": obs.exit_code,
        "timed_out": obs.timed_out,
        "duration_s": round(obs.duration_s, 3),
        "ignored_calls": list(obs.ignored),
    }
