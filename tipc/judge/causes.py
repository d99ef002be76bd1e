"""Plain causes of failed steps, from the catalogue `specs/causes/causes.yaml` (schema tipc.causes/2).

A failed step's output and what is known around it (the `Context`: the Paddle version of the interpreter
that ran it, PIR in force, tipc's switches in force, what the earlier steps did, the repo's code) are matched
against the catalogue's entries in file order. An entry holds when all its conditions hold: conditions on
the output (a log line matches), and preconditions on the context (`paddle: ">=3"`, `upstream: {stage:
export, status: passed}`, `switch: device-cpu` ...). A precondition whose fact is unknown does not hold, so
an entry fires only where what it claims is true. Matching uses a closed set of condition operators (see
`OPERATORS`), never eval.

The step's own error comes first (entries in file order); an entry with `follows` names an earlier step that
did not pass only when the file this step lacks is what that step should have made. An entry marked
`last_resort` (the unrecognised failure: its exception type and message) holds only when no other did.

`explain_step` is what the runner is handed (tipc.execute.runner.RunOptions.explain); `explain_record`
finds the causes of every failed step of a record read back (tipc check, the causes benchmark).
"""

from __future__ import annotations

import functools
import os
import re
import signal as _signal
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from tipc.core.causes import Cause, hide_own_frames
from tipc.core.errors import ConfigError

if TYPE_CHECKING:
    from tipc.core.steps import Plan, Step
    from tipc.execute.record import RunRecord, StepResult

__all__ = [
    "OPERATORS",
    "Catalogue",
    "Cause",
    "Context",
    "Earlier",
    "default_path",
    "diagnose",
    "diagnose_log",
    "explain_record",
    "explain_step",
    "load_catalogue",
    "read_tail",
]

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


class Catalogue:
    def __init__(
        self,
        entries: Sequence[Entry],
        source: str = "",
        backbones: Sequence[re.Pattern[str]] = (),
        pip_names: Mapping[str, str] | None = None,
    ) -> None:
        self.entries = tuple(entries)
        self.source = source
        self.backbones = tuple(backbones)
        self.pip_names = dict(pip_names or {})

    def __len__(self) -> int:
        return len(self.entries)

    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.entries)

    def diagnose(
        self,
        output: str,
        *,
        argv: Sequence[str] = (),
        exit_code: int | None = None,
        signal_name: str | None = None,
        cwd: Path | None = None,
        context: Context | None = None,
    ) -> list[Cause]:
        """Every entry that holds, in catalogue order (the step's own error first)."""
        if signal_name is None and exit_code is not None and exit_code < 0:
            signal_name = _signal_of(-exit_code)
        ctx = context if context is not None else Context()
        if not ctx.pip_names and self.pip_names:
            ctx = replace(ctx, pip_names=self.pip_names)
        facts = _Facts(
            _lines(hide_own_frames(output)),
            " ".join(argv),
            tuple(argv),
            exit_code,
            _norm_signal(signal_name),
            cwd,
            ctx,
            self.backbones,
        )
        always = _always_groups(facts)
        found: list[Cause] = []
        explained: set[int] = set()
        for entry in self.entries:
            if entry.last_resort and found:
                continue
            hit = _match_all(entry.conditions, facts)
            if hit is None:
                continue
            if entry.fallback and hit.line_index is not None and hit.line_index in explained:
                continue
            if hit.line_index is not None:
                explained.add(hit.line_index)
            groups = {**always, **hit.groups}
            if "module" in groups:
                top = groups["module"].split(".")[0]
                groups["pip"] = ctx.pip_names.get(top, top)
            found.append(
                Cause(
                    id=entry.id,
                    cause=_fill(entry.cause, groups),
                    remedy=_fill(entry.remedy, groups),
                    switch=entry.switch,
                    evidence=hit.evidence[:MAX_EVIDENCE_CHARS],
                    upstream=hit.upstream,
                )
            )
        return found


# --- facts every entry may name ---------------------------------------------------------------------


_EXCEPTION = re.compile(
    r"^(?P<exception>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)|error|Error))"
    r"(?::\s*(?P<message>.*))?$"
)
_FRAME_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _always_groups(facts: _Facts) -> dict[str, str]:
    ctx = facts.context
    groups = {
        "python": ctx.python or "the run's interpreter",
        "stage": ctx.stage or "this",
        "step": ctx.step or "this step",
        "log": ctx.log or "the step's log",
        "exit": "" if facts.exit_code is None else str(facts.exit_code),
        "last": facts.lines[-1].strip()[:MAX_EVIDENCE_CHARS] if facts.lines else "(an empty log)",
        "paddle": ctx.paddle or "unknown",
        "exception": "",
        "message": "",
        "frame": "the traceback",
        "pip": "",
    }
    exc = _last_exception(facts.lines)
    if exc is not None:
        groups["exception"], groups["message"] = exc
    frame = _repo_frame(facts)
    if frame is not None:
        groups["frame"] = frame
    return groups


def _last_exception(lines: Sequence[str]) -> tuple[str, str] | None:
    """The exception type and message of the last traceback in `lines` (the first unindented line after its
    frames), else of the last unindented exception-looking line."""
    start = None
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("Traceback (most recent call last)"):
            start = i + 1
            break
    candidates = lines[start:] if start is not None else list(reversed(lines))
    for line in candidates:
        if line[:1].isspace():
            continue
        m = _EXCEPTION.match(line.strip())
        if m:
            return m.group("exception"), (m.group("message") or "").strip()[:MAX_EVIDENCE_CHARS]
    return None


def _repo_frame(facts: _Facts) -> str | None:
    """The last traceback frame inside the repo (`path:line`, repo-relative), nearest the failure."""
    repo = facts.context.repo
    for line in reversed(facts.lines):
        m = _FRAME_LINE.match(line)
        if not m:
            continue
        rel = _repo_relative(m.group("file"), repo, facts.cwd)
        if rel is not None:
            return f"{rel}:{m.group('line')}"
    return None


def _repo_relative(name: str, repo: Path | None, cwd: Path | None) -> str | None:
    if repo is None or name.startswith("<"):
        return None
    path = Path(name)
    if not path.is_absolute():
        path = (cwd or repo) / path
    try:
        rel = Path(os.path.normpath(path)).relative_to(repo)
    except ValueError:
        return None
    if rel.parts and rel.parts[0] in (".venv", "venv", "site-packages"):
        return None
    return rel.as_posix()


# --- matching -----------------------------------------------------------------------------------------


def _lines(output: str) -> tuple[str, ...]:
    out = []
    for raw in output.splitlines():
        line = _ANSI.sub("", raw).rstrip()  # splitlines also splits at \r: a progress bar's frames part
        if line:
            out.append(line[:MAX_LINE_CHARS])
    return tuple(out)


def _signal_of(number: int) -> str | None:
    try:
        return _signal.Signals(number).name
    except ValueError:
        return None


def _norm_signal(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip().upper()
    return name if name.startswith("SIG") else "SIG" + name


def _match_all(conditions: Sequence[Condition], facts: _Facts) -> _Hit | None:
    """All conditions hold, output conditions first (fact conditions read the output's groups, e.g.
    {path}): the hit carries the first output evidence, else the first fact's."""
    ordered = sorted(conditions, key=lambda c: 0 if c.op in ("output", "any") else 1)
    best: _Hit | None = None
    upstream: str | None = None
    groups: dict[str, str] = {}
    for cond in ordered:
        hit = _match(cond, facts, groups)
        if hit is None:
            return None
        groups = {**hit.groups, **groups}
        upstream = upstream or hit.upstream
        if best is None or (best.line_index is None and hit.line_index is not None):
            best = hit
    if best is None:
        return None
    return _Hit(best.evidence, groups, best.line_index, upstream)


def _match_output(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    # Patterns in order, the first listed is the most telling; for it, the last matching line (nearest
    # the failure, after any earlier warnings of the same kind).
    for pattern in cond.patterns:
        for index in range(len(facts.lines) - 1, -1, -1):
            m = pattern.search(facts.lines[index])
            if m:
                found = {k: v for k, v in m.groupdict().items() if v is not None}
                return _Hit(facts.lines[index].strip(), found, index)
    return None


def _match_output_absent(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if any(p.search(line) for line in facts.lines for p in cond.patterns):
        return None
    return _Hit("", {}, None)


def _match_argv(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if facts.argv and any(p.search(facts.argv) for p in cond.patterns):
        return _Hit(f"command: {facts.argv}", {}, None)
    return None


def _match_exit_code(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if facts.exit_code is not None and facts.exit_code in cond.ints:
        return _Hit(f"exit code {facts.exit_code}", {}, None)
    return None


def _match_signal(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if facts.signal_name is not None and facts.signal_name in cond.names:
        return _Hit(f"killed by {facts.signal_name}", {}, None)
    return None


def _match_status(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    status = facts.context.status
    return _Hit(f"status {status}", {}, None) if status in cond.names else None


def _match_stage(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    stage = facts.context.stage
    return _Hit("", {}, None) if stage is not None and stage in cond.names else None


def _match_file(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """file_exists / file_missing."""
    if facts.cwd is None:
        return None  # unknown: the fact cannot support a cause
    exists = (facts.cwd / cond.path).exists()
    if exists == (cond.op == "file_exists"):
        return _Hit(f"{cond.path} {'exists' if exists else 'is missing'}", {}, None)
    return None


def _match_paddle(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    version = facts.context.paddle
    if version is None or not _version_holds(version, cond.spec):
        return None
    return _Hit(f"Paddle {version}", {"paddle": version}, None)


def _match_pir(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    pir = facts.context.pir
    if pir is None or pir != cond.flag:
        return None
    return _Hit(f"PIR {'on' if pir else 'off'}", {}, None)


def _match_switch(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """switch: every named switch in force; no_switch: none of them."""
    in_force = facts.context.switches
    if cond.op == "switch":
        return _Hit("", {}, None) if all(n in in_force for n in cond.names) else None
    return _Hit("", {}, None) if not any(n in in_force for n in cond.names) else None


def _match_upstream(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """upstream: {stage, status}: the nearest earlier step of that stage (one this step consumes, else the
    nearest before it) has one of these statuses; `absent` when no earlier step has that stage."""
    stage = cond.names[0]
    wanted = cond.names[1:]
    step = _nearest(facts.context, stage)
    status = step.status if step is not None else "absent"
    if status not in wanted:
        return None
    return _Hit("", {"upstream_step": step.id if step is not None else "(none)"}, None)


def _nearest(ctx: Context, stage: str) -> Earlier | None:
    same = [e for e in ctx.earlier if e.stage == stage]
    consumed = [e for e in same if e.id in ctx.depends_on]
    found = consumed or same
    return found[0] if found else None


def _match_missing_from(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    path = groups.get("path")
    if not path:
        return None
    origin, where = _origin(path, facts)
    if origin not in cond.names:
        return None
    words = {
        "argv": "the step's command line (the config)",
        "code": f"the code at {where}" if where else "the code",
        "download": "a download",
        "unknown": "nothing tipc can see",
    }
    return _Hit("", {"origin": words[origin], "where": where or ""}, None)


def _match_backbone(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    path = groups.get("path")
    if not path:
        return None
    name = PurePosixPath(path.replace("\\", "/")).name
    known = any(p.search(name) or p.search(path) for p in facts.backbones)
    return _Hit("", {}, None) if known == cond.flag else None


def _match_code(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    found = _search_code(facts, cond.patterns[0])
    if found is None:
        return None
    where, text = found
    return _Hit(f"{where}: {text}", {"where": where, "code": text}, None)


def _match_follows(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """follows: an earlier step (of these stages) that did not pass should have made the missing {path}."""
    path = groups.get("path")
    if not path:
        return None
    ctx = facts.context
    ordered = sorted(ctx.earlier, key=lambda e: 0 if e.id in ctx.depends_on else 1)
    for step in ordered:
        if step.stage not in cond.names or step.status in ("passed", "skipped"):
            continue
        why = _would_make(step, path, facts)
        if why is None:
            continue
        status = step.status + (f" ({step.reason})" if step.reason and step.status != "blocked" else "")
        if step.status == "blocked":
            status = f"was blocked ({step.reason})" if step.reason else "was blocked"
        return _Hit(
            f"{step.id} {step.status}",
            {
                "upstream": step.id,
                "upstream_status": status,
                "upstream_cause": step.cause or step.reason or step.status,
                "upstream_log": step.log or "its log",
                "made_by": why,
            },
            None,
            upstream=step.id,
        )
    return None


def _match_follows_silent(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """follows_silent: an earlier step (of these stages) that passed although its log ends with an exception
    should have made the missing {path}: it failed and hid it (exit 0)."""
    path = groups.get("path")
    if not path:
        return None
    ctx = facts.context
    ordered = sorted(ctx.earlier, key=lambda e: 0 if e.id in ctx.depends_on else 1)
    for step in ordered:
        if step.stage not in cond.names or step.status != "passed" or not step.error:
            continue
        why = _would_make(step, path, facts)
        if why is None:
            continue
        return _Hit(
            f"{step.id} passed, its log ends with: {step.error}",
            {
                "upstream": step.id,
                "upstream_error": step.error,
                "upstream_log": step.log or "its log",
                "made_by": why,
            },
            None,
            upstream=step.id,
        )
    return None


def _match_module_in_repo(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    module = groups.get("module")
    repo = facts.context.repo
    if not module or repo is None:
        return None
    top = module.split(".")[0]
    in_repo = any(
        (base / top).is_dir() or (base / f"{top}.py").is_file() for base in {repo, facts.cwd or repo}
    ) or _named_in_code(facts, top)
    return _Hit("", {}, None) if in_repo == cond.flag else None


def _named_in_code(facts: _Facts, top: str) -> bool:
    """The repo's own code imports `top` as one of its packages (a folder the code expects in the repo)."""
    pattern = re.compile(rf"^\s*(?:from|import)\s+{re.escape(top)}[.\s]")
    found = _search_code(facts, pattern)
    return found is not None and _is_package_name(top, facts.context.pip_names)


def _is_package_name(top: str, pip_names: Mapping[str, str]) -> bool:
    return top not in pip_names


def _match_loaded(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    load = facts.context.load
    if load is None:
        return None
    average, cores = load
    loaded = average > max(1, cores)
    if loaded != cond.flag:
        return None
    return _Hit(
        f"load average {average:.1f} on {cores} cores", {"load": f"{average:.1f}", "cores": str(cores)}, None
    )


def _match_any(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    hits = [h for h in (_match(c, facts, groups) for c in cond.children) if h is not None]
    if not hits:
        return None
    with_line = [h for h in hits if h.line_index is not None]
    return with_line[0] if with_line else hits[0]


# One matcher per operator of OPERATORS.
_MATCHERS: dict[str, Callable[[Condition, _Facts, Mapping[str, str]], _Hit | None]] = {
    "output": _match_output,
    "output_absent": _match_output_absent,
    "argv": _match_argv,
    "exit_code": _match_exit_code,
    "signal": _match_signal,
    "status": _match_status,
    "stage": _match_stage,
    "file_exists": _match_file,
    "file_missing": _match_file,
    "paddle": _match_paddle,
    "pir": _match_pir,
    "switch": _match_switch,
    "no_switch": _match_switch,
    "upstream": _match_upstream,
    "missing_from": _match_missing_from,
    "backbone": _match_backbone,
    "code": _match_code,
    "follows": _match_follows,
    "follows_silent": _match_follows_silent,
    "module_in_repo": _match_module_in_repo,
    "loaded": _match_loaded,
    "any": _match_any,
}


def _match(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    matcher = _MATCHERS.get(cond.op)
    if matcher is None:
        raise AssertionError(f"operator {cond.op!r} escaped the schema")  # the loader admits only OPERATORS
    return matcher(cond, facts, groups)


def _fill(template: str, groups: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: groups.get(m.group(1), m.group(0)), template)


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in re.split(r"[.+-]", text):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


def _version_holds(version: str, spec: tuple[str, tuple[int, ...]]) -> bool:
    op, wanted = spec
    have = _version_tuple(version)
    if not have:
        return False
    width = len(wanted)
    have = have[:width] + (0,) * max(0, width - len(have))
    return {
        "<": have < wanted,
        "<=": have <= wanted,
        ">": have > wanted,
        ">=": have >= wanted,
        "==": have == wanted,
        "!=": have != wanted,
    }[op or "=="]


# --- where a missing path comes from ------------------------------------------------------------------

_DOWNLOAD_CACHES = re.compile(
    r"(?:^|/)(?:\.cache|\.paddle\w*|\.paddleclas|\.paddleseg|\.paddlenlp|\.paddledet|hapi/weights|\.keras|"
    r"\.torch)(?:/|$)"
)
_DOWNLOAD_LINE = re.compile(r"(?i)\bdownload(?:ing|ed)?\b")


def _norm_path(text: str) -> str:
    text = text.strip().strip("'\"`").replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text


def _origin(path: str, facts: _Facts) -> tuple[str, str | None]:
    """Where a missing path is named: the step's command line (the config), a download, the code (with
    where), or unknown."""
    norm = _norm_path(path)
    name = PurePosixPath(norm).name
    for word in facts.argv_words:
        value = _norm_path(word.split("=", 1)[1] if word.startswith("-") and "=" in word else word)
        if not value or len(value) < 3:
            continue
        if value == norm or ("/" in value and norm.startswith(value.rstrip("/") + "/")):
            return "argv", None
    if _DOWNLOAD_CACHES.search(norm) or any(
        _DOWNLOAD_LINE.search(line) and name and name in line for line in facts.lines
    ):
        return "download", None
    if name:
        literal = re.compile(r"""['"][^'"\n]*""" + re.escape(name) + r"""['"]""")
        found = _search_code(facts, literal)
        if found is not None:
            return "code", found[0]
    return "unknown", None


def _would_make(step: Earlier, path: str, facts: _Facts) -> str | None:
    """Why an earlier step should have made `path`, or None: prepare.sh names the folder the path starts in
    (never the chain's output folder); another step (of a stage that makes such files: weights are
    training's, models export's) writes to a folder above it (the planner knows its writes), or its code
    names the file, or, where its writes are unknown, its stage makes such files."""
    norm = _norm_path(path)
    if step.stage == "prepare":
        return _prepare_would_make(norm, facts)
    makers = _MAKERS.get(PurePosixPath(norm).suffix)
    if makers is not None and step.stage not in makers:
        return None  # weights come from training, a model from export: an eval step only reads them
    why = _writes_above(step, norm) or _code_names(step, norm, facts)
    if why is not None:
        return why
    if not step.writes and makers is not None:
        return f"the {step.stage} stage writes such files"
    return None


def _in_output_dir(norm: str, facts: _Facts) -> bool:
    out_dir = _norm_path(facts.context.output_dir).rstrip("/")
    return bool(out_dir) and (norm == out_dir or norm.startswith(out_dir + "/") or f"/{out_dir}/" in norm)


def _prepare_would_make(norm: str, facts: _Facts) -> str | None:
    """prepare.sh names the folder `norm` starts in (the chain's output folder is never prepare's)."""
    if _in_output_dir(norm, facts):
        return None
    parts = [p for p in PurePosixPath(norm).parts if p not in ("/", ".", "..") and p not in _GENERIC_PARTS]
    first = parts[0] if parts else ""
    if len(first) >= 3 and re.search(rf"(?<![\w.-]){re.escape(first)}(?![\w-])", facts.context.prepare_text):
        return f"test_tipc/prepare.sh names `{first}`"
    return None


def _writes_above(step: Earlier, norm: str) -> str | None:
    """The step writes `norm` itself, a folder above it, or a file it is the stem of."""
    for written in step.writes:
        value = _norm_path(written).rstrip("/")
        if len(value) >= 3 and (
            norm == value or norm.startswith(value + "/") or norm.startswith(value + ".")
        ):
            return f"it writes to `{value}`"
    return None


def _code_names(step: Earlier, norm: str, facts: _Facts) -> str | None:
    """The step's own code names the file `norm` ends in (as a string literal)."""
    name = PurePosixPath(norm).name
    if not (name and "." in name and step.code_files and facts.context.repo is not None):
        return None
    literal = re.compile(r"""['"][^'"\n]*""" + re.escape(name) + r"""['"]""")
    for rel in step.code_files:
        hit = _grep(facts.context.repo / rel, literal)
        if hit is not None:
            return f"its code names `{name}` at {rel}:{hit[0]}"
    return None


# Which stages make a file of a kind (by suffix): a weights file is training's, a model file export's.
_WEIGHTS = (".pdparams", ".pdopt", ".pdckpt", ".pth", ".ckpt")
_MODELS = (".pdmodel", ".pdiparams", ".onnx")
_MAKERS: dict[str, frozenset[str]] = {
    **{s: frozenset({"train"}) for s in _WEIGHTS},
    **{s: frozenset({"export", "quant"}) for s in _MODELS},
}


_GENERIC_PARTS = frozenset(
    {
        "test_tipc",
        "output",
        "home",
        "root",
        "tmp",
        "work",
        "usr",
        "lib",
        "python",
        "src",
        "tools",
        "configs",
        "~",
    }
)


# --- the repo's code ----------------------------------------------------------------------------------


def _search_code(facts: _Facts, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """The first line of the repo's code matching `pattern`: files of the traceback first (nearest the
    failure first), then the files the entry script reaches, then the rest of the repo's Python files."""
    ctx = facts.context
    repo = ctx.repo
    if repo is None:
        return None
    ordered: list[str] = []
    for line in reversed(facts.lines):
        m = _FRAME_LINE.match(line)
        if m:
            rel = _repo_relative(m.group("file"), repo, facts.cwd)
            if rel is not None and rel not in ordered:
                ordered.append(rel)
    ordered += [f for f in ctx.code_files if f not in ordered]
    for rel in ordered:
        hit = _grep(repo / rel, pattern)
        if hit is not None:
            return f"{rel}:{hit[0]}", hit[1]
    if ctx.code_files:
        return None  # the entry script's own code was searched: the rest of the repo is not its code
    for rel in _repo_python_files(str(repo)):
        if rel in ordered:
            continue
        hit = _grep(repo / rel, pattern)
        if hit is not None:
            return f"{rel}:{hit[0]}", hit[1]
    return None


def _grep(path: Path, pattern: re.Pattern[str]) -> tuple[int, str] | None:
    text = _read_code(str(path))
    if not text:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        if pattern.search(line):
            return number, stripped[:200]
    return None


@functools.lru_cache(maxsize=4096)
def _read_code(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_CODE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


@functools.lru_cache(maxsize=16)
def _repo_python_files(repo: str) -> tuple[str, ...]:
    out: list[str] = []
    skip = {".git", "__pycache__", "node_modules", ".venv", "venv", "output", "site-packages"}
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                out.append(os.path.relpath(os.path.join(root, name), repo).replace(os.sep, "/"))
                if len(out) >= MAX_CODE_FILES:
                    return tuple(out)
    return tuple(out)


# --- loading ------------------------------------------------------------------------------------------


def default_path() -> Path:
    from tipc.core.resources import data_dir

    # in a folder of its own: every specs/*.yaml is a ruleset (tipc.judge.rules.builtin_ruleset_names)
    return data_dir("specs") / "causes" / CAUSES_FILENAME


def load_catalogue(path: Path | None = None) -> Catalogue:
    """Read and schema-check a catalogue; ConfigError (file:line) on any problem."""
    if path is None:
        return _default_catalogue()
    return _load(path)


@functools.lru_cache(maxsize=1)
def _default_catalogue() -> Catalogue:
    return _load(default_path())


def _signal_problem(text: str) -> str | None:
    name = _norm_signal(text)
    return None if name is not None and name in _signal.Signals.__members__ else "not a known signal"


def _path_problem(text: str) -> str | None:
    return "absolute or leaving the folder" if text.startswith("/") or ".." in Path(text).parts else None


def _spec_problem(text: str) -> str | None:
    return None if _VERSION_SPEC.match(text.strip()) else "a version spec such as '>=3' or '<2.6'"


@functools.cache
def _schema() -> Any:
    from tipc.core.yamlschema import Bool, Enum, Field, Int, Lazy, Map, OneOf, Seq, Str, Tagged, regex_problem

    regex = Str(check=regex_problem, what="a Python regex")
    signal = Str(check=_signal_problem, what="a signal name such as SIGSEGV")
    path = Str(check=_path_problem, what="a relative path inside the step's working directory")

    def listed(values: tuple[str, ...], what: str) -> Any:
        one = Enum(values, what=f"{what} ({', '.join(values)})")
        return OneOf((one, Seq(one, min_items=1)))

    kinds: dict[str, Any] = {
        "regex list": OneOf((regex, Seq(regex, min_items=1))),
        "regex": OneOf((regex, Seq(regex, min_items=1, max_items=1))),
        "int list": OneOf((Int(), Seq(Int(), min_items=1))),
        "signal list": OneOf((signal, Seq(signal, min_items=1))),
        "status list": listed(STATUSES[:-1], "a step status"),
        "stage list": listed(STAGES, "a stage"),
        "switch list": listed(SWITCHES, "a tipc switch"),
        "origin list": listed(ORIGINS, "where a missing path is named"),
        "version spec": Str(scalar=True, check=_spec_problem, what="a version spec such as '>=3'"),
        "bool": Bool(),
        "upstream": Map(
            {
                "stage": Field(Enum(STAGES), True),
                "status": Field(listed(STATUSES, "a step status"), True),
            },
            what="a mapping with stage and status",
        ),
        "path": path,
        "condition list": Seq(Lazy(lambda: condition), min_items=1, what="a non-empty list of conditions"),
    }
    condition = Tagged(
        {op: kinds[kind] for op, kind in OPERATORS.items()},
        what="a condition (a mapping with exactly one operator)",
    )
    entry = Map(
        {
            "id": Field(
                Str(pattern=_ID.pattern[1:-1], what="an id of lower case letters, digits, dots, dashes"), True
            ),
            "when": Field(Seq(condition, min_items=1, what="a non-empty list of conditions"), True),
            "cause": Field(Str(), True),
            "remedy": Field(Str(), True),
            "switch": Field(Str(pattern="--.+", what="a tipc option such as --network")),
            "fallback": Field(Bool(), default=False),
            "last_resort": Field(Bool(), default=False),
        },
        what="a cause mapping with id, when, cause, remedy",
    )
    return Map(
        {
            "schema": Field(Enum((CAUSES_SCHEMA,)), identifies=True),
            "backbones": Field(Seq(regex), default=[]),
            "causes": Field(Seq(entry, min_items=1), True),
        },
        what="a causes catalogue mapping with schema, backbones and causes",
    )


def _load(path: Path) -> Catalogue:
    from tipc.core.yamlschema import Document

    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise ConfigError(where, None, f"cannot read causes catalogue: {exc}") from None
    doc = Document(text, where)
    data = doc.conform(_schema())
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(data["causes"]):
        entry = _entry(doc, raw, ("causes", index))
        if entry.id in seen:
            raise doc.error(
                ("causes", index), f"duplicate cause id {entry.id!r} (first on line {seen[entry.id]})"
            )
        seen[entry.id] = entry.line
        entries.append(entry)
    backbones = tuple(re.compile(r, re.IGNORECASE) for r in data["backbones"])
    return Catalogue(entries, where, backbones, _pip_names())


@functools.lru_cache(maxsize=1)
def _pip_names() -> dict[str, str]:
    """Module -> pip distribution, from specs/causes/modules.yaml (empty when it is absent)."""
    try:
        from tipc.judge.readiness import pip_names
    except ImportError:
        return {}
    return dict(pip_names())


def _entry(doc: Any, raw: dict[str, Any], keys: tuple[str | int, ...]) -> Entry:
    texts = {key: " ".join(raw[key].split()) for key in ("cause", "remedy")}
    conditions = tuple(_condition(doc, c, (*keys, "when", i), 0) for i, c in enumerate(raw["when"]))
    if not any(_observes(c) for c in conditions):
        raise doc.error((*keys, "when"), "needs an output, exit_code, signal or status condition to rest on")
    output_groups = _group_names(conditions)
    fact_groups = {g for c in conditions for g in _FACT_GROUPS.get(c.op, ())}
    for c in conditions:
        if c.op in ("missing_from", "backbone", "follows", "follows_silent") and "path" not in output_groups:
            raise doc.error(
                (*keys, "when"),
                f"`{c.op}` needs every `output` pattern to capture the missing file as (?P<path>...)",
            )
        if c.op == "module_in_repo" and "module" not in output_groups:
            raise doc.error(
                (*keys, "when"), "`module_in_repo` needs every `output` pattern to capture (?P<module>...)"
            )
    known = output_groups | fact_groups | _ALWAYS_GROUPS
    for key, value in texts.items():
        for name in _PLACEHOLDER.findall(value):
            if name not in known:
                raise doc.error(
                    (*keys, key),
                    f"{{{name}}} is not a named group of every `output` pattern of this cause, nor a fact "
                    "its conditions give",
                )
    return Entry(
        raw["id"],
        conditions,
        texts["cause"],
        texts["remedy"],
        raw.get("switch"),
        raw["fallback"],
        raw["last_resort"],
        doc.line(keys),
    )


def _observes(cond: Condition) -> bool:
    if cond.op == "any":
        return all(_observes(c) for c in cond.children)
    return cond.op in _OBSERVING


def _group_names(conditions: Sequence[Condition]) -> set[str]:
    """Named groups that every `output` pattern (at the top level) defines: safe to use in the text."""
    names: set[str] | None = None
    for cond in conditions:
        if cond.op != "output":
            continue
        for pattern in cond.patterns:
            defined = set(pattern.groupindex)
            names = defined if names is None else names & defined
    return names or set()


def _condition(doc: Any, raw: dict[str, Any], keys: tuple[str | int, ...], depth: int) -> Condition:
    if depth > 4:
        raise doc.error(keys, "conditions nest at most 4 levels deep")
    ((op, value),) = raw.items()
    values = value if isinstance(value, list) else [value]
    if op in ("output", "output_absent", "argv", "code"):
        return Condition(op, patterns=tuple(re.compile(r) for r in values))
    if op == "exit_code":
        return Condition(op, ints=tuple(values))
    if op == "signal":
        return Condition(op, names=tuple(str(_norm_signal(v)) for v in values))
    if op in ("file_exists", "file_missing"):
        return Condition(op, path=value)
    if op in ("status", "stage", "switch", "no_switch", "missing_from", "follows", "follows_silent"):
        return Condition(op, names=tuple(str(v) for v in values))
    if op == "upstream":
        statuses = value["status"] if isinstance(value["status"], list) else [value["status"]]
        return Condition(op, names=(str(value["stage"]), *(str(s) for s in statuses)))
    if op == "paddle":
        m = _VERSION_SPEC.match(str(value).strip())
        assert m is not None  # the schema checked it
        return Condition(op, spec=(m.group(1) or "==", _version_tuple(m.group(2))))
    if op in ("pir", "backbone", "module_in_repo", "loaded"):
        return Condition(op, flag=bool(value))
    return Condition(
        op, children=tuple(_condition(doc, c, (*keys, op, i), depth + 1) for i, c in enumerate(value))
    )


# --- entry points -------------------------------------------------------------------------------------


def diagnose(
    output: str,
    *,
    argv: Sequence[str] = (),
    exit_code: int | None = None,
    signal_name: str | None = None,
    cwd: Path | None = None,
    context: Context | None = None,
    catalogue: Catalogue | None = None,
) -> list[Cause]:
    """The causes of a failed step, its own error first (empty when nothing in the catalogue holds)."""
    cat = catalogue if catalogue is not None else load_catalogue()
    return cat.diagnose(
        output, argv=argv, exit_code=exit_code, signal_name=signal_name, cwd=cwd, context=context
    )


def read_tail(path: Path, limit: int = LOG_TAIL_BYTES) -> str:
    """The last `limit` bytes of a log, decoded leniently, starting at a line boundary. '' if unreadable."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            data = fh.read(limit)
    except OSError:
        return ""
    if size > limit:
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else data
    return data.decode("utf-8", errors="replace")


def diagnose_log(
    path: Path,
    *,
    argv: Sequence[str] = (),
    exit_code: int | None = None,
    signal_name: str | None = None,
    cwd: Path | None = None,
    context: Context | None = None,
    catalogue: Catalogue | None = None,
) -> list[Cause]:
    """`diagnose` over the tail (last ~200 KB) of a step's log file; facts alone when the log is missing."""
    return diagnose(
        read_tail(path),
        argv=argv,
        exit_code=exit_code,
        signal_name=signal_name,
        cwd=cwd,
        context=context,
        catalogue=catalogue,
    )


# --- from a run record --------------------------------------------------------------------------------

_DIAGNOSED = ("failed", "timeout")
_PIR_FLAG = "FLAGS_enable_pir_api"


def context_for(
    record: RunRecord,
    step: Step,
    result: StepResult,
    *,
    repo: Path,
    shown_log: str = "",
    load: tuple[float, int] | None = None,
    log_of: Callable[[Any], Path | None] | None = None,
) -> Context:
    """The Context of one step of `record` (a tipc.execute.record.RunRecord), the repo's code read at
    `repo`; `log_of(result)` says where an earlier step's log is readable (default: under `repo`)."""
    plan = record.plan
    env = dict(result.env_delta) if result is not None else {}
    paddle = record.paddle_version or (record.environment or {}).get("paddle_version")
    return Context(
        paddle=paddle,
        pir=_pir(env, paddle),
        switches=_switches(record, env),
        stage=step.stage.value,
        status=result.status.value if result is not None else "failed",
        step=step.id,
        earlier=_earlier(record, step, repo, log_of),
        depends_on=_consumed(plan, step),
        repo=repo,
        code_files=_code_files(repo, step),
        prepare_text=_read_code(str(repo / "test_tipc" / "prepare.sh")),
        output_dir=plan.output_dir,
        python=record.python or "",
        log=shown_log,
        load=load,
    )


def _pir(env: Mapping[str, str | None], paddle: str | None) -> bool | None:
    value = env.get(_PIR_FLAG)
    if value is not None:
        return value.strip().lower() not in ("0", "false", "off", "")
    if paddle is None:
        return None
    return _version_tuple(paddle)[:1] >= (3,)


def _switches(record: RunRecord, env: Mapping[str, str | None]) -> frozenset[str]:
    from tipc.core.steps import Stage

    plan = record.plan
    on: set[str] = set()
    if plan.overrides.device == "cpu":
        on.add("device-cpu")
    if plan.overrides.python:
        on.add("python")
    if (env.get(_PIR_FLAG) or "").strip().lower() in ("0", "false", "off"):
        on.add("paddle-compat-export")
    if "LD_PRELOAD" in env and "libz" in (env.get("LD_PRELOAD") or ""):
        on.add("paddle-compat-zlib")
    if not any(s.stage is Stage.PREPARE for s in plan.steps):
        on.add("no-prepare")
    sandbox = record.sandbox if isinstance(record.sandbox, dict) else None
    network = sandbox.get("network") if sandbox is not None else _network_now()
    if network:
        on.add("network")
    return frozenset(on)


def _network_now() -> bool:
    from tipc.execute import sandbox

    session = sandbox.current()
    return bool(session is not None and session.network)


def _earlier(
    record: RunRecord, step: Any, repo: Path, log_of: Callable[[Any], Path | None] | None = None
) -> tuple[Earlier, ...]:
    out: list[Earlier] = []
    for other in record.plan.steps:
        if other.id == step.id:
            break
        result = record.result(other.id)
        status = result.status.value if result is not None else "absent"
        causes = getattr(result, "causes", ()) if result is not None else ()
        error = ""
        if status == "passed" and result is not None and result.log and other.stage.value != "prepare":
            where = log_of(result) if log_of is not None else repo / result.log
            error = _hidden_error(where) if where is not None else ""
        out.append(
            Earlier(
                id=other.id,
                stage=other.stage.value,
                status=status,
                argv=tuple(result.argv or other.argv) if result is not None else tuple(other.argv),
                reason=result.reason if result is not None else "",
                cause=causes[0].cause if causes else "",
                log=(result.log or "") if result is not None else "",
                writes=tuple(p for _, p in other.writes),
                error=error,
                code_files=_code_files(repo, other) if status != "passed" or error else (),
            )
        )
    return tuple(reversed(out))


def _hidden_error(log: Path) -> str:
    """The exception a step's log ends with (its last traceback), for a step that exited 0 anyway."""
    lines = _lines(hide_own_frames(read_tail(log, 64_000)))
    if not any(line.startswith("Traceback (most recent call last)") for line in lines):
        return ""
    found = _last_exception(lines)
    return f"{found[0]}: {found[1]}".strip(": ") if found else ""


def _consumed(plan: Plan, step: Any) -> tuple[str, ...]:
    by_id = {s.id: s for s in plan.steps}
    out: list[str] = []
    todo = list(step.depends_on)
    while todo:
        sid = todo.pop(0)
        if sid in out:
            continue
        out.append(sid)
        dep = by_id.get(sid)
        if dep is not None:
            todo.extend(dep.depends_on)
    return tuple(out)


def _code_files(repo: Path, step: Any) -> tuple[str, ...]:
    from tipc.config.imports import entry_scripts

    cwd = repo / step.cwd
    try:
        entries = entry_scripts(step.argv, cwd, repo)
        if not entries:
            return ()
        return _scan_files(str(repo), tuple(str(e) for e in entries), str(cwd))
    except (OSError, ValueError, RecursionError):
        return ()


@functools.lru_cache(maxsize=64)
def _scan_files(repo: str, entries: tuple[str, ...], cwd: str) -> tuple[str, ...]:
    from tipc.config.imports import scan

    return scan(Path(repo), [Path(e) for e in entries], [Path(cwd)]).files


def _machine_load() -> tuple[float, int] | None:
    try:
        return os.getloadavg()[0], os.cpu_count() or 1
    except OSError:
        return None


def explain_step(
    record: RunRecord,
    step: Step,
    result: StepResult,
    log: Path | None,
    *,
    repo: Path | None = None,
    shown_log: str = "",
    catalogue: Catalogue | None = None,
    log_of: Callable[[Any], Path | None] | None = None,
) -> tuple[Cause, ...]:
    """The causes of one failed step of a run: what tipc.execute.runner.RunOptions.explain is given. `log`
    is where the step's log is readable now; `repo` where the repo's code is (the plan's repo by default)."""
    if result.status.value not in _DIAGNOSED:
        return ()
    where = repo if repo is not None else Path(record.plan.repo)
    ctx = context_for(
        record,
        step,
        result,
        repo=where,
        shown_log=shown_log or (result.log or ""),
        load=_machine_load(),
        log_of=log_of,
    )
    cwd = where / step.cwd
    return tuple(
        diagnose(
            read_tail(log) if log is not None else "",
            argv=result.argv or step.argv,
            exit_code=result.exit_code,
            cwd=cwd if cwd.is_dir() else None,
            context=ctx,
            catalogue=catalogue,
        )
    )


def explain_record(
    record: RunRecord,
    log_of: Callable[[Any], Path | None],
    *,
    repo: Path | None = None,
    catalogue: Catalogue | None = None,
    keep: Iterable[str] = ("resource-limit",),
    shown_log: Callable[[Any], str] | None = None,
) -> Any:
    """`record` with the causes of every failed step found afresh from its log (`log_of(result)` says where
    it is readable), in plan order so that a later step sees its upstream's causes. Causes the runner found
    itself (`keep`: sandbox limits) stay first."""
    kept = set(keep)
    by_id = {s.id: s for s in record.plan.steps}
    results = list(record.results)
    for index, result in enumerate(results):
        step = by_id.get(result.step_id)
        if step is None or result.status.value not in _DIAGNOSED:
            continue
        log = log_of(result)
        own = tuple(c for c in result.causes if c.id in kept)
        shown = shown_log(result) if shown_log is not None else ""
        found = explain_step(
            record, step, result, log, repo=repo, catalogue=catalogue, shown_log=shown, log_of=log_of
        )
        results[index] = replace(result, causes=(*own, *found))
        record = replace(record, results=tuple(results))  # later steps see this one's causes
    return record
