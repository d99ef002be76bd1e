"""The observed calls matched against the config and the status lines, as steps (`_Builder.build`): each
interpreter call's slot and stage, its status line (matched in order), its log, its environment as it differs
from bash's start, the outputs its slot writes, its dependencies; probes and helpers are left out (ignored).
"""

from __future__ import annotations

import functools
import os
import shlex
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tipc.config.model import TipcConfig
from tipc.config.parse import ParsedFile
from tipc.core.errors import TipcError
from tipc.core.steps import Mode, Overrides, Plan, Stage, Step
from tipc.planning.corpus import tokens
from tipc.planning.observe.stages import _stage_from_key, stage_of_command
from tipc.planning.observe.trace import _Call, _Status

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
        words = argv[1:]
        best: tuple[int, str, Stage, int] | None = None
        for entry in self.parsed.entries():
            if entry.kind != "kv":
                continue
            want = _value_words(entry.value)
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


def _contains(words: tuple[str, ...], want: tuple[str, ...]) -> bool:
    n = len(want)
    return any(words[i : i + n] == want for i in range(len(words) - n + 1))


@functools.lru_cache(maxsize=1024)
def _value_words(value: str) -> tuple[str, ...]:
    """A config value's words, as `slot_of` compares them (asked again for every command observed)."""
    value = value.strip().rstrip("\r")
    try:
        return tuple(shlex.split(value))
    except ValueError:
        return tuple(value.split())
