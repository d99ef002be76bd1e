"""Loading `specs/causes/causes.yaml`: the schema (tipc.core.yamlschema) every entry is checked against,
and the checks the schema cannot state (each entry rests on an observing condition, its text names only
groups its conditions give, ids are unique). Any problem is a ConfigError located at file:line. The
built-in catalogue is read once (`load_catalogue()`).
"""

from __future__ import annotations

import functools
import re
import signal as _signal
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.errors import ConfigError
from tipc.judge.causes.catalogue import Catalogue
from tipc.judge.causes.logs import _norm_signal, _version_tuple
from tipc.judge.causes.model import (
    _ALWAYS_GROUPS,
    _FACT_GROUPS,
    _ID,
    _OBSERVING,
    _PLACEHOLDER,
    _VERSION_SPEC,
    CAUSES_FILENAME,
    CAUSES_SCHEMA,
    OPERATORS,
    ORIGINS,
    STAGES,
    STATUSES,
    SWITCHES,
    Condition,
    Entry,
)

if TYPE_CHECKING:
    from tipc.core.yamlschema import Document, Map, OneOf, Schema


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
def _schema() -> Map:
    from tipc.core.yamlschema import Bool, Enum, Field, Int, Lazy, Map, OneOf, Seq, Str, Tagged, regex_problem

    regex = Str(check=regex_problem, what="a Python regex")
    signal = Str(check=_signal_problem, what="a signal name such as SIGSEGV")
    path = Str(check=_path_problem, what="a relative path inside the step's working directory")

    def listed(values: tuple[str, ...], what: str) -> OneOf:
        one = Enum(values, what=f"{what} ({', '.join(values)})")
        return OneOf((one, Seq(one, min_items=1)))

    kinds: dict[str, Schema] = {
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


def _entry(doc: Document, raw: dict[str, Any], keys: tuple[str | int, ...]) -> Entry:
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


def _condition(doc: Document, raw: dict[str, Any], keys: tuple[str | int, ...], depth: int) -> Condition:
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
