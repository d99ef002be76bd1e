"""The closed set of comparison operators, each with the margin applied (all six, as seed 003 documents).

The tolerance is `max(margin * |expected|, abs_margin)`: relative as in the original, with an optional
absolute floor for values near zero, and measured against the recorded value (not the larger of the two),
so 0.95 against 1.0 at margin 0.05 is inside the band. With an envelope (gather --seeds K) the expected value
is the band [lo, hi] widened by the same tolerance on each side.
"""

from __future__ import annotations

from dataclasses import dataclass

from tipc.convergence.manifest import Band

# Float noise allowance so that a value exactly on the tolerance boundary passes.
_EPS = 1e-12


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
