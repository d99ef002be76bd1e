"""tipc.judge.checks._worker: engine outputs one check's worker computed are handed to a later check only
while
model, inputs and outputs file are unchanged (no worker is started here: the memo is fed directly)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tipc.core.jsontypes import JSONObject
from tipc.judge.checks import _worker
from tipc.judge.checks._worker import _remember, earlier_outputs

PY = "/venv/bin/python"
INFO: JSONObject = {"ok": True, "outputs": [{"name": "y", "shape": [2, 3]}]}


@pytest.fixture
def done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """A model folder, an inputs file and a work folder whose worker answered for paddle_inference."""
    monkeypatch.setattr(_worker, "_OUTPUTS", {})
    model = tmp_path / "model"
    model.mkdir()
    (model / "inference.json").write_text("{}", encoding="utf-8")
    (model / "inference.pdiparams").write_bytes(b"params")
    inputs = tmp_path / "in.npy"
    inputs.write_bytes(b"batch-1")
    work = tmp_path / "work"
    work.mkdir()
    (work / "outputs_paddle_inference.npz").write_bytes(b"npz")
    request = {"op": "agreement", "model_dir": str(model), "inputs": str(inputs), "engine_options": {}}
    _remember(PY, request, {"engines": {"paddle_inference": INFO, "onnxruntime": {"ok": False}}}, work)
    return model, inputs, work


def test_same_model_and_inputs_reuse_the_outputs(done: tuple[Path, Path, Path], tmp_path: Path) -> None:
    model, inputs, work = done
    copy = tmp_path / "same.npy"
    copy.write_bytes(inputs.read_bytes())  # inputs match by content, not by path
    assert earlier_outputs(PY, str(model), str(copy), "paddle_inference") == (
        INFO,
        work / "outputs_paddle_inference.npz",
    )


def test_a_failed_engine_or_another_interpreter_is_not_reused(done: tuple[Path, Path, Path]) -> None:
    model, inputs, _ = done
    assert earlier_outputs(PY, str(model), str(inputs), "onnxruntime") is None
    assert earlier_outputs("/other/python", str(model), str(inputs), "paddle_inference") is None


def test_changed_inputs_model_or_outputs_are_not_reused(done: tuple[Path, Path, Path]) -> None:
    model, inputs, work = done
    inputs.write_bytes(b"batch-2")
    assert earlier_outputs(PY, str(model), str(inputs), "paddle_inference") is None
    inputs.write_bytes(b"batch-1")
    assert earlier_outputs(PY, str(model), str(inputs), "paddle_inference") is not None
    npz = work / "outputs_paddle_inference.npz"
    npz.write_bytes(b"rewritten by a later worker")
    assert earlier_outputs(PY, str(model), str(inputs), "paddle_inference") is None
    npz.write_bytes(b"npz")
    params = model / "inference.pdiparams"
    os.utime(params, ns=(1, 1))
    assert earlier_outputs(PY, str(model), str(inputs), "paddle_inference") is None


def test_engine_options_or_random_inputs_are_never_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_worker, "_OUTPUTS", {})
    model = tmp_path / "m"
    model.mkdir()
    (model / "inference.pdiparams").write_bytes(b"p")
    inputs = tmp_path / "in.npy"
    inputs.write_bytes(b"x")
    (tmp_path / "outputs_paddle_inference.npz").write_bytes(b"npz")
    response: JSONObject = {"engines": {"paddle_inference": INFO}}
    with_options = {"op": "agreement", "model_dir": str(model), "inputs": str(inputs)}
    _remember(
        PY, {**with_options, "engine_options": {"paddle_inference": {"ir_optim": False}}}, response, tmp_path
    )
    _remember(PY, {**with_options, "inputs": None}, response, tmp_path)
    assert _worker._OUTPUTS == {}
