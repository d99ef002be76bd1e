from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.convergence.seed_data import SEED_MANIFEST
from tipc.convergence.manifest import Band, Manifest, Segment, load, parse, save, to_json
from tipc.core.errors import ConfigError


def test_seed_manifest_reads_unchanged(seed_storage: Path) -> None:
    m = load(seed_storage / "demo_convergence_harness_manifest.json")
    assert [s.start_step for s in m.segments] == [0, 4]
    seg = m.segments[1]
    assert seg.checkpoint == "ckpts/20-04-11-14-23-13/model_4:5.onnx"
    assert sorted(seg.results) == [5, 6, 7]
    assert seg.value(6, "loss", "MLM") == pytest.approx(5.477)
    # relative to the manifest's folder, as the format documents
    assert m.checkpoint_path(seg) == seed_storage.resolve() / "ckpts/20-04-11-14-23-13/model_4:5.onnx"


def test_checkpoint_relative_to_ckpts_root_also_resolves(tmp_path: Path) -> None:
    # the original harness's code joined the path to <storage>/ckpts
    (tmp_path / "ckpts" / "run1").mkdir(parents=True)
    (tmp_path / "ckpts" / "run1" / "model_0.onnx").write_text("0")
    doc = {"ckpt_logs": {"0": {"checkpoint": "run1/model_0.onnx", "start_step": 0, "results": {}}}}
    (tmp_path / "m.json").write_text(json.dumps(doc))
    m = load(tmp_path / "m.json")
    assert m.checkpoint_path(m.segments[0]) == tmp_path.resolve() / "ckpts" / "run1" / "model_0.onnx"


def test_round_trip_keeps_the_seed_layout(tmp_path: Path) -> None:
    m = parse(json.dumps(SEED_MANIFEST), "m.json")
    assert to_json(m) == SEED_MANIFEST
    m.path = str(tmp_path / "out.json")
    save(m)
    assert json.loads((tmp_path / "out.json").read_text()) == SEED_MANIFEST


def test_envelope_round_trip(tmp_path: Path) -> None:
    seg = Segment(
        "0", "ckpts/a", 0, {1: {"loss": {"0": "1.0"}}}, {1: {"loss": {"0": Band(0.9, 1.1, 1.0, 0.1, 3)}}}
    )
    m = Manifest(str(tmp_path / "m.json"), [seg], "std", 2.0, 3)
    save(m)
    back = load(tmp_path / "m.json")
    assert back.envelope_mode == "std" and back.envelope_k == 2.0 and back.seeds == 3
    assert back.segments[0].envelope[1]["loss"]["0"] == Band(0.9, 1.1, 1.0, 0.1, 3)
    # the original reads only ckpt_logs/*/checkpoint,start_step,results: those stay in its format
    raw = json.loads((tmp_path / "m.json").read_text())
    assert raw["ckpt_logs"]["0"]["results"] == {"1": {"loss": {"0": "1.0"}}}


def test_invalid_json_is_located() -> None:
    with pytest.raises(ConfigError) as info:
        parse('{\n  "ckpt_logs": {\n    "0": {,\n', "m.json")
    assert info.value.line == 3


def test_non_numeric_value_is_located() -> None:
    doc = json.loads(json.dumps(SEED_MANIFEST))
    doc["ckpt_logs"]["4"]["results"]["6"]["loss"]["NSP"] = "n/a"
    text = json.dumps(doc, indent=4)
    with pytest.raises(ConfigError) as info:
        parse(text, "m.json")
    assert "'n/a' is not a number" in info.value.message
    lines = text.splitlines()
    assert info.value.line is not None
    assert '"NSP": "n/a"' in lines[info.value.line - 1]


def test_missing_ckpt_logs() -> None:
    with pytest.raises(ConfigError, match="ckpt_logs"):
        parse("{}", "m.json")


def test_null_metric_from_the_original_is_skipped() -> None:
    doc = {"ckpt_logs": {"0": {"checkpoint": "c", "start_step": 0, "results": {"1": {"loss": None}}}}}
    m = parse(json.dumps(doc), "m.json")
    assert m.segments[0].results == {1: {}}
