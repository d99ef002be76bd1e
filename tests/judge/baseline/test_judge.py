"""The judge: operator boundaries, missing metrics and stages, inactive metrics, environment differences."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tipc.judge.baseline import judge, stats, store
from tipc.judge.baseline.metrics import CPU, EFFECT, HIGHER, LOWER, PERFORMANCE, WALL, Metric, RunMetrics


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
    j = judge.judge_record(record, tmp_path, tmp_path)  # type: ignore[arg-type]  # a duck-typed record
    assert j.regressed and j.machine_class == "gpu-nvidia-h100-80gb-hbm3"
    assert "no baseline for machine class gpu-nvidia-h100-80gb-hbm3" in j.problem
    assert "baselines exist for: cpu" in j.problem


def _timed(value: float, contention: float | None, **extra: object) -> RunMetrics:
    metric = Metric("stage.train.time_s", value, "s", PERFORMANCE, LOWER, "run record", WALL)
    cpu = Metric("stage.train.cpu_s", value / 2, "s", PERFORMANCE, LOWER, "run record", CPU)
    return RunMetrics(
        {metric.name: metric, cpu.name: cpu},
        {"train": "passed", "eval": "passed"},
        contention=contention,
        **extra,  # type: ignore[arg-type]
    )


def _timing_baseline(contention: float = 0.2) -> store.Baseline:
    samples = [10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 10.3, 9.9, 10.1, 10.0]
    base = _baseline()
    for name, scale, clock in (("stage.train.time_s", 1.0, WALL), ("stage.train.cpu_s", 0.5, CPU)):
        values = [v * scale for v in samples]
        s = stats.summarise(values)
        margin, origin = stats.derive_margin(s, PERFORMANCE, "s")
        base.metrics[name] = store.MetricBaseline(
            name, PERFORMANCE, "s", LOWER, "<=", s, values, margin, origin, clock=clock
        )
    base.provenance.update(contention=contention, contention_runs=[contention] * 10, seed=0)
    return base


def test_wall_clock_timings_under_other_load_are_inconclusive_in_the_direction_load_pushes() -> None:
    base = _timing_baseline()

    def rows(j: judge.Judgement) -> dict[str, str]:
        return {r.metric: r.verdict for r in j.rows}

    # twice as slow on a machine where the steps waited for a CPU far more: the load explains it
    busy = judge.judge_metrics(base, _timed(20.0, 1.5), None)
    assert rows(busy) == {"stage.train.time_s": "INCONCLUSIVE", "stage.train.cpu_s": "FAIL"}
    assert "load differs: run-queue wait per CPU second 1.50 (baseline 0.20" in busy.load
    why = next(r.why for r in busy.rows if r.metric == "stage.train.time_s")
    assert "wall-clock timing, load differs" in why
    # the CPU time did not move: the rule is not a FAIL, only a WARN for what could not be compared
    calm_run = _timed(20.0, 1.5)
    calm_run.metrics["stage.train.cpu_s"] = Metric("stage.train.cpu_s", 5.0, "s", PERFORMANCE, LOWER, "", CPU)
    calm = judge.judge_metrics(base, calm_run, None)
    assert rows(calm) == {"stage.train.time_s": "INCONCLUSIVE", "stage.train.cpu_s": "PASS"}
    outcome = judge.to_outcome(calm)
    assert outcome.verdict.value == "WARN" and "1 INCONCLUSIVE" in outcome.summary and not calm.regressed
    # faster under more load is still faster; slower under less load is still slower
    assert rows(judge.judge_metrics(base, _timed(5.0, 1.5), None))["stage.train.time_s"] == "IMPROVED"
    near = judge.judge_metrics(base, _timed(20.0, 0.15), None)  # timings move by 0.05 / 1.2 = 4 %
    assert near.load.startswith("comparable load") and rows(near)["stage.train.time_s"] == "FAIL"
    quieter = _timing_baseline(contention=1.0)
    assert rows(judge.judge_metrics(quieter, _timed(20.0, 0.0), None))["stage.train.time_s"] == "FAIL"
    assert rows(judge.judge_metrics(quieter, _timed(10.0, 0.0), None))["stage.train.time_s"] == "INCONCLUSIVE"
    # comparable load: judged
    assert rows(judge.judge_metrics(base, _timed(20.0, 0.25), None))["stage.train.time_s"] == "FAIL"
    # ... but a comparable load still moves a wall-clock figure by up to 10 %: past the margin and inside
    # that band, it cannot be told from the load; 20 % slower is a regression
    slight = judge.judge_metrics(base, _timed(10.9, 0.2), None)
    assert rows(slight)["stage.train.time_s"] == "INCONCLUSIVE", slight.rows
    why = next(r.why for r in slight.rows if r.metric == "stage.train.time_s")
    assert "within the 10% a comparable load still moves it" in why, why
    assert rows(judge.judge_metrics(base, _timed(12.0, 0.2), None))["stage.train.time_s"] == "FAIL"


def test_cpu_time_under_other_memory_contention_is_inconclusive_as_far_as_it_could_explain() -> None:
    # a memory-heavy neighbour inflates CPU time (the run queue does not see it): the monitor's fixed copy
    # took 15 ms against a recorded 10.5 ms (+43 %), which could stretch CPU times by 0.5 x 43 = +21 %
    base = _timing_baseline()
    base.provenance.update(copy_ms=10.5, copy_ms_runs=[10.2, 10.5, 10.9, 10.4])
    cpu_margin = base.metrics["stage.train.cpu_s"].margin
    assert 0 < cpu_margin < 0.5  # about 5.0 +- 0.2 s: what the cases below lean on

    def rows(j: judge.Judgement) -> dict[str, str]:
        return {r.metric: r.verdict for r in j.rows}

    def cpu_row(base: store.Baseline, run: RunMetrics) -> str:
        return rows(judge.judge_metrics(base, run, None))["stage.train.cpu_s"]

    # 15 % slower (5.75 s against 5.0 +- 0.34): all of it could be the contention
    contended = judge.judge_metrics(base, _timed(11.5, 0.2, copy_ms=15.0), None)
    assert rows(contended) == {"stage.train.time_s": "INCONCLUSIVE", "stage.train.cpu_s": "INCONCLUSIVE"}
    why = next(r.why for r in contended.rows if r.metric == "stage.train.cpu_s")
    assert "CPU-time figure, memory contention differs: a fixed memory copy beside the steps took 15 ms" in (
        why
    )
    assert "(baseline 10.5 ms, +43%; tolerance 15%): CPU times could move by +21%" in why
    assert "memory contention differs" in contended.load and not contended.regressed
    # 40 % slower under the same contention: more than it could explain, on either clock
    assert rows(judge.judge_metrics(base, _timed(14.0, 0.2, copy_ms=15.0), None)) == {
        "stage.train.time_s": "FAIL",
        "stage.train.cpu_s": "FAIL",
    }
    # the same 15 % slowdown beside a busy-looping neighbour (the copy as fast as recorded) is a regression
    spinning = judge.judge_metrics(base, _timed(11.5, 0.25, copy_ms=9.4), None)
    assert rows(spinning) == {"stage.train.time_s": "FAIL", "stage.train.cpu_s": "FAIL"}
    assert "comparable memory contention" in spinning.load
    # less contention than recorded (-33 %: CPU times -17 %): a pass that would have failed under the
    # baseline's contention proves nothing; a real improvement, or a slowdown, still shows
    calmer = _timing_baseline()
    calmer.provenance.update(copy_ms=15.0, copy_ms_runs=[15.0] * 4)
    assert cpu_row(calmer, _timed(10.6, 0.2, copy_ms=10.0)) == "INCONCLUSIVE"
    assert cpu_row(calmer, _timed(9.8, 0.2, copy_ms=10.0)) == "PASS"  # passes even with the difference
    assert cpu_row(calmer, _timed(7.0, 0.2, copy_ms=10.0)) == "IMPROVED"
    assert cpu_row(calmer, _timed(11.5, 0.2, copy_ms=10.0)) == "FAIL"
    # a baseline without the probe, or a run too short to be probed: judged as before
    assert rows(judge.judge_metrics(_timing_baseline(), _timed(11.5, 0.2, copy_ms=15.0), None)) == {
        "stage.train.time_s": "FAIL",
        "stage.train.cpu_s": "FAIL",
    }
    assert cpu_row(base, _timed(11.5, 0.2)) == "FAIL"
    # a baseline whose recorded runs already spread widely keeps that spread as its tolerance
    wide = _timing_baseline()
    wide.provenance.update(copy_ms=10.0, copy_ms_runs=[8.0, 10.0, 13.0])
    assert cpu_row(wide, _timed(11.5, 0.2, copy_ms=14.0)) == "FAIL"
    # ... but from five recorded runs on, its lowest and highest are left out: one burst beside one recorded
    # run (4.36 ms against 3.2-3.8, seen on the tutorial) does not make a +25 % copy comparable
    bursty = _timing_baseline()
    runs = [3.21, 3.55, 3.57, 3.82, 3.41, 3.81, 3.69, 3.30, 3.79, 4.36]
    bursty.provenance.update(copy_ms=3.63, copy_ms_runs=runs)
    shift = judge.memory_shift(bursty.provenance, _timed(10.0, 0.2, copy_ms=4.55))
    assert shift.shift == "higher" and "tolerance 15%" in shift.text
    assert cpu_row(bursty, _timed(11.0, 0.2, copy_ms=4.55)) == "INCONCLUSIVE"
    # the injected 20 % slower train step beside a busy loop that nudged the copy by +18 %: still a FAIL
    assert cpu_row(bursty, _timed(12.0, 0.2, copy_ms=4.28)) == "FAIL"


def test_cpu_time_under_more_run_queue_wait_is_inconclusive_only_as_far_as_preemption_could_explain() -> None:
    # the tutorial's 2.3 s eval step used 10 % more CPU seconds beside two busy loops (run-queue wait
    # 0.12 -> 0.42 s per CPU second: CPU times could move by 0.35 x 0.30 = +10.5 %)
    base = _timing_baseline(contention=0.12)

    def cpu_row(run: RunMetrics) -> tuple[str, str]:
        row = next(r for r in judge.judge_metrics(base, run, None).rows if r.metric == "stage.train.cpu_s")
        return row.verdict, row.why

    verdict, why = cpu_row(_timed(11.0, 0.42))  # CPU 5.5 s against 5.0 +- 0.34
    assert verdict == "INCONCLUSIVE", why
    assert "CPU-time figure, load differs: run-queue wait per CPU second 0.42 (baseline 0.12" in why
    assert "CPU times could move by +10%" in why
    # a 20 % slower step under the same load is more than preemption explains
    assert cpu_row(_timed(12.0, 0.42))[0] == "FAIL"
    # comparable load: judged as measured
    assert cpu_row(_timed(11.0, 0.15))[0] == "FAIL"
    # on a quieter machine than recorded, a pass that preemption could have hidden proves nothing
    busier_base = _timing_baseline(contention=1.0)
    row = next(
        r
        for r in judge.judge_metrics(busier_base, _timed(10.5, 0.1), None).rows
        if r.metric.endswith("cpu_s")
    )
    assert row.verdict == "INCONCLUSIVE", row.why


def test_with_the_clock_held_on_both_sides_preemption_explains_less() -> None:
    # the same +10 % CPU under the same higher run-queue wait: with the clock held in the baseline and the
    # check, what is left of the load's effect (CPU_PER_WAIT_HELD) cannot explain it
    held = _timing_baseline(contention=0.12)
    held.provenance["clock"] = "held"
    free = _timing_baseline(contention=0.12)
    free.provenance["clock"] = "free"

    def cpu_row(base: store.Baseline, run: RunMetrics) -> judge.Row:
        return next(r for r in judge.judge_metrics(base, run, None).rows if r.metric == "stage.train.cpu_s")

    # 5.55 s against 5.0 (+11 %) at a wait 0.30 higher: preemption at a free clock could explain it (+10.5 %
    # beside the margin), held it could not (+7.5 %)
    assert cpu_row(free, _timed(11.1, 0.42, clock="free")).verdict == "INCONCLUSIVE"
    row = cpu_row(held, _timed(11.1, 0.42, clock="held"))
    assert row.verdict == "FAIL", row.why
    # the held bound: CPU_PER_WAIT_HELD per second of wait per CPU second (1.2 against 0.12: +27 %)
    busy = _timed(10.4, 1.2, clock="held")
    assert judge.load_shift(held.provenance, busy, None).factor == pytest.approx(1.27)
    assert judge.load_shift(free.provenance, busy, None).factor == pytest.approx(1.378)


def test_a_check_at_another_clock_than_its_baseline_is_inconclusive_as_far_as_the_clock_explains() -> None:
    base = _timing_baseline(contention=0.2)
    base.provenance["clock"] = "held"

    def cpu_row(run: RunMetrics) -> judge.Row:
        return next(r for r in judge.judge_metrics(base, run, None).rows if r.metric == "stage.train.cpu_s")

    # +10 % CPU with the clock free against a held baseline: the idle clock could explain it
    row = cpu_row(_timed(11.0, 0.2, clock="free"))
    assert row.verdict == "INCONCLUSIVE", row.why
    assert "clock differs: free in this run, held in the baseline" in row.why
    # the same at the same clock is a regression
    assert cpu_row(_timed(11.0, 0.2, clock="held")).verdict == "FAIL"
    # +30 % is more than the clock explains
    assert cpu_row(_timed(13.0, 0.2, clock="free")).verdict == "FAIL"
    # a held check against a free baseline: a pass the faster clock could have kept inside the band
    # proves nothing (5.3 s: the same work at the free clock could have taken 6 s)
    base.provenance["clock"] = "free"
    assert cpu_row(_timed(10.6, 0.2, clock="held")).verdict == "INCONCLUSIVE"
    assert cpu_row(_timed(10.6, 0.2, clock="free")).verdict == "PASS"
    # unknown on either side: judged as measured, and said nowhere
    assert cpu_row(_timed(11.0, 0.2)).verdict == "FAIL"
    j = judge.judge_metrics(base, _timed(10.0, 0.2, clock="free"), None)
    assert "same clock: free in the baseline and in this run" in j.load


def test_the_clock_of_several_runs_is_free_if_any_was() -> None:
    from tipc.judge.baseline.metrics import combine, joint_clock

    assert joint_clock(["held", "held"]) == "held"
    assert joint_clock(["held", None, "free"]) == "free"
    assert joint_clock([None, None]) is None
    runs = [_timed(10.0, 0.2, clock="held"), _timed(10.0, 0.2, clock="free")]
    assert combine(runs).clock == "free"
    assert RunMetrics.from_json(runs[0].to_json()).clock == "held"


def test_the_load_average_stands_in_without_scheduler_statistics() -> None:
    prov = {"load_per_cpu": 0.1}
    run = _run({}, {})
    assert judge.load_shift(prov, run, {"load_per_cpu": 1.2}).shift == "higher"
    assert judge.load_shift({"load_per_cpu": 4.0}, run, {"load_per_cpu": 5.5}).shift == "higher"
    assert judge.load_shift({"load_per_cpu": 0.6}, run, {"load_per_cpu": 1.0}).shift == ""
    assert judge.load_shift({"load_per_cpu": 0.1}, run, {"load_per_cpu": 0.5}).shift == ""
    assert judge.load_shift({}, run, {"load_per_cpu": 1.0}).text.startswith("load unknown")


def test_unstable_metrics_are_not_judged_until_stable() -> None:
    base = _baseline(train__loss__last=(5.0, 0.5, LOWER, "<="))
    s = stats.summarise([6.69, 5.71, 4.97])
    base.metrics["train.loss.last"].summary = s
    j = judge.judge_metrics(base, _run({"train.loss.last": 9.0}, {"train": "passed", "eval": "passed"}), None)
    row = j.rows[0]
    assert row.verdict == "INFO" and "unstable when recorded" in row.why and not j.regressed


def test_a_hollow_improvement_fails_with_its_reason() -> None:
    base = _baseline(eval__loss=(52.3, 0.01, LOWER, "<="), train__loss__last=(4.8, 0.001, LOWER, "<="))
    dead = ("the training loss is constant at 6.90776 over the last 3 logged iterations (t.log:17-25)",)
    run = RunMetrics(
        {
            "eval.loss": Metric("eval.loss", 6.9078, "", EFFECT, LOWER, "e.log:10"),
            "train.loss.last": Metric("train.loss.last", 6.90776, "", EFFECT, LOWER, "t.log:25"),
        },
        {"train": "passed", "eval": "passed"},
        degenerate=dead,
        hyper={"lr": ("10.0", "t.log:1")},
    )
    base.provenance["hyperparameters"] = {"lr": {"value": "0.1", "from": "t.log:1"}}
    j = judge.judge_metrics(base, run, None)
    rows = {r.metric: r for r in j.rows}
    assert rows["eval.loss"].verdict == "FAIL" and rows["eval.loss"].why.startswith("hollow improvement")
    assert "the training loss is constant" in rows["eval.loss"].why
    assert rows["train.loss.last"].verdict == "FAIL"
    assert j.hyper_diff == ("hyper-parameter lr: 0.1 -> 10.0 (read at t.log:1)",)
    outcome = judge.to_outcome(j)
    assert "training hyper-parameters changed: lr: 0.1 -> 10.0" in outcome.summary
    # the same improvement without degenerate outputs is an improvement
    clean = RunMetrics(dict(run.metrics), dict(run.stages))
    assert {r.metric: r.verdict for r in judge.judge_metrics(base, clean, None).rows}[
        "eval.loss"
    ] == "IMPROVED"
    # a baseline that was already degenerate in the same way does not make it hollow
    base.provenance["degenerate"] = ["the training loss is constant at 4.8 over the last 3 logged iterations"]
    assert {r.metric: r.verdict for r in judge.judge_metrics(base, run, None).rows}["eval.loss"] == "IMPROVED"


def test_a_deterministic_metric_under_another_seed_is_inconclusive_not_failed() -> None:
    base = _baseline(train__loss__last=(4.79634, 4.8e-4, LOWER, "<="))
    base.provenance["seed"] = 0
    run = _run({"train.loss.last": 5.2}, {"train": "passed", "eval": "passed"})
    j = judge.judge_metrics(base, run, None)
    assert j.rows[0].verdict == "INCONCLUSIVE" and "this run's seed is None" in j.rows[0].why
    assert j.env_diff[0] == "seed: 0 -> None"
