"""`tipc serve` end to end on CPU: a real Paddle model, a real uvicorn server on loopback, real HTTP."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

import numpy as np
import psutil
import pytest

from tests.serve.conftest import RunningServer, build_model, child_env, start_server
from tipc.core.jsontypes import as_object, objects
from tipc.execute import proc
from tipc.execute.serving.client import Client, tensor_value
from tipc.execute.serving.load import run_load
from tipc.judge.checks._worker import run_worker

pytestmark = pytest.mark.integration


def paddle_inference(model_dir: Path, batch: np.ndarray, work: Path) -> dict[str, np.ndarray]:
    """Reference outputs from Paddle Inference in its own process (the engines worker)."""
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "in.npy", batch)
    request = {
        "op": "agreement",
        "model_dir": str(model_dir),
        "work_dir": str(work),
        "engines": ["paddle_inference"],
        "inputs": str(work / "in.npy"),
    }
    run = run_worker(sys.executable, request, work, timeout_s=300)
    assert run.response is not None, run.log.read_text()
    engine = as_object(as_object(run.response.get("engines")).get("paddle_inference"))
    assert engine.get("ok"), run.log.read_text()
    saved = np.load(work / "outputs_paddle_inference.npz")
    return {str(o["name"]): saved[f"out{i}"] for i, o in enumerate(objects(engine.get("outputs")))}


def batch_of(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 1, 8, 8)).astype(np.float32)


def test_both_protocols_answer_like_paddle_inference(
    server: RunningServer, tiny_model: Path, tmp_path: Path
) -> None:
    batch = batch_of(5)
    reference = paddle_inference(tiny_model, batch, tmp_path)
    [(out_name, expected)] = reference.items()
    with Client(server.url) as client:
        meta = client.get(f"/v2/models/{server.name}").body
        assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 1, 8, 8]}]
        assert meta["outputs"] == [{"name": out_name, "datatype": "FP32", "shape": [-1, 10]}]
        v2 = client.infer_v2(server.name, {"x": batch})
        exact = client.predict_pipeline(server.name, ["x"], [tensor_value(batch)])
        as_list = client.predict_pipeline(server.name, ["image"], [json.dumps(batch.tolist())])
    assert v2.ok, v2.body
    [output] = v2.body["outputs"]
    assert output["name"] == out_name and output["shape"] == [5, 10]
    np.testing.assert_allclose(np.asarray(output["data"]).reshape(5, 10), expected, atol=1e-5, rtol=0)
    for reply in (exact, as_list):
        assert reply.ok and reply.body["err_no"] == 0, reply.body
        assert reply.body["key"] == [out_name]
        np.testing.assert_allclose(
            np.asarray(json.loads(reply.body["value"][0])), expected, atol=1e-5, rtol=0
        )


def test_bounded_concurrent_load_has_no_errors(server: RunningServer) -> None:
    samples = [{"x": batch_of(1, seed)} for seed in range(4)]
    v2 = run_load(server.url, server.name, samples, requests=8 * 20, concurrency=8)
    pipeline = run_load(server.url, server.name, samples, requests=8 * 10, concurrency=8, protocol="pipeline")
    assert (v2.ok, v2.errors, len(v2.latencies_s)) == (160, 0, 160), v2.first_errors
    assert (pipeline.ok, pipeline.errors) == (80, 0), pipeline.first_errors
    assert server.background.poll() is None


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v2/models/tiny/infer", b"{not json", 400),
        (
            "/v2/models/tiny/infer",
            json.dumps(
                {"inputs": [{"name": "x", "shape": [1, 1, 8, 7], "datatype": "FP32", "data": [0.0] * 56}]}
            ).encode(),
            400,
        ),
        (
            "/v2/models/tiny/infer",
            json.dumps(
                {"inputs": [{"name": "x", "shape": [1, 1, 8, 8], "datatype": "INT32", "data": [0] * 64}]}
            ).encode(),
            400,
        ),
        ("/v2/models/other/infer", b"{}", 404),
        ("/tiny/prediction", json.dumps({"key": ["x"], "value": ["[[1, 2]]"]}).encode(), 400),
        ("/other/prediction", b"{}", 404),
        ("/tiny/prediction", b"[" + b"0.5," * 300_000 + b"0.5]", 413),
    ],
)
def test_bad_requests_get_4xx_and_the_server_keeps_serving(
    server: RunningServer, path: str, body: bytes, status: int
) -> None:
    with Client(server.url) as client:
        reply = client.request("POST", path, body)
        assert reply.status == status, reply.body
        assert isinstance(reply.body, dict) and (reply.body.get("error") or reply.body.get("err_msg"))
        follow_up = client.infer_v2(server.name, {"x": batch_of(1)})
    assert follow_up.ok
    assert server.background.poll() is None


def test_sigterm_stops_the_server_and_leaves_no_process(tiny_model: Path, tmp_path: Path) -> None:
    running = start_server(tiny_model, tmp_path / "server.log", "--max-body-bytes", "1000")
    pid = running.background.pid
    try:
        with Client(running.url) as client:
            assert (
                client.post_json(
                    "/tiny/prediction", {"key": ["x"], "value": ["[" * 4 + "0," * 600 + "0]]]]"]}
                ).status
                == 413
            )
        running.background.child.send_signal(signal.SIGTERM)
        running.background.child.wait(timeout=30)
    finally:
        running.background.stop()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_pdmodel_export_is_served_with_its_declared_input(tmp_path: Path) -> None:
    model = build_model(tmp_path / "old_format", pir=False)
    assert (model / "inference.pdmodel").is_file()
    running = start_server(model, tmp_path / "server.log", name="old")
    try:
        with Client(running.url) as client:
            meta = client.get("/v2/models/old").body
            reply = client.infer_v2("old", {"x": batch_of(2)})
    finally:
        running.background.stop()
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 1, 8, 8]}]
    assert reply.ok and reply.body["outputs"][0]["shape"] == [2, 10]


def test_cli_rejects_a_folder_without_a_model(tmp_path: Path) -> None:
    lines: list[str] = []
    result = proc.run(
        [sys.executable, "-m", "tipc", "serve", str(tmp_path)],
        cwd=tmp_path,
        env=child_env(),
        timeout_s=60,
        on_line=lines.append,
    )
    assert result.exit_code == 2
    assert any("no inference.json or inference.pdmodel" in line for line in lines)


def test_sigterm_lets_in_flight_requests_finish(tiny_model: Path, tmp_path: Path) -> None:
    running = start_server(tiny_model, tmp_path / "server.log", "--workers", "1")
    statuses: list[int] = []
    failures: list[str] = []
    answered = threading.Event()

    def client_loop() -> None:
        with Client(running.url, timeout_s=30) as client:
            for _ in range(200):
                try:
                    statuses.append(client.infer_v2("tiny", {"x": batch_of(8)}).status)
                except OSError as exc:  # refused/reset once the server has closed its socket
                    failures.append(type(exc).__name__)
                    return
                answered.set()

    thread = threading.Thread(target=client_loop)
    try:
        thread.start()
        assert answered.wait(timeout=60)
        running.background.child.send_signal(signal.SIGTERM)
        running.background.child.wait(timeout=30)
        thread.join(timeout=60)
    finally:
        running.background.stop()
    assert statuses and set(statuses) == {200}  # nothing half-served: every answer that came back is complete
    assert len(statuses) + len(failures) <= 200
    log = running.log.read_text()
    assert "tipc serve: shutting down" in log and "tipc serve: stopped" in log


def test_a_server_that_cannot_load_is_reported_with_its_log(tmp_path: Path) -> None:
    from tipc.execute.serving.launcher import launch, log_tail

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "inference.json").write_text("{not a program")
    (broken / "inference.pdiparams").write_bytes(b"\0" * 16)
    launched = launch(broken, log=tmp_path / "server.log", name="broken", env=child_env(), deadline_s=120)
    try:
        assert not launched.ready
        assert "exited" in launched.problem
        assert "Paddle Inference cannot load this model" in log_tail(launched.log)
        assert launched.background.poll() == 2  # a user error (exit 2), not an internal one
    finally:
        launched.background.stop()
