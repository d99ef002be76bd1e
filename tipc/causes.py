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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.errors import ConfigError

# tipc.rules.yamlnodes is imported where a catalogue is loaded: importing tipc.rules pulls in every check,
# and tipc.record (which holds Cause values) must stay cheap to import.

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
_ENTRY_KEYS = {"id", "when", "cause", "remedy", "switch", "fallback"}


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


def _match(cond: Condition, facts: _Facts) -> _Hit | None:
    op = cond.op
    if op == "output":
        # Patterns in order, the first listed is the most telling; for it, the last matching line (nearest
        # the failure, after any earlier warnings of the same kind).
        for pattern in cond.patterns:
            for index in range(len(facts.lines) - 1, -1, -1):
                m = pattern.search(facts.lines[index])
                if m:
                    groups = {k: v for k, v in m.groupdict().items() if v is not None}
                    return _Hit(facts.lines[index].strip(), groups, index)
        return None
    if op == "output_absent":
        if any(p.search(line) for line in facts.lines for p in cond.patterns):
            return None
        return _Hit("", {}, None)
    if op == "argv":
        if facts.argv and any(p.search(facts.argv) for p in cond.patterns):
            return _Hit(f"command: {facts.argv}", {}, None)
        return None
    if op == "exit_code":
        if facts.exit_code is not None and facts.exit_code in cond.ints:
            return _Hit(f"exit code {facts.exit_code}", {}, None)
        return None
    if op == "signal":
        if facts.signal_name is not None and facts.signal_name in cond.names:
            return _Hit(f"killed by {facts.signal_name}", {}, None)
        return None
    if op in ("file_exists", "file_missing"):
        if facts.cwd is None:
            return None  # unknown: the fact cannot support a cause
        exists = (facts.cwd / cond.path).exists()
        if exists == (op == "file_exists"):
            return _Hit(f"{cond.path} {'exists' if exists else 'is missing'}", {}, None)
        return None
    if op == "any":
        hits = [h for h in (_match(c, facts) for c in cond.children) if h is not None]
        if not hits:
            return None
        with_line = [h for h in hits if h.line_index is not None]
        return with_line[0] if with_line else hits[0]
    raise AssertionError(f"operator {op!r} escaped the schema")  # the loader admits only OPERATORS


def _fill(template: str, groups: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: groups.get(m.group(1), m.group(0)), template)


# --- loading ------------------------------------------------------------------------------------------


def default_path() -> Path:
    from tipc.resources import data_dir

    # in a folder of its own: every specs/*.yaml is a ruleset (tipc.rules.builtin_ruleset_names)
    return data_dir("specs") / "causes" / CAUSES_FILENAME


def load_catalogue(path: Path | None = None) -> Catalogue:
    """Read and schema-check a catalogue; ConfigError (file:line) on any problem."""
    if path is None:
        return _default_catalogue()
    return _load(path)


@functools.lru_cache(maxsize=1)
def _default_catalogue() -> Catalogue:
    return _load(default_path())


def _load(path: Path) -> Catalogue:
    from tipc.rules.yamlnodes import LMap, LSeq, YamlShapeError, load_located

    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise ConfigError(where, None, f"cannot read causes catalogue: {exc}") from None
    try:
        doc = load_located(text)
    except YamlShapeError as exc:
        raise ConfigError(where, exc.line, exc.message) from None
    if not isinstance(doc, LMap):
        raise ConfigError(where, 1, "a causes catalogue is a mapping with `schema` and `causes`")
    unknown = sorted(set(doc.items) - {"schema", "causes"})
    if unknown:
        raise ConfigError(
            where, doc.line_of(unknown[0]), f"unknown key {unknown[0]!r} (allowed: schema, causes)"
        )
    if doc.items.get("schema") != CAUSES_SCHEMA:
        raise ConfigError(where, doc.line_of("schema"), f"`schema` must be {CAUSES_SCHEMA!r}")
    causes = doc.items.get("causes")
    if not isinstance(causes, LSeq) or not causes.items:
        raise ConfigError(where, doc.line_of("causes"), "`causes` must be a non-empty list of entries")
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for index, node in enumerate(causes.items):
        entry = _entry(where, node, causes.line_of(index))
        if entry.id in seen:
            raise ConfigError(
                where, entry.line, f"duplicate cause id {entry.id!r} (first on line {seen[entry.id]})"
            )
        seen[entry.id] = entry.line
        entries.append(entry)
    return Catalogue(entries, where)


def _entry(where: str, node: Any, line: int) -> Entry:
    from tipc.rules.yamlnodes import LMap, LSeq

    if not isinstance(node, LMap):
        raise ConfigError(where, line, "each cause is a mapping with id, when, cause, remedy")
    for key in node.items:
        if key not in _ENTRY_KEYS:
            raise ConfigError(
                where, node.line_of(key), f"unknown key {key!r} (allowed: {', '.join(sorted(_ENTRY_KEYS))})"
            )
    for key in ("id", "when", "cause", "remedy"):
        if key not in node.items:
            raise ConfigError(where, node.line, f"cause entry lacks `{key}`")
    ident = node.items["id"]
    if not isinstance(ident, str) or not _ID.match(ident):
        raise ConfigError(
            where, node.line_of("id"), "`id` must be lower case letters, digits, dots and dashes"
        )
    texts: dict[str, str] = {}
    for key in ("cause", "remedy"):
        value = node.items[key]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(where, node.line_of(key), f"`{key}` must be a non-empty string")
        texts[key] = " ".join(value.split())
    switch = node.items.get("switch")
    if switch is not None and (not isinstance(switch, str) or not switch.startswith("--")):
        raise ConfigError(where, node.line_of("switch"), "`switch` must be a tipc option such as `--network`")
    fallback = node.items.get("fallback", False)
    if not isinstance(fallback, bool):
        raise ConfigError(where, node.line_of("fallback"), "`fallback` must be true or false")
    when = node.items["when"]
    if not isinstance(when, LSeq) or not when.items:
        raise ConfigError(where, node.line_of("when"), "`when` must be a non-empty list of conditions")
    conditions = tuple(_condition(where, c, when.line_of(i), 0) for i, c in enumerate(when.items))
    if not any(_observes(c) for c in conditions):
        raise ConfigError(
            where, node.line_of("when"), "`when` needs an output, exit_code or signal condition to rest on"
        )
    groups = _group_names(conditions)
    for key, value in texts.items():
        for name in _PLACEHOLDER.findall(value):
            if name not in groups:
                raise ConfigError(
                    where,
                    node.line_of(key),
                    f"{{{name}}} is not a named group of every `output` pattern of this cause",
                )
    return Entry(ident, conditions, texts["cause"], texts["remedy"], switch, fallback, node.line)


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


def _condition(where: str, node: Any, line: int, depth: int) -> Condition:
    from tipc.rules.yamlnodes import LMap, LSeq

    if depth > 4:
        raise ConfigError(where, line, "conditions nest at most 4 levels deep")
    if not isinstance(node, LMap) or len(node.items) != 1:
        raise ConfigError(
            where, line, f"a condition is a mapping with exactly one operator ({', '.join(OPERATORS)})"
        )
    op, value = next(iter(node.items.items()))
    line = node.line_of(op)
    if op not in OPERATORS:
        raise ConfigError(where, line, f"unknown operator {op!r} (known: {', '.join(OPERATORS)})")
    if op in ("output", "output_absent", "argv"):
        raw = value.items if isinstance(value, LSeq) else [value]
        if not raw or (op != "output" and len(raw) != 1):
            raise ConfigError(
                where, line, f"`{op}` takes {'a regex or a list' if op == 'output' else 'a regex'}"
            )
        return Condition(op, patterns=tuple(_regex(where, line, r) for r in raw))
    if op == "exit_code":
        raw = value.items if isinstance(value, LSeq) else [value]
        if not raw or not all(isinstance(v, int) and not isinstance(v, bool) for v in raw):
            raise ConfigError(where, line, "`exit_code` takes an integer or a list of integers")
        return Condition(op, ints=tuple(raw))
    if op == "signal":
        raw = value.items if isinstance(value, LSeq) else [value]
        names = []
        for v in raw:
            name = _norm_signal(v) if isinstance(v, str) else None
            if name is None or name not in _signal.Signals.__members__:
                raise ConfigError(where, line, f"`signal` takes signal names such as SIGSEGV, not {v!r}")
            names.append(name)
        return Condition(op, names=tuple(names))
    if op in ("file_exists", "file_missing"):
        if not isinstance(value, str) or not value or value.startswith("/") or ".." in Path(value).parts:
            raise ConfigError(
                where, line, f"`{op}` takes a relative path inside the step's working directory"
            )
        return Condition(op, path=value)
    # any
    if not isinstance(value, LSeq) or not value.items:
        raise ConfigError(where, line, "`any` takes a non-empty list of conditions")
    children = tuple(_condition(where, c, value.line_of(i), depth + 1) for i, c in enumerate(value.items))
    return Condition(op, children=children)


def _regex(where: str, line: int, raw: Any) -> re.Pattern[str]:
    if not isinstance(raw, str) or not raw:
        raise ConfigError(where, line, "a pattern must be a non-empty string (a Python regex)")
    try:
        return re.compile(raw)
    except re.error as exc:
        raise ConfigError(where, line, f"bad regex {raw!r}: {exc}") from None


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
