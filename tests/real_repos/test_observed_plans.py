"""Which plan `tipc run` executes on the published repos: the script's own, observed with recording stand-ins
(nothing of the models runs here), whenever it differs from the plan of the script's profile."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tipc.core.steps import Mode, Stage
from tipc.execute.observation import plan_for_run
from tipc.planning.planner import plan

pytestmark = [pytest.mark.real_repos]
LITE = Mode.LITE_TRAIN_LITE_INFER


def test_a_known_script_whose_run_differs_from_its_profile_runs_what_it_observes(
    unpack: Callable[[str], Path],
) -> None:
    # PaddleC3D's script is a known one (template_c3d), but it writes into test_tipc/output/c3d and logs
    # under other names than the profile plans: run executes the script's own commands
    repo = unpack("txyugood__PaddleC3D")
    config = repo / "test_tipc/configs/c3d/train_infer_python.txt"
    runs = plan_for_run(config, LITE, repo=repo)
    profile = plan(config, LITE, repo=repo)
    assert runs.steps != profile.steps
    note = next(f for f in runs.findings if f.code == "TIPC041")
    assert "is the template_c3d script" in note.message and "tipc runs the 8 command(s)" in note.message
    assert any(f.code == "TIPC040" and "output folder" in f.message for f in runs.findings)
    assert runs.output_dir == "test_tipc/output/c3d"
    assert [s.stage for s in runs.steps] == [Stage.TRAIN, Stage.EXPORT, *[Stage.INFER] * 6]


def test_a_known_script_that_agrees_with_its_profile_runs_the_profile_plan(
    unpack: Callable[[str], Path],
) -> None:
    repo = unpack("PaddlePaddle__models__Step6")
    config = repo / "test_tipc/configs/mobilenet_v3_small/train_infer_python.txt"
    runs = plan_for_run(config, LITE, repo=repo)
    profile = plan(config, LITE, repo=repo)
    # the profile's steps, with the variables the script exports for its commands (its Count and nodes)
    assert [(s.id, s.argv) for s in runs.steps] == [(s.id, s.argv) for s in profile.steps]
    for ran, planned in zip(runs.steps, profile.steps, strict=True):
        assert set(planned.env) <= set(ran.env), ran.id
    assert not any(f.code in ("TIPC040", "TIPC041") for f in runs.findings)
