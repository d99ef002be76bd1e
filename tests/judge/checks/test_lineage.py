"""The lineage rules on hand-made records and access logs."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from tests.judge.checks.checks_fixtures import ctx_for, make_record
from tests.judge.lineage.lineage_fixtures import OUT, W, chain, committed_file, write_access
from tipc.core.steps import Stage, Status
from tipc.execute.record import RunRecord
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import Verdict
from tipc.judge.checks.lineage import check_lineage, weight_options

EXPORTED = [f"{OUT}/export/inference.json", f"{OUT}/export/inference.pdiparams"]


def clean(repo: Path, eval_reads: list[str] | None = None, infer_reads: list[str] | None = None) -> None:
    record = chain(repo)
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=eval_reads if eval_reads is not None else [W])
    write_access(record, "export", reads=[W], writes=EXPORTED)
    write_access(record, "infer", reads=infer_reads if infer_reads is not None else EXPORTED)


def verdict(repo: Path, aspect: str, record: RunRecord | None = None) -> tuple[Verdict, str, str]:
    out = check_lineage(ctx_for(repo, record if record is not None else chain(repo)), aspect=aspect)
    return out.verdict, out.summary, " | ".join(e.text + f" @{e.path}" for e in out.evidence)


def test_registered() -> None:
    assert CHECKS["lineage"] is check_lineage


def test_a_clean_chain_passes_every_aspect(tmp_path: Path) -> None:
    clean(tmp_path)
    for aspect in ("weights", "inference_model", "loads_model", "cmdline_paths"):
        v, summary, _ = verdict(tmp_path, aspect)
        assert v is Verdict.PASS, (aspect, summary)
    out = check_lineage(ctx_for(tmp_path, chain(tmp_path)), aspect="weights")
    assert {f["path"] for f in out.data["lineage"]["files"]} >= {W, *EXPORTED}


def test_without_an_aspect_the_worst_of_the_three_counts(tmp_path: Path) -> None:
    clean(tmp_path)
    assert check_lineage(ctx_for(tmp_path, chain(tmp_path))).verdict is Verdict.PASS
    committed_file(tmp_path, "logs/net.pdparams")
    clean(tmp_path, eval_reads=["logs/net.pdparams"])
    out = check_lineage(ctx_for(tmp_path, chain(tmp_path)))
    assert out.verdict is Verdict.FAIL and "logs/net.pdparams" in out.summary


def test_eval_reading_preexisting_weights_fails_naming_the_file(tmp_path: Path) -> None:
    committed_file(tmp_path, "logs/net.pdparams")
    clean(tmp_path, eval_reads=["logs/net.pdparams"])
    v, summary, evidence = verdict(tmp_path, "weights")
    assert v is Verdict.FAIL
    assert "eval read logs/net.pdparams (there before the run, last modified" in summary
    assert W in summary  # what the train did write
    assert "@logs/net.pdparams" in evidence


def test_committed_weights_are_named_with_their_commit_date(tmp_path: Path) -> None:
    committed_file(tmp_path, "logs/net.pdparams")
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2022-04-10T12:00:00+00:00",
        "GIT_COMMITTER_DATE": "2022-04-10T12:00:00+00:00",
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
    }
    for argv in (["git", "init", "-q"], ["git", "add", "logs/net.pdparams"], ["git", "commit", "-qm", "w"]):
        subprocess.run(argv, cwd=tmp_path, env=env, check=True)
    clean(tmp_path, eval_reads=["logs/net.pdparams"])
    v, summary, _ = verdict(tmp_path, "weights")
    assert v is Verdict.FAIL
    assert "logs/net.pdparams (committed 2022-04-10T12:00:00+00:00)" in summary


def test_pretrained_weights_the_command_line_names_are_reported_not_failed(tmp_path: Path) -> None:
    committed_file(tmp_path, "pretrained/lenet.pdparams")
    record = make_record(
        tmp_path,
        [
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", "--pretrained", "./pretrained/lenet.pdparams"],
                None,
                Status.PASSED,
            )
        ],
    )
    write_access(record, "export", reads=["pretrained/lenet.pdparams"])
    v, _, evidence = verdict(tmp_path, "weights", record)
    assert v is Verdict.PASS
    assert "pretrained weights the config names" in evidence


def _commit(repo: Path, rel: str, date: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
    }
    for argv in (["git", "init", "-q"], ["git", "add", rel], ["git", "commit", "-qm", "w"]):
        subprocess.run(argv, cwd=repo, env=env, check=True)


def test_committed_trained_weights_named_on_the_command_line_fail_where_this_run_trained(
    tmp_path: Path,
) -> None:
    """Named weights outside the output folder are pretrained ones only when this run trained none: eval and
    export given committed weights that were trained long ago, while train wrote fresh ones nobody read, is a
    FAIL naming both files and the commit date."""
    committed_file(tmp_path, "logs/net.pdparams")
    _commit(tmp_path, "logs/net.pdparams", "2022-04-10T12:00:00+00:00")
    named = "--pretrained=logs/net.pdparams"
    record = chain(tmp_path, eval_argv=["python", "eval.py", named])
    export = record.plan.steps[2]
    steps = (
        *record.plan.steps[:2],
        replace(export, argv=("python", "export_model.py", named, f"--save_inference_dir={OUT}/export")),
        record.plan.steps[3],
    )
    record = replace(
        record,
        plan=replace(record.plan, steps=steps),
        results=tuple(replace(r, argv=s.argv) for r, s in zip(record.results, steps, strict=True)),
    )
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=["logs/net.pdparams"])
    write_access(record, "export", reads=["logs/net.pdparams"], writes=EXPORTED)
    write_access(record, "infer", reads=EXPORTED)
    v, summary, evidence = verdict(tmp_path, "weights", record)
    assert v is Verdict.FAIL, summary
    assert "eval, export read logs/net.pdparams (committed 2022-04-10T12:00:00+00:00)" in summary
    assert f"its train wrote {W}, which no later step read" in summary
    assert "named on its command line" in evidence
    # with no train in the run, the same named weights are pretrained ones
    no_train = replace(
        record,
        plan=replace(record.plan, steps=record.plan.steps[1:]),
        results=record.results[1:],
    )
    v, _, evidence = verdict(tmp_path, "weights", no_train)
    assert v is Verdict.PASS and "pretrained weights the config names" in evidence


def test_named_weights_inside_the_output_folder_are_stale_not_pretrained(tmp_path: Path) -> None:
    committed_file(tmp_path, W)
    record = make_record(
        tmp_path, [("eval", Stage.EVAL, ["python", "eval.py", f"--pretrained={W}"], None, Status.PASSED)]
    )
    write_access(record, "eval", reads=[W])
    v, summary, _ = verdict(tmp_path, "weights", record)
    assert v is Verdict.FAIL and W in summary


def test_export_reading_no_weights_at_all_fails(tmp_path: Path) -> None:
    record = chain(tmp_path)
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W])
    write_access(record, "export", reads=[], writes=EXPORTED)
    v, summary, _ = verdict(tmp_path, "weights", record)
    assert v is Verdict.FAIL and "export read no weights file" in summary


def test_a_committed_model_file_beside_the_fresh_export_fails(tmp_path: Path) -> None:
    stale = f"{OUT}/export/inference.pdmodel"
    committed_file(tmp_path, stale)
    clean(tmp_path, infer_reads=[stale, EXPORTED[1]])
    v, summary, evidence = verdict(tmp_path, "inference_model")
    assert v is Verdict.FAIL
    assert f"infer read {stale} (there before the run" in summary
    assert f"beside {EXPORTED[0]}" in summary
    assert f"@{stale}" in evidence


def test_a_model_file_that_does_not_exist_fails(tmp_path: Path) -> None:
    clean(tmp_path, infer_reads=[f"{OUT}/export/inference.pdmodel", EXPORTED[1]])
    v, summary, _ = verdict(tmp_path, "inference_model")
    assert v is Verdict.FAIL and "inference.pdmodel, which does not exist" in summary


def test_a_weights_path_never_created_fails_with_the_path(tmp_path: Path) -> None:
    ghost = f"./log/{OUT}/final.pdparams"
    record = chain(tmp_path, eval_argv=["python", "eval.py", f"--pretrained={ghost}"])
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W])
    v, summary, _ = verdict(tmp_path, "cmdline_paths", record)
    assert v is Verdict.FAIL
    assert f"--pretrained={ghost} (given to eval) does not exist" in summary


def test_a_weights_path_that_exists_but_is_never_opened_fails(tmp_path: Path) -> None:
    committed_file(tmp_path, "other/best.pdparams")
    record = chain(tmp_path, eval_argv=["python", "eval.py", "--model-path", "other/best.pdparams"])
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W])
    v, summary, evidence = verdict(tmp_path, "cmdline_paths", record)
    assert (
        v is Verdict.FAIL and "--model-path=other/best.pdparams (given to eval) was never opened" in summary
    )
    assert f"it read {W} instead" in evidence


def test_prefix_and_override_forms_count_as_opened(tmp_path: Path) -> None:
    prefix = f"{OUT}/train/latest"
    record = chain(tmp_path, eval_argv=["python", "tools/eval.py", "-o", f"Global.pretrained_model={prefix}"])
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W])
    v, summary, _ = verdict(tmp_path, "cmdline_paths", record)
    assert v is Verdict.PASS, summary


def test_weight_option_spellings() -> None:
    argv = [
        "x.py",
        "--pretrained=a/b.pdparams",
        "--model-dir",
        "./out/",
        "-o",
        "Global.checkpoints=o/x",
        "--resume",
        "True",
        "--model_path=resnet50",
        "--save_inference_dir=./o",
    ]
    assert weight_options(argv) == [
        ("pretrained", "a/b.pdparams"),
        ("model-dir", "./out/"),
        ("Global.checkpoints", "o/x"),
    ]


def test_without_recorded_access_the_rules_skip_with_the_reason(tmp_path: Path) -> None:
    for aspect in ("weights", "inference_model", "loads_model", "cmdline_paths"):
        v, summary, _ = verdict(tmp_path, aspect)
        assert v is Verdict.SKIP and "no file access was recorded" in summary
    assert check_lineage(ctx_for(tmp_path, None), aspect="weights").verdict is Verdict.SKIP


@pytest.mark.parametrize("args", [{"aspect": "colour"}, {"aspect": "weights", "x": 1}])
def test_bad_arguments_fail_with_the_problem(tmp_path: Path, args: dict[str, object]) -> None:
    out = check_lineage(ctx_for(tmp_path, None), **args)
    assert out.verdict is Verdict.FAIL and "lineage: bad arguments" in out.summary


def test_a_copied_repo_checked_with_the_original_record_still_passes(tmp_path: Path) -> None:
    import shutil

    original = tmp_path / "a"
    original.mkdir()
    record = chain(original)
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W])
    write_access(record, "export", reads=[W], writes=EXPORTED)
    write_access(record, "infer", reads=EXPORTED)
    copy = tmp_path / "b"
    shutil.copytree(original, copy)  # keeps mtimes, as `tipc check --reuse-run` on a copied tree sees them
    shutil.rmtree(original)
    for aspect in ("weights", "inference_model", "loads_model", "cmdline_paths"):
        out = check_lineage(ctx_for(copy, record), aspect=aspect)
        assert out.verdict is Verdict.PASS, (aspect, out.summary)


def test_paths_given_to_a_failed_step_are_not_judged(tmp_path: Path) -> None:
    record = make_record(
        tmp_path,
        [("eval", Stage.EVAL, ["python", "eval.py", "--pretrained=out/x.pdparams"], None, Status.FAILED)],
    )
    write_access(record, "eval", reads=[])
    v, summary, _ = verdict(tmp_path, "cmdline_paths", record)
    assert v is Verdict.SKIP, summary


def test_an_inference_script_named_predict_is_judged_as_inference_not_as_weights(tmp_path: Path) -> None:
    record = make_record(
        tmp_path,
        [
            ("train", Stage.TRAIN, ["python", "train.py"], None, Status.PASSED),
            ("infer", Stage.INFER, ["python", "deploy/python/predict_det.py"], None, Status.PASSED),
        ],
    )
    write_access(record, "train", writes=[W])
    write_access(record, "infer", reads=[])
    assert verdict(tmp_path, "weights", record)[0] is Verdict.NA


def test_stale_weights_read_beside_fresh_ones_are_a_note(tmp_path: Path) -> None:
    committed_file(tmp_path, "logs/old.pdparams")
    clean(tmp_path, eval_reads=[W, "logs/old.pdparams", "logs/gone.pdparams"])  # a missing file says nothing
    v, _, evidence = verdict(tmp_path, "weights")
    assert v is Verdict.PASS and "also read by eval: there before the run" in evidence
    assert "gone" not in evidence


def test_steps_without_recorded_access_are_not_judged(tmp_path: Path) -> None:
    record = chain(tmp_path)
    write_access(record, "train", writes=[W])
    assert verdict(tmp_path, "weights", record)[:2] == (
        Verdict.SKIP,
        "no eval, export or predict step ran with recorded file access",
    )
    assert verdict(tmp_path, "inference_model", record)[:2] == (
        Verdict.SKIP,
        "no inference step ran with recorded file access",
    )


def test_an_inference_step_reading_no_model_fails(tmp_path: Path) -> None:
    clean(tmp_path, infer_reads=[])
    v, summary, _ = verdict(tmp_path, "inference_model")
    assert v is Verdict.FAIL and summary.startswith("infer read none of the model files this run's export")


def test_the_inference_model_the_config_names_is_a_note_without_an_export(tmp_path: Path) -> None:
    committed_file(tmp_path, "models/m/inference.pdmodel")
    record = make_record(
        tmp_path,
        [("infer", Stage.INFER, ["python", "infer.py", "--model_dir=models/m"], None, Status.PASSED)],
    )
    write_access(record, "infer", reads=["models/m/inference.pdmodel"])
    v, _, evidence = verdict(tmp_path, "inference_model", record)
    assert v is Verdict.PASS and "the inference model the config names" in evidence


def test_an_inference_step_that_opens_no_model_at_all_fails_loads_model(tmp_path: Path) -> None:
    clean(tmp_path, infer_reads=[])
    v, summary, _ = verdict(tmp_path, "loads_model")
    assert v is Verdict.FAIL
    assert summary == "infer passed without opening any model or weights file: it ran no model"


def test_a_stale_model_is_a_model_loaded_so_the_two_failures_stay_apart(tmp_path: Path) -> None:
    # DnCNN's shape: inference opens a committed model.pdmodel. inference_model fails on which model it read;
    # loads_model passes, so an inference script that then stops loading anything changes the verdict.
    stale = f"{OUT}/export/inference.pdmodel"
    committed_file(tmp_path, stale)
    clean(tmp_path, infer_reads=[stale, EXPORTED[1]])
    assert verdict(tmp_path, "inference_model")[0] is Verdict.FAIL
    v, summary, evidence = verdict(tmp_path, "loads_model")
    assert v is Verdict.PASS, summary
    assert evidence.startswith("infer opened ") and stale in evidence


def test_a_failed_inference_step_is_not_judged_by_loads_model(tmp_path: Path) -> None:
    record = chain(tmp_path, infer_status=Status.FAILED)
    write_access(record, "train", writes=[W])
    write_access(record, "export", reads=[W], writes=EXPORTED)
    write_access(record, "infer", reads=[])
    v, summary, _ = verdict(tmp_path, "loads_model", record)
    assert (v, summary) == (Verdict.SKIP, "no inference step passed with recorded file access")


def test_loads_model_names_the_repo_files_read_not_temporary_ones(tmp_path: Path) -> None:
    clean(tmp_path, infer_reads=["tools/labels.txt", "/tmp/scipy-x1/cache"])
    v, summary, _ = verdict(tmp_path, "loads_model")
    assert v is Verdict.FAIL
    assert summary.endswith("it ran no model (it read tools/labels.txt)")
