"""Metrics from a run record and its logs (real RunRecord values, log files in a temp repo), and the baseline
file: built from repeated runs, written, read back, human choices kept on re-recording, bad files located."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tipc.core.errors import ConfigError
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import Resources, RunRecord, StepResult
from tipc.judge.baseline import diff, store
from tipc.judge.baseline.metrics import extract

TRAIN_LOG = (
    "\n".join(
        f"[Epoch 1/1][Iter {i}/8] loss: {loss:.4f}, avg_batch_cost: 0.01 sec, avg_ips: {ips:.1f} images/sec"
        for i, (loss, ips) in enumerate(
            zip(
                [2.3, 2.0, 1.6, 1.2, 0.9, 0.7, 0.5, 0.4],
                [50.0, 1000, 1100, 900, 1000, 1050, 950, 1000],
                strict=True,
            ),
            start=1,
        )
    )
    + "\n[Eval] acc: 0.8800\n"
)
EVAL_LOG = "evaluated on 100 test images, loss: 0.3262\n[Eval] acc: 0.9100\n"
INFER_LOG = "root INFO:  preprocess_time(ms): 0.4, inference_time(ms): 1.5, postprocess_time(ms): 0.01\n"


def _record(
    repo: Path, *, eval_status: Status = Status.PASSED, started: float = 1.0e9, scale: float = 1.0
) -> RunRecord:
    logs = {
        "train": ("out/train.log", TRAIN_LOG),
        "eval": ("out/eval.log", EVAL_LOG),
        "infer": ("out/python_infer_cpu.log", INFER_LOG),
    }
    (repo / "out").mkdir(parents=True, exist_ok=True)
    for rel, text in logs.values():
        (repo / rel).write_text(text)
    steps = tuple(
        Step(
            id=f"{stage}/norm" + ("/python_infer_cpu" if stage == "infer" else ""),
            stage=Stage(stage),
            argv=("python", "x.py"),
            log=logs[stage][0],
        )
        for stage in ("train", "eval", "infer")
    )
    results = []
    for i, step in enumerate(steps):
        status = eval_status if step.stage is Stage.EVAL else Status.PASSED
        results.append(
            StepResult(
                step.id,
                status,
                0,
                started + i * 10,
                started + i * 10 + 2.0 * scale,
                step.log,
                resources=Resources(
                    peak_rss_bytes=(200 + i) * 2**20,
                    cpu_time_s=1.0 * scale,
                    # the monitor's memory-copy probe: none in the first step, 1 and 2 probes later
                    copy_probe_ms=(10.0 + i) * scale,
                    copy_probes=i,
                ),
            )
        )
    plan = Plan(
        str(repo / "test_tipc/configs/m/train_infer_python.txt"),
        str(repo),
        Mode.LITE_TRAIN_LITE_INFER,
        "template",
        "m",
        "out",
        "out/results_python.log",
        "template",
        steps,
    )
    env: dict[str, object] = {
        "paddle_version": "3.3.1",
        "python_version": "3.11.7",
        "packages": {"numpy": "2.4.6"},
        "cpu_model": "AMD EPYC",
        "gpus": [],
    }
    return RunRecord(plan, tuple(results), started, started + 30, environment=env, git_commit="abc123")


def test_metrics_of_a_run(tmp_path: Path) -> None:
    run = extract(_record(tmp_path), tmp_path)
    m = run.metrics
    assert (m["train.loss.first"].value, m["train.loss.last"].value, m["train.loss.min"].value) == (
        2.3,
        0.4,
        0.4,
    )
    assert (
        m["train.loss.first"].source == "out/train.log:1" and m["train.loss.last"].source == "out/train.log:8"
    )
    assert [round(m[f"train.loss.window{i}of4"].value, 3) for i in range(1, 5)] == [2.15, 1.4, 0.8, 0.45]
    assert (
        m["train.avg_ips"].value == 1000.0 and m["train.avg_ips"].unit == "images/sec"
    )  # warm-up line dropped
    assert (
        m["train.eval.acc"].value == 0.88 and m["eval.acc"].value == 0.91 and m["eval.loss"].value == 0.3262
    )
    assert m["infer.python_infer_cpu.inference_time_ms"].value == 1.5
    assert m["infer.python_infer_cpu.preprocess_time_ms"].unit == "ms"
    assert m["stage.train.time_s"].value == pytest.approx(2.0) and m["stage.infer.time_s"].unit == "s"
    assert m["resources.peak_rss_mb"].value == pytest.approx(202.0)
    assert m["resources.mean_cpu_percent"].value == pytest.approx(50.0)
    assert run.stages == {"train": "passed", "eval": "passed", "infer": "passed"}
    assert set(run.not_available) == {"resources.peak_gpu_mem_mb", "resources.mean_gpu_util_percent"}


def test_a_failed_stage_leaves_no_time_and_a_missing_log_a_note(tmp_path: Path) -> None:
    record = _record(tmp_path, eval_status=Status.FAILED)
    (tmp_path / "out" / "python_infer_cpu.log").unlink()
    run = extract(record, tmp_path)
    assert run.stages["eval"] == "failed" and "stage.eval.time_s" not in run.metrics
    assert "eval.acc" not in run.metrics
    assert not any(n.startswith("infer.") for n in run.metrics)
    assert any("python_infer_cpu.log is missing" in n for n in run.notes)


def test_logs_of_a_sandboxed_run_are_read_from_its_run_folder(tmp_path: Path) -> None:
    from dataclasses import replace

    record = _record(tmp_path)
    folder = "test_tipc/output/tipc/m/train_infer_python/lite_train_lite_infer"
    stored = tmp_path / folder / "logs"
    stored.mkdir(parents=True)
    (stored / "train.log").write_text(TRAIN_LOG.replace("loss: 0.4000", "loss: 0.3000"))
    sandboxed = replace(record, sandbox={"backend": "overlay", "folder": folder})
    assert extract(sandboxed, tmp_path).metrics["train.loss.last"].value == 0.3


def _baseline(tmp_path: Path, scales: list[float]) -> tuple[store.Baseline, list[RunRecord]]:
    records = [_record(tmp_path, started=1.0e9 + i, scale=s) for i, s in enumerate(scales)]
    runs = [extract(r, tmp_path) for r in records]
    return store.build(records[-1], runs, [store.run_id(r) for r in records]), records


def test_build_write_and_read_back(tmp_path: Path) -> None:
    base, records = _baseline(tmp_path, [1.0, 1.1, 0.95])
    assert base.config == "test_tipc/configs/m/train_infer_python.txt" and base.machine_class == "cpu"
    assert base.stages == ["train", "eval", "infer"]
    assert base.provenance["repo_commit"] == "abc123" and base.provenance["packages"] == {"numpy": "2.4.6"}
    assert base.provenance["runs"] == [store.run_id(r) for r in records]
    # the memory-contention probe: each run's median over its probes (11, 12, 12 x scale), and theirs
    assert base.provenance["copy_ms_runs"] == pytest.approx([12.0, 13.2, 11.4])
    assert base.provenance["copy_ms"] == pytest.approx(12.0)
    t = base.metrics["stage.train.time_s"]
    assert t.summary.n == 3 and t.summary.median == pytest.approx(2.0) and t.op == "<="
    assert base.metrics["eval.acc"].op == ">=" and base.metrics["train.loss.first"].op == "=="
    assert base.metrics["resources.mean_cpu_percent"].clock == "wall"  # judged, but INCONCLUSIVE under load
    assert (
        base.metrics["stage.train.cpu_s"].clock == "cpu"
        and base.metrics["stage.train.time_s"].clock == "wall"
    )
    # the same log in every run: deterministic, judged exactly
    assert base.metrics["train.loss.last"].summary.identical and base.metrics["train.loss.last"].margin < 1e-3
    path = store.baseline_path(tmp_path / "b", base.model, base.config, base.mode, base.machine_class)
    assert path == tmp_path / "b" / "m" / "train_infer_python" / "lite_train_lite_infer" / "cpu.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(base.dumps())
    back = store.load(path)
    assert back.metrics.keys() == base.metrics.keys()
    assert back.metrics["stage.train.time_s"].summary.median == pytest.approx(2.0)
    assert back.metrics["stage.train.time_s"].margin == pytest.approx(t.margin, rel=1e-5)
    assert back.metrics["stage.train.cpu_s"].clock == "cpu" and back.metrics["stage.train.time_s"].is_stable
    assert diff.metric_lines(back, base)[0].startswith("~ ")


def test_human_choices_survive_re_recording_and_the_diff_shows_them(tmp_path: Path) -> None:
    old, _ = _baseline(tmp_path, [1.0, 1.0, 1.0])
    old.metrics["stage.train.time_s"].margin = 9.0
    old.metrics["stage.train.time_s"].margin_from = "explicit"
    old.metrics["eval.acc"].active = False
    records = [_record(tmp_path, started=2.0e9 + i, scale=1.5) for i in range(3)]
    new = store.build(records[-1], [extract(r, tmp_path) for r in records], ["x"], previous=old)
    assert new.metrics["stage.train.time_s"].margin == 9.0
    assert new.metrics["stage.train.time_s"].margin_from == "explicit"
    assert not new.metrics["eval.acc"].active
    lines = diff.metric_lines(old, new)
    assert "~ stage.train.time_s: 2 -> 3 s (+50.0%), margin 9 -> 9, n 3 -> 3" in lines
    text = diff.file_diff(old.dumps(), new.dumps(), "cpu.yaml")
    assert text.startswith("--- a/cpu.yaml\n+++ b/cpu.yaml\n")
    assert "-    median: 2.0\n" in text and "+    median: 3.0\n" in text


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("schema: tipc.baseline/1\nmetrics: [\n", 3, "invalid YAML"),
        ("schema: other\n", 1, "schema: expected 'tipc.baseline/1', got 'other'"),
        ("schema: tipc.baseline/1\nmetrics: 3\n", 2, "metrics: expected a mapping"),
        ("schema: tipc.baseline/1\nmetrics:\n  a.b:\n    op: '=~'\n", 4, "op: expected one of"),
        ("schema: tipc.baseline/1\nmetrics:\n  a.b:\n    n: 3\n    mean: x\n", 5, "mean: expected a number"),
        ("schema: tipc.baseline/1\nmetrics:\n  a.b:\n    n: 3\n", 3, "missing required key 'mean'"),
        ("schema: tipc.baseline/1\nmetrics:\n  a.b:\n    margn: 3\n", 4, "did you mean 'margin'?"),
    ],
)
def test_bad_baseline_files_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "cpu.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        store.load(path)
    assert info.value.line == line and message in info.value.message and info.value.path == str(path)


def test_machine_class() -> None:
    assert store.machine_class({"gpus": []}) == "cpu"
    assert store.machine_class(None) == "cpu"
    assert store.machine_class({"gpus": ["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"]}) == (
        "gpu-nvidia-h100-80gb-hbm3"
    )


def test_a_train_log_without_iteration_lines_has_no_loss_or_throughput(tmp_path: Path) -> None:
    record = _record(tmp_path)
    (tmp_path / "out" / "train.log").write_text("loading data\n[Eval] acc: 0.5000\n")
    m = extract(record, tmp_path).metrics
    assert not any(n.startswith("train.loss.") for n in m) and "train.avg_ips" not in m
    assert m["train.eval.acc"].value == 0.5 and m["train.eval.acc"].source == "out/train.log:2"


def test_a_window_holding_both_infinities_has_a_nan_mean_not_a_crash(tmp_path: Path) -> None:
    record = _record(tmp_path)
    log = TRAIN_LOG.replace("loss: 2.3000", "loss: inf").replace("loss: 2.0000", "loss: -inf")
    (tmp_path / "out" / "train.log").write_text(log)
    m = extract(record, tmp_path).metrics
    windows = sorted(n for n in m if n.startswith("train.loss.window"))
    assert math.isnan(m[windows[0]].value) and all(math.isfinite(m[n].value) for n in windows[1:])
    assert m["train.loss.min"].value == 0.4


def test_not_applicable_steps_neither_make_nor_break_a_stage(tmp_path: Path) -> None:
    """Issue 25: under --device cpu each stage of the official tutorial has a not-applicable 2-GPU step, and
    its baseline had `stages: []` and no stage time."""
    from dataclasses import replace

    record = _record(tmp_path)
    extra = tuple(
        Step(id=f"{s.id}/gpus_0,1", stage=s.stage, argv=s.argv, log=None) for s in record.plan.steps
    )
    skipped = tuple(
        StepResult(s.id, Status.SKIPPED, reason="not applicable: gpu_list item '0,1' is a distributed launch")
        for s in extra
    )
    record = replace(
        record, plan=replace(record.plan, steps=record.plan.steps + extra), results=record.results + skipped
    )
    run = extract(record, tmp_path)
    assert run.stages == {"train": "passed", "eval": "passed", "infer": "passed"}
    assert {"stage.train.time_s", "stage.eval.cpu_s", "stage.infer.time_s"} <= set(run.metrics)
    base = store.build(record, [run, run], ["a", "b"])
    assert base.stages == ["train", "eval", "infer"]


def test_hyper_parameters_from_the_command_the_namespace_and_the_logged_rate(tmp_path: Path) -> None:
    from dataclasses import replace

    record = _record(tmp_path)
    train = replace(
        record.plan.steps[0], argv=("python", "train.py", "--epochs=5", "--batch-size", "4", "--lr", "0.1")
    )
    record = replace(record, plan=replace(record.plan, steps=(train, *record.plan.steps[1:])))
    namespace = "Namespace(data_path='./data', lr=10.0, opt='sgd', momentum=0.9, workers=8, amp_level=None)\n"
    (tmp_path / "out" / "train.log").write_text(
        namespace + TRAIN_LOG.replace("avg_batch_cost", "lr: 10.0, avg_batch_cost")
    )
    hyper = extract(record, tmp_path).hyper
    assert hyper["epochs"] == ("5", "train command") and hyper["batch_size"] == ("4", "train command")
    assert hyper["lr"] == ("10.0", "out/train.log:1")  # what the script says it ran with wins
    assert hyper["opt"] == ("sgd", "out/train.log:1") and hyper["amp_level"] == ("None", "out/train.log:1")
    assert hyper["logged_lr"] == ("10", "out/train.log:2")
    base = store.build(record, [extract(record, tmp_path)], ["a"])
    hyperparameters = base.provenance["hyperparameters"]
    assert isinstance(hyperparameters, dict)
    assert hyperparameters["lr"] == {"value": "10.0", "from": "out/train.log:1"}


def test_a_hostile_namespace_line_is_text_not_code(tmp_path: Path) -> None:
    record = _record(tmp_path)
    evil = "Namespace(lr=__import__('os').system('touch /tmp/tipc-pwned'), x=" + "[" * 5000 + ")\n"
    (tmp_path / "out" / "train.log").write_text(evil + TRAIN_LOG)
    hyper = extract(record, tmp_path).hyper
    assert not Path("/tmp/tipc-pwned").exists()
    assert "x" not in hyper or len(hyper["x"][0]) <= 200


def test_signs_of_degenerate_outputs(tmp_path: Path) -> None:
    from tipc.judge.baseline.metrics import degenerate_signs
    from tipc.judge.checks.logparse import parse_line

    flat = [
        parse_line(f"[Epoch {i}, iter: 0] loss: 6.90776, avg_batch_cost: 1.0 sec", i) for i in range(1, 6)
    ]
    assert "constant at 6.90776 over the last 3" in degenerate_signs("train", flat, "t.log")[0]
    nan = [parse_line("[Epoch 0, iter: 0] loss: nan, avg_batch_cost: 1.0 sec", 7)]
    assert degenerate_signs("train", nan, "t.log") == ["the training loss is nan at t.log:7"]
    uniform = [parse_line("image_name: ./images/demo.jpg, class_id: 0, prob: 0.0010000000474974513", 3)]
    assert "= 1/1000 at i.log:3" in degenerate_signs("infer", uniform, "i.log")[0]
    alive = [parse_line("image_name: ./images/demo.jpg, class_id: 986, prob: 0.8736628293991089", 3)]
    learning = [
        parse_line(f"[Epoch {i}, iter: 0] loss: {6 - i}.1, avg_batch_cost: 1.0 sec", i) for i in range(5)
    ]
    assert (
        degenerate_signs("infer", alive, "i.log") == [] and degenerate_signs("train", learning, "t.log") == []
    )


def test_runs_of_a_repeated_check_combine_into_medians_and_survive_json(tmp_path: Path) -> None:
    from tipc.judge.baseline.metrics import RunMetrics, combine

    runs = [extract(_record(tmp_path, scale=s), tmp_path) for s in (1.0, 3.0, 1.2)]
    back = [RunMetrics.from_json(r.to_json()) for r in runs]
    assert back[1].metrics == runs[1].metrics and back[1].stages == runs[1].stages
    one = combine(back)
    assert one.metrics["stage.train.time_s"].value == pytest.approx(2.4)
    assert back[1].copy_ms == pytest.approx(36.0) and one.copy_ms == pytest.approx(14.4)
    assert one.metrics["stage.train.time_s"].source.startswith("median of 3 runs")
