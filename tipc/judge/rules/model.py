"""Frozen values for rulesets: a Ruleset holds Rules, a Rule holds one CheckSpec naming an operator."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

RULESET_SCHEMA = "tipc.ruleset/1"


class Severity(str, Enum):
    ERROR = "error"  # a FAIL fails the whole check (exit 1)
    WARNING = "warning"  # a FAIL is reported as WARN and does not change the exit code


@dataclass(frozen=True)
class CheckSpec:
    """One operator call: its name, validated arguments, and the ruleset line it was written on."""

    op: str
    args: tuple[tuple[str, object], ...]
    line: int | None = None

    @property
    def arg_dict(self) -> dict[str, object]:
        return dict(self.args)

    def to_json(self) -> dict[str, object]:
        def enc(v: object) -> object:
            if isinstance(v, CheckSpec):
                return v.to_json()
            if isinstance(v, tuple):
                return [enc(x) for x in v]
            return v

        return {self.op: {k: enc(v) for k, v in self.args}}


@dataclass(frozen=True)
class Rule:
    id: str
    source: str  # the spec section it enforces, e.g. "seed002 §2.2.3"
    severity: Severity
    description: str
    check: CheckSpec
    applies_if: CheckSpec | None = None  # when this does not PASS, the rule is N-A
    path: str = ""
    line: int | None = None


@dataclass(frozen=True)
class Ruleset:
    name: str
    title: str
    description: str
    rules: tuple[Rule, ...]
    path: str = ""
    source_docs: tuple[str, ...] = field(default_factory=tuple)
