import json
import sys
from pathlib import Path

import pytest

import tipc.engines
from tipc import proc
from tipc.checks._worker import tipc_pythonpath
from tipc.engines import BUILTIN_ENGINES, engine_factory, engine_names, register_engine
from tipc.engines.worker import PROTOCOL, handle


def test_registry_is_extensible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tipc.engines, "_REGISTRY", dict(tipc.engines._REGISTRY))
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
            "tipc.engines.worker",
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
