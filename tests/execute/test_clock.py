"""tipc.execute.clock: the PM QoS request that keeps idle CPUs from slowing down while tipc measures."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from tipc.execute import clock


def _requested_us() -> int:
    # reading the device gives the latency the kernel grants now: the lowest of all open requests
    with open(clock.PM_QOS_DEVICE, "rb") as fh:
        return int(struct.unpack("i", fh.read(4))[0])


@pytest.mark.skipif(
    not os.access(clock.PM_QOS_DEVICE, os.R_OK | os.W_OK), reason="no PM QoS device this user may open"
)
def test_the_clock_is_held_inside_the_block_and_released_after_it() -> None:
    before = _requested_us()
    with clock.hold() as why_not:
        assert why_not is None
        assert _requested_us() == 0
    assert _requested_us() == before


def test_where_it_cannot_be_held_the_block_still_runs_and_says_why(tmp_path: Path) -> None:
    ran = False
    with clock.hold(str(tmp_path / "no-such-device")) as why_not:
        ran = True
    assert ran
    assert why_not is not None and "no-such-device" in why_not and "No such file" in why_not
    assert clock.describe(why_not).startswith("not held (")
    assert "held at full speed" in clock.describe(None)


def _device(tmp_path: Path, value: int) -> str:
    path = tmp_path / "cpu_dma_latency"
    path.write_bytes(struct.pack("i", value))
    return str(path)


def test_the_state_is_read_back_from_the_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clock.ENV, "free")  # the device, where it can be read, wins over the variable
    assert clock.state(_device(tmp_path, 0)) == "held"
    assert clock.state(_device(tmp_path, 2_000_000_000)) == "free"
    short = tmp_path / "short"
    short.write_bytes(b"\0")
    assert clock.state(str(short)) is None


def test_without_the_device_the_state_comes_from_the_verb_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = str(tmp_path / "none")
    monkeypatch.setenv(clock.ENV, "held")
    assert clock.state(missing) == "held"
    monkeypatch.setenv(clock.ENV, "bogus")
    assert clock.state(missing) is None
    monkeypatch.delenv(clock.ENV)
    assert clock.state(missing) is None


@pytest.mark.skipif(
    not os.access(clock.PM_QOS_DEVICE, os.R_OK | os.W_OK), reason="no PM QoS device this user may open"
)
def test_a_hold_is_seen_by_state() -> None:
    with clock.hold() as why_not:
        assert why_not is None and clock.state() == "held"
