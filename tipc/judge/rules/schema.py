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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.errors import RuleError, UserError
from tipc.core.fs import is_safe_relative
from tipc.core.yamlschema import (
    Bool,
    Document,
    Enum,
    Field,
    Int,
    Keys,
    Lazy,
    LMap,
    LSeq,
    Map,
    Num,
    OneOf,
    Schema,
    Seq,
    Str,
    Tagged,
    decode,
    regex_problem,
    validate,
)
from tipc.judge.rules.model import RULESET_SCHEMA, CheckSpec, Rule, Ruleset, Severity
from tipc.judge.rules.operators import LIST_OPERATORS, OPERATORS, Param

if TYPE_CHECKING:
    from tipc.judge.checks.base import CheckOutcome

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

INCLUDE = Map(
    {
        "ruleset": Field(Str(what="a built-in ruleset name or a ruleset file (relative to this one)"), True),
        "rules": Field(
            Seq(Str(pattern=RULE_ID.pattern[1:-1], what="a rule id"), min_items=1, what="a list of rule ids"),
            True,
        ),
    },
    what="an include (ruleset, rules)",
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
        "include": Field(Seq(INCLUDE, min_items=1)),
    },
    what="a ruleset mapping (schema, name, rules)",
)


def _located(tree: object, keys: Keys) -> object:
    """The located value at `keys` (positions kept), None where the path does not exist."""
    node = tree
    for k in keys:
        if isinstance(node, LMap) and isinstance(k, str) and k in node.items:  # noqa: SIM114 - mypy narrows each
            node = node.items[k]
        elif isinstance(node, LSeq) and isinstance(k, int) and 0 <= k < len(node.items):
            node = node.items[k]
        else:
            return None
    return node


def registered_checks() -> dict[str, Schema]:
    """The argument schema of every registered check (tipc.judge.checks.registry), by name."""
    from tipc.judge.checks.registry import REGISTRY  # lazy: the checks import the rules' file helpers

    return {name: check.args for name, check in REGISTRY.items()}


def _check_call(doc: Document, raw: dict[str, Any], here: Keys, checks: Mapping[str, Schema]) -> None:
    """A `check` operator names a known check and gives it arguments its schema accepts."""
    name = raw["name"]
    if name not in checks:
        import difflib

        close = difflib.get_close_matches(name, sorted(checks), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        known = ", ".join(sorted(checks))
        raise doc.error((*here, "name"), f"unknown check {name!r}; {hint}known: {known}")
    at = (*here, "args")
    given = _located(doc.tree, at)
    _, issues = validate(given if given is not None else {}, checks[name], root=doc.pos(at))
    if issues:
        first = issues[0]
        raise doc.error((*at, *first.keys), f"check {name!r}: {first.message}")


def _spec(
    doc: Document, data: dict[str, Any], keys: Keys, depth: int, checks: Mapping[str, Schema]
) -> CheckSpec:
    if depth > MAX_CHECK_DEPTH:
        raise doc.error(keys, f"checks nest deeper than {MAX_CHECK_DEPTH} levels")
    ((op, raw),) = data.items()
    here = (*keys, op)
    if op == "check":
        _check_call(doc, raw, here, checks)
    operator = OPERATORS[op]
    given: dict[str, Any] = {"checks": raw} if op in LIST_OPERATORS else raw
    args: list[tuple[str, object]] = []
    for name, spec in operator.params.items():
        if name not in given:
            args.append((name, {} if spec.kind == "mapping" else spec.default))
        elif spec.kind == "checks":
            at = here if op in LIST_OPERATORS else (*here, name)
            specs = (_spec(doc, c, (*at, i), depth + 1, checks) for i, c in enumerate(given[name]))
            args.append((name, tuple(specs)))
        elif isinstance(given[name], list):
            args.append((name, tuple(given[name])))
        elif spec.kind == "float":
            args.append((name, float(given[name])))
        else:
            args.append((name, given[name]))
    return CheckSpec(op, tuple(args), doc.line(here))


def _included(
    doc: Document,
    data: dict[str, Any],
    checks: Mapping[str, Schema],
    loading: tuple[str, ...],
    seen: dict[str, int],
) -> list[Rule]:
    """The rules `include:` takes from other rulesets, as they are defined there (same id, file and line)."""
    out: list[Rule] = []
    for i, entry in enumerate(data.get("include", ())):
        keys: Keys = ("include", i)
        target = _include_path(entry["ruleset"], doc.path)
        if target is None:
            known = ", ".join(builtin_ruleset_names()) or "none"
            raise doc.error((*keys, "ruleset"), f"no ruleset {entry['ruleset']!r} (built-in: {known})")
        if str(target) in loading:
            chain = " -> ".join((*loading, str(target)))
            raise doc.error((*keys, "ruleset"), f"rulesets include each other: {chain}")
        other = load_ruleset(target, checks=checks, loading=loading)
        defined = {rule.id: rule for rule in other.rules}
        for j, rule_id in enumerate(entry["rules"]):
            if rule_id not in defined:
                raise doc.error((*keys, "rules", j), f"ruleset {other.name!r} has no rule {rule_id!r}")
            if rule_id in seen:
                raise doc.error(
                    (*keys, "rules", j), f"duplicate rule id {rule_id!r} (first at line {seen[rule_id]})"
                )
            seen[rule_id] = doc.line((*keys, "rules", j))
            out.append(defined[rule_id])
    return out


def _include_path(name: str, including: str) -> Path | None:
    """A built-in ruleset by name, or a ruleset file relative to the one including it."""
    from tipc.core.resources import data_dir

    if Path(name).suffix in (".yaml", ".yml") or "/" in name:
        candidate = Path(including).parent / name
    else:
        candidate = data_dir("specs") / f"{name}.yaml"
    return candidate.resolve() if candidate.is_file() else None


def parse_ruleset(
    text: str,
    path: str,
    *,
    checks: Mapping[str, Schema] | None = None,
    loading: tuple[str, ...] = (),
) -> Ruleset:
    """`checks`: the argument schema of each check a `check` operator may name (default: the registered
    checks); an unknown name or a bad argument is a located RuleError. `loading`: the files whose `include:`
    led here (an include cycle is an error)."""
    checks = registered_checks() if checks is None else checks
    doc = Document(text, path, RuleError)
    data = doc.conform(RULESET)
    loading = (*loading, str(Path(path).resolve()))
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
                check=_spec(doc, raw["check"], (*keys, "check"), 0, checks),
                applies_if=_spec(doc, raw["applies_if"], (*keys, "applies_if"), 0, checks)
                if "applies_if" in raw
                else None,
                path=path,
                line=line,
            )
        )
    rules.extend(_included(doc, data, checks, loading, seen))
    name = data["name"]
    return Ruleset(
        name,
        data.get("title", name),
        data.get("description", "").strip(),
        tuple(rules),
        path,
        tuple(data.get("sources", ())),
    )


def load_ruleset(
    path: Path, *, checks: Mapping[str, Schema] | None = None, loading: tuple[str, ...] = ()
) -> Ruleset:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RuleError(str(path), None, f"cannot read ruleset: {exc.strerror or exc}") from None
    return parse_ruleset(decode(data, str(path), RuleError), str(path), checks=checks, loading=loading)


def builtin_ruleset_names(specs: Path | None = None) -> list[str]:
    from tipc.core.resources import data_dir

    directory = specs or data_dir("specs")
    return sorted(p.stem for p in directory.glob("*.yaml"))


def resolve_ruleset(
    name_or_path: str, specs: Path | None = None, *, checks: Mapping[str, Schema] | None = None
) -> Ruleset:
    """A built-in ruleset by name (specs/<name>.yaml) or a ruleset file by path."""
    from tipc.core.resources import data_dir

    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or "/" in name_or_path or candidate.is_file():
        if not candidate.is_file():
            raise RuleError(name_or_path, None, "no such ruleset file")
        return load_ruleset(candidate, checks=checks)
    directory = specs or data_dir("specs")
    path = directory / f"{name_or_path}.yaml"
    if not path.is_file():
        known = ", ".join(builtin_ruleset_names(directory)) or "none"
        raise RuleError(name_or_path, None, f"no built-in ruleset of that name; known: {known}")
    return load_ruleset(path, checks=checks)


def load_rulesets(
    names: Sequence[str],
    default: Sequence[str],
    *,
    checks: Mapping[str, Callable[..., CheckOutcome]] | None = None,
) -> list[Ruleset]:
    """The rulesets `--ruleset` names (`a,b` is `a` then `b`, unless the text names a file), else `default`.

    `checks`: the check registry the rules will be evaluated with (default: the registered checks); each
    `check` operator is validated against its schema (a check without one takes any arguments). A rule that
    an earlier ruleset already holds (one `include`s another's rules) is kept once, in the first.
    """
    split = [part for n in names for part in ([n] if Path(n).is_file() else n.split(",")) if part.strip()]
    chosen = list(dict.fromkeys(p.strip() for p in split or default))
    schemas = None if checks is None else schemas_of(checks)
    rulesets = [resolve_ruleset(n, checks=schemas) for n in chosen]
    seen: dict[str, str] = {}
    for rs in rulesets:
        if rs.name in seen:
            raise UserError(f"two rulesets are named {rs.name!r}: {seen[rs.name]} and {rs.path}")
        seen[rs.name] = rs.path
    held: set[tuple[str, str]] = set()
    out: list[Ruleset] = []
    for rs in rulesets:
        kept = tuple(r for r in rs.rules if (r.path, r.id) not in held)
        held |= {(r.path, r.id) for r in kept}
        out.append(rs if len(kept) == len(rs.rules) else replace(rs, rules=kept))
    return out


def schemas_of(checks: Mapping[str, Callable[..., CheckOutcome]]) -> dict[str, Schema]:
    """The argument schemas a ruleset is validated with when `checks` evaluates it: the registered checks',
    and those of the registry's own checks (one without a schema, a test's fake, takes any arguments)."""
    from tipc.judge.checks.registry import RegisteredCheck

    own = {
        name: fn.args if isinstance(fn, RegisteredCheck) else Map(closed=False) for name, fn in checks.items()
    }
    return {**registered_checks(), **own}
