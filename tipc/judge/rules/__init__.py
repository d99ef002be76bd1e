"""Rulesets as YAML data: a strict loader, a closed operator registry and the evaluator."""

from tipc.judge.rules.evaluate import RuleResult, evaluate, evaluate_rule
from tipc.judge.rules.model import CheckSpec, Rule, Ruleset, Severity
from tipc.judge.rules.operators import OPERATORS
from tipc.judge.rules.schema import builtin_ruleset_names, load_ruleset, parse_ruleset, resolve_ruleset

__all__ = [
    "OPERATORS",
    "CheckSpec",
    "Rule",
    "RuleResult",
    "Ruleset",
    "Severity",
    "builtin_ruleset_names",
    "evaluate",
    "evaluate_rule",
    "load_ruleset",
    "parse_ruleset",
    "resolve_ruleset",
]
