"""The closed set of comparison operators, each with the margin applied (all six, as seed 003 documents).

tipc's semantics (the default): the tolerance is `max(margin * |expected|, abs_margin)`, relative as in
the original, with an optional absolute floor for values near zero, and measured against the recorded
value (not the larger of the two), so 0.95 against 1.0 at margin 0.05 is inside the band. With an envelope
(gather --seeds K) the expected value is the band [lo, hi] widened by the same tolerance on each side.

The original harness's semantics (`--margins original`): "equal" is `math.isclose(expected, actual,
rel_tol=margin)`, a tolerance relative to the larger of the two values; `==` and `!=` test that alone,
`<=` and `>=` pass when equal or strictly below (above), and `<` and `>` are strict comparisons with no
margin at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tipc.convergence.manifest import Band

# Float noise allowance so that a value exactly on the tolerance boundary passes.
_EPS = 1e-12
TIPC, ORIGINAL = "tipc", "original"  # margin semantics
MARGIN_SEMANTICS = (TIPC, ORIGINAL)


@dataclass(frozen=True)
class Bounds:
    lo: float  # widened lower bound
    hi: float  # widened upper bound
    centre: float  # recorded value (single run) or band mean
    slack: float = 0.0  # float noise allowed at the bounds of the non-strict operators


def bounds(
    expected: float | Band, margin: float, abs_margin: float = 0.0, mode: str = "minmax", k: float = 3.0
) -> Bounds:
    if isinstance(expected, Band):
        if mode == "std":
            lo, hi = expected.mean - k * expected.std, expected.mean + k * expected.std
        else:
            lo, hi = expected.lo, expected.hi
        centre = expected.mean
    else:
        lo = hi = centre = expected
    tol_lo = max(margin * abs(lo), abs_margin)
    tol_hi = max(margin * abs(hi), abs_margin)
    slack = _EPS * max(1.0, abs(lo), abs(hi))
    return Bounds(lo - tol_lo, hi + tol_hi, centre, slack)


def passes(op: str, actual: float, b: Bounds) -> bool:
    """`==`: inside the widened band; `!=`: outside it; `<=`/`<`: not above its top (`<` strictly);
    `>=`/`>`: not below its bottom (`>` strictly). NaN never passes."""
    if actual != actual:  # NaN
        return False
    inside = b.lo - b.slack <= actual <= b.hi + b.slack
    if op == "==":
        return inside
    if op == "!=":
        return not inside
    if op == "<=":
        return actual <= b.hi + b.slack
    if op == "<":
        return actual < b.hi
    if op == ">=":
        return actual >= b.lo - b.slack
    if op == ">":
        return actual > b.lo
    raise ValueError(f"unknown comparison {op!r}")


def original_bounds(expected: float, margin: float) -> Bounds:
    """What `math.isclose(expected, actual, rel_tol=margin)` accepts, as an interval (for the report):
    |a - e| <= margin * max(|a|, |e|)."""
    if margin >= 1.0:
        return Bounds(-math.inf, math.inf, expected)
    if expected >= 0:
        return Bounds(expected * (1.0 - margin), expected / (1.0 - margin), expected)
    return Bounds(expected / (1.0 - margin), expected * (1.0 - margin), expected)


def passes_original(op: str, actual: float, expected: float, margin: float) -> bool:
    """The original harness's comparison (see the module docstring). NaN never passes."""
    if actual != actual:
        return False
    close = math.isclose(expected, actual, rel_tol=margin)
    if op == "==":
        return close
    if op == "!=":
        return not close
    if op == "<=":
        return close or actual < expected
    if op == ">=":
        return close or actual > expected
    if op == "<":
        return actual < expected
    if op == ">":
        return actual > expected
    raise ValueError(f"unknown comparison {op!r}")
