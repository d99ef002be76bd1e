"""Plain causes of failed steps, from the catalogue `specs/causes/causes.yaml` (schema tipc.causes/1).

A failed step's output (and a few facts: exit code, signal, argv, files in its working directory) is matched
against the catalogue's entries in file order; every entry that matches gives a `Cause` (an id, the cause in
one plain line, a remedy, the tipc switch that applies it if any, and the log line that matched). Matching
uses a closed set of condition operators (see `OPERATORS`), never eval.
"""

from __future__ import annotations

import functools
import re
import signal as _signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.core.errors import ConfigError

# tipc.core.yamlschema (and PyYAML) is imported where a catalogue is loaded: tipc.execute.record (which holds
# Cause values)
# must stay cheap to import.

CAUSES_SCHEMA = "tipc.causes/1"
CAUSES_FILENAME = "causes.yaml"
LOG_TAIL_BYTES = 200_000  # how much of a log's end diagnose_log reads: tracebacks sit at the end
MAX_LINE_CHARS = 2_000  # a longer line (progress bars joined by \r) is cut before matching
MAX_EVIDENCE_CHARS = 300
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")

# The closed set of condition operators: name -> the kind of value it takes.
OPERATORS: dict[str, str] = {
    "output": "regex list",
    "output_absent": "regex",
    "argv": "regex",
    "exit_code": "int list",
    "signal": "signal list",
    "file_exists": "path",
    "file_missing": "path",
    "any": "condition list",
}


@dataclass(frozen=True)
class Cause:
    id: str
    cause: str
    remedy: str
    switch: str | None = None
    evidence: str = ""  # the log line that matched (or the fact, e.g. "exit code -11")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "cause": self.cause,
            "remedy": self.remedy,
            "switch": self.switch,
            "evidence": self.evidence,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cause:
        switch = data.get("switch")
        return cls(
            id=str(data["id"]),
            cause=str(data.get("cause", "")),
            remedy=str(data.get("remedy", "")),
            switch=None if switch is None else str(switch),
            evidence=str(data.get("evidence", "")),
        )


@dataclass(frozen=True)
class Condition:
    op: str
    patterns: tuple[re.Pattern[str], ...] = ()
    ints: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    path: str = ""
    children: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Entry:
    id: str
    conditions: tuple[Condition, ...]
    cause: str
    remedy: str
    switch: str | None
    fallback: bool
    line: int


@dataclass(frozen=True)
class _Facts:
    lines: tuple[str, ...]
    argv: str
    exit_code: int | None
    signal_name: str | None
    cwd: Path | None


@dataclass(frozen=True)
class _Hit:
    evidence: str
    groups: dict[str, str]
    line_index: int | None  # which output line, for fallback entries


class Catalogue:
    def __init__(self, entries: Sequence[Entry], source: str = "") -> None:
        self.entries = tuple(entries)
        self.source = source

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
    ) -> list[Cause]:
        """Every entry that matches, in catalogue order (most specific first)."""
        if signal_name is None and exit_code is not None and exit_code < 0:
            signal_name = _signal_of(-exit_code)
        facts = _Facts(_lines(output), " ".join(argv), exit_code, _norm_signal(signal_name), cwd)
        found: list[Cause] = []
        explained: set[int] = set()
        for entry in self.entries:
            hit = _match_all(entry.conditions, facts)
            if hit is None:
                continue
            if entry.fallback and hit.line_index is not None and hit.line_index in explained:
                continue
            if hit.line_index is not None:
                explained.add(hit.line_index)
            found.append(
                Cause(
                    id=entry.id,
                    cause=_fill(entry.cause, hit.groups),
                    remedy=_fill(entry.remedy, hit.groups),
                    switch=entry.switch,
                    evidence=hit.evidence[:MAX_EVIDENCE_CHARS],
                )
            )
        return found


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
    """All conditions hold: the hit carries the first output evidence, else the first fact's."""
    best: _Hit | None = None
    for cond in conditions:
        hit = _match(cond, facts)
        if hit is None:
            return None
        if best is None or (best.line_index is None and hit.line_index is not None):
            best = _Hit(hit.evidence, {**hit.groups, **(best.groups if best else {})}, hit.line_index)
        else:
            best = _Hit(best.evidence, {**hit.groups, **best.groups}, best.line_index)
    return best


def _match_output(cond: Condition, facts: _Facts) -> _Hit | None:
    # Patterns in order, the first listed is the most telling; for it, the last matching line (nearest
    # the failure, after any earlier warnings of the same kind).
    for pattern in cond.patterns:
        for index in range(len(facts.lines) - 1, -1, -1):
            m = pattern.search(facts.lines[index])
            if m:
                groups = {k: v for k, v in m.groupdict().items() if v is not None}
                return _Hit(facts.lines[index].strip(), groups, index)
    return None


def _match_output_absent(cond: Condition, facts: _Facts) -> _Hit | None:
    if any(p.search(line) for line in facts.lines for p in cond.patterns):
        return None
    return _Hit("", {}, None)


def _match_argv(cond: Condition, facts: _Facts) -> _Hit | None:
    if facts.argv and any(p.search(facts.argv) for p in cond.patterns):
        return _Hit(f"command: {facts.argv}", {}, None)
    return None


def _match_exit_code(cond: Condition, facts: _Facts) -> _Hit | None:
    if facts.exit_code is not None and facts.exit_code in cond.ints:
        return _Hit(f"exit code {facts.exit_code}", {}, None)
    return None


def _match_signal(cond: Condition, facts: _Facts) -> _Hit | None:
    if facts.signal_name is not None and facts.signal_name in cond.names:
        return _Hit(f"killed by {facts.signal_name}", {}, None)
    return None


def _match_file(cond: Condition, facts: _Facts) -> _Hit | None:
    """file_exists / file_missing."""
    if facts.cwd is None:
        return None  # unknown: the fact cannot support a cause
    exists = (facts.cwd / cond.path).exists()
    if exists == (cond.op == "file_exists"):
        return _Hit(f"{cond.path} {'exists' if exists else 'is missing'}", {}, None)
    return None


def _match_any(cond: Condition, facts: _Facts) -> _Hit | None:
    hits = [h for h in (_match(c, facts) for c in cond.children) if h is not None]
    if not hits:
        return None
    with_line = [h for h in hits if h.line_index is not None]
    return with_line[0] if with_line else hits[0]


# One matcher per operator of OPERATORS.
_MATCHERS: dict[str, Callable[[Condition, _Facts], _Hit | None]] = {
    "output": _match_output,
    "output_absent": _match_output_absent,
    "argv": _match_argv,
    "exit_code": _match_exit_code,
    "signal": _match_signal,
    "file_exists": _match_file,
    "file_missing": _match_file,
    "any": _match_any,
}


def _match(cond: Condition, facts: _Facts) -> _Hit | None:
    matcher = _MATCHERS.get(cond.op)
    if matcher is None:
        raise AssertionError(f"operator {cond.op!r} escaped the schema")  # the loader admits only OPERATORS
    return matcher(cond, facts)


def _fill(template: str, groups: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: groups.get(m.group(1), m.group(0)), template)


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


@functools.cache
def _schema() -> Any:
    from tipc.core.yamlschema import Bool, Enum, Field, Int, Lazy, Map, OneOf, Seq, Str, Tagged, regex_problem

    regex = Str(check=regex_problem, what="a Python regex")
    signal = Str(check=_signal_problem, what="a signal name such as SIGSEGV")
    path = Str(check=_path_problem, what="a relative path inside the step's working directory")
    kinds: dict[str, Any] = {
        "regex list": OneOf((regex, Seq(regex, min_items=1))),
        "regex": OneOf((regex, Seq(regex, min_items=1, max_items=1))),
        "int list": OneOf((Int(), Seq(Int(), min_items=1))),
        "signal list": OneOf((signal, Seq(signal, min_items=1))),
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
        },
        what="a cause mapping with id, when, cause, remedy",
    )
    return Map(
        {
            "schema": Field(Enum((CAUSES_SCHEMA,)), identifies=True),
            "causes": Field(Seq(entry, min_items=1), True),
        },
        what="a causes catalogue mapping with schema and causes",
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
    return Catalogue(entries, where)


def _entry(doc: Any, raw: dict[str, Any], keys: tuple[str | int, ...]) -> Entry:
    texts = {key: " ".join(raw[key].split()) for key in ("cause", "remedy")}
    conditions = tuple(_condition(doc, c, (*keys, "when", i), 0) for i, c in enumerate(raw["when"]))
    if not any(_observes(c) for c in conditions):
        raise doc.error((*keys, "when"), "needs an output, exit_code or signal condition to rest on")
    groups = _group_names(conditions)
    for key, value in texts.items():
        for name in _PLACEHOLDER.findall(value):
            if name not in groups:
                raise doc.error(
                    (*keys, key), f"{{{name}}} is not a named group of every `output` pattern of this cause"
                )
    return Entry(
        raw["id"],
        conditions,
        texts["cause"],
        texts["remedy"],
        raw.get("switch"),
        raw["fallback"],
        doc.line(keys),
    )


def _observes(cond: Condition) -> bool:
    if cond.op == "any":
        return all(_observes(c) for c in cond.children)
    return cond.op in ("output", "exit_code", "signal")


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
    if op in ("output", "output_absent", "argv"):
        return Condition(op, patterns=tuple(re.compile(r) for r in values))
    if op == "exit_code":
        return Condition(op, ints=tuple(values))
    if op == "signal":
        return Condition(op, names=tuple(str(_norm_signal(v)) for v in values))
    if op in ("file_exists", "file_missing"):
        return Condition(op, path=value)
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
    catalogue: Catalogue | None = None,
) -> list[Cause]:
    """The causes of a failed step, most specific first (empty when nothing in the catalogue matches)."""
    cat = catalogue if catalogue is not None else load_catalogue()
    return cat.diagnose(output, argv=argv, exit_code=exit_code, signal_name=signal_name, cwd=cwd)


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
    catalogue: Catalogue | None = None,
) -> list[Cause]:
    """`diagnose` over the tail (last ~200 KB) of a step's log file; facts alone when the log is missing."""
    return diagnose(
        read_tail(path),
        argv=argv,
        exit_code=exit_code,
        signal_name=signal_name,
        cwd=cwd,
        catalogue=catalogue,
    )
