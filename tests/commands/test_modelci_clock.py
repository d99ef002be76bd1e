"""tipc.commands._modelci.measuring_clock: model CI's verbs hold the CPUs at full clock while they measure
(unless --no-hold-clock) and pass the state down to every child, the sandboxed ones included."""

from __future__ import annotations

import argparse
import io
import os

import pytest

from tipc.commands import _modelci
from tipc.execute import clock


def _may_hold() -> bool:
    return os.access(clock.PM_QOS_DEVICE, os.R_OK | os.W_OK)


def test_the_clock_is_held_while_measuring_and_its_state_passed_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(clock.ENV, raising=False)
    err = io.StringIO()
    with _modelci.measuring_clock(argparse.Namespace(no_hold_clock=False), err):
        if _may_hold():
            assert clock.state() == "held" and os.environ[clock.ENV] == "held"
            assert err.getvalue() == ""
        else:
            assert "the CPUs' clock is not held (" in err.getvalue()
    assert clock.ENV not in os.environ  # the caller's environment as it was


def test_no_hold_clock_holds_nothing_but_still_says_the_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clock.ENV, "free")
    before = clock.state()
    err = io.StringIO()
    with _modelci.measuring_clock(argparse.Namespace(no_hold_clock=True), err):
        assert clock.state() == before
        assert os.environ.get(clock.ENV) == before
    assert os.environ[clock.ENV] == "free" and err.getvalue() == ""


def test_the_verbs_take_no_hold_clock() -> None:
    from tipc.cli import build_parser

    parser = build_parser()
    for argv in (
        ["check", ".", "--baseline", "--no-hold-clock"],
        ["baseline", "record", ".", "--no-hold-clock"],
        ["matrix", ".", "--paddle", "3.3.1", "--no-hold-clock"],
    ):
        assert parser.parse_args(argv).no_hold_clock is True
