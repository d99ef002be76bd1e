import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tipc.judge.checks.stats import mann_kendall, spearman


def test_mann_kendall_by_hand() -> None:
    # 5 strictly decreasing points: S = -10, var = 5*4*15/18, z = (S+1)/sqrt(var)
    mk = mann_kendall([5.0, 4.0, 3.0, 2.0, 1.0])
    assert mk.s == -10
    assert mk.var_s == pytest.approx(5 * 4 * 15 / 18)
    assert mk.z == pytest.approx(-9 / math.sqrt(5 * 4 * 15 / 18))
    # one-sided p for a downward trend = Phi(z)
    assert mk.p_decreasing == pytest.approx(0.5 * math.erfc(-mk.z / math.sqrt(2)))
    assert mk.p_decreasing < 0.05 and mk.tau == -1.0


def test_mann_kendall_tie_correction() -> None:
    # values with one tie group of 3: var = (n(n-1)(2n+5) - 3*2*11)/18
    mk = mann_kendall([1.0, 1.0, 1.0, 2.0, 3.0, 4.0])
    assert mk.var_s == pytest.approx((6 * 5 * 17 - 3 * 2 * 11) / 18)
    assert mk.s == 12
    flat = mann_kendall([2.0] * 10)
    assert flat.s == 0 and flat.z == 0.0 and flat.p_two_sided == 1.0


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [5, 5, 5]) == 0.0
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=3, max_size=40))
def test_mann_kendall_is_antisymmetric_and_bounded(values: list[float]) -> None:
    a = mann_kendall(values)
    b = mann_kendall([-v for v in values])
    assert a.s == -b.s
    assert 0.0 <= a.p_two_sided <= 1.0 and 0.0 <= a.p_decreasing <= 1.0
    assert -1.0 <= a.tau <= 1.0
