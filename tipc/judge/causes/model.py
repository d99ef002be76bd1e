"""The causes catalogue's vocabulary and values (schema tipc.causes/2): the closed set of condition
operators (`OPERATORS`), the statuses, stages, switches and origins a condition may name, the limits on what
is read, and the frozen values matching works on: `Earlier` and `Context` (what is known around a failed
step), `Condition` and `Entry` (a catalogue entry as loaded), the facts of one step and a condition's hit.
Pure values: no I/O, no import from the other modules of tipc.judge.causes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

CAUSES_SCHEMA = "tipc.causes/2"


CAUSES_FILENAME = "causes.yaml"


LOG_TAIL_BYTES = 200_000  # how much of a log's end diagnose_log reads: tracebacks sit at the end


MAX_LINE_CHARS = 2_000  # a longer line (progress bars joined by \r) is cut before matching


MAX_EVIDENCE_CHARS = 300


MAX_CODE_FILES = 3000  # code searched for a `code` condition or a missing path's origin


MAX_CODE_BYTES = 1_000_000  # per file


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


_VERSION_SPEC = re.compile(r"^(<=|>=|<|>|==|!=)?\s*(\d+(?:\.\d+)*)$")


STATUSES = ("passed", "failed", "timeout", "blocked", "skipped", "interrupted", "absent")


STAGES = ("prepare", "train", "eval", "export", "infer", "quant", "serve", "client", "other")


# tipc's switches a cause can ask about (what the run was given, read back from the record)
SWITCHES = ("device-cpu", "paddle-compat-export", "paddle-compat-zlib", "network", "no-prepare", "python")


ORIGINS = ("argv", "code", "download", "unknown")


# The closed set of condition operators: name -> the kind of value it takes.
OPERATORS: dict[str, str] = {
    # the step's own output and facts
    "output": "regex list",
    "output_absent": "regex",
    "argv": "regex",
    "exit_code": "int list",
    "signal": "signal list",
    "status": "status list",
    "stage": "stage list",
    "file_exists": "path",
    "file_missing": "path",
    # preconditions: what is known around the step
    "paddle": "version spec",
    "pir": "bool",
    "switch": "switch list",
    "no_switch": "switch list",
    "upstream": "upstream",
    "missing_from": "origin list",
    "backbone": "bool",
    "code": "regex",
    "follows": "stage list",
    "follows_silent": "stage list",
    "module_in_repo": "bool",
    "loaded": "bool",
    "any": "condition list",
}


# Operators that observe the failure itself: every entry rests on at least one of them.
_OBSERVING = frozenset({"output", "exit_code", "signal", "status"})


# Groups each fact operator gives an entry's text when it holds (besides the output patterns' own).
_FACT_GROUPS: dict[str, frozenset[str]] = {
    "paddle": frozenset({"paddle"}),
    "code": frozenset({"where", "code"}),
    "missing_from": frozenset({"origin", "where"}),
    "follows": frozenset({"upstream", "upstream_status", "upstream_cause", "upstream_log", "made_by"}),
    "follows_silent": frozenset({"upstream", "upstream_error", "upstream_log", "made_by"}),
    "loaded": frozenset({"load", "cores"}),
    "upstream": frozenset({"upstream_step"}),
}


# Groups every entry may use: facts of the step that are always known (or read as a plain fallback).
_ALWAYS_GROUPS = frozenset(
    {"exception", "message", "frame", "python", "stage", "step", "log", "exit", "last", "pip", "paddle"}
)


@dataclass(frozen=True)
class Earlier:
    """An earlier step of the run, as a cause sees it."""

    id: str
    stage: str
    status: str
    argv: tuple[str, ...] = ()
    reason: str = ""
    cause: str = ""  # its first cause, in words
    log: str = ""
    writes: tuple[str, ...] = ()  # paths the planner knows it writes
    # the exception its log ends with although it exited 0 (a failure the step hid), if any
    error: str = ""
    code_files: tuple[str, ...] = ()  # repo files its entry script reaches


@dataclass(frozen=True)
class Context:
    """What is known around a failed step besides its output. Unknown facts are None / empty, and a
    precondition on an unknown fact does not hold."""

    paddle: str | None = None  # version of the Paddle the step's interpreter imports
    pir: bool | None = None  # PIR in force for the step (FLAGS_enable_pir_api, else the version's default)
    switches: frozenset[str] = frozenset()  # SWITCHES in force
    stage: str | None = None
    status: str = "failed"
    step: str = ""
    earlier: tuple[Earlier, ...] = ()  # earlier steps, nearest first
    depends_on: tuple[str, ...] = ()  # ids of steps this one consumes (transitively)
    repo: Path | None = None  # where the repo's code is readable
    code_files: tuple[str, ...] = ()  # repo files the step's entry script reaches (searched first)
    prepare_text: str = ""  # test_tipc/prepare.sh as committed
    output_dir: str = ""  # the chain's output folder (repo-relative): prepare.sh never makes what is in it
    python: str = ""  # the interpreter that ran the step
    log: str = ""  # the step's log, as the user finds it
    load: tuple[float, int] | None = None  # (1-minute load average, cores) when the step ended
    pip_names: Mapping[str, str] = field(default_factory=dict)  # module -> pip distribution


@dataclass(frozen=True)
class Condition:
    op: str
    patterns: tuple[re.Pattern[str], ...] = ()
    ints: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    path: str = ""
    flag: bool = False
    spec: tuple[str, tuple[int, ...]] = ("", ())
    children: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Entry:
    id: str
    conditions: tuple[Condition, ...]
    cause: str
    remedy: str
    switch: str | None
    fallback: bool
    last_resort: bool
    line: int


@dataclass(frozen=True)
class _Facts:
    lines: tuple[str, ...]
    argv: str
    argv_words: tuple[str, ...]
    exit_code: int | None
    signal_name: str | None
    cwd: Path | None
    context: Context
    backbones: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class _Hit:
    evidence: str
    groups: dict[str, str]
    line_index: int | None  # which output line, for fallback entries
    upstream: str | None = None  # the earlier step a `follows` condition named
