import json
import sys
from pathlib import Path

import pytest

import tipc.judge.engines
from tipc.execute import proc
from tipc.judge.checks._worker import tipc_pythonpath
from tipc.judge.engines import BUILTIN_ENGINES, engine_factory, engine_names, register_engine
from tipc.judge.engines.worker import PROTOCOL, RANDOM_BATCH, _concrete, handle


def test_registry_is_extensible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tipc.judge.engines, "_REGISTRY", dict(tipc.judge.engines._REGISTRY))
    assert {"paddle_inference", "onnxruntime", "paddle_jit"} <= set(engine_names())
    register_engine("serving_test", "some.module:ServingEngine")
    assert engine_factory("serving_test") == "some.module:ServingEngine"
    assert "serving_test" not in BUILTIN_ENGINES


def test_protocol_errors_are_responses(tmp_path: Path) -> None:
    assert "unsupported protocol" in handle({"protocol": "x"})["error"]
    resp = handle(
        {
            "protocol": PROTOCOL,
            "model_dir": str(tmp_path),
            "work_dir": str(tmp_path / "w"),
            "engines": ["a", "b"],
        }
    )
    assert resp["ok"] is False and "no inference.json" in resp["error"]
    (tmp_path / "inference.json").write_text("{}")
    (tmp_path / "inference.pdiparams").write_bytes(b"\0")
    resp = handle(
        {
            "protocol": PROTOCOL,
            "model_dir": str(tmp_path),
            "work_dir": str(tmp_path / "w"),
            "engines": ["no_such_engine", "other"],
        }
    )
    assert resp["error"] == "no engine could load the model"
    assert "unknown engine 'no_such_engine'" in resp["engines"]["no_such_engine"]["error"]


def test_worker_main_always_writes_a_response(tmp_path: Path) -> None:
    req = tmp_path / "req.json"
    req.write_text("not json")
    env = tipc_pythonpath(proc.build_env(None, {}))
    res = proc.run(
        [
            sys.executable,
            "-m",
            "tipc.judge.engines.worker",
            "--request",
            str(req),
            "--response",
            str(tmp_path / "resp.json"),
        ],
        cwd=tmp_path,
        env=env,
        timeout_s=60,
    )
    assert res.exit_code == 0
    resp = json.loads((tmp_path / "resp.json").read_text())
    assert resp["ok"] is False and "JSONDecodeError" in resp["error"]


FAKE_ENGINES = """\
import numpy as np
from tipc.judge.engines import register_engine
from tipc.judge.engines.base import InputSpec


class Doubler:
    name = "doubler"

    def __init__(self, scale=2.0, dynamic=True):
        self.scale = scale
        self.dynamic = dynamic

    def load(self, model, work_dir):
        return {"scale": self.scale}

    def input_specs(self):
        return [InputSpec("x", (None, 3) if self.dynamic else None, "float32")]

    def run(self, feeds):
        x = feeds["x"]
        return [("y", x * self.scale), ("cls", np.stack([x.sum(1), -x.sum(1)], axis=1))]


register_engine("doubler", "fake_engines:Doubler")
register_engine("doubler2", "fake_engines:Doubler")
"""


def fake_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **extra: object) -> dict[str, object]:
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "inference.json").write_text("{}")
    (tmp_path / "m" / "inference.pdiparams").write_bytes(b"\0")
    (tmp_path / "fake_engines.py").write_text(FAKE_ENGINES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fake_engines", raising=False)  # re-run its registrations
    monkeypatch.setattr(tipc.judge.engines, "_REGISTRY", dict(tipc.judge.engines._REGISTRY))
    req: dict[str, object] = {
        "protocol": PROTOCOL,
        "model_dir": str(tmp_path / "m"),
        "work_dir": str(tmp_path / "w"),
        "engines": ["doubler", "doubler2"],
        "plugins": ["fake_engines"],
        "seed": 3,
        "tolerances": {"atol": 1e-5, "rtol": 1e-4, "cosine_min": 0.99999},
    }
    req.update(extra)
    return req


def test_random_inputs_with_dynamic_dims_and_agreeing_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resp = handle(fake_request(tmp_path, monkeypatch))
    assert resp["ok"], resp["error"]
    # a dynamic batch holds several random inputs, so a model that ignores its input shows as constant
    assert resp["inputs"]["source"] == "random" and resp["inputs"]["feeds"]["x"]["shape"] == [RANDOM_BATCH, 3]
    (pair,) = resp["pairs"]
    assert pair["within"] and len(pair["outputs"]) == 2 and pair["outputs"][0]["max_abs"] == 0.0
    assert (tmp_path / "w" / "outputs_doubler.npz").is_file()


def test_concrete_shapes_for_random_inputs() -> None:
    assert _concrete((None, 3, None, None), "float32") == (RANDOM_BATCH, 3, 224, 224)  # an image batch
    assert _concrete((None, 8, None, None), "float32") == (RANDOM_BATCH, 8, 1, 1)  # not image-like
    assert _concrete((None, 16), "int64") == (RANDOM_BATCH, 16)
    assert _concrete((None,), "float32") == (1,)  # a vector: no batch dimension to fill
    assert _concrete((2, 3, 32, 32), "float32") == (2, 3, 32, 32)  # fixed shapes are kept


def test_engine_options_make_engines_disagree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    np.save(tmp_path / "in.npy", np.ones((2, 3), dtype=np.float64))
    req = fake_request(
        tmp_path, monkeypatch, inputs=str(tmp_path / "in.npy"), engine_options={"doubler2": {"scale": 2.001}}
    )
    resp = handle(req)
    assert resp["ok"] and resp["inputs"]["source"] == "file"
    assert resp["inputs"]["feeds"]["x"] == {"shape": [2, 3], "dtype": "float32"}  # cast to the model's dtype
    (pair,) = resp["pairs"]
    assert not pair["within"]
    y, cls = pair["outputs"]
    assert not y["allclose"] and abs(y["max_abs"] - 0.001) < 1e-6
    assert cls["allclose"] and cls["argmax_agree"] == 1.0
    assert resp["engines"]["doubler"]["details"] == {"scale": 2.0}


def test_no_shapes_and_no_inputs_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    req = fake_request(
        tmp_path, monkeypatch, engine_options={"doubler": {"dynamic": False}, "doubler2": {"dynamic": False}}
    )
    resp = handle(req)
    assert resp["ok"] is False and "set agreement.inputs" in resp["error"]


def test_engine_without_its_packages_is_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    req = fake_request(tmp_path, monkeypatch, engines=["doubler", "doubler2", "needs_missing"])
    tipc.judge.engines.register_engine("needs_missing", "tipc_no_such_module_xyz:Engine")
    resp = handle(req)
    assert resp["ok"] and resp["engines"]["needs_missing"]["unavailable"] is True
    assert [(p["a"], p["b"]) for p in resp["pairs"]] == [("doubler", "doubler2")]


def test_file_inputs_npz_by_name_else_by_position_and_npy_for_one_input_only(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    from tipc.judge.engines.worker import _file_feeds

    np.savez(tmp_path / "named.npz", b=np.zeros(2), a=np.ones(3))
    by_name = _file_feeds(str(tmp_path / "named.npz"), ["a", "b"])
    assert by_name["a"].shape == (3,) and by_name["b"].shape == (2,)
    np.savez(tmp_path / "other.npz", p=np.ones(4), q=np.zeros(5))
    by_position = _file_feeds(str(tmp_path / "other.npz"), ["x", "y"])
    assert by_position["x"].shape == (4,) and by_position["y"].shape == (5,)
    np.save(tmp_path / "one.npy", np.ones(6))
    assert list(_file_feeds(str(tmp_path / "one.npy"), [])) == ["x"]
    with pytest.raises(ValueError, match=r"give an \.npz"):
        _file_feeds(str(tmp_path / "one.npy"), ["x", "y"])


def test_an_output_only_one_engine_has_is_missing() -> None:
    np = pytest.importorskip("numpy")
    from tipc.judge.engines.worker import _compare_outputs

    figs = _compare_outputs([("y", np.ones(3)), ("z", np.ones(2))], [("out", np.ones(3))], 1e-5, 1e-4)
    assert figs[0]["index"] == 0 and figs[0]["name_a"] == "y" and figs[0]["name_b"] == "out"
    assert figs[1] == {"index": 1, "shape_match": False, "allclose": False, "error": "output missing"}
