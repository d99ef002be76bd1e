"""The serving check against a real model: PASS when served == Paddle Inference; FAIL when the server dies."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest

import tipc.execute.serving.load
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.checks.base import CheckContext, Verdict
from tipc.judge.checks.serving import find_model_dir, serving

pytestmark = pytest.mark.integration


def repo_with_model(tmp_path: Path, tiny_model: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "inference").mkdir(parents=True)
    target = repo / "inference" / "tiny_infer"
    target.symlink_to(tiny_model, target_is_directory=True)
    return repo


def record_for(repo: Path) -> RunRecord:
    export = Step(
        id="export/norm_export",
        stage=Stage.EXPORT,
        argv=("python", "export_model.py", "--save_inference_dir=./inference/tiny_infer"),
    )
    plan = Plan(
        config_path="test_tipc/configs/tiny/train_infer_python.txt",
        repo=str(repo),
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="template",
        model_name="tiny",
        output_dir="test_tipc/output/tiny/lite_train_lite_infer",
        results_log="test_tipc/output/tiny/lite_train_lite_infer/results_python.log",
        status_format="template",
        steps=(export,),
    )
    return RunRecord(plan=plan, results=(), started=0.0)


def serving_record(repo: Path) -> RunRecord:
    """The repo's own serving chain (conversion, server, client), every step passed."""
    steps = (
        Step(id="serving/convert", stage=Stage.EXPORT, argv=("python", "export_model.py")),
        Step(id="serving/server", stage=Stage.SERVE, argv=("python", "web_service.py")),
        Step(id="serving/client", stage=Stage.CLIENT, argv=("python", "pipeline_http_client.py")),
    )
    plan = replace(record_for(repo).plan, steps=steps, chain="serving", mode=Mode.SERVING_INFER)
    results = tuple(StepResult(s.id, Status.PASSED, exit_code=0, started=1.0, ended=2.0) for s in steps)
    return RunRecord(plan=plan, results=results, started=0.0)


def test_model_dir_is_found_from_the_export_step(tmp_path: Path, tiny_model: Path) -> None:
    repo = repo_with_model(tmp_path, tiny_model)
    found, how = find_model_dir(CheckContext(repo=repo, record=record_for(repo)))
    assert found == (repo / "inference" / "tiny_infer").resolve()
    assert "export/norm_export" in how
    missing, why = find_model_dir(CheckContext(repo=tmp_path / "empty"))
    assert missing is None and "no exported inference model" in why


def test_a_failed_export_is_never_replaced_by_a_stale_model(tmp_path: Path, tiny_model: Path) -> None:
    repo = repo_with_model(tmp_path, tiny_model)
    record = record_for(repo)
    failed = StepResult("export/norm_export", Status.FAILED, exit_code=1)
    found, why = find_model_dir(CheckContext(repo=repo, record=replace(record, results=(failed,))))
    assert found is None
    assert "export/norm_export failed" in why
    outcome = serving(CheckContext(repo=repo, record=replace(record, results=(failed,))))
    assert outcome.verdict is Verdict.SKIP and "did not pass" in outcome.summary


@pytest.mark.parametrize("suffix", ["npy", "npz"])
def test_check_passes_and_reports_agreement_and_load(
    tmp_path: Path, tiny_model: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_with_model(tmp_path, tiny_model)
    monkeypatch.chdir(tmp_path)  # `tipc check .`: the repo path is relative, the children run elsewhere
    inputs = np.random.default_rng(1).standard_normal((6, 1, 8, 8)).astype(np.float32)
    (repo / "lite_data").mkdir()
    if suffix == "npy":
        np.save(repo / "lite_data" / "infer_inputs.npy", inputs)
    else:
        np.savez(repo / "lite_data" / "infer_inputs.npz", batch=inputs)
    rel = f"lite_data/infer_inputs.{suffix}"
    settings = {"agreement": {"inputs": rel, "tolerances": {"atol": 1e-5}}}
    context = CheckContext(
        repo=Path("repo"),
        record=record_for(Path("repo")),
        settings=settings,
        records={"serving": serving_record(Path("repo"))},
    )
    from tipc.judge.checks import _worker

    monkeypatch.setattr(_worker, "_OUTPUTS", {})  # the same model and batch in the other case would be reused
    if suffix == "npy":  # the agreement check's worker ran Paddle Inference on this model and batch first
        from tipc.judge.checks._worker import run_worker

        model_dir = str((repo / "inference" / "tiny_infer").resolve())
        request = {"op": "agreement", "model_dir": model_dir, "engines": ["paddle_inference"]}
        agree = tmp_path / "agreement_worker"
        request.update(work_dir=str(agree), inputs=str((repo / rel).resolve()))
        assert run_worker(sys.executable, request, agree, 300).response is not None
    outcome = serving(context, requests=40, concurrency=4, load_s=0)  # all 40, however slow the box
    # ... so the serving check reuses those outputs rather than starting Paddle again (npz: its own worker).
    assert ("reference" in outcome.data) == (suffix == "npy"), outcome.data
    assert (repo / "test_tipc/output/tiny/lite_train_lite_infer/serving_check/paddle_inference").is_dir() == (
        suffix == "npz"
    )
    assert outcome.verdict is Verdict.PASS, outcome.to_json()
    assert f"agreement inputs {rel}" in outcome.data["inputs"]
    for protocol in ("v2", "pipeline"):
        [(_, metrics)] = outcome.data["agreement"][protocol].items()
        assert metrics["max_abs"] <= 1e-5 and metrics["cosine"] >= 0.99999
    # the report's full matrix: the protocols against each other; ONNX Runtime's outputs were never saved here
    [(_, pair)] = outcome.data["cross"]["protocols"]["v2"]["pipeline"].items()
    assert pair["within"] and pair["max_abs"] <= 1e-6
    assert list(outcome.data["cross"]["not_compared"]) == ["onnxruntime"]
    load = outcome.data["load"]
    assert (load["requests"], load["ok"], load["errors"]) == (40, 40, 0)
    assert load["p50_ms"] is not None and load["p99_ms"] >= load["p50_ms"]
    json.dumps(outcome.to_json())  # reports can serialise it
    # Only the output folder was written to.
    assert sorted(p.name for p in repo.iterdir()) == ["inference", "lite_data", "test_tipc"]
    assert (repo / "test_tipc/output/tiny/lite_train_lite_infer/serving_check/server.log").is_file()


def test_check_fails_with_evidence_when_the_server_dies_mid_run(
    tmp_path: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_with_model(tmp_path, tiny_model)
    real_run_load = tipc.execute.serving.load.run_load

    def kill_server_then_load(*args: Any, **kwargs: Any) -> Any:
        # The real server process (a child of ours) dies just as the load loop starts.
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):  # the server's model worker may be gone already
                if "serve" in child.cmdline():
                    os.kill(child.pid, signal.SIGKILL)
                    child.wait(timeout=10)
        return real_run_load(*args, **kwargs)

    monkeypatch.setattr(tipc.execute.serving.load, "run_load", kill_server_then_load)
    context = CheckContext(repo=repo, record=record_for(repo), records={"serving": serving_record(repo)})
    outcome = serving(context, requests=20, concurrency=2, load_s=0)
    assert outcome.verdict is Verdict.FAIL
    assert "server died" in outcome.summary
    assert outcome.evidence[0].path is not None and outcome.evidence[0].path.endswith("server.log")
    assert "tipc serve: ready on" in (outcome.evidence[0].excerpt or "")
    assert outcome.data["load"]["errors"] == 20


def test_check_skips_without_an_exported_model(tmp_path: Path) -> None:
    outcome = serving(CheckContext(repo=tmp_path))
    assert outcome.verdict is Verdict.SKIP
    assert "no exported inference model" in outcome.summary
