"""Summaries and margins: the worked example of docs/model-ci.md, and which term of the rule wins."""

from __future__ import annotations

import math

import pytest

from tipc.judge.baseline import stats


def test_the_worked_example_of_the_docs() -> None:
    # stage.train.time_s over three runs, one slowed by a busy machine
    s = stats.summarise([2.10, 2.04, 2.95])
    assert s.n == 3 and s.median == pytest.approx(2.10)
    assert s.mean == pytest.approx(2.3633, abs=1e-4)
    # MAD = median(|0|, |-0.06|, |0.85|) = 0.06; robust std = 1.4826 x 0.06
    assert s.robust_std == pytest.approx(0.088956, abs=1e-6)
    assert s.std == pytest.approx(0.5089, abs=1e-4)  # what the outlier does to the plain std
    margin, origin = stats.derive_margin(s, "performance", "s")
    assert margin == pytest.approx(0.42)  # 20 % of 2.10 beats 3 x 0.088956 = 0.2669
    assert "20% floor of the median" in origin


def test_a_wide_spread_wins_over_the_floors() -> None:
    s = stats.summarise([100.0, 130.0, 70.0])
    margin, origin = stats.derive_margin(s, "performance", "images/sec")
    assert margin == pytest.approx(3 * 1.4826 * 30)
    assert origin.startswith("3 x robust std over n=3")


def test_the_absolute_floor_holds_near_zero() -> None:
    s = stats.summarise([0.01, 0.01, 0.01])
    margin, origin = stats.derive_margin(s, "performance", "ms")
    assert margin == 0.5 and "absolute floor 0.5 ms" in origin
    margin, _ = stats.derive_margin(stats.summarise([0.0]), "effect", "")
    assert margin == stats.ABS_FLOOR_DEFAULT


def test_one_sample_and_non_finite_samples() -> None:
    one = stats.summarise([3.0])
    assert (one.std, one.robust_std, one.median) == (0.0, 0.0, 3.0)
    nan = stats.summarise([math.nan, math.nan])
    assert nan.n == 2 and math.isnan(nan.mean)
    mixed = stats.summarise([1.0, math.inf, 3.0])
    assert mixed.median == 2.0 and mixed.n == 3


def test_stability_is_the_robust_spread_against_the_reference() -> None:
    assert stats.summarise([2.10, 2.04, 2.95]).stable  # one outlier: 0.089 / 2.10 = 4 %
    wild = stats.summarise([1.5, 3.6, 9.0])
    assert not wild.stable and wild.relative_spread == pytest.approx(1.4826 * 2.1 / 3.6)
    assert stats.summarise([5.0]).stable and stats.summarise([0.0, 0.0]).stable
