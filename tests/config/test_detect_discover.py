from __future__ import annotations

import hashlib
from pathlib import Path

from tests.config.fixtures import COMPACT, OCR_DET, make_repo
from tipc.config import load
from tipc.config.detect import FINGERPRINTS, detect
from tipc.config.discover import find_configs, find_repo_root
from tipc.config.parse import parse_text


def test_config_shape_detection() -> None:
    assert detect(parse_text(OCR_DET), Path("x.txt"), None).dialect == "ocr"
    assert detect(parse_text(COMPACT), Path("x.txt"), None).dialect == "compact"
    det = OCR_DET.replace("infer_model:./inference/demo_infer/", "infer_mode:norm")
    assert detect(parse_text(det), Path("x.txt"), None).dialect == "det"


def test_script_fingerprint_wins(tmp_path: Path) -> None:
    script = b"#!/bin/bash\n# some script\n"
    digest = hashlib.sha256(script).hexdigest()
    repo = make_repo(tmp_path, {"test_tipc/configs/a/train_infer_python.txt": OCR_DET})
    (repo / "test_tipc" / "test_train_inference_python.sh").write_bytes(script)
    FINGERPRINTS[digest] = "clas"
    try:
        found = detect(parse_text(OCR_DET), repo / "x.txt", repo)
        assert found.dialect == "clas" and "fingerprint" in found.reason
    finally:
        del FINGERPRINTS[digest]


def test_find_configs_keeps_train_infer_python_family(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {
            "test_tipc/configs/a/train_infer_python.txt": OCR_DET,
            "test_tipc/configs/a/model_linux_gpu_normal_normal_serving_python_linux_gpu_cpu.txt": (
                "===serving_params===\nmodel_name:a\n"
            ),
            "test_tipc/configs/a/a.yml": "x: 1\n",
        },
    )
    assert [p.name for p in find_configs(repo)] == ["train_infer_python.txt"]
    assert find_repo_root(repo / "test_tipc/configs/a/train_infer_python.txt") == repo.resolve()


def test_load_gives_named_located_fields(ocr_repo: Path) -> None:
    cfg = load(ocr_repo / "test_tipc/configs/demo/train_infer_python.txt")
    assert cfg.dialect == "ocr"
    assert cfg.model_name.value == "demo_det" and cfg.model_name.line == 2
    assert cfg.epoch.mode_value("lite_train_lite_infer") == "1"
    assert cfg.norm_train.value.startswith("tools/train.py") and cfg.norm_train.col == 12
    assert cfg.infer_use_gpu.items == ["True", "False"]
