"""`tipc run --dry-run` and `tipc plan` say up front what `tipc run` would only find at run time: a config's
interpreter missing here (and what runs in its place) and steps asking for a GPU on a machine without one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.config.fixtures import COMPACT, make_repo
from tipc.cli import main
from tipc.commands import _upfront
from tipc.core.steps import Mode, Plan, Stage, Step
from tipc.planning.device_flags import gpu_ask, multi_gpu

CONFIG = "test_tipc/configs/mnv3/train_infer_python.txt"
MISSING = "python9.9"  # matches the config's python word pattern, installed nowhere
TWO_GPUS = COMPACT.replace("python:python3.7", f"python:{MISSING}").replace(
    "gpu_list:0\n", "gpu_list:0|0,1\n"
)


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_upfront, "gpu_present", lambda: False)


def _tipc_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("tipc: ")]


def test_dry_run_names_the_missing_interpreter_and_the_gpu_steps(
    tmp_path: Path, no_gpu: None, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, {CONFIG: TWO_GPUS})
    assert main(["run", "--no-sandbox", str(repo), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    lines = _tipc_lines(err)
    interp = [line for line in lines if f"'{MISSING}'" in line]
    assert len(interp) == 1 and "is not on PATH" in interp[0]
    assert f"runs {sys.executable} in its place" in interp[0]  # what python_substitutions maps it to
    single = [line for line in lines if "step(s) ask for one" in line]
    assert len(single) == 1 and "--use-gpu=True" in single[0] and "--device cpu" in single[0]
    several = [line for line in lines if "launch on several GPUs" in line]
    assert len(several) == 1 and "gpus_0,1" in several[0]
    assert f"{MISSING} train.py" in out  # the plan itself still shows the commands as the config writes them
    assert not (repo / "test_tipc" / "output").exists()


def test_dry_run_device_cpu_has_no_gpu_line(
    tmp_path: Path, no_gpu: None, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, {CONFIG: TWO_GPUS})
    assert main(["run", "--no-sandbox", str(repo), "--dry-run", "--device", "cpu"]) == 0
    lines = _tipc_lines(capsys.readouterr().err)
    assert not [line for line in lines if "GPU" in line]
    assert [line for line in lines if f"'{MISSING}'" in line]


def test_python_that_does_not_run_means_the_steps_cannot_run(
    tmp_path: Path, no_gpu: None, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, {CONFIG: TWO_GPUS})
    assert main(["run", "--no-sandbox", str(repo), "--dry-run", "--python", "python9.8"]) == 0
    interp = [line for line in _tipc_lines(capsys.readouterr().err) if f"'{MISSING}'" in line]
    assert len(interp) == 1 and "cannot run here" in interp[0]


def test_plan_says_the_same_on_stderr(
    tmp_path: Path, no_gpu: None, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, {CONFIG: TWO_GPUS})
    assert main(["plan", str(repo)]) == 0
    out, err = capsys.readouterr()
    lines = _tipc_lines(err)
    assert any(f"'{MISSING}'" in line for line in lines)
    assert any("launch on several GPUs" in line for line in lines)
    assert "tipc:" not in out  # stdout stays the plan alone


def test_a_gpu_machine_gets_no_gpu_line(tmp_path: Path) -> None:
    steps = (Step("infer", Stage.INFER, ("python", "infer.py", "--use_gpu=True")),)
    plan = Plan(
        "c.txt",
        str(tmp_path),
        Mode.LITE_TRAIN_LITE_INFER,
        "d",
        "model",
        "out",
        "out/results.log",
        "python",
        steps,
    )
    assert _upfront.gpu_lines(plan, has_gpu=True, device=None) == []
    assert len(_upfront.gpu_lines(plan, has_gpu=False, device=None)) == 1


@pytest.mark.parametrize(
    ("argv", "ask"),
    [
        (("python", "-m", "paddle.distributed.launch", "--gpus=0,1", "train.py"), "--gpus=0,1"),
        (("python", "-m", "paddle.distributed.launch", "--gpus", "0,1", "train.py"), "--gpus 0,1"),
        (("python", "infer.py", "--use-gpu=True"), "--use-gpu=True"),
        (("python", "infer.py", "--use_gpu", "true"), "--use_gpu true"),
        (("python", "tools/train.py", "-o", "Global.use_gpu=True"), "Global.use_gpu=True"),
        (("python", "tools/train.py", "-o", "Global.device=gpu"), "Global.device=gpu"),
        (("python", "infer.py", "--device=gpu:0"), "--device=gpu:0"),
        (("python", "infer.py", "--use-gpu=False", "--device=cpu"), None),
        (("python", "infer.py", "--gpus=-1"), None),
    ],
)
def test_gpu_ask(argv: tuple[str, ...], ask: str | None) -> None:
    assert gpu_ask(Step("s", Stage.INFER, argv, env=(("CUDA_VISIBLE_DEVICES", "0"),))) == ask


def test_multi_gpu() -> None:
    assert multi_gpu("gpus=0,1") and multi_gpu("--gpus 0,1,2,3")
    assert not multi_gpu("--use-gpu=True") and not multi_gpu("--gpus 0")
