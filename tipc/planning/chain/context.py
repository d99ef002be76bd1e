"""The state every step builder of a chain adds to: `_Ctx` (config, dialect, mode, the steps and findings
so far, the ids taken, the step cap) and the small helpers the builders share (`bash_dirname`, `_writes`).

`_Ctx.add` is the one place a step is made (or, for lint, only counted); `_Ctx.tick` raises `_PlanTooLarge`
when the loops pass the cap. Pure: no file is read or written here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from tipc.config import bash
from tipc.config.bash import set_param, test_eq
from tipc.config.dialects import Dialect
from tipc.config.model import Slot, TipcConfig
from tipc.core.findings import Finding, Level
from tipc.core.steps import Mode, Stage, Step

CUDA = "CUDA_VISIBLE_DEVICES"
# The `|` lists of a config multiply (gpu_list x autocast x trainer x use_gpu x threads x batch x precision):
# a 1.5 KB config can ask for tens of thousands of commands. Real configs plan well under 100 per mode.
DEFAULT_MAX_STEPS = 1000
WORK_PER_STEP = 20  # loop bodies allowed per allowed step (most are skipped by the scripts' rules)


class _PlanTooLarge(Exception):
    """Raised inside the loops when the plan passes its cap; `build` turns it into a TIPC270 finding."""


def bash_dirname(path: str) -> str:
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path else "."
    if "/" not in stripped:
        return "."
    head = stripped.rsplit("/", 1)[0].rstrip("/")
    return head or "/"


@dataclass
class _Ctx:
    cfg: TipcConfig
    d: Dialect
    mode: Mode
    root: str  # absolute repo root (the folder the script runs from)
    log_root: str = ""
    steps: list[Step] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    env: dict[str, str | None] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    next_suffix: dict[str, int] = field(default_factory=dict)  # base id -> the next `#n` to try
    max_steps: int = DEFAULT_MAX_STEPS
    work: int = 0  # loop bodies entered: bounds planning even when the iterations add no step
    count: int = 0  # steps planned
    light: bool = False  # lint: findings only, no Step objects (only the inference commands are kept)
    infer_commands: list[str] = field(default_factory=list)
    noted: set[str] = field(default_factory=set)
    seen_commands: set[str] = field(default_factory=set)  # the commands already examined (see `add`)
    last_export_weight: str = ""
    cpu: bool = False  # --device cpu: single-device items run on the CPU, launch steps are not applicable
    cpu_item: str | None = None  # the first single-device gpu_list item (the one run on the CPU)
    not_applicable: str = ""  # given to the steps added while set (see `_device_item`)

    # -- helpers ---------------------------------------------------------------------------------------
    def note(self, code: str, level: Level, slot: Slot | None, message: str, once: str | None = None) -> None:
        key = once or f"{code}:{message}"
        if key in self.noted:
            return
        self.noted.add(key)
        line = slot.line if slot is not None else 0
        col = slot.col if slot is not None else 0
        self.findings.append(Finding(self.cfg.path, line, col, level, code, message))

    def rel(self, path: str | None) -> str | None:
        if path is None:
            return None
        if path.startswith(self.root + "/"):
            path = path[len(self.root) + 1 :]
        while path.startswith("./"):
            path = path[2:]
        return path

    def unique(self, base: str) -> str:
        # Remember where each base's numbering stopped: repeated ids cost O(1) each, not O(repeats).
        candidate = base
        n = self.next_suffix.get(base, 2)
        while candidate in self.ids:
            candidate = f"{base}#{n}"
            n += 1
        self.next_suffix[base] = n
        self.ids.add(candidate)
        return candidate

    def _note_words(self, status_command: str, exact: bool) -> None:
        notes, keys = _command_notes(status_command, exact)
        if not keys <= self.noted:  # commands that differ in a number share their glob words
            for code, message, once in notes:
                self.note(code, Level.WARNING, None, message, once=once)

    def tick(self) -> None:
        """One loop body entered; too many (the product of `|` lists) stops planning (TIPC270)."""
        self.work += 1
        if self.work > self.max_steps * WORK_PER_STEP:
            raise _PlanTooLarge(f"{self.work - 1} loop iterations")

    def add(
        self,
        step_id: str,
        stage: Stage,
        status_command: str,
        *,
        log: str | None,
        status_log: str | None,
        trainer: str | None,
        cwd: str = ".",
        depends_on: tuple[str, ...] = (),
        lines: tuple[int, ...] = (),
        writes: tuple[tuple[str, str], ...] = (),
        writes_unknown: str = "",
    ) -> str:
        argv: tuple[str, ...] = ()
        # A command is examined once: `|` lists repeat the same command in many steps (and make it long).
        seen = status_command in self.seen_commands
        if not self.light:
            argv, exact = bash.command_argv(status_command)
        elif not seen:
            # Lint keeps no argv, only whether the words are well formed (and the inference commands).
            exact = bash.is_shell_words(status_command)
        if not seen:
            self.seen_commands.add(status_command)
            if not exact or _may_note(status_command):
                self._note_words(status_command, exact)
        if self.count >= self.max_steps:
            raise _PlanTooLarge(f"{self.max_steps} steps")
        self.count += 1
        if self.light:
            if stage is Stage.INFER:
                self.infer_commands.append(status_command)
            return step_id  # lint needs no unique ids: nothing reads the steps' dependencies
        sid = self.unique(step_id)
        env = tuple(sorted((k, v) for k, v in self.env.items() if v is not None))
        unset = tuple(sorted(k for k, v in self.env.items() if v is None))
        self.steps.append(
            Step(
                id=sid,
                stage=stage,
                argv=argv,
                cwd=cwd,
                env=env,
                unset_env=unset,
                log=self.rel(log),
                depends_on=depends_on,
                trainer=trainer,
                status_command=status_command,
                status_log=self.rel(status_log),
                source_lines=tuple(sorted({n for n in lines if n > 0})),
                writes=writes,
                writes_unknown=writes_unknown,
                not_applicable=self.not_applicable,
            )
        )
        return sid

    def apply_env(self, env: tuple[str, str] | None) -> None:
        if env is not None:
            self.env[env[0]] = env[1]

    def unset_cuda(self) -> None:
        self.env[CUDA] = None


def _may_note(command: str) -> bool:
    """Whether a word of `command` has a character `_command_notes` says something about (besides broken
    quoting); three substring tests, much cheaper than a regex search over the long commands."""
    return "*" in command or "?" in command or "$" in command


@functools.lru_cache(maxsize=4096)
def _command_notes(
    status_command: str, exact: bool
) -> tuple[tuple[tuple[str, str, str | None], ...], frozenset[str]]:
    """(code, message, once-key) of the warnings about one command's words, and the keys `_Ctx.note` files
    them under (the same commands recur in every mode lint plans, so this is cached)."""
    out: list[tuple[str, str, str | None]] = []
    if not exact:
        out.append(
            (
                "TIPC302",
                "command is not valid shell words (unbalanced quotes); split on whitespace: "
                f"{status_command.strip()}",
                None,
            )
        )
    for word in status_command.split():
        if word.startswith((">", "'", '"')) or word == "2>&1":
            continue
        if "*" in word or "?" in word:
            out.append(
                (
                    "TIPC303",
                    f"{word!r} is expanded by bash when the script evals the command (pathname expansion "
                    "at run time); the planned argv keeps it literally",
                    f"glob:{word}",
                )
            )
        elif "$" in word:
            out.append(
                (
                    "TIPC304",
                    f"{word!r} contains `$`: the script's eval expands it from the environment at run time",
                    f"var:{word}",
                )
            )
    return tuple(out), frozenset(once or f"{code}:{message}" for code, message, once in out)


def _writes(slot: Slot, path: str, what: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """(writes, writes_unknown) of a command passing `set_param(slot.key, path)` as its output location."""
    if set_param(slot.key, path).strip() == "":
        why = "key is null" if test_eq(slot.key, "null") or not slot.key else "value is empty or null"
        return (), f"the {what} gets no output-dir argument ({why}): it writes where its script defaults to"
    return ((slot.key, path),), ""
