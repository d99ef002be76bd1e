from __future__ import annotations

import pytest

from tipc.convergence.compare import bounds, original_bounds, passes, passes_original
from tipc.convergence.manifest import Band


@pytest.mark.parametrize(
    ("op", "actual", "expected", "margin", "ok"),
    [
        ("==", 1.05, 1.0, 0.05, True),
        ("==", 0.95, 1.0, 0.05, True),  # the original failed this through float rounding
        ("==", 1.06, 1.0, 0.05, False),
        ("!=", 1.06, 1.0, 0.05, True),
        ("!=", 1.0, 1.0, 0.05, False),
        ("<=", 0.5, 1.0, 0.05, True),
        ("<=", 1.05, 1.0, 0.05, True),
        ("<=", 1.06, 1.0, 0.05, False),
        ("<", 1.04, 1.0, 0.05, True),  # the margin applies to < and > too, as seed 003 documents
        (">=", 0.95, 1.0, 0.05, True),
        (">=", 0.94, 1.0, 0.05, False),
        (">", 2.0, 1.0, 0.0, True),
        (">", 1.0, 1.0, 0.0, False),
        ("<=", float("nan"), 1.0, 0.05, False),
    ],
)
def test_operator_table(op: str, actual: float, expected: float, margin: float, ok: bool) -> None:
    assert passes(op, actual, bounds(expected, margin)) is ok


def test_absolute_margin_near_zero() -> None:
    assert not passes("==", 0.001, bounds(0.0, 0.1))
    assert passes("==", 0.001, bounds(0.0, 0.1, abs_margin=0.01))


def test_envelope_minmax_and_std() -> None:
    band = Band(lo=1.0, hi=2.0, mean=1.5, std=0.1, n=3)
    b = bounds(band, 0.1)
    assert b.lo == pytest.approx(0.9) and b.hi == pytest.approx(2.2)
    assert passes("==", 2.1, b) and not passes("==", 2.3, b)
    s = bounds(band, 0.0, mode="std", k=2.0)
    assert s.lo == pytest.approx(1.3) and s.hi == pytest.approx(1.7)
    assert not passes("==", 1.8, s)


def test_unknown_operator() -> None:
    with pytest.raises(ValueError):
        passes("~", 1.0, bounds(1.0, 0.1))


@pytest.mark.parametrize(
    ("op", "actual", "expected", "margin", "ok"),
    [
        ("==", 1.05, 1.0, 0.05, True),  # |0.05| <= 0.05 x max(1.05, 1.0)
        ("==", 0.95, 1.0, 0.05, False),  # 0.050000000000000044 > 0.05 x 1.0: the original's own rounding
        ("==", 0.96, 1.0, 0.05, True),
        ("!=", 1.06, 1.0, 0.05, True),
        ("<=", 1.05, 1.0, 0.05, True),  # close
        ("<=", 0.5, 1.0, 0.05, True),  # below
        ("<=", 1.06, 1.0, 0.05, False),
        ("<", 1.04, 1.0, 0.05, False),  # strict: no margin for < and >
        ("<", 0.99, 1.0, 0.05, True),
        (">=", 0.96, 1.0, 0.05, True),
        (">", 1.0, 1.0, 0.5, False),
        ("<=", float("nan"), 1.0, 0.05, False),
    ],
)
def test_the_original_harness_semantics(
    op: str, actual: float, expected: float, margin: float, ok: bool
) -> None:
    assert passes_original(op, actual, expected, margin) is ok


def test_what_isclose_accepts_as_an_interval() -> None:
    b = original_bounds(2.0, 0.2)
    assert b.lo == pytest.approx(1.6) and b.hi == pytest.approx(2.5)
    neg = original_bounds(-2.0, 0.2)
    assert neg.lo == pytest.approx(-2.5) and neg.hi == pytest.approx(-1.6)
