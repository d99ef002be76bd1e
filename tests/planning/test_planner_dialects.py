"""Dialect behaviours that change commands, on small configs built from the verbatim examples' shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.config.fixtures import COMPACT, OCR_DET, make_repo
from tipc.core.steps import Overrides, Stage
from tipc.planning.planner import plan

CONFIG = "test_tipc/configs/demo/train_infer_python.txt"

CLAS = (
    OCR_DET.replace("Global.use_gpu:True|True", "-o Global.device:gpu")
    .replace(
        "Global.epoch_num:lite_train_lite_infer=1|whole_train_whole_infer=50",
        "-o Global.epochs:lite_train_lite_infer=5",
    )
    .replace("null:null\n##\ntrainer", "null:null\n##\ntrainer", 1)
    .replace("inference_dir:null", "pretrained_model_url:https://x.y/z.pdparams")
    .replace("export1:null", "kl_quant:null")
    .replace("--use_gpu:True|False", "-o Global.use_gpu:True|False")
)


def _plan(tmp_path: Path, text: str, mode: str, dialect: str, **kw: object) -> object:
    repo = make_repo(tmp_path, {CONFIG: text})
    return plan(repo / CONFIG, mode, dialect=dialect, **kw)  # type: ignore[arg-type]


def test_crlf_values_keep_carriage_returns_and_break_boolean_tests(tmp_path: Path) -> None:
    result = _plan(tmp_path, OCR_DET.replace("\n", "\r\n"), "lite_train_lite_infer", "ocr")
    train = result.steps[0]  # type: ignore[attr-defined]
    assert any(a.endswith("\r") for a in train.argv)
    # Only the last item of `True|False\r` carries the \r: GPU inference runs, CPU inference does not.
    infers = [s for s in result.steps if s.stage is Stage.INFER]  # type: ignore[attr-defined]
    assert infers and all("--use_gpu=True" in s.argv for s in infers)
    assert any(f.code == "TIPC231" and "False\\r" in f.message for f in result.findings)  # type: ignore[attr-defined]


def test_blank_line_shifts_every_later_slot(tmp_path: Path) -> None:
    # A slot line emptied instead of written as null:null: the array closes the gap, so the trainer slot
    # reads the norm_train line and the norm_train slot reads `pact_train:null` -- nothing trains.
    text = OCR_DET.replace("Global.save_model_dir:./output/\n", "\n", 1)
    repo = make_repo(tmp_path, {CONFIG: text})
    from tipc.config import load

    cfg = load(repo / CONFIG, dialect="ocr")
    assert cfg.save_model.key == "Train.loader.batch_size_per_card" and cfg.save_model.line == 9
    assert cfg.trainer_list.key == "norm_train" and cfg.norm_train.value == "null"
    result = plan(repo / CONFIG, "lite_train_lite_infer", dialect="ocr")
    assert result.steps == ()
    assert any(f.code == "TIPC100" for f in result.findings)


def test_lint_blank_line_levels(tmp_path: Path) -> None:
    from tipc.core.findings import Level
    from tipc.planning.lint import lint_paths

    emptied = make_repo(
        tmp_path / "a", {CONFIG: OCR_DET.replace("Global.save_model_dir:./output/\n", "\n", 1)}
    )
    found = [f for f in lint_paths([emptied]) if f.code == "TIPC102"]
    assert found and found[0].line == 8 and found[0].level is Level.WARNING
    inserted = make_repo(tmp_path / "b", {CONFIG: OCR_DET.replace("null:null\n##\n", "null:null\n\n##\n", 1)})
    found = [f for f in lint_paths([inserted]) if f.code == "TIPC102"]
    assert found and found[0].level is Level.ERROR and "cut off" in found[0].message


def test_clas_epoch_default_whole_use_gpu_value_and_deploy_cwd(tmp_path: Path) -> None:
    result = _plan(tmp_path, CLAS, "lite_train_lite_infer", "clas")
    train = result.steps[0]  # type: ignore[attr-defined]
    assert "Global.epochs=2" in " ".join(train.argv)  # the mode-keyed 5 is never read
    assert "-o AMP.use_amp=False" in train.status_command
    assert "Global.device=gpu" in train.argv
    infers = [s for s in result.steps if s.stage is Stage.INFER]  # type: ignore[attr-defined]
    assert infers and {s.cwd for s in infers} == {"deploy"}
    assert any(f.code == "TIPC205" for f in result.findings)  # type: ignore[attr-defined]
    # whole_infer runs only the (null) KL-quant command: nothing, with an explanation.
    whole = _plan(tmp_path / "w", CLAS, "whole_infer", "clas")
    assert whole.steps == () and any(f.code == "TIPC240" for f in whole.findings)  # type: ignore[attr-defined]


def test_device_cpu_rewrites_clas_device_slots(tmp_path: Path) -> None:
    result = _plan(tmp_path, CLAS, "lite_train_lite_infer", "clas", overrides=Overrides(device="cpu"))
    train = result.steps[0]  # type: ignore[attr-defined]
    assert "Global.device=cpu" in train.argv and "-m" not in train.argv
    assert all("Global.use_gpu=True" not in s.argv for s in result.steps)  # type: ignore[attr-defined]


def test_det_first_colon_splitter_keeps_urls(tmp_path: Path) -> None:
    text = OCR_DET.replace("Global.pretrained_model:null", "pretrain_weights:https://a.b/c.pdparams").replace(
        "infer_model:./inference/demo_infer/", "infer_mode:norm"
    )
    result = _plan(tmp_path, text, "lite_train_lite_infer", "det")
    assert "pretrain_weights=https://a.b/c.pdparams" in result.steps[0].argv  # type: ignore[attr-defined]
    ocr = _plan(tmp_path / "o", text, "lite_train_lite_infer", "ocr")
    assert "pretrain_weights=https" in ocr.steps[0].argv  # type: ignore[attr-defined]


def test_pact_trainer_marks_quantized_and_template_loads_norm_weights(tmp_path: Path) -> None:
    text = (
        OCR_DET.replace("trainer:norm_train", "trainer:norm_train|pact_train")
        .replace("pact_train:null", "pact_train:tools/train.py -c configs/det.yml -o Global.pact=1")
        .replace("quant_export:null", "quant_export:tools/export_model.py -c configs/det.yml -o")
    )
    result = _plan(tmp_path, text, "lite_train_lite_infer", "template")
    trains = [s for s in result.steps if s.stage is Stage.TRAIN]  # type: ignore[attr-defined]
    pact = next(s for s in trains if s.trainer == "pact_train")
    assert any(a.startswith("Global.pretrained_model=") and a.endswith("/latest") for a in pact.argv)
    pact_infers = [s for s in result.steps if s.trainer == "pact_train" and s.stage is Stage.INFER]  # type: ignore[attr-defined]
    # Quantized: CPU runs int8 only; fp32 precision is skipped, so no inference for a fp32-only config.
    assert pact_infers == []


def test_klquant_falls_through_for_ocr_and_uses_legacy_layout_for_template(tmp_path: Path) -> None:
    ocr = _plan(tmp_path, OCR_DET, "klquant_whole_infer", "ocr")
    assert ocr.steps[0].stage is Stage.TRAIN  # type: ignore[attr-defined]
    assert any(f.code == "TIPC206" for f in ocr.findings)  # type: ignore[attr-defined]
    template = _plan(tmp_path / "t", OCR_DET, "klquant_whole_infer", "template")
    assert any(f.code == "TIPC207" for f in template.findings)  # type: ignore[attr-defined]
    # Line 6 of the file is the infer_model slot of the legacy layout.
    assert all(s.stage is not Stage.TRAIN for s in template.steps)  # type: ignore[attr-defined]


def test_parse_time_glob_expands_to_the_first_match(tmp_path: Path) -> None:
    text = OCR_DET.replace("train_model_name:latest", "train_model_name:ckpt/*.pdparams")
    repo = make_repo(tmp_path, {CONFIG: text, "ckpt/b.pdparams": "", "ckpt/a.pdparams": ""})
    result = plan(repo / CONFIG, "lite_train_lite_infer")
    export = next(s for s in result.steps if s.stage is Stage.EXPORT)
    assert any(a.endswith("/ckpt/a.pdparams") for a in export.argv)
    assert any(f.code == "TIPC104" for f in result.findings)


def test_compact_multi_node_item(tmp_path: Path) -> None:
    text = COMPACT.replace("gpu_list:0", "gpu_list:192.168.0.1,192.168.0.2;0,1")
    repo = make_repo(tmp_path, {"test_tipc/configs/m/train_infer_python.txt": text})
    result = plan(repo / "test_tipc/configs/m/train_infer_python.txt", "lite_train_lite_infer")
    train = result.steps[0]
    assert train.argv[:5] == (
        "python3.7",
        "-m",
        "paddle.distributed.launch",
        "--ips=192.168.0.1,192.168.0.2",
        "--gpus=0,1",
    )
    assert train.argv[-3].endswith("norm_train_gpus_0,1_autocast_False_nodes_2.log")
    infer = next(s for s in result.steps if s.stage is Stage.INFER)
    assert ("CUDA_VISIBLE_DEVICES", "0") in infer.env


@pytest.mark.parametrize(
    "dialect", ["ocr", "template", "seg", "clas", "det", "video", "gan", "rec", "3d", "speech"]
)
def test_every_51_line_dialect_plans_every_mode_without_crashing(tmp_path: Path, dialect: str) -> None:
    from tipc.core.steps import MODES

    for mode in MODES:
        result = _plan(tmp_path / mode, OCR_DET, mode, dialect)
        ids = [s.id for s in result.steps]  # type: ignore[attr-defined]
        assert len(ids) == len(set(ids))
        for step in result.steps:  # type: ignore[attr-defined]
            assert step.argv and step.argv[0] == "python3.7"
            assert all(dep in ids for dep in step.depends_on)


def test_clas_recmodel_models_and_npu_epochs(tmp_path: Path) -> None:
    text = CLAS.replace("model_name:demo_det", "model_name:GeneralRecognition_PPLCNet_x2_5").replace(
        "eval:null", "eval:tools/eval.py -c x.yml"
    )
    result = _plan(tmp_path, text, "lite_train_lite_infer", "clas")
    evals = [s for s in result.steps if s.stage is Stage.EVAL]  # type: ignore[attr-defined]
    exports = [s for s in result.steps if s.stage is Stage.EXPORT]  # type: ignore[attr-defined]
    assert evals and any("/RecModel/latest" in a for a in evals[0].argv)
    # The first export gets no weight parameter at all (the script set the wrong variable).
    assert exports and not any(a.startswith("Global.checkpoints=") for a in exports[0].argv)
    assert any(f.code == "TIPC217" for f in result.findings)  # type: ignore[attr-defined]
    npu = _plan(
        tmp_path / "n",
        CLAS.replace("-o Global.device:gpu", "-o Global.device:npu"),
        "lite_train_lite_infer",
        "clas",
    )
    assert "-o Global.epochs=1" in npu.steps[0].status_command  # type: ignore[attr-defined]


def test_det_gpu_item_minus_one_trains_with_use_gpu_false(tmp_path: Path) -> None:
    text = OCR_DET.replace("gpu_list:0|0,1", "gpu_list:-1")
    train = _plan(tmp_path, text, "lite_train_lite_infer", "det").steps[0]  # type: ignore[attr-defined]
    assert train.id == "train/norm_train/gpus_-1/autocast_null"
    assert "Global.use_gpu=False" in train.argv and "Global.use_gpu=True" not in train.argv


def test_older_compact_launches_a_long_gpu_item_on_one_node(tmp_path: Path) -> None:
    text = COMPACT.replace("gpu_list:0", "gpu_list:0,1,2,3,4,5,6,7,8")
    result = _plan(tmp_path, text, "lite_train_lite_infer", "compact_v1")
    train, evaluate = result.steps[:2]  # type: ignore[attr-defined]
    assert train.argv[:4] == ("python3.7", "-m", "paddle.distributed.launch", "--gpus=0,1,2,3,4,5,6,7,8")
    assert evaluate.env == (("CUDA_VISIBLE_DEVICES", "0"),)


def test_compact_null_trainer_script_plans_no_step(tmp_path: Path) -> None:
    text = COMPACT.replace("norm_train:train.py", "norm_train:null")
    assert _plan(tmp_path, text, "lite_train_lite_infer", "compact").steps == ()  # type: ignore[attr-defined]
