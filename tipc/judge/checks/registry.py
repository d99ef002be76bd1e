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

from tipc.core.fs import is_safe_relative
from tipc.core.yamlschema import Int, Map, Num, OneOf, Schema, Seq, Str, validate
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict

# A check is called with its own keyword arguments (each check's schema differs): `fn(ctx, **args)`.
CheckBody = Callable[..., CheckOutcome]
# A check's arguments as the schema conformed them: read with the `arg_*` helpers below, which narrow a value
# the schema has already checked (a mismatch is a bug in the check's schema, raised, never a verdict).
Args = Mapping[str, object]


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

    def conform(self, args: Args) -> tuple[dict[str, object] | None, str | None]:
        """(the arguments with the schema's defaults, None) or (None, what is wrong with them)."""
        value, issues = validate(_listed(dict(args)), self.args)
        if issues:
            return None, issues[0].text()
        return ({str(k): v for k, v in value.items()} if isinstance(value, dict) else {}), None

    def __call__(self, ctx: CheckContext, **args: object) -> CheckOutcome:
        conformed, problem = self.conform(args)
        if conformed is None:
            return CheckOutcome(Verdict.FAIL, f"{self.name}: bad arguments: {problem}")
        return self.fn(ctx, **conformed)

    def schema(self) -> Schema:
        return self.args


def _listed(value: object) -> object:
    """Tuples as lists, at any depth: a ruleset's loaded arguments are frozen (tuples), the schema's
    sequences are lists."""
    if isinstance(value, tuple | list):
        return [_listed(v) for v in value]
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    return value


REGISTRY: dict[str, RegisteredCheck] = {}


def _wrong(key: str, what: str, value: object) -> TypeError:
    return TypeError(
        f"check argument {key!r}: expected {what}, got {value!r} (the schema should have said so)"
    )


def arg_num(args: Args, key: str, default: float) -> float:
    """A number argument (int or float), or `default` when absent or null."""
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(key, "a number", value)
    return float(value)


def arg_int(args: Args, key: str, default: int) -> int:
    """An integer argument, or `default` when absent or null."""
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(key, "an integer", value)
    return int(value)


def arg_opt_int(args: Args, key: str) -> int | None:
    """An integer argument, or None when absent or null."""
    return None if args.get(key) is None else arg_int(args, key, 0)


def arg_text(args: Args, key: str) -> str:
    """A required string argument."""
    value = args.get(key)
    if isinstance(value, str):
        return value
    raise _wrong(key, "a string", value)


def arg_str(args: Args, key: str) -> str | None:
    """A string argument, or None when absent or null."""
    value = args.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _wrong(key, "a string", value)


def arg_str_or(args: Args, key: str, default: str) -> str:
    """A string argument, or `default` when absent or null."""
    value = arg_str(args, key)
    return default if value is None else value


def arg_bool(args: Args, key: str, default: bool) -> bool:
    """A boolean argument, or `default` when absent or null."""
    value = args.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _wrong(key, "true or false", value)
    return value


def arg_strs(args: Args, key: str) -> list[str] | None:
    """A list-of-strings argument (a lone string is a list of one), or None when absent or null."""
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    raise _wrong(key, "a list of strings", value)


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
