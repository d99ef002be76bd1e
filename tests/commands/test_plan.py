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


DEMO_CONFIG = (
    Path(__file__).resolve().parents[2]
    / "examples/lenet_digits/test_tipc/configs/lenet_digits/train_infer_python.txt"
)


def test_plan_isolated_shows_what_run_executes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(DEMO_CONFIG), "--mode", "whole_infer"]) == 0
    faithful = capsys.readouterr().out
    assert "--save_inference_dir=./pretrained\n" in faithful and "TIPC910" not in faithful
    assert main(["plan", str(DEMO_CONFIG), "--mode", "whole_infer", "--isolated"]) == 0
    isolated = capsys.readouterr().out
    assert "isolated: what `tipc run` executes" in isolated
    assert "--save_inference_dir=./test_tipc/output/tipc_isolated/pretrained" in isolated
    assert "--model_dir=./test_tipc/output/tipc_isolated/pretrained" in isolated
    assert "TIPC910 export/whole_infer/0: the script writes --save_inference_dir=./pretrained" in isolated
    # `tipc run --dry-run --no-sandbox` prints the same plan (in place, writes outside are redirected)
    dry = ["run", str(DEMO_CONFIG), "--mode", "whole_infer", "--dry-run"]
    assert main([*dry, "--no-sandbox", "--no-prepare"]) == 0
    assert capsys.readouterr().out.strip() == isolated.strip()
    # in the sandbox (the default) nothing needs redirecting: the script's own commands, prepare.sh first
    assert main(dry) == 0
    sandboxed = capsys.readouterr().out
    assert "--save_inference_dir=./pretrained" in sandboxed and "TIPC910" not in sandboxed
    assert "1. [prepare] prepare" in sandboxed


def test_plan_observe_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(DEMO_CONFIG), "--observe"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("observed: bash test_tipc/test_train_inference_python.sh")
    assert "4. [infer] infer/inference/1" in out
    assert "cross-check: the template profile plan agrees with the script" in out
    assert "`tipc run` executes the template profile plan (the script agrees with it) (4 step(s))" in out
    assert main(["plan", str(DEMO_CONFIG), "--observe", "--mode", "whole_infer", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["observed"] is True and data["why_nothing"] is None and data["cross_check"] == []
    assert [s["stage"] for s in data["steps"]] == ["export", "infer"]


def test_plan_observe_reports_differences_and_why_nothing_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    demo = DEMO_CONFIG.parents[3]
    repo = tmp_path / "edited"
    for rel in ("test_tipc/common_func.sh", "test_tipc/test_train_inference_python.sh"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(demo / rel, repo / rel)
    config = repo / DEMO_CONFIG.relative_to(demo)
    config.parent.mkdir(parents=True)
    shutil.copyfile(DEMO_CONFIG, config)
    script = repo / "test_tipc/test_train_inference_python.sh"
    script.write_text(script.read_text().replace("source test_tipc/common_func.sh", "source /home/a/x.sh"))
    assert main(["plan", str(config), "--observe"]) == 0
    out = capsys.readouterr().out
    assert "0 steps" in out and "why nothing runs:" in out and "/home/a/x.sh: No such file" in out
    assert "TIPC040 missing:" in out and "4 difference(s) from the template profile plan" in out
    assert "`tipc run` executes no step (the script runs nothing in this mode)" in out
    # without --observe nothing of the repo runs: the profile plan, saying that run executes the script's
    assert main(["plan", str(config)]) == 0
    out = capsys.readouterr().out
    assert "WARNING TIPC044 test_tipc/test_train_inference_python.sh is not a known dialect" in out, out
    assert "`tipc plan --observe` shows them" in out
    (repo / "test_tipc/test_train_inference_python.sh").unlink()
    assert main(["plan", str(config), "--observe"]) == 2


def test_plan_observe_isolated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(DEMO_CONFIG), "--observe", "--isolated", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["isolated"] is True and len(data["steps"]) == 4


def test_plan_of_a_config_with_a_blank_line_plans_the_shifted_slots_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tipc.planning.lint import lint_paths

    # Line 13 (`null:null`) left blank: the script drops it, so every later line moves up one slot.
    lines = OCR_DET.split("\n")
    lines[12] = ""
    repo = make_repo(tmp_path, {CONFIG: "\n".join(lines)})
    assert main(["plan", str(repo / CONFIG), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    shifted = [f for f in data["findings"] if f["code"] == "TIPC102"]
    assert shifted and shifted[0]["line"] == 13 and shifted[0]["level"] != "info"
    linted = [f for f in lint_paths([repo / CONFIG]) if f.code == "TIPC102"]
    assert [f.message for f in linted] == [f["message"] for f in shifted]  # plan and lint agree
    # What the script runs: `trainer:norm_train` now fills the train_param2 slot, `norm_train:...` the
    # trainer list, so the trainer loop looks for a trainer named `tools/train.py -c ...` (skipped).
    assert not any(s["id"].startswith("train/norm_train") for s in data["steps"])
    assert main(["plan", str(repo / CONFIG)]) == 0
    assert "TIPC102" in capsys.readouterr().out  # shown in the text plan too


def test_plan_of_a_serving_config_defaults_to_serving_infer(capsys: pytest.CaptureFixture[str]) -> None:
    demo = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
    serving = demo / "test_tipc" / "configs" / "lenet_digits" / "serving_infer_python.txt"
    assert main(["plan", str(serving)]) == 0
    assert "mode serving_infer" in capsys.readouterr().out


def test_set_accepts_a_key_that_starts_with_dashes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET})
    for argv in (["--set", "--cpu_threads=3"], ["--set=--cpu_threads=3"]):
        assert main(["plan", str(repo / CONFIG), *argv, "--format", "json"]) == 0
        steps = json.loads(capsys.readouterr().out)["steps"]
        assert any("--cpu_threads=3" in s["argv"] for s in steps)


def test_plan_max_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET})
    assert main(["plan", str(repo / CONFIG), "--max-steps", "2", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["steps"]) == 2 and any(f["code"] == "TIPC270" for f in data["findings"])
