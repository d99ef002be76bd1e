from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.trees import write_tree

OCR_DET = """\
===========================train_params===========================
model_name:demo_det
python:python3.7
gpu_list:0|0,1
Global.use_gpu:True|True
Global.auto_cast:null
Global.epoch_num:lite_train_lite_infer=1|whole_train_whole_infer=50
Global.save_model_dir:./output/
Train.loader.batch_size_per_card:lite_train_lite_infer=2|whole_train_whole_infer=4
Global.pretrained_model:null
train_model_name:latest
train_infer_img_dir:./train_data/imgs/
null:null
##
trainer:norm_train
norm_train:tools/train.py -c configs/det.yml -o
pact_train:null
fpgm_train:null
distill_train:null
null:null
null:null
##
===========================eval_params===========================
eval:null
null:null
##
===========================infer_params===========================
Global.save_inference_dir:./output/
Global.checkpoints:
norm_export:tools/export_model.py -c configs/det.yml -o
quant_export:null
fpgm_export:null
distill_export:null
export1:null
export2:null
inference_dir:null
infer_model:./inference/demo_infer/
infer_export:null
infer_quant:False
inference:tools/infer/predict_det.py
--use_gpu:True|False
--enable_mkldnn:False
--cpu_threads:6
--rec_batch_num:1
--use_tensorrt:False
--precision:fp32
--det_model_dir:
--image_dir:./inference/imgs/
null:null
--benchmark:True
null:null
"""

COMPACT = """\
===========================train_params===========================
model_name:mnv3
python:python3.7
gpu_list:0
use-gpu:True
--epochs:lite_train_lite_infer=5|whole_train_whole_infer=90
--output-dir:./output/
--batch-size:lite_train_lite_infer=4|whole_train_whole_infer=128
--pretrained:null
train_model_name:latest.pdparams
--data-path:./lite_data
##
trainer:norm_train
norm_train:train.py
##
===========================eval_params===========================
eval:train.py --test-only
##
===========================infer_params===========================
--save-inference-dir:./output/mnv3_infer/
--pretrained:
norm_export:tools/export_model.py --model=mnv3
##
train_model:./pretrain_models/mnv3.pdparams
infer_export:tools/export_model.py --model=mnv3
##
inference:deploy/infer.py
--use-gpu:True|False
--batch-size:1
--model-dir:./output/mnv3_infer/
--img-path:./images/demo.jpg
--benchmark:True
"""


def make_repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """Build a fixture tree from {relative path: text}."""
    return write_tree(tmp_path, files, newline="")


@pytest.fixture
def ocr_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"test_tipc/configs/demo/train_infer_python.txt": OCR_DET})


@pytest.fixture
def compact_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"test_tipc/configs/mnv3/train_infer_python.txt": COMPACT})
