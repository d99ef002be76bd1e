"""The run record's JSON: what RecordWriter writes is exactly json.dumps(record.to_json(), indent=2)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import (
    RecordWriter,
    Resources,
    ResourceSample,
    RunRecord,
    StepResult,
    load_record,
    record_location,
)


def _plan() -> Plan:
    steps = tuple(
        Step(f"s{i}", Stage.TRAIN, ("python", "train.py", f"--n={i}"), env=(("K", "v é"),)) for i in range(3)
    )
    return Plan(
        config_path="c.txt",
        repo="/r",
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="template",
        model_name="m",
        output_dir="out",
        results_log="out/results_python.log",
        status_format="template",
        steps=steps,
    )


def _result(i: int, status: Status = Status.PASSED) -> StepResult:
    samples = tuple(ResourceSample(0.5 * k, 1000 + k, 50.0, None, None) for k in range(3))
    return StepResult(
        f"s{i}",
        status,
        exit_code=0,
        started=1.0 + i,
        ended=2.5 + i,
        log=f"out/s{i}.log",
        reason='a "quoted" reason\nover two lines',
        argv=("python", "train.py"),
        env_delta=(("K", "v é"), ("GONE", None)),
        resources=Resources(peak_rss_bytes=1002, cpu_time_s=1.25, samples=samples, monitor_cpu_s=0.004),
        pid=1234 + i,
    )


def test_writer_output_is_exactly_the_plain_encoding(tmp_path: Path) -> None:
    path = tmp_path / "tipc_run.json"
    writer = RecordWriter(path)
    record = RunRecord(plan=_plan(), results=(), started=1.0, notes=("n1",), host={"gpus": "n/a"})
    versions = [record]
    for i in range(3):
        record = record.with_result(_result(i))
        versions.append(record)
    versions.append(record.with_result(_result(1, Status.FAILED)))  # a result replaced
    versions.append(replace(versions[-1], ended=9.0, paddle_version="3.3.1", notes=("n1", "n2")))
    versions.append(replace(versions[-1], plan=replace(_plan(), mode=Mode.WHOLE_INFER)))  # another plan
    for version in versions:
        writer.write(version)
        assert path.read_text(encoding="utf-8") == json.dumps(version.to_json(), indent=2)
        assert load_record(path) == version
    assert not path.with_suffix(".json.tmp").exists()
    RunRecord.write(versions[0], tmp_path / "plain.json")
    assert (tmp_path / "plain.json").read_text() == json.dumps(versions[0].to_json(), indent=2)


def test_monitor_cpu_round_trips_and_older_records_still_load() -> None:
    res = Resources(peak_rss_bytes=1, monitor_cpu_s=0.0125)
    assert Resources.from_json(res.to_json()) == res
    older = res.to_json()
    del older["monitor_cpu_s"]
    assert Resources.from_json(older).monitor_cpu_s is None


def _located(
    output_dir: str, model: str = "m", mode: Mode = Mode.LITE_TRAIN_LITE_INFER, config: str = ""
) -> str:
    plan = replace(
        _plan(),
        output_dir=output_dir,
        model_name=model,
        mode=mode,
        config_path=config or f"test_tipc/configs/{model}/train_infer_python.txt",
    )
    return record_location(plan).as_posix()


@pytest.mark.parametrize(
    "output_dir",
    [
        "test_tipc/output/m/lite_train_lite_infer",  # most dialects
        "log/m/lite_train_lite_infer",  # a serving layout
        "test_tipc/output/m/lite_train_lite_infer/python",
    ],
)
def test_record_stays_in_an_output_dir_naming_model_and_mode(output_dir: str) -> None:
    assert _located(output_dir) == f"{output_dir}/tipc_run.json"


def test_shared_output_dir_gets_a_folder_per_model_config_and_mode() -> None:
    assert _located("test_tipc/output") == (
        "test_tipc/output/tipc_runs/m/train_infer_python/lite_train_lite_infer/tipc_run.json"
    )
    seen = {
        _located("test_tipc/output"),
        _located("test_tipc/output", mode=Mode.WHOLE_INFER),
        _located("test_tipc/output", model="n"),
        _located("test_tipc/output", config="test_tipc/configs/m/train_amp_infer_python.txt"),
        _located("test_tipc/output/m"),  # LOG_PATH without the mode (DnCNN_paddle)
        _located("test_tipc/output/m", mode=Mode.WHOLE_INFER),
        _located(
            "test_tipc/output/lite_train_lite_infer/m"
        ),  # mode before model does not name "<model>/<mode>"
    }
    assert len(seen) == 7
    assert _located("", model="m") == "tipc_runs/m/train_infer_python/lite_train_lite_infer/tipc_run.json"


def test_odd_model_names_stay_inside_the_output_dir() -> None:
    for model in ("../../etc", "a b/c", "..", "", "/abs"):
        path = _located("test_tipc/output", model=model)
        assert path.startswith("test_tipc/output/tipc_runs/") and ".." not in path.split("/"), path
        assert path.count("/") == 6, path


def test_causes_and_environment_round_trip_and_older_records_still_load(tmp_path: Path) -> None:
    from tipc.judge.causes import Cause

    cause = Cause("paddle3-export-format", "opens .pdmodel", "a remedy", "--paddle-compat export", "line")
    failed = replace(_result(0, Status.FAILED), exit_code=1, causes=(cause,))
    environment = {"paddle_version": "3.3.1", "pir": True, "gpus": []}
    record = RunRecord(plan=_plan(), results=(failed,), started=1.0, environment=environment)
    path = tmp_path / "tipc_run.json"
    record.write(path)
    loaded = load_record(path)
    assert loaded == record
    assert loaded.results[0].causes == (cause,)
    data = record.to_json()
    del data["environment"]
    results = data["results"]
    assert isinstance(results, list) and isinstance(results[0], dict)
    del results[0]["causes"]
    older = RunRecord.from_json(data)
    assert older.environment is None and older.results[0].causes == ()
    data["environment"] = "garbage"
    assert RunRecord.from_json(data).environment is None
