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


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("test_tipc/confgs", "no such file or folder", id="mistyped-folder"),
        pytest.param("missing.txt", "no such file or folder", id="missing-file"),
        pytest.param("README.md", "not a TIPC config", id="readme"),
        pytest.param(".", "no files under test_tipc/configs", id="folder-without-configs"),
    ],
)
def test_lint_of_what_is_not_a_config_exits_2_with_a_message(
    tmp_path: Path, name: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "README.md").write_text("# a model\n", encoding="utf-8")
    (tmp_path / "test_tipc").mkdir()
    assert main(["lint", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / name).rstrip("/.") in err and message in err, err


def test_lint_of_a_config_folder_lints_the_configs_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET.replace("\n", "\r\n")})
    for folder in ("test_tipc/configs/demo", "test_tipc"):
        assert main(["lint", str(repo / folder)]) == 1
        assert "TIPC101" in capsys.readouterr().out


def test_lint_max_steps_switch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(
        tmp_path, {CONFIG: OCR_DET.replace("gpu_list:0|0,1", "gpu_list:" + "|".join(["0"] * 20))}
    )
    assert main(["lint", str(repo / CONFIG)]) == 0
    assert main(["lint", "--max-steps", "3", str(repo / CONFIG)]) == 1
    assert "TIPC270" in capsys.readouterr().out
    assert main(["lint", "--max-steps", "0", str(repo / CONFIG)]) == 2
