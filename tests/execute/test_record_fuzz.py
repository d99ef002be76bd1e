"""Fuzz tipc_run.json reading: any file gives a RunRecord or a ConfigError naming it, never a crash.

--resume, --rerun-failed and --reuse-run read records that may be truncated, hand-edited or from another
tipc version; a bad one must be reported and skipped, not turned into an internal error.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tipc.core.errors import ConfigError
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import RECORD_SCHEMA, RunRecord, StepResult, load_record

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False),
        st.text(max_size=8),
        st.sampled_from(list(Status.__members__.values())).map(lambda s: s.value),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _plan(steps: tuple[Step, ...]) -> Plan:
    return Plan(
        config_path="c.txt",
        repo="/r",
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="template",
        model_name="m",
        output_dir="test_tipc/output",
        results_log="test_tipc/output/r.log",
        status_format="template",
        steps=steps,
    )


def _valid() -> dict[str, Any]:
    step = Step(id="train/x", stage=Stage.TRAIN, argv=("python", "train.py"), log="train.log")
    plan = _plan((step,))
    result = StepResult(step_id="train/x", status=Status.PASSED, exit_code=0, started=1.0, ended=2.0)
    return RunRecord(plan=plan, results=(result,), started=1.0).to_json()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _load(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tipc_run.json"
        path.write_bytes(data)
        try:
            record = load_record(path)
        except ConfigError as exc:
            assert exc.path == str(path) and exc.message
        else:
            assert isinstance(record, RunRecord)


def test_a_valid_record_loads() -> None:
    _load(json.dumps(_valid()).encode())


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_record_with_one_part_replaced_never_crashes(data: st.DataObject) -> None:
    record = _valid()
    where = data.draw(st.sampled_from(_paths(record)[1:]))
    parent: Any = record
    for key in where[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[where[-1]]
    else:
        parent[where[-1]] = data.draw(json_values)
    _load(json.dumps(record).encode())


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        json_values.map(lambda v: json.dumps({"schema": RECORD_SCHEMA, "x": v}).encode()),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=100),
    )
)
def test_random_files_never_crash(data: bytes) -> None:
    _load(data)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=400))
def test_truncated_records_name_the_line(cut: int) -> None:
    text = json.dumps(_valid(), indent=2)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tipc_run.json"
        path.write_text(text[:cut], encoding="utf-8")
        try:
            load_record(path)
        except ConfigError as exc:
            assert exc.line is not None and 1 <= exc.line <= text[:cut].count("\n") + 1, exc.render()
        else:
            raise AssertionError(f"a record cut at {cut} of {len(text)} characters loaded")


# A valid record of any shape the runner writes loads back as the very same record (the fuzz tests above
# only prove that nothing crashes; this one fails on any field the writer and the reader disagree on).
_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
_times = st.one_of(st.none(), st.floats(min_value=0, max_value=2e9, allow_nan=False))
_steps = st.builds(
    Step,
    id=_text.filter(bool),
    stage=st.sampled_from(list(Stage)),
    argv=st.lists(_text, min_size=1, max_size=4).map(tuple),
    log=st.one_of(st.none(), _text),
    trainer=st.one_of(st.none(), _text),
    env=st.lists(st.tuples(_text, _text), max_size=3).map(tuple),
    depends_on=st.lists(_text, max_size=3).map(tuple),
    timeout_s=st.one_of(st.none(), st.floats(min_value=0, max_value=1e6)),
)
_results = st.builds(
    StepResult,
    step_id=_text,
    status=st.sampled_from(list(Status)),
    exit_code=st.one_of(st.none(), st.integers(-255, 255)),
    started=_times,
    ended=_times,
    log=st.one_of(st.none(), _text),
    reason=_text,
    argv=st.lists(_text, max_size=3).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_steps, min_size=1, max_size=3, unique_by=lambda s: s.id), st.lists(_results, max_size=3))
def test_a_written_record_reads_back_as_itself(steps: list[Step], results: list[StepResult]) -> None:
    plan = _plan(tuple(steps))
    record = RunRecord(plan=plan, results=tuple(results), started=1.0, ended=2.0, notes=("n",))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tipc_run.json"
        path.write_text(json.dumps(record.to_json()), encoding="utf-8")
        loaded = load_record(path)
    assert loaded.to_json() == record.to_json()
    assert [s.id for s in loaded.plan.steps] == [s.id for s in steps]
    assert [(r.step_id, r.status, r.exit_code) for r in loaded.results] == [
        (r.step_id, r.status, r.exit_code) for r in results
    ]


def test_the_harness_fails_on_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property "never crashes" is only worth something if a crash does fail it."""

    def broken(cls: type, data: dict[str, Any]) -> StepResult:
        raise ZeroDivisionError("a bug in the reader")

    monkeypatch.setattr(StepResult, "from_json", classmethod(broken))
    with pytest.raises(ZeroDivisionError):
        _load(json.dumps(_valid()).encode())
