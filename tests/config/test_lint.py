from __future__ import annotations

from pathlib import Path

import pytest

from tests.config.fixtures import OCR_DET, make_repo
from tipc.core.errors import ConfigError
from tipc.core.findings import Level
from tipc.planning.lint import lint_paths

CONFIG = "test_tipc/configs/demo/train_infer_python.txt"


def codes(repo: Path) -> set[str]:
    return {f.code for f in lint_paths([repo])}


def test_clean_config_has_no_errors(ocr_repo: Path) -> None:
    assert not [f for f in lint_paths([ocr_repo / CONFIG]) if f.level is Level.ERROR]


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ("Global.auto_cast:null\n", "Global.auto_cast:null\n\n", "TIPC102"),
        ("Global.pretrained_model:null", "Global.pretrained_model:https://x.y/z.pdparams", "TIPC103"),
        ("infer_quant:False", "infer_quant:Fasle", "TIPC106"),
        ("--enable_mkldnn:False", "--benchmark:False", "TIPC105"),
        ("pact_train:null", "pact_train:null", "TIPC111"),
        (
            "Train.loader.batch_size_per_card:lite_train_lite_infer=2",
            "Train.loader.batch_size_per_card:whole_train_lite_infer=2",
            "TIPC109",
        ),
        ("norm_export:tools/export_model.py -c configs/det.yml -o", "norm_export:null", "TIPC112"),
        ("train_model_name:latest", "train_model_name:out*/latest", "TIPC104"),
        ("fpgm_export:null", "fpgm_export: ", "TIPC108"),
        # WenmuZhou/DBNet.paddle: an export line inside the trainer block.
        ("pact_train:null", "quant_export:null", "TIPC105"),
        ("quant_export:null", "quant_export:", "TIPC120"),
    ],
)
def test_each_trap_has_a_stable_code(tmp_path: Path, old: str, new: str, code: str) -> None:
    text = OCR_DET.replace(old, new, 1)
    if code == "TIPC111":
        text = text.replace("trainer:norm_train", "trainer:norm_train|pact_train")
    if code == "TIPC120":
        text = text.replace("trainer:norm_train", "trainer:norm_train|pact_train").replace(
            "pact_train:null", "pact_train:tools/train.py -c q.yml"
        )
    repo = make_repo(tmp_path, {CONFIG: text})
    assert code in codes(repo)


def test_crlf_is_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET.replace("\n", "\r\n")})
    found = lint_paths([repo])
    assert any(f.code == "TIPC101" and f.level is Level.ERROR for f in found)


def test_other_chains_get_an_info_finding_not_a_crash(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {
            "test_tipc/configs/a/model_linux_gpu_normal_normal_serving_python_linux_gpu_cpu.txt": (
                "===serving_params===\n"
            ),
            "test_tipc/configs/a/model_linux_gpu_normal_normal_infer_cpp_linux_gpu_cpu.txt": "model_name:x\n",
            "test_tipc/configs/a/x.yml": "a: 1\n",
        },
    )
    found = lint_paths([repo])
    assert {f.code for f in found} == {"TIPC030", "TIPC032"}
    assert any("serving" in f.message for f in found)


def test_unreadable_input_raises(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        lint_paths([tmp_path / "missing.txt"])
    with pytest.raises(ConfigError, match="no files"):
        lint_paths([tmp_path])


def test_findings_format(ocr_repo: Path) -> None:
    text = OCR_DET.replace("infer_quant:False", "infer_quant:Fasle")
    repo = make_repo(ocr_repo, {CONFIG: text})
    finding = next(f for f in lint_paths([repo / CONFIG]) if f.code == "TIPC106")
    assert finding.format().startswith(f"{repo / CONFIG}:39:")
    assert " WARNING TIPC106 " in finding.format()


# Lieberk/Paddle-Cutpaste test_tipc/configs/resnet18/train_infer_python.txt (compact 32-line layout): line 32
# puts `--data_type` where the benchmark switch goes; the script passes `--data_type=bottle`, which works.
CUTPASTE_CONFIG = """\
===========================train_params===========================
model_name:resnet18
python:python
gpu_list:0
--cuda:True
--epochs:lite_train_lite_infer=3|whole_train_whole_infer=256
--model_dir:
--batch_size:lite_train_lite_infer=5|whole_train_whole_infer=96
--pretrained:null
train_model_name:
--data_dir:lite_data
##
trainer:norm_train
norm_train:train.py --test_epochs=3 --data_dir=lite_data --type=bottle --model_dir=test_tipc/output/resnet18/\
lite_train_lite_infer/norm_train_gpus_0
##
===========================eval_params===========================
eval:eval.py --data_dir=lite_data --type=bottle --model_dir=test_tipc/output/resnet18/lite_train_lite_infer/\
norm_train_gpus_0
##
===========================infer_params===========================
--save_inference_dir:test_tipc/output/resnet18/lite_train_lite_infer
--pretrained:
norm_export:deploy/export_model.py --model_path=test_tipc/output/resnet18/lite_train_lite_infer/\
norm_train_gpus_0 --data_type=bottle
##
train_model:test_tipc/output/resnet18/lite_train_lite_infer/model-bottle.pdparams
infer_export:deploy/export_model.py
##
inference:deploy/infer.py
--use_gpu:True|False
--batch_size:1
--model_dir:test_tipc/output//resnet18/
--img-path:images/good.png
--data_type:bottle"""


def test_key_in_benchmark_slot_passed_well_formed_is_a_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"test_tipc/configs/resnet18/train_infer_python.txt": CUTPASTE_CONFIG})
    found = [f for f in lint_paths([repo]) if f.code == "TIPC105"]
    assert [(f.line, f.level) for f in found] == [(32, Level.WARNING)]
    assert "'--data_type=bottle'" in found[0].message
    assert not [f for f in lint_paths([repo]) if f.level is Level.ERROR]


def test_key_in_benchmark_slot_not_passed_as_option_stays_an_error(tmp_path: Path) -> None:
    text = CUTPASTE_CONFIG.replace("--data_type:bottle", "data_type:bottle")
    repo = make_repo(tmp_path, {"test_tipc/configs/resnet18/train_infer_python.txt": text})
    found = [f for f in lint_paths([repo]) if f.code == "TIPC105"]
    assert [(f.line, f.level) for f in found] == [(32, Level.ERROR)]


def test_a_trainer_key_in_the_export_block_is_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {CONFIG: OCR_DET.replace("fpgm_export:null", "fpgm_train:null", 1)})
    found = [f for f in lint_paths([repo]) if f.code == "TIPC105"]
    assert [f.level for f in found] == [Level.ERROR]
    assert "trainer key 'fpgm_train' sits in the fpgm_export slot of the export block" in found[0].message
