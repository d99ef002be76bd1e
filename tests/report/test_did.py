"""What a run did beside its interpreter's defaults (tipc.report.did): the export format its export steps
wrote and the PIR flag in force."""

from __future__ import annotations

from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import RunRecord, StepResult
from tipc.report.did import did_lines, export_formats


def _record(*, flag: str | None) -> RunRecord:
    steps = (
        Step("train", Stage.TRAIN, ("python", "train.py")),
        Step("export", Stage.EXPORT, ("python", "export.py")),
    )
    plan = Plan(
        "c.txt", "/r", Mode.LITE_TRAIN_LITE_INFER, "template", "m", "out", "out/r.log", "template", steps
    )
    delta = (("FLAGS_enable_pir_api", flag),) if flag is not None else ()
    results = (
        StepResult("train", Status.PASSED, exit_code=0),
        StepResult("export", Status.PASSED, exit_code=0, env_delta=delta),
    )
    return RunRecord(plan=plan, results=results, started=0.0)


def test_the_format_is_what_the_export_steps_wrote() -> None:
    assert export_formats(["out/inference.pdmodel", "out/inference.pdiparams", "out/x.txt"]) == [".pdmodel"]
    assert export_formats(["out/inference.json", "out/inference.pdiparams"]) == [".json"]
    assert export_formats(["out/config.json"]) == []  # a json without parameters beside it is no model


def test_the_line_states_what_was_written_and_the_flag_in_force() -> None:
    written = {"export": ["out/inference.pdmodel", "out/inference.pdiparams"]}
    [line] = did_lines(_record(flag=None), written)
    assert "export wrote inference .pdmodel" in line and "FLAGS_enable_pir_api not set" in line
    [line] = did_lines(_record(flag="0"), written)
    assert "FLAGS_enable_pir_api=0" in line
    [line] = did_lines(_record(flag=None), {})
    assert "no inference model tipc saw" in line


def test_no_export_step_that_passed_says_nothing() -> None:
    record = _record(flag=None)
    failed = record.with_result(StepResult("export", Status.FAILED, exit_code=1))
    assert did_lines(failed, {"export": ["out/inference.pdmodel"]}) == []
