"""Load a ruleset file and check it against the strict rule schema. Every problem is a located RuleError.

File shape (YAML, read with the safe loader; anchors, merge keys and unknown keys are refused):

    schema: tipc.ruleset/1
    name: tipc-basic
    title: ...                      # optional
    description: ...                # optional
    sources: [seed002, ...]         # optional, documents read
    rules:
      - id: basic.code.entrypoints  # lower case, dots/dashes/underscores; unique in the file
        source: "seed002 §2.2.1"    # the spec section enforced
        severity: error             # error | warning
        description: ...
        applies_if: {<operator>: {...}}   # optional: when this does not PASS the rule is N-A
        check: {<operator>: {<param>: <value>, ...}}
        # combinators take a list: {all_of: [{file_exists: {path: a}}, {file_exists: {path: b}}]}
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from tipc.core.errors import RuleError
from tipc.core.fs import is_safe_relative
from tipc.core.yamlschema import (
    Bool,
    Document,
    Enum,
    Field,
    Int,
    Keys,
    Lazy,
    Map,
    Num,
    OneOf,
    Schema,
    Seq,
    Str,
    Tagged,
    decode,
    regex_problem,
)
from tipc.judge.rules.model import RULESET_SCHEMA, CheckSpec, Rule, Ruleset, Severity
from tipc.judge.rules.operators import LIST_OPERATORS, OPERATORS, Param

RULE_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,99}$")
MAX_CHECK_DEPTH = 8


def _inside_repo(text: str) -> str | None:
    return None if is_safe_relative(text) else "relative, no '..'"


_PATH = Str(check=_inside_repo, what="a path inside the repo")
_GLOB = Str(check=_inside_repo, what="a glob inside the repo")


def _param_schema(kind: str) -> Schema:
    if kind == "path":
        return _PATH
    if kind == "glob":
        return OneOf((_GLOB, Seq(_GLOB, min_items=1)))
    if kind == "regex":
        return Str(check=regex_problem, what="a regular expression")
    if kind == "str":
        return Str()
    if kind == "str_list":
        return Seq(Str(), min_items=1)
    if kind == "int":
        return Int(minimum=0, what="a whole number >= 0")
    if kind == "float":
        return Num()
    if kind == "bool":
        return Bool()
    if kind == "mapping":
        return Map(closed=False, nullable=True)
    if kind == "checks":
        return Seq(_CHECK, min_items=1, what="a non-empty list of checks")
    if kind.startswith("choice:"):
        return Enum(tuple(kind.split(":", 1)[1].split("|")))
    raise AssertionError(f"unknown parameter kind {kind}")


def _operator_schema(op: str, params: dict[str, Param]) -> Schema:
    if op in LIST_OPERATORS:
        return _param_schema("checks")
    fields = {name: Field(_param_schema(p.kind), required=p.required) for name, p in params.items()}
    return Map(fields, nullable=True, what=f"a mapping of parameters ({', '.join(params) or 'none'})")


@functools.cache
def check_schema() -> Schema:
    """A check: `{<operator>: {<param>: <value>}}` (combinators take a list of checks)."""
    return Tagged(
        {op: _operator_schema(op, o.params) for op, o in OPERATORS.items()},
        what="a check (a mapping with exactly one operator)",
    )


_CHECK = Lazy(check_schema)

RULE = Map(
    {
        "id": Field(Str(pattern=RULE_ID.pattern[1:-1], what=f"a rule id matching {RULE_ID.pattern}"), True),
        "source": Field(Str(), True),
        "severity": Field(Enum(("error", "warning")), True),
        "description": Field(Str(), True),
        "check": Field(_CHECK, True),
        "applies_if": Field(_CHECK),
    },
    what="a rule mapping (id, source, severity, description, check)",
)

RULESET = Map(
    {
        "schema": Field(Enum((RULESET_SCHEMA,)), identifies=True),
        "name": Field(
            Str(pattern=RULE_ID.pattern[1:-1], what=f"a ruleset name matching {RULE_ID.pattern}"), True
        ),
        "title": Field(Str(nonempty=False)),
        "description": Field(Str(nonempty=False)),
        "sources": Field(Seq(Str())),
        "rules": Field(Seq(RULE, min_items=1), True),
    },
    what="a ruleset mapping (schema, name, rules)",
)


def _spec(doc: Document, data: dict[str, Any], keys: Keys, depth: int) -> CheckSpec:
    if depth > MAX_CHECK_DEPTH:
        raise doc.error(keys, f"checks nest deeper than {MAX_CHECK_DEPTH} levels")
    ((op, raw),) = data.items()
    here = (*keys, op)
    operator = OPERATORS[op]
    given: dict[str, Any] = {"checks": raw} if op in LIST_OPERATORS else raw
    args: list[tuple[str, Any]] = []
    for name, spec in operator.params.items():
        if name not in given:
            args.append((name, {} if spec.kind == "mapping" else spec.default))
        elif spec.kind == "checks":
            at = here if op in LIST_OPERATORS else (*here, name)
            args.append((name, tuple(_spec(doc, c, (*at, i), depth + 1) for i, c in enumerate(given[name]))))
        elif isinstance(given[name], list):
            args.append((name, tuple(given[name])))
        elif spec.kind == "float":
            args.append((name, float(given[name])))
        else:
            args.append((name, given[name]))
    return CheckSpec(op, tuple(args), doc.line(here))


def parse_ruleset(text: str, path: str) -> Ruleset:
    doc = Document(text, path, RuleError)
    data = doc.conform(RULESET)
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(data["rules"]):
        keys: Keys = ("rules", i)
        line = doc.line(keys)
        if raw["id"] in seen:
            raise doc.error(keys, f"duplicate rule id {raw['id']!r} (first at line {seen[raw['id']]})")
        seen[raw["id"]] = line
        rules.append(
            Rule(
                id=raw["id"],
                source=raw["source"],
                severity=Severity(raw["severity"]),
                description=raw["description"].strip(),
                check=_spec(doc, raw["check"], (*keys, "check"), 0),
                applies_if=_spec(doc, raw["applies_if"], (*keys, "applies_if"), 0)
                if "applies_if" in raw
                else None,
                path=path,
                line=line,
            )
        )
    name = data["name"]
    return Ruleset(
        name,
        data.get("title", name),
        data.get("description", "").strip(),
        tuple(rules),
        path,
        tuple(data.get("sources", ())),
    )


def load_ruleset(path: Path) -> Ruleset:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RuleError(str(path), None, f"cannot read ruleset: {exc.strerror or exc}") from None
    return parse_ruleset(decode(data, str(path), RuleError), str(path))


def builtin_ruleset_names(specs: Path | None = None) -> list[str]:
    from tipc.core.resources import data_dir

    directory = specs or data_dir("specs")
    return sorted(p.stem for p in directory.glob("*.yaml"))


def resolve_ruleset(name_or_path: str, specs: Path | None = None) -> Ruleset:
    """A built-in ruleset by name (specs/<name>.yaml) or a ruleset file by path."""
    from tipc.core.resources import data_dir

    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or "/" in name_or_path or candidate.is_file():
        if not candidate.is_file():
            raise RuleError(name_or_path, None, "no such ruleset file")
        return load_ruleset(candidate)
    directory = specs or data_dir("specs")
    path = directory / f"{name_or_path}.yaml"
    if not path.is_file():
        known = ", ".join(builtin_ruleset_names(directory)) or "none"
        raise RuleError(name_or_path, None, f"no built-in ruleset of that name; known: {known}")
    return load_ruleset(path)
