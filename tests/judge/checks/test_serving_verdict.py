"""The serving verdict stands for the repo's own serving steps: never a PASS when they did not run."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from tests.judge.checks.checks_fixtures import make_record
from tipc.core.steps import Stage, Status
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict

# The package exports the check function under the module's name: reach the module itself.
serving_mod = importlib.import_module("tipc.judge.checks.serving")

REFERENCE_PASS = CheckOutcome(
    Verdict.PASS,
    "served outputs match Paddle Inference (v2 + pipeline, max abs 1.6e-25); 200 requests x 4 clients",
    (
        Evidence(
            "served vs Paddle Inference on seeded random batch: worst max abs error 1.6e-25",
            numbers=(("max_abs", 1.6e-25),),
        ),
    ),
    {"agreement": {"v2": {}}},
)


@pytest.fixture
def reference_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """tipc's own server on the export: its result is given (the real one is an integration test)."""

    def fake(ctx: CheckContext, **args: Any) -> CheckOutcome:
        return REFERENCE_PASS

    monkeypatch.setattr(serving_mod, "_serve_and_compare", fake)


def train_record(repo: Path) -> Any:
    return make_record(
        repo, [("export/norm_export", Stage.EXPORT, ["python", "export_model.py"], None, Status.PASSED)]
    )


def serving_chain(repo: Path, statuses: tuple[Status | None, ...]) -> Any:
    steps = [
        ("serving/trans_model", Stage.EXPORT, ["python", "export_model.py"], None, statuses[0]),
        ("serving/web_service", Stage.SERVE, ["python", "web_service.py"], "server.log", statuses[1]),
        ("serving/pipeline", Stage.CLIENT, ["python", "pipeline_http_client.py"], "client.log", statuses[2]),
    ]
    return make_record(repo, steps)


def test_no_serving_record_is_na_and_tipc_server_is_reported_apart(
    tmp_path: Path, reference_server: None
) -> None:
    out = serving_mod.serving(CheckContext(repo=tmp_path, record=train_record(tmp_path)))
    assert out.verdict is Verdict.NA
    assert "no serving run record" in out.summary
    ref = [e for e in out.evidence if e.text.startswith("tipc reference server (not the repo's)")]
    assert ref and "1.6e-25" in ref[0].text
    assert out.data["tipc_reference_server"]["verdict"] == "PASS"


def test_skipped_serving_steps_never_pass(tmp_path: Path, reference_server: None) -> None:
    chain = serving_chain(tmp_path, (Status.SKIPPED, Status.SKIPPED, Status.SKIPPED))
    ctx = CheckContext(repo=tmp_path, record=train_record(tmp_path), records={"serving": chain})
    out = serving_mod.serving(ctx)
    assert out.verdict is Verdict.NA and "did not run" in out.summary


def test_failed_serving_steps_fail_with_the_step(tmp_path: Path, reference_server: None) -> None:
    chain = serving_chain(tmp_path, (Status.PASSED, Status.FAILED, Status.BLOCKED))
    ctx = CheckContext(repo=tmp_path, record=train_record(tmp_path), records={"serving": chain})
    out = serving_mod.serving(ctx)
    assert out.verdict is Verdict.FAIL
    assert "serving/web_service: failed" in out.summary
    assert any(e.path == "server.log" for e in out.evidence)


def test_passed_serving_steps_keep_the_comparison(tmp_path: Path, reference_server: None) -> None:
    chain = serving_chain(tmp_path, (Status.PASSED, Status.PASSED, Status.PASSED))
    ctx = CheckContext(repo=tmp_path, record=train_record(tmp_path), records={"serving": chain})
    out = serving_mod.serving(ctx)
    assert out.verdict is Verdict.PASS and out.data["repo_serving"] == "passed"


def test_full_load_lifts_the_time_budget_unless_a_rule_sets_one() -> None:
    from tipc.judge.checks.serving import full_load

    seen: list[dict[str, object]] = []

    def fake(ctx: object, **args: object) -> str:
        seen.append(args)
        return "done"

    other = object()
    checks = full_load({"serving": fake, "agreement": other})  # type: ignore[dict-item]
    assert checks["agreement"] is other
    checks["serving"](None)
    checks["serving"](None, load_s=5, requests=10)
    assert seen == [{"load_s": 0}, {"load_s": 5, "requests": 10}]


def test_a_serving_chain_that_converted_weights_that_do_not_exist_fails(
    tmp_path: Path, reference_server: None
) -> None:
    """The repo's conversion is given weights that are not there and exports at random init (the demo's
    export_model.py says so); the repo then serves that untrained model while inference checks the trained
    one: a FAIL, whatever tipc's own server makes of the random model."""
    from tests.judge.checks.checks_fixtures import write_tree

    log = "log/serving/python_trans_model.log"
    write_tree(
        tmp_path,
        {log: "[WARNING] weight file ./output/best_model.pdparams does not exist, exporting random init!\n"},
    )
    steps = [
        ("serving/convert", Stage.EXPORT, ["python", "export_model.py"], log, Status.PASSED),
        ("serving/server", Stage.SERVE, ["python", "web_service.py"], "server.log", Status.PASSED),
        ("serving/client", Stage.CLIENT, ["python", "pipeline_http_client.py"], "client.log", Status.PASSED),
    ]
    chain = make_record(tmp_path, steps)
    ctx = CheckContext(repo=tmp_path, record=train_record(tmp_path), records={"serving": chain})
    out = serving_mod.serving(ctx)
    assert out.verdict is Verdict.FAIL
    assert "serves a model converted without its trained weights" in out.summary
    assert out.evidence[0].path == log and out.evidence[0].line == 1
    write_tree(tmp_path, {log: "[Export] loaded weights from ./pretrained/x.pdparams\n"})
    assert serving_mod.serving(ctx).verdict is Verdict.PASS  # tipc's server on the repo's model decides
