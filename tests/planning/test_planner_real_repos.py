"""`tipc plan --device cpu` on the published real repos (shared/real-repos tarballs, unpacked into tmp).

Each repo's README entry says what a CPU run needs: the official tutorial's train.py defaults `--device` to
gpu, cutpaste_paddle's train needs `--cuda False`, DnCNN's infer gets `--use-gpu`, a config hard-codes
`gpus_0`, and `0,1` launches cannot run on the CPU. The tarballs live beside the checkout
(`<checkout>/../shared/real-repos`); TIPC_REAL_REPOS overrides. Absent tarballs skip with the reason.
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tipc.cli import main

REAL_REPOS = Path(
    os.environ.get("TIPC_REAL_REPOS", Path(__file__).parents[2].parent / "shared" / "real-repos")
)
# Planning reads the config, the test_tipc scripts and the Python sources only: the data stays packed.
_PLANNING_FILES = (".py", ".sh", ".txt", ".yml", ".yaml")


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Any:
    def unpack(name: str) -> Path:
        tarball = REAL_REPOS / f"{name}.tar.gz"
        if not tarball.is_file():
            pytest.skip(f"real repo tarball not found: {tarball} (set TIPC_REAL_REPOS)")
        target = tmp_path_factory.mktemp(name)
        with tarfile.open(tarball) as tar:
            members = [m for m in tar.getmembers() if m.isdir() or m.name.endswith(_PLANNING_FILES)]
            if hasattr(tarfile, "data_filter"):
                tar.extractall(target, members=members, filter="data")
            else:  # Python < 3.10.12 has no extraction filters; the tarballs are the project's own
                tar.extractall(target, members=members)
        return target / name

    return unpack


def _plan_cpu(repo: Path, config: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    code = main(["plan", str(repo / config), "--device", "cpu", "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    data: dict[str, Any] = json.loads(out)
    assert "gpus_-1" not in out  # the config's own names are kept
    return data


def _step(data: dict[str, Any], step_id: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [s for s in data["steps"] if s["id"] == step_id]
    assert found, [s["id"] for s in data["steps"]]
    return found[0]


def _infos(data: dict[str, Any], code: str) -> list[str]:
    return [f["message"] for f in data["findings"] if f["code"] == code]


def test_official_tutorial_step6(unpacked: Any, capsys: pytest.CaptureFixture[str]) -> None:
    repo = unpacked("PaddlePaddle__models__Step6")
    data = _plan_cpu(repo, "test_tipc/configs/mobilenet_v3_small/train_infer_python.txt", capsys)
    train = _step(data, "train/norm_train/gpus_0/autocast_False")
    evaluate = _step(data, "eval/norm_train/gpus_0/autocast_False")
    export = _step(data, "export/norm_train/gpus_0/autocast_False")
    assert train["argv"][1:3] == ["train.py", "--device=cpu"] and not train["not_applicable"]
    assert evaluate["argv"][1:4] == ["train.py", "--device=cpu", "--test-only"]
    assert export["argv"][1:3] == ["tools/export_model.py", "--device=cpu"]
    assert "norm_train_gpus_0_autocast_False_nodes_1.log" in " ".join(train["argv"])
    infers = [s for s in data["steps"] if s["stage"] == "infer" and "/gpus_0/" in s["id"]]
    assert infers and all("--use-gpu=False" in s["argv"] for s in infers)
    launch = _step(data, "train/norm_train/gpus_0,1/autocast_False")
    assert "paddle.distributed.launch" in launch["argv"] and "--gpus=0,1" in launch["argv"]
    assert "distributed launch on GPUs 0,1" in launch["not_applicable"]
    assert all(s["not_applicable"] for s in data["steps"] if "gpus_0,1" in s["id"])
    assert any("--device at train.py:326" in m for m in _infos(data, "TIPC900"))


def test_liuxtakeoff_cutpaste_train_gets_cuda_false(
    unpacked: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = unpacked("liuxtakeoff__cutpaste_paddle")
    data = _plan_cpu(repo, "test_tipc/configs/resnet18/train_infer_python.txt", capsys)
    train = _step(data, "train/norm_train/gpus_0/autocast_False")
    assert train["argv"][1:3] == ["tools/train.py", "--cuda=False"]
    assert "tools/train.py --cuda=False" in train["status_command"]
    evaluate = _step(data, "eval/norm_train/gpus_0/autocast_False")
    assert not any(a.startswith("--cuda") for a in evaluate["argv"])  # eval's --cuda defaults to False
    assert any("--cuda at tools/train.py:201" in m for m in _infos(data, "TIPC900"))


def test_dncnn_infer_and_eval_off_the_gpu(unpacked: Any, capsys: pytest.CaptureFixture[str]) -> None:
    repo = unpacked("sldyns__DnCNN_paddle")
    data = _plan_cpu(repo, "test_tipc/configs/DnCNN/train_infer_python.txt", capsys)
    infers = [s for s in data["steps"] if s["stage"] == "infer"]
    assert infers and all(
        "--use-gpu=False" in s["argv"] and "--use-gpu=True" not in s["argv"] for s in infers
    )
    evaluate = _step(data, "eval/norm_train/gpus_0/autocast_False")
    # val.py: `--use_GPU type=bool default=True`; bool('False') is True, only '' is false
    assert evaluate["argv"][1:3] == ["val.py", "--use_GPU="]


def test_lieberk_hard_coded_gpus_0_still_matches(unpacked: Any, capsys: pytest.CaptureFixture[str]) -> None:
    repo = unpacked("Lieberk__Paddle-Cutpaste")
    data = _plan_cpu(repo, "test_tipc/configs/resnet18/train_infer_python.txt", capsys)
    train = _step(data, "train/norm_train/gpus_0/autocast_False")
    # the config hard-codes test_tipc/output/.../norm_train_gpus_0; the planned folder is the same one
    hard = [a for a in train["argv"] if a.startswith("--model_dir=")]
    assert {a.split("=", 1)[1].removeprefix("./") for a in hard} == {
        "test_tipc/output/resnet18/lite_train_lite_infer/norm_train_gpus_0"
    }
    assert train["argv"][1:3] == ["train.py", "--cuda="]  # type=bool


def test_can_multi_gpu_step_not_applicable(unpacked: Any, capsys: pytest.CaptureFixture[str]) -> None:
    repo = unpacked("Lllllolita__CAN_Paddle")
    data = _plan_cpu(repo, "test_tipc/configs/can/train_infer_python.txt", capsys)
    assert _step(data, "train/norm_train/gpus_0/autocast_null")["argv"][1:3] == [
        "tools/train.py",
        "--device=cpu",
    ]
    launch = _step(data, "train/norm_train/gpus_0,1/autocast_null")
    assert launch["not_applicable"] and _infos(data, "TIPC902")
