from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.config.fixtures import OCR_DET, make_repo
from tipc.cli import main

CONFIG = "test_tipc/configs/demo/train_infer_python.txt"


def test_plan_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET})
    code = main(
        [
            "plan",
            str(repo / CONFIG),
            "--mode",
            "lite_train_lite_infer",
            "--device",
            "cpu",
            "--set",
            "epoch=2",
            "--format",
            "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["steps"][0]["stage"] == "train" and data["dialect"] == "ocr"
    assert "Global.epoch_num=2" in data["steps"][0]["argv"]
    assert data["steps"][1]["depends_on"] == [data["steps"][0]["id"]]


def test_plan_text_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET})
    assert main(["plan", str(repo / CONFIG), "--mode", "whole_infer"]) == 0
    assert "1. [infer]" in capsys.readouterr().out
    assert main(["plan", str(repo / CONFIG), "--mode", "whole_infer", "--set", "bogus=1"]) == 2
    assert main(["plan", str(repo / CONFIG), "--mode", "whole_infer", "--set", "novalue"]) == 2
    assert main(["plan", str(repo / CONFIG), "--mode", "whole_infer", "--dialect", "nope"]) == 2
