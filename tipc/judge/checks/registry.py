"""Checks registered with their argument schemas, in the `tipc.core.yamlschema` vocabulary.

A check is a function `fn(ctx, **args) -> CheckOutcome` declared with `@registered(name, args=Map(...))`. The
schema is the one place a check's arguments are described: a ruleset's `check: {name: ..., args: {...}}` is
validated against it when the ruleset loads (tipc.judge.rules.schema: an unknown name or a bad argument is a
located error, exit 2, before anything runs), and a call from code is validated the same way (a bad call is a
FAIL naming the argument, never an exception). The function receives the arguments conformed: types
checked, the schema's defaults filled in. Defaults that come from the repo's `test_tipc/tipc.yaml` are not
schema defaults; the check reads them from its settings when an argument is absent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tipc.core.fs import is_safe_relative
from tipc.core.yamlschema import Int, Map, Num, OneOf, Schema, Seq, Str, validate
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict

CheckBody = Callable[..., CheckOutcome]


def _inside_repo(text: str) -> str | None:
    return None if is_safe_relative(text) else "relative, no '..'"


# Shapes several checks share.
REPO_PATH = Str(check=_inside_repo, what="a path inside the repo")
REPO_GLOBS = OneOf(
    (Str(check=_inside_repo, what="a glob inside the repo"), Seq(Str(check=_inside_repo), min_items=1)),
    what="a repo-relative path or glob, or a non-empty list of them",
)
ARGV = OneOf((Str(), Seq(Str(), min_items=1)), what="a command line (a string or a list of words)")
PATHS = OneOf((Str(), Seq(Str(), min_items=1)), what="a path or a non-empty list of paths")
NON_NEGATIVE = Num(minimum=0)
POSITIVE = Num(minimum=0, exclusive_minimum=True)
COUNT = Int(minimum=1)
STEP = Str(what="a substring of the step id")


@dataclass(frozen=True)
class RegisteredCheck:
    """A check and the schema of its arguments. Calling it validates the arguments first."""

    name: str
    fn: CheckBody
    args: Map
    doc: str = ""

    def conform(self, args: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """(the arguments with the schema's defaults, None) or (None, what is wrong with them)."""
        value, issues = validate(_listed(dict(args)), self.args)
        if issues:
            return None, issues[0].text()
        return dict(value or {}), None

    def __call__(self, ctx: CheckContext, **args: Any) -> CheckOutcome:
        conformed, problem = self.conform(args)
        if conformed is None:
            return CheckOutcome(Verdict.FAIL, f"{self.name}: bad arguments: {problem}")
        return self.fn(ctx, **conformed)

    def schema(self) -> Schema:
        return self.args


def _listed(value: Any) -> Any:
    """Tuples as lists, at any depth: a ruleset's loaded arguments are frozen (tuples), the schema's
    sequences are lists."""
    if isinstance(value, tuple | list):
        return [_listed(v) for v in value]
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    return value


REGISTRY: dict[str, RegisteredCheck] = {}


def registered(name: str, *, args: Map | None = None) -> Callable[[CheckBody], RegisteredCheck]:
    """Register `fn` as the check `name` taking `args` (none when not given)."""

    def wrap(fn: CheckBody) -> RegisteredCheck:
        if name in REGISTRY:
            raise ValueError(f"check {name!r} is registered twice")
        doc = (fn.__doc__ or "").strip().split("\n")[0]
        check = RegisteredCheck(name, fn, args if args is not None else Map({}), doc)
        REGISTRY[name] = check
        return check

    return wrap
