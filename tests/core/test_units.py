"""The one spelling of wall times and byte counts (issue 27 item 5: three duration and two byte formatters
printed the same 125 s as `2m05s`, `125.0s` and `2 min 5 s`)."""

from __future__ import annotations

import pytest

from tipc.core.units import human_bytes, human_seconds


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (0.0, "0.0s"),
        (1.25, "1.2s"),
        (59.94, "59.9s"),
        (59.96, "1m00s"),  # not `60.0s`: the rounding carries into the minute form
        (125, "2m05s"),
        (599.7, "10m00s"),
        (3725, "1h02m05s"),
    ],
)
def test_a_wall_time_has_one_spelling(seconds: float | None, text: str) -> None:
    assert human_seconds(seconds) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (None, "-"),
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (300 * 2**20, "300.0 MiB"),
        (2**30, "1.0 GiB"),
        (2**50, "1024.0 TiB"),  # the largest unit goes on counting
    ],
)
def test_a_byte_count_has_one_spelling(n: int | None, text: str) -> None:
    assert human_bytes(n) == text


def test_chart_ticks_keep_their_significant_digits() -> None:
    assert human_bytes(1.25 * 2**30, significant=3) == "1.25 GiB"
    assert human_bytes(512, significant=3) == "512 B"
