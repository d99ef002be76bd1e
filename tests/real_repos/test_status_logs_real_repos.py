"""Status logs of earlier runs the published repos ship in test_tipc/ (read without running anything)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckContext, Verdict
from tipc.judge.checks.status_log import shipped_status_logs

pytestmark = [pytest.mark.real_repos]


@pytest.mark.parametrize(
    ("name", "path", "successes"),
    [
        ("Lllllolita__CAN_Paddle", "test_tipc/output/results_python.log", 10),
        ("sldyns__DnCNN_paddle", "test_tipc/output/DnCNN/results_python.log", 5),
    ],
)
def test_a_committed_success_log_fails_naming_it(
    unpack: Callable[[str], Path], name: str, path: str, successes: int
) -> None:
    repo = unpack(name)
    logs = shipped_status_logs(repo)
    assert [(log["path"], log["successes"]) for log in logs] == [(path, successes)]
    out = CHECKS["shipped_status_log"](CheckContext(repo=repo))
    assert out.verdict is Verdict.FAIL and path in out.summary


def test_the_official_tutorial_ships_none(unpack: Callable[[str], Path]) -> None:
    repo = unpack("PaddlePaddle__models__Step6")
    assert CHECKS["shipped_status_log"](CheckContext(repo=repo)).verdict is Verdict.PASS
