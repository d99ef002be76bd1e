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

import re
from pathlib import Path
from typing import Any

from tipc.errors import RuleError
from tipc.rules.files import is_safe_relative
from tipc.rules.model import RULESET_SCHEMA, CheckSpec, Rule, Ruleset, Severity
from tipc.rules.operators import LIST_OPERATORS, OPERATORS, Param
from tipc.rules.yamlnodes import LMap, LSeq, YamlShapeError, load_located, plain

RULE_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,99}$")
TOP_KEYS = {"schema", "name", "title", "description", "sources", "rules"}
RULE_KEYS = {"id", "source", "severity", "description", "check", "applies_if"}
REQUIRED_RULE_KEYS = ("id", "source", "severity", "description", "check")
MAX_CHECK_DEPTH = 8


class _Ctx:
    def __init__(self, path: str) -> None:
        self.path = path

    def error(self, line: int | None, message: str) -> RuleError:
        return RuleError(self.path, line, message)


def _type_name(value: Any) -> str:
    if isinstance(value, LMap):
        return "a mapping"
    if isinstance(value, LSeq):
        return "a list"
    if value is None:
        return "nothing"
    return f"{type(value).__name__} {value!r}"[:80]


def _str(c: _Ctx, value: Any, line: int, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise c.error(line, f"{what} must be a non-empty string, got {_type_name(value)}")
    return value


def _param(c: _Ctx, op: str, name: str, spec: Param, value: Any, line: int, depth: int) -> Any:
    what = f"{op}.{name}"
    kind = spec.kind
    if kind == "path":
        text = _str(c, value, line, what)
        if not is_safe_relative(text):
            raise c.error(line, f"{what} must be a path inside the repo (relative, no '..'), got {text!r}")
        return text
    if kind == "glob":
        items = value.items if isinstance(value, LSeq) else [value]
        if not items:
            raise c.error(line, f"{what} must be a glob or a non-empty list of globs")
        globs = tuple(_str(c, v, line, what) for v in items)
        for g in globs:
            if not is_safe_relative(g):
                raise c.error(line, f"{what} must stay inside the repo (relative, no '..'), got {g!r}")
        return globs[0] if isinstance(value, str) else globs
    if kind == "regex":
        text = _str(c, value, line, what)
        try:
            re.compile(text)
        except re.error as exc:
            raise c.error(line, f"{what} is not a valid regular expression: {exc}") from None
        return text
    if kind == "str":
        return _str(c, value, line, what)
    if kind == "str_list":
        if not isinstance(value, LSeq) or not value.items:
            raise c.error(line, f"{what} must be a non-empty list of strings, got {_type_name(value)}")
        return tuple(_str(c, v, value.line_of(i), what) for i, v in enumerate(value.items))
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise c.error(line, f"{what} must be a whole number >= 0, got {_type_name(value)}")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise c.error(line, f"{what} must be a number, got {_type_name(value)}")
        return float(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise c.error(line, f"{what} must be true or false, got {_type_name(value)}")
        return value
    if kind == "mapping":
        if value is None:
            return {}
        if not isinstance(value, LMap):
            raise c.error(line, f"{what} must be a mapping, got {_type_name(value)}")
        return plain(value)
    if kind == "checks":
        if not isinstance(value, LSeq) or not value.items:
            raise c.error(line, f"{what} must be a non-empty list of checks, got {_type_name(value)}")
        return tuple(_check(c, v, value.line_of(i), depth + 1) for i, v in enumerate(value.items))
    if kind.startswith("choice:"):
        choices = kind.split(":", 1)[1].split("|")
        if value not in choices:
            raise c.error(line, f"{what} must be one of {', '.join(choices)}, got {_type_name(value)}")
        return value
    raise AssertionError(f"operator {op} declares unknown parameter kind {kind}")


def _check(c: _Ctx, node: Any, line: int, depth: int = 0) -> CheckSpec:
    if depth > MAX_CHECK_DEPTH:
        raise c.error(line, f"checks nest deeper than {MAX_CHECK_DEPTH} levels")
    if not isinstance(node, LMap) or len(node.items) != 1:
        raise c.error(
            line if not isinstance(node, LMap) else node.line,
            f"a check must be a mapping with exactly one operator name, got {_type_name(node)}"
            + (f" with keys {sorted(node.items)}" if isinstance(node, LMap) else ""),
        )
    op, raw = next(iter(node.items.items()))
    op_line = node.line_of(op)
    operator = OPERATORS.get(op)
    if operator is None:
        raise c.error(op_line, f"unknown operator {op!r}; known: {', '.join(sorted(OPERATORS))}")
    if op in LIST_OPERATORS:
        raw = LMap({"checks": raw}, op_line, {"checks": op_line})
    elif raw is None:
        raw = LMap({}, op_line)
    if not isinstance(raw, LMap):
        raise c.error(op_line, f"{op} takes a mapping of parameters, got {_type_name(raw)}")
    unknown = sorted(set(raw.items) - set(operator.params))
    if unknown:
        raise c.error(
            raw.line_of(unknown[0]),
            f"{op} has no parameter {unknown[0]!r}; it takes {', '.join(operator.params) or 'none'}",
        )
    args: list[tuple[str, Any]] = []
    for name, spec in operator.params.items():
        if name not in raw.items:
            if spec.required:
                raise c.error(op_line, f"{op} needs parameter {name!r}")
            args.append((name, {} if spec.kind == "mapping" else spec.default))
            continue
        args.append((name, _param(c, op, name, spec, raw.items[name], raw.line_of(name), depth)))
    return CheckSpec(op, tuple(args), op_line)


def _rule(c: _Ctx, node: Any, line: int) -> Rule:
    if not isinstance(node, LMap):
        raise c.error(line, f"a rule must be a mapping, got {_type_name(node)}")
    unknown = sorted(set(node.items) - RULE_KEYS)
    if unknown:
        raise c.error(
            node.line_of(unknown[0]),
            f"unknown rule key {unknown[0]!r}; allowed: {', '.join(sorted(RULE_KEYS))}",
        )
    for key in REQUIRED_RULE_KEYS:
        if key not in node.items:
            raise c.error(node.line, f"rule is missing {key!r}")
    rule_id = node.items["id"]
    if not isinstance(rule_id, str) or not RULE_ID.match(rule_id):
        raise c.error(node.line_of("id"), f"rule id must match {RULE_ID.pattern}, got {_type_name(rule_id)}")
    severity = node.items["severity"]
    if severity not in ("error", "warning"):
        raise c.error(
            node.line_of("severity"), f"severity must be error or warning, got {_type_name(severity)}"
        )
    applies = node.items.get("applies_if")
    return Rule(
        id=rule_id,
        source=_str(c, node.items["source"], node.line_of("source"), "source"),
        severity=Severity(severity),
        description=_str(c, node.items["description"], node.line_of("description"), "description").strip(),
        check=_check(c, node.items["check"], node.line_of("check")),
        applies_if=_check(c, applies, node.line_of("applies_if")) if "applies_if" in node.items else None,
        path=c.path,
        line=node.line,
    )


def parse_ruleset(text: str, path: str) -> Ruleset:
    c = _Ctx(path)
    try:
        doc = load_located(text)
    except YamlShapeError as exc:
        raise c.error(exc.line, exc.message) from None
    if not isinstance(doc, LMap):
        raise c.error(1, f"a ruleset must be a mapping with schema, name and rules, got {_type_name(doc)}")
    unknown = sorted(set(doc.items) - TOP_KEYS)
    if unknown:
        raise c.error(
            doc.line_of(unknown[0]), f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(TOP_KEYS))}"
        )
    if doc.items.get("schema") != RULESET_SCHEMA:
        raise c.error(
            doc.line_of("schema"),
            f"schema must be {RULESET_SCHEMA!r}, got {_type_name(doc.items.get('schema'))}",
        )
    name = _str(c, doc.items.get("name"), doc.line_of("name"), "name")
    if not RULE_ID.match(name):
        raise c.error(doc.line_of("name"), f"ruleset name must match {RULE_ID.pattern}")
    sources = doc.items.get("sources")
    source_docs: tuple[str, ...] = ()
    if sources is not None:
        if not isinstance(sources, LSeq):
            raise c.error(doc.line_of("sources"), "sources must be a list of strings")
        source_docs = tuple(_str(c, s, sources.line_of(i), "sources") for i, s in enumerate(sources.items))
    rules_node = doc.items.get("rules")
    if not isinstance(rules_node, LSeq) or not rules_node.items:
        raise c.error(doc.line_of("rules"), f"rules must be a non-empty list, got {_type_name(rules_node)}")
    rules: list[Rule] = []
    seen: dict[str, int | None] = {}
    for i, item in enumerate(rules_node.items):
        rule = _rule(c, item, rules_node.line_of(i))
        if rule.id in seen:
            raise c.error(rule.line, f"duplicate rule id {rule.id!r} (first at line {seen[rule.id]})")
        seen[rule.id] = rule.line
        rules.append(rule)
    title = doc.items.get("title", name)
    description = doc.items.get("description", "")
    for key, value in (("title", title), ("description", description)):
        if not isinstance(value, str):
            raise c.error(doc.line_of(key), f"{key} must be a string")
    return Ruleset(name, title, description.strip(), tuple(rules), path, source_docs)


def load_ruleset(path: Path) -> Ruleset:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RuleError(str(path), None, f"cannot read ruleset: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RuleError(
            str(path), line, f"not UTF-8 text (byte 0x{data[exc.start]:02x}), expected a ruleset YAML file"
        ) from None
    return parse_ruleset(text, str(path))


def builtin_ruleset_names(specs: Path | None = None) -> list[str]:
    from tipc.resources import data_dir

    directory = specs or data_dir("specs")
    return sorted(p.stem for p in directory.glob("*.yaml"))


def resolve_ruleset(name_or_path: str, specs: Path | None = None) -> Ruleset:
    """A built-in ruleset by name (specs/<name>.yaml) or a ruleset file by path."""
    from tipc.resources import data_dir

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
