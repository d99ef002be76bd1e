"""The lite data the published repos' TIPC configs read, found where the config says (its data slots, its
commands' data options, and the model's own YAML config a command names), read without running anything."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckContext, Verdict

pytestmark = [pytest.mark.real_repos]


def test_can_reads_its_data_from_the_yaml_config_its_train_command_names(
    unpack: Callable[[str], Path],
) -> None:
    # `norm_train:tools/train.py --config config_for_tipc.yaml`: the data paths are in that file
    repo = unpack("Lllllolita__CAN_Paddle")
    out = CHECKS["lite_data"](CheckContext(repo=repo))
    assert out.verdict is Verdict.PASS, out.summary
    assert "test_images/lite_data/lite_images.pkl" in out.data["paths"]
    first = out.evidence[0]
    assert first.path == "config_for_tipc.yaml" and first.line == 39, first


def test_dmnet_downloads_its_lite_data_so_it_is_not_in_the_repo(unpack: Callable[[str], Path]) -> None:
    # its prepare.sh wgets mini_supervisely.zip: the competition asks for the lite data in the repo
    repo = unpack("justld__DMNet_paddle")
    out = CHECKS["lite_data"](CheckContext(repo=repo))
    assert out.verdict is Verdict.FAIL and "test_tipc/data/mini_supervisely" in out.summary, out.summary


def test_the_official_tutorial_ships_its_lite_data_as_an_archive(unpack: Callable[[str], Path]) -> None:
    repo = unpack("PaddlePaddle__models__Step6")
    out = CHECKS["lite_data"](CheckContext(repo=repo))
    assert out.verdict is Verdict.PASS and "test_images/lite_data.tar" in out.evidence[0].text, out.summary
