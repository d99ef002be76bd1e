from __future__ import annotations

import json

from tests.config.fixtures import OCR_DET
from tipc.config import dialects
from tipc.config.model import Slot
from tipc.config.parse import parse_text
from tipc.config.reader import build


def test_slot_semantics() -> None:
    slot = Slot("Global.epoch_num", "lite_train_lite_infer=1|whole_train_whole_infer=50", 7, 18)
    assert slot.present and not slot.is_null
    assert slot.items == ["lite_train_lite_infer=1", "whole_train_whole_infer=50"]
    assert slot.mode_value("whole_train_whole_infer") == "50"
    changed = slot.with_value("lite_train_lite_infer=3")
    assert changed.overridden and changed.line == 7 and slot.value.endswith("50")
    assert Slot().items == [] and not Slot().present


def test_config_fields_sections_and_json() -> None:
    text = (
        OCR_DET
        + "===========================train_benchmark_params==========================\nbatch_size:8\n"
    )
    cfg = build(parse_text(text, "c.txt"), dialects.get("ocr"))
    assert cfg.python.value == "python3.7" and cfg.python.line == 3
    assert cfg.infer_param1.line == 51
    section = cfg.section("train_benchmark_params")
    assert section is not None and section.get("batch_size") is not None
    assert section.get("batch_size").value == "8"  # type: ignore[union-attr]
    data = json.loads(json.dumps(cfg.to_json()))
    assert data["slots"]["model_name"] == {"key": "model_name", "value": "demo_det", "line": 2, "col": 12}
    assert "train_benchmark_params" in data["sections"]


def test_slots_past_the_end_are_empty() -> None:
    cfg = build(parse_text("=====train_params=====\nmodel_name:x\n", "c.txt"), dialects.get("ocr"))
    assert cfg.model_name.value == "x"
    assert not cfg.inference.present and cfg.inference.value == ""
