"""The serving check's judging helpers on canned replies (no server, no Paddle)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from tipc.execute.serving.client import Reply
from tipc.execute.serving.load import LoadResult
from tipc.judge.checks.base import Evidence, Verdict

# The package exports the check function under the module's name: reach the module itself.
serving_mod = importlib.import_module("tipc.judge.checks.serving")
TOLERANCES = {"atol": 1e-5, "rtol": 1e-4, "cosine_min": 0.99999}


def test_failed_replies_and_missing_or_differing_outputs_are_failures() -> None:
    failures: list[Evidence] = []
    served = serving_mod._served_outputs(
        Reply(500, {"error": "boom"}, 0.1), Reply(200, {"err_no": 1}, 0.1), failures
    )
    assert served == {}
    assert [f.text for f in failures] == ["v2 infer: HTTP 500", "pipeline predict: HTTP 200"]

    failures = []
    v2 = Reply(200, {"outputs": [{"name": "out", "shape": [1, 2], "data": [1.0, 2.0]}]}, 0.1)
    pipe = Reply(200, {"err_no": 0, "key": ["out"], "value": [json.dumps([[1.0, 2.5]])]}, 0.1)
    served = serving_mod._served_outputs(v2, pipe, failures)
    assert failures == [] and sorted(served) == ["pipeline", "v2"]
    reference: dict[str, Any] = {"out": np.array([[1.0, 2.0]]), "extra": np.zeros(2)}
    metrics = serving_mod._served_metrics(served, reference, TOLERANCES, failures)
    assert metrics["v2"]["out"]["max_abs"] == 0.0 and metrics["pipeline"]["out"]["max_abs"] == 0.5
    assert [f.text for f in failures] == [
        "v2: output 'extra' missing from the reply",
        "pipeline output 'out' differs from Paddle Inference beyond tolerance",
        "pipeline: output 'extra' missing from the reply",
    ]


def test_load_errors_fail_and_clean_figures_pass(tmp_path: Path) -> None:
    session = serving_mod._Session(None, tmp_path / "server.log", {})
    metrics = {"v2": {"out": {"max_abs": 0.0, "max_rel": 0.0, "cosine": 1.0}}}
    failed = LoadResult(3, 2, 0, 3, 1.0, (), ("HTTP 500",))
    out = serving_mod._serving_outcome(session, failed, metrics, [], "seeded random batch")
    assert out.verdict is Verdict.FAIL and out.summary == "3 of 3 requests failed under load"
    assert out.evidence[1].text == "load: 3 errors, no successful request"
    clean = LoadResult(2, 1, 2, 0, 1.0, (0.01, 0.02))
    out = serving_mod._serving_outcome(session, clean, metrics, [], "seeded random batch")
    assert out.verdict is Verdict.PASS and out.summary.startswith("served outputs match Paddle Inference")
    figures = "2 requests x 1 clients: p50 20.00 ms, p99 20.00 ms, 2.0 req/s, 0 errors"
    assert out.evidence[0].text == f"load: {figures}" and out.summary.endswith(figures)


def plan_for(tmp_path: Path, inputs: str | None = None) -> Any:
    from tipc.judge.checks.settings import as_settings

    settings = as_settings({"agreement": {"inputs": inputs}} if inputs else {})
    return serving_mod._ServingPlan(
        settings, tmp_path, tmp_path / "model", "given", tmp_path, TOLERANCES, 10, 2, 5.0, 1.0
    )


class FakeClient:
    reply = Reply(200, {}, 0.0)

    def __init__(self, base_url: str, **_: Any) -> None:
        pass

    def __enter__(self) -> FakeClient:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def get(self, path: str) -> Reply:
        return self.reply


def test_the_batch_follows_the_models_input(tmp_path: Path, monkeypatch: Any) -> None:
    import tipc.execute.serving.client

    monkeypatch.setattr(tipc.execute.serving.client, "Client", FakeClient)
    session = serving_mod._Session(None, tmp_path / "server.log", {})
    spec = {"name": "x", "shape": [-1, 3], "datatype": "INT64"}
    FakeClient.reply = Reply(404, {"error": "no model"}, 0.0)
    out = serving_mod._input_batch(session, plan_for(tmp_path), "http://x", {})
    assert out.verdict is Verdict.FAIL and out.summary.startswith("model metadata: HTTP 404")
    FakeClient.reply = Reply(200, {"inputs": [spec]}, 0.0)
    out = serving_mod._input_batch(session, plan_for(tmp_path), "http://x", {})
    assert out.verdict is Verdict.SKIP and "the input is not float" in out.summary
    FakeClient.reply = Reply(200, {"inputs": [{**spec, "datatype": "FP32"}]}, 0.0)
    batch = serving_mod._input_batch(session, plan_for(tmp_path), "http://x", {})
    assert batch.array.shape == (4, 3) and batch.path == tmp_path / "random_inputs.npy"
    assert session.data["inputs"] == batch.source and batch.source.startswith("seeded random batch [4, 3]")
    np.savez(tmp_path / "real.npz", first=np.ones((2, 3), np.float32))
    batch = serving_mod._input_batch(session, plan_for(tmp_path, "real.npz"), "http://x", {})
    assert batch.path == tmp_path / "agreement_inputs.npy" and np.load(batch.path).shape == (2, 3)


def test_a_reference_worker_that_fails_is_named(tmp_path: Path, monkeypatch: Any) -> None:
    from tipc.judge.checks import _worker

    log = tmp_path / "worker.log"
    log.write_text("Traceback: no paddle\n")
    monkeypatch.setattr(_worker, "earlier_outputs", lambda *a: None)
    crashed = _worker.WorkerRun(response=None, error="worker exited 1", log=log, exit_code=1)
    monkeypatch.setattr(_worker, "run_worker", lambda *a: crashed)
    session = serving_mod._Session(None, tmp_path / "server.log", {})
    batch = serving_mod._Batch({"name": "x"}, np.zeros((1, 3)), tmp_path / "in.npy", "given")
    out = serving_mod._paddle_reference(session, plan_for(tmp_path), "python", batch)
    assert out.verdict is Verdict.FAIL
    assert out.summary.endswith("(reference for serving): worker exited 1")
    assert out.evidence[0].excerpt is not None and "no paddle" in out.evidence[0].excerpt


def test_the_served_model_is_compared_with_every_engine_and_protocol(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The report's full matrix: each protocol against the other engines the agreement check ran (their
    saved outputs, matched by position whatever their names) and against the other protocol."""
    from tipc.judge.checks import _worker

    ref = np.array([[0.1, 0.9]], np.float32)
    saved = tmp_path / "outputs_onnxruntime.npz"
    np.savez(saved, out0=ref + 1e-7)
    onnx = {"ok": True, "outputs": [{"name": "fetch_name_0"}]}
    monkeypatch.setattr(
        _worker,
        "earlier_outputs",
        lambda py, m, i, engine: (onnx, saved) if engine == "onnxruntime" else None,
    )
    from tipc.judge.checks.settings import as_settings

    settings = as_settings({"agreement": {"engines": ["paddle_inference", "onnxruntime", "tensorrt"]}})
    plan = serving_mod._ServingPlan(
        settings, tmp_path, tmp_path / "model", "given", tmp_path, TOLERANCES, 10, 2, 5.0, 1.0
    )
    session = serving_mod._Session(None, tmp_path / "server.log", {})
    batch = serving_mod._Batch({"name": "x"}, np.zeros((1, 3)), tmp_path / "in.npy", "given")
    engines, missing = serving_mod._other_engines(session, plan, "python", batch)
    assert list(engines) == ["onnxruntime"] and list(missing) == ["tensorrt"]
    served = {"v2": {"softmax": ref}, "pipeline": {"softmax": ref + 0.5}}
    cross = serving_mod._cross_figures(served, {"softmax": ref}, engines, TOLERANCES)
    v2_onnx = cross["engines"]["onnxruntime"]["v2"]["softmax"]
    assert v2_onnx["within"] is True and v2_onnx["max_abs"] < 1e-6
    assert cross["engines"]["onnxruntime"]["pipeline"]["softmax"]["within"] is False
    pair = cross["protocols"]["v2"]["pipeline"]["softmax"]
    assert pair["within"] is False and abs(pair["max_abs"] - 0.5) < 1e-6
    assert cross["protocols"]["pipeline"] == {}  # each pair once
