from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.config.fixtures import OCR_DET, make_repo
from tipc.cli import main

CONFIG = "test_tipc/configs/demo/train_infer_python.txt"


def test_lint_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = make_repo(tmp_path / "good", {CONFIG: OCR_DET})
    assert main(["lint", str(good)]) == 0
    bad = make_repo(tmp_path / "bad", {CONFIG: OCR_DET.replace("\n", "\r\n")})
    assert main(["lint", str(bad / CONFIG)]) == 1
    assert main(["lint", str(tmp_path / "missing.txt")]) == 2
    out = capsys.readouterr()
    assert "TIPC101" in out.out and "no such file" in out.err


def test_lint_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET.replace("infer_quant:False", "infer_quant:Fasle")})
    assert main(["lint", "--format", "json", str(repo)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any(f["code"] == "TIPC106" and f["line"] == 39 for f in data["findings"])
