"""Summaries and margins: the worked example of docs/model-ci.md, Student's t, the exact tolerance of a
metric that did not vary, and the stability gate."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from tipc.judge.baseline import stats


def test_the_worked_example_of_the_docs() -> None:
    # stage.train.cpu_s of the official tutorial over ten seeded runs on a loaded 2-core machine
    samples = [15.44, 15.68, 15.21, 15.90, 15.37, 15.52, 15.61, 15.29, 15.75, 15.48]
    s = stats.summarise(samples)
    assert s.n == 10 and s.median == pytest.approx(15.50)
    assert s.std == pytest.approx(0.2136, abs=1e-4)
    margin, origin = stats.derive_margin(s, "performance", "s")
    # t(0.999, 9) = 4.2968; sqrt(1 + 1/10) = 1.0488
    assert margin == pytest.approx(4.2968 * 0.2136 * 1.0488, rel=1e-3)
    assert margin == pytest.approx(0.9627, abs=1e-3)
    assert "prediction interval for one run: t(0.999, 9) 4.3" in origin
    # the median of three runs at check time: sqrt(1/3 + 1/10) = 0.6583
    three, origin3 = stats.derive_margin(s, "performance", "s", repeats=3)
    assert three == pytest.approx(4.2968 * 0.2136 * 0.6583, rel=1e-3) and "median of 3 runs" in origin3


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.999, 1, 318.309),
        (0.999, 2, 22.327),
        (0.999, 4, 7.173),
        (0.999, 9, 4.297),
        (0.975, 9, 2.262),
        (0.975, 30, 2.042),
        (0.9999, 9, 6.010),
        (0.95, 1000, 1.6464),
    ],
)
def test_student_t_quantiles_match_the_tables(p: float, df: int, expected: float) -> None:
    assert stats.t_quantile(p, df) == pytest.approx(expected, rel=2e-4)
    assert stats.t_cdf(stats.t_quantile(p, df), df) == pytest.approx(p, abs=1e-9)


def test_the_prediction_interval_holds_its_false_alarm_rate_on_normal_noise() -> None:
    """10 baseline runs and one new run of the same normal distribution, 20000 times: the one-sided bound
    is crossed about ALPHA of the time (the old 3 x robust std of three runs: several percent)."""
    rng = random.Random(7)
    crossed = old_crossed = 0
    trials = 20000
    for _ in range(trials):
        base = [rng.gauss(10.0, 1.0) for _ in range(10)]
        margin, _ = stats.derive_margin(stats.summarise(base), "performance", "")
        crossed += rng.gauss(10.0, 1.0) > statistics.median(base) + margin
        three = base[:3]
        mad = statistics.median(abs(v - statistics.median(three)) for v in three)
        old_crossed += rng.gauss(10.0, 1.0) > statistics.median(three) + 3 * 1.4826 * mad
    assert crossed / trials < 4 * stats.ALPHA  # centred on the median, not the mean: a little above ALPHA
    assert old_crossed / trials > 0.05


def test_identical_runs_are_judged_exactly_or_tightly() -> None:
    loss = stats.summarise([4.79634] * 3)
    assert loss.identical and loss.stable
    margin, origin = stats.derive_margin(loss, "effect", "")
    assert margin == pytest.approx(4.79634e-4) and "identical in all 3 runs: exact within 0.0001" in origin
    gpu = stats.summarise([3178.0, 3178.0, 3178.0])
    margin, _ = stats.derive_margin(gpu, "resource", "MiB")
    assert margin == pytest.approx(63.56)  # 2 %: +900 MiB is far outside, not inside a 30 % floor
    zero = stats.summarise([0.0, 0.0])
    margin, origin = stats.derive_margin(zero, "effect", "")
    assert margin == stats.RESOLUTION_DEFAULT and "resolution" in origin


def test_one_run_says_nothing_about_noise() -> None:
    one = stats.summarise([3.0])
    assert (one.std, one.robust_std, one.median) == (0.0, 0.0, 3.0)
    assert not one.identical and not one.stable
    _, origin = stats.derive_margin(one, "performance", "s")
    assert origin.startswith("one run")


def test_non_finite_samples() -> None:
    nan = stats.summarise([math.nan, math.nan])
    assert nan.n == 2 and math.isnan(nan.mean) and not nan.identical
    mixed = stats.summarise([1.0, math.inf, 3.0])
    assert mixed.median == 2.0 and mixed.n == 3


def test_stability_is_the_robust_spread_against_the_reference() -> None:
    assert stats.summarise([2.10, 2.04, 2.95]).stable  # one outlier: 0.089 / 2.10 = 4 %
    wild = stats.summarise([1.5, 3.6, 9.0])
    assert not wild.stable and wild.relative_spread == pytest.approx(1.4826 * 2.1 / 3.6)
    # the unseeded tutorial's loss windows, as issue 25 found them: unstable, so not judged
    assert not stats.summarise([6.69, 5.71, 4.97]).stable
    assert stats.summarise([0.0, 0.0]).stable
