"""The judge: operator boundaries, missing metrics and stages, inactive metrics, environment differences."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tipc.judge.baseline import judge, stats, store
from tipc.judge.baseline.metrics import EFFECT, HIGHER, LOWER, PERFORMANCE, Metric, RunMetrics


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("<=", 1.10, "PASS"),  # exactly at ref + margin
        ("<=", 1.1001, "FAIL"),
        ("<=", 0.8999, "IMPROVED"),
        ("<=", 0.90, "PASS"),
        ("<", 1.10, "FAIL"),  # strict bound
        ("<", 1.0999, "PASS"),
        (">=", 0.90, "PASS"),
        (">=", 0.8999, "FAIL"),
        (">=", 1.1001, "IMPROVED"),
        (">", 0.90, "FAIL"),
        ("==", 1.0999, "PASS"),
        ("==", 0.8, "FAIL"),
        ("!=", 1.05, "FAIL"),
        ("!=", 1.2, "PASS"),
        ("<=", math.nan, "FAIL"),
        (">=", math.inf, "FAIL"),
    ],
)
def test_operator_table(op: str, value: float, expected: str) -> None:
    assert judge.compare(op, value, 1.0, 0.1) == expected


def _baseline(**metrics: tuple[float, float, str, str]) -> store.Baseline:
    out = {}
    for name, (ref, margin, better, op) in metrics.items():
        s = stats.Summary(3, ref, 0.0, ref, ref, ref, 0.0)
        out[name.replace("__", ".")] = store.MetricBaseline(
            name, EFFECT, "", better, op, s, [ref] * 3, margin, "test margin"
        )
    return store.Baseline(
        "m",
        "c.txt",
        "lite",
        "cpu",
        {"paddle_version": "3.3.1", "python_version": "3.11.7", "packages": {"numpy": "2.4.6"}, "gpus": []},
        out,
        stages=["train", "eval"],
        path=Path("b.yaml"),
    )


def _run(values: dict[str, float], stages: dict[str, str]) -> RunMetrics:
    return RunMetrics(
        {n: Metric(n, v, "", EFFECT, LOWER, f"log:{i}") for i, (n, v) in enumerate(values.items())}, stages
    )


def test_missing_metrics_and_stages_fail_and_the_rest_is_judged() -> None:
    base = _baseline(train__loss__last=(0.1, 0.01, LOWER, "<="), eval__acc=(0.9, 0.05, HIGHER, ">="))
    run = _run({"train.loss.last": 0.5}, {"train": "passed"})
    j = judge.judge_metrics(
        base,
        run,
        {"paddle_version": "3.3.1", "python_version": "3.11.7", "packages": {"numpy": "2.4.6"}, "gpus": []},
    )
    rows = {r.metric: r for r in j.rows}
    assert rows["stage.eval"].verdict == "FAIL" and "not in this run" in rows["stage.eval"].why
    assert rows["eval.acc"].verdict == "FAIL" and rows["eval.acc"].value is None
    assert rows["train.loss.last"].verdict == "FAIL"
    assert "0.5 vs baseline 0.1 ± 0.01 (+400.0%)" in rows["train.loss.last"].why
    assert "test margin" in rows["train.loss.last"].why and "log:0" in rows["train.loss.last"].why
    assert j.regressed and j.env_diff == ()
    outcome = judge.to_outcome(j)
    assert outcome.verdict.value == "FAIL"
    assert "regression in stage.eval, eval.acc, train.loss.last" in outcome.summary


def test_a_failed_stage_is_named_with_its_status() -> None:
    base = _baseline(train__loss__last=(0.1, 0.01, LOWER, "<="))
    j = judge.judge_metrics(base, _run({"train.loss.last": 0.1}, {"train": "passed", "eval": "failed"}), {})
    assert [r.why for r in j.rows if r.metric == "stage.eval"] == ["stage eval did not pass (failed)"]


def test_inactive_metrics_are_info_and_never_fail() -> None:
    base = _baseline(resources__mean_cpu_percent=(90.0, 5.0, "neither", "=="))
    base.metrics["resources.mean_cpu_percent"].active = False
    j = judge.judge_metrics(
        base, _run({"resources.mean_cpu_percent": 20.0}, {"train": "passed", "eval": "passed"}), None
    )
    assert [r.verdict for r in j.rows] == ["INFO"] and not j.regressed
    assert judge.to_outcome(j).verdict.value == "PASS"


def test_improvements_pass_and_are_reported() -> None:
    base = _baseline(train__avg_ips=(100.0, 20.0, HIGHER, ">="))
    base.metrics["train.avg_ips"].kind = PERFORMANCE
    j = judge.judge_metrics(base, _run({"train.avg_ips": 200.0}, {"train": "passed", "eval": "passed"}), None)
    assert [r.verdict for r in j.rows] == ["IMPROVED"] and not j.regressed
    outcome = judge.to_outcome(j)
    assert outcome.verdict.value == "PASS" and "1 IMPROVED" in outcome.summary
    assert outcome.evidence[0].text.startswith("IMPROVED train.avg_ips")


def test_environment_differences_are_named() -> None:
    prov = {
        "paddle_version": "2.6.2",
        "paddle_commit": "abc",
        "python_version": "3.9.18",
        "packages": {"numpy": "1.26.4", "opencv": None},
        "cpu_model": "X",
        "gpus": [],
    }
    env = {
        "paddle_version": "3.3.1",
        "paddle_commit": "abc",
        "python_version": "3.11.7",
        "packages": {"numpy": "2.4.6", "onnxruntime": "1.32"},
        "cpu_model": "X",
        "gpus": [],
    }
    diff = judge.env_differences(prov, env)
    assert "paddle_version: 2.6.2 -> 3.3.1" in diff
    assert "python_version: 3.9.18 -> 3.11.7" in diff
    assert "package numpy: 1.26.4 -> 2.4.6" in diff and "package onnxruntime: None -> 1.32" in diff
    assert not any(d.startswith(("paddle_commit", "cpu_model", "gpus", "package opencv")) for d in diff)


def test_no_baseline_for_the_machine_class_is_a_fail_naming_the_others(tmp_path: Path) -> None:
    from types import SimpleNamespace

    plan = SimpleNamespace(model_name="m", config_path="t/c.txt", mode="lite")
    (tmp_path / "m" / "c" / "lite").mkdir(parents=True)
    (tmp_path / "m" / "c" / "lite" / "cpu.yaml").write_text("x")
    record = SimpleNamespace(plan=plan, environment={"gpus": ["NVIDIA H100 80GB HBM3"]})
    j = judge.judge_record(record, tmp_path, tmp_path)
    assert j.regressed and j.machine_class == "gpu-nvidia-h100-80gb-hbm3"
    assert "no baseline for machine class gpu-nvidia-h100-80gb-hbm3" in j.problem
    assert "baselines exist for: cpu" in j.problem


def test_machine_load_differences_and_a_busy_machine_are_named() -> None:
    diff = judge.env_differences({"load_per_cpu": 0.1}, {"load_per_cpu": 1.2})
    assert diff == (
        "machine load per CPU: 0.1 -> 1.2 (timings taken under such different load are not comparable)",
    )
    busy = judge.env_differences({"load_per_cpu": 4.0}, {"load_per_cpu": 4.5})
    assert busy == (
        "machine busy while this run was measured: load per CPU 4.5 (baseline 4.0); its timings competed for "
        "the CPUs",
    )
    assert judge.env_differences({"load_per_cpu": 0.6}, {"load_per_cpu": 1.0}) == ()  # under 2x, not busy
    assert judge.env_differences({"load_per_cpu": 0.1}, {"load_per_cpu": 0.5}) == ()  # an idle machine
    assert judge.env_differences({}, {"load_per_cpu": 1.0}) == ()
