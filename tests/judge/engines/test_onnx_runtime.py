"""The ONNX Runtime engine names the ops paddle2onnx cannot convert (paddle2onnx would abort instead)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipc.judge.checks._model import ModelFiles


def _program(tmp_path: Path, ops: list[str]) -> ModelFiles:
    framework_pb2 = pytest.importorskip("paddle.base.proto.framework_pb2")
    pytest.importorskip("paddle2onnx")
    program = framework_pb2.ProgramDesc()
    block = program.blocks.add()
    block.idx, block.parent_idx = 0, -1
    for op_type in ops:
        block.ops.add().type = op_type
    (tmp_path / "inference.pdmodel").write_bytes(program.SerializeToString())
    (tmp_path / "inference.pdiparams").write_bytes(b"")
    return ModelFiles(tmp_path, tmp_path / "inference.pdmodel", tmp_path / "inference.pdiparams")


def test_unconvertible_ops_are_named(tmp_path: Path) -> None:
    from tipc.judge.engines.onnx_runtime import unconvertible_ops

    model = _program(tmp_path, ["feed", "conv2d", "renorm", "softmax", "renorm", "fetch"])
    assert unconvertible_ops(model) == ["renorm"]


def test_convertible_and_pir_models_pass_the_precheck(tmp_path: Path) -> None:
    from tipc.judge.engines.onnx_runtime import unconvertible_ops

    assert unconvertible_ops(_program(tmp_path, ["feed", "conv2d", "relu", "pool2d", "fetch"])) == []
    pir = ModelFiles(tmp_path, tmp_path / "inference.json", tmp_path / "inference.pdiparams")
    assert unconvertible_ops(pir) == []  # paddle2onnx judges PIR programs itself
