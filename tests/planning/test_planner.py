from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.config.fixtures import COMPACT, OCR_DET, make_repo
from tipc.core.errors import ConfigError, UserError
from tipc.core.steps import Mode, Overrides, Plan, Stage
from tipc.planning.planner import format_plan, plan, status_line

CONFIG = "test_tipc/configs/demo/train_infer_python.txt"


@pytest.fixture
def ocr_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {CONFIG: OCR_DET})


@pytest.fixture
def compact_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"test_tipc/configs/mnv3/train_infer_python.txt": COMPACT})


def test_ocr_plan_steps_and_dependencies(ocr_repo: Path) -> None:
    result = plan(ocr_repo / CONFIG, "lite_train_lite_infer")
    stages = [s.stage for s in result.steps]
    assert stages[:2] == [Stage.TRAIN, Stage.EXPORT]
    train = result.steps[0]
    assert train.argv[0] == "python3.7"
    assert "Global.epoch_num=1" in train.argv and "Train.loader.batch_size_per_card=2" in train.argv
    assert train.log is None and train.status_log is not None
    assert train.status_log.endswith("norm_train_gpus_0_autocast_null.log")
    export = result.steps[1]
    assert export.depends_on == (train.id,)
    infers = [s for s in result.steps if s.stage is Stage.INFER]
    assert infers and all(s.depends_on for s in infers)
    assert ("CUDA_VISIBLE_DEVICES", "0") in infers[0].env
    assert result.output_dir == "test_tipc/output/demo_det/lite_train_lite_infer"
    assert result.results_log.endswith("results_python.log") and result.status_format == "ocr"
    assert len({s.id for s in result.steps}) == len(result.steps)
    assert Plan.from_json(json.loads(json.dumps(result.to_json()))) == result


def test_missing_mode_omits_the_parameter_and_says_so(ocr_repo: Path) -> None:
    result = plan(ocr_repo / CONFIG, "lite_train_whole_infer")
    assert not any(a.startswith("Global.epoch_num") for a in result.steps[0].argv)
    assert any(f.code == "TIPC201" and f.line == 7 for f in result.findings)


def test_whole_infer_uses_infer_model_and_image(ocr_repo: Path) -> None:
    result = plan(ocr_repo / CONFIG, "whole_infer")
    assert all(s.stage is Stage.INFER for s in result.steps)
    assert "--det_model_dir=./inference/demo_infer/" in result.steps[0].argv


def test_device_cpu_and_set_overrides_are_visible(ocr_repo: Path) -> None:
    result = plan(
        ocr_repo / CONFIG,
        "lite_train_lite_infer",
        overrides=Overrides(device="cpu", sets=(("Global.epoch_num", "3"), ("batch_size", "8"))),
    )
    train = result.steps[0]
    assert "Global.use_gpu=False" in train.argv and "Global.epoch_num=3" in train.argv
    assert "Train.loader.batch_size_per_card=8" in train.argv
    assert all("--use_gpu=True" not in s.argv for s in result.steps)
    trains = [s for s in result.steps if s.stage is Stage.TRAIN]
    # gpu_list 0|0,1: item 0 runs on the CPU under its own name; the 0,1 launch is kept, not applicable.
    assert [s.id for s in trains] == [
        "train/norm_train/gpus_0/autocast_null",
        "train/norm_train/gpus_0,1/autocast_null",
    ]
    assert not trains[0].not_applicable and "CUDA_VISIBLE_DEVICES" not in trains[0].env_dict
    assert "distributed" in " ".join(trains[1].argv) and "distributed launch" in trains[1].not_applicable
    assert all(s.not_applicable for s in result.steps if "gpus_0,1" in s.id)
    assert not any("gpus_-1" in " ".join(s.argv) for s in result.steps)
    assert sum(f.code == "TIPC900" for f in result.findings) >= 4


def test_unknown_set_key_is_a_config_error(ocr_repo: Path) -> None:
    with pytest.raises(ConfigError, match="--set nope"):
        plan(ocr_repo / CONFIG, "whole_infer", overrides=Overrides(sets=(("nope", "1"),)))


def test_an_unknown_device_is_a_user_error(ocr_repo: Path) -> None:
    with pytest.raises(UserError, match="--device 'tpu': expected cpu or gpu"):
        plan(ocr_repo / CONFIG, "whole_infer", overrides=Overrides(device="tpu"))


def test_unknown_mode_and_other_chain(tmp_path: Path, ocr_repo: Path) -> None:
    with pytest.raises(UserError):
        plan(ocr_repo / CONFIG, "fast")
    repo = make_repo(
        tmp_path, {"test_tipc/configs/a/serving_infer_python.txt": "===serving_params===\nm:a\n"}
    )
    with pytest.raises(ConfigError, match="serving"):
        plan(repo / "test_tipc/configs/a/serving_infer_python.txt", "whole_infer")


def test_null_export_disables_inference(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {
            CONFIG: OCR_DET.replace(
                "norm_export:tools/export_model.py -c configs/det.yml -o", "norm_export:null"
            )
        },
    )
    result = plan(repo / CONFIG, "lite_train_lite_infer")
    assert [s.stage for s in result.steps] == [Stage.TRAIN, Stage.TRAIN]
    assert any(f.code == "TIPC216" for f in result.findings)


def test_compact_plan(compact_repo: Path) -> None:
    result = plan(compact_repo / "test_tipc/configs/mnv3/train_infer_python.txt", "lite_train_lite_infer")
    assert result.dialect == "compact"
    assert [s.stage.value for s in result.steps] == ["train", "eval", "export", "infer", "infer"]
    assert result.steps[0].argv[-2:] == ("--epochs=5", "--batch-size=4")


def test_format_plan_and_status_line(ocr_repo: Path) -> None:
    result = plan(ocr_repo / CONFIG, "lite_train_lite_infer")
    text = format_plan(result)
    assert text.splitlines()[0].startswith("plan: demo_det | mode lite_train_lite_infer | dialect ocr")
    assert " 1. [train]" in text or "1. [train]" in text
    line = status_line(result, result.steps[1])
    assert line.startswith("\x1b[33m Run successfully with command - demo_det - python3.7 ")
    assert " > ./test_tipc/output/" in line


def test_ptq_config_is_planned_with_the_klquant_layout(tmp_path: Path) -> None:
    ptq = """\
===========================kl_quant_params===========================
model_name:demo_KL
python:python3.7
Global.pretrained_model:null
Global.save_inference_dir:null
infer_model:./inference/demo_infer/
infer_export:deploy/slim/quant_kl.py -c a.yml -o
infer_quant:True
inference:tools/infer/predict_det.py
--use_gpu:False|True
--enable_mkldnn:True
--cpu_threads:6
--rec_batch_num:1
--use_tensorrt:False
--precision:int8
--det_model_dir:
--image_dir:./imgs/
null:null
--benchmark:True
null:null
"""
    repo = make_repo(tmp_path, {"test_tipc/configs/demo/train_ptq_infer_python.txt": ptq})
    result = plan(
        repo / "test_tipc/configs/demo/train_ptq_infer_python.txt", "klquant_whole_infer", dialect="template"
    )
    assert any(f.code == "TIPC033" for f in result.findings)
    export = result.steps[0]
    assert export.argv[:2] == ("python3.7", "deploy/slim/quant_kl.py")
    # Quantized: CPU int8 with mkldnn runs, GPU without TensorRT is skipped. The template reads only 17
    # lines here, so the benchmark flag (line 19) is lost.
    infers = [s for s in result.steps if s.stage is Stage.INFER]
    assert infers and all("--precision=int8" in s.argv for s in infers)
    assert all("--benchmark=True" not in s.argv for s in infers)


def test_select_stages_keeps_the_selected_steps_and_the_servers_they_need() -> None:
    from tipc.core.steps import Step
    from tipc.planning.planner import select_stages

    steps = (
        Step(id="train/a", stage=Stage.TRAIN, argv=("python", "t.py")),
        Step(id="serve/s", stage=Stage.SERVE, argv=("python", "s.py"), background=True),
        Step(id="infer/a", stage=Stage.INFER, argv=("python", "i.py"), depends_on=("train/a", "serve/s")),
    )
    base = Plan(
        config_path="c.txt",
        repo="/r",
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="ocr",
        model_name="m",
        output_dir="out",
        results_log="out/results_python.log",
        status_format="ocr",
        steps=steps,
    )
    assert [s.id for s in select_stages(base, ("train",)).steps] == ["train/a"]
    chosen = select_stages(base, ("infer",))
    assert [s.id for s in chosen.steps] == ["serve/s", "infer/a"]
    assert any(f.code == "TIPC920" for f in chosen.findings)
    assert select_stages(base, ()) is base


def test_default_mode_follows_the_config_chain(tmp_path: Path) -> None:
    from tipc.planning.planner import default_mode

    demo = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits" / "test_tipc" / "configs"
    assert default_mode(demo / "lenet_digits" / "serving_infer_python.txt") == "serving_infer"
    assert default_mode(demo / "lenet_digits" / "train_infer_python.txt") == "lite_train_lite_infer"
