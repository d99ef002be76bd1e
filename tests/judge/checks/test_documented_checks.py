"""The acceptance checks over documented, pretrained and backbone records (records made here, no process)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tipc.core.steps import Status
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.causes import Cause
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckContext, Verdict
from tipc.judge.checks.documented_serving import _compare, _Row
from tipc.planning.documented.plan import plan_documented

DEMO_CONFIG = (
    Path(__file__).resolve().parents[3]
    / "examples"
    / "lenet_digits"
    / "test_tipc"
    / "configs"
    / "lenet_digits"
    / "train_infer_python.txt"
)

README = """\
# m

| model | top-1 acc | weights |
|---|---|---|
| m | {claim} | [w](w.pdparams) |

```bash
tar -xf data.tar
python train.py --epochs=5
python eval.py --pretrained=./w.pdparams
python eval.py --data_dir=/datasets/full --pretrained=./w.pdparams
```
"""

CONFIG = (
    "===========================train_params===========================\nmodel_name:m\n--data_dir:./data\n"
)


def _repo(tmp_path: Path, claim: str = "0.9600") -> Path:
    repo = tmp_path / "m"
    files = {
        "README.md": README.format(claim=claim),
        "data.tar": "",
        "w.pdparams": "",
        "train.py": "",
        "eval.py": "",
        "test_tipc/configs/m/train_infer_python.txt": CONFIG,
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    return repo


def _record(repo: Path, outcomes: dict[str, tuple[Status, str]], **extra: Any) -> RunRecord:
    """A documented record whose steps (by the start of their command) ended as given, their logs written."""
    documented = plan_documented(
        repo, model_name="m", config=repo / "test_tipc/configs/m/train_infer_python.txt"
    )
    results = []
    for cmd in documented.commands:
        if not cmd.step_id:
            continue
        status, log_text = next(
            (v for k, v in outcomes.items() if cmd.text.startswith(k)), (Status.PASSED, "")
        )
        log = f"logs/{cmd.line}.log"
        (repo / log).parent.mkdir(parents=True, exist_ok=True)
        (repo / log).write_text(log_text, encoding="utf-8")
        results.append(
            StepResult(
                cmd.step_id,
                status,
                exit_code=0 if status is Status.PASSED else 2,
                started=1.0,
                log=log,
                **extra,
            )
        )
    return RunRecord(plan=documented.plan, results=tuple(results), started=0.0)


def _with_cause(
    record: RunRecord, cause: Cause, which: Callable[[StepResult], bool], exit_code: int = 1
) -> RunRecord:
    """`record` with `cause` given to the results `which` picks (their status kept)."""
    return RunRecord(
        plan=record.plan,
        results=tuple(
            StepResult(r.step_id, r.status, exit_code=exit_code, started=1.0, log=r.log, causes=(cause,))
            if which(r)
            else r
            for r in record.results
        ),
        started=0.0,
    )


def _ctx(repo: Path, record: RunRecord, **records: Any) -> CheckContext:
    return CheckContext(repo=repo, record=None, records={"documented": record, **records})


def test_a_failing_documented_command_fails_with_its_place_and_its_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    usage = (
        "usage: train.py [-h] [--epochs EPOCHS]\ntrain.py: error: unrecognized arguments: --epoch_count=5\n"
    )
    record = _record(
        repo, {"python train.py": (Status.FAILED, usage), "python eval.py": (Status.PASSED, "acc: 0.96")}
    )
    got = CHECKS["documented_commands"](_ctx(repo, record))
    assert got.verdict is Verdict.FAIL
    assert got.summary.startswith(
        "README.md:9: `python train.py --epochs=5` failed: train.py: error: unrecognized"
    )
    assert got.evidence[0].path == "logs/9.log" and got.evidence[0].line == 2


def test_a_training_stopped_at_its_budget_ran_and_an_offline_download_is_not_a_failure(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    download = Cause("weights-download-failed", "the script downloads weights at run time", "offline")
    record = _record(repo, {"python train.py": (Status.TIMEOUT, "[Epoch 1] loss 2.3")})
    record = RunRecord(
        plan=record.plan,
        results=tuple(
            StepResult(r.step_id, Status.FAILED, exit_code=1, started=1.0, log=r.log, causes=(download,))
            if r.step_id.endswith(":11")
            else r
            for r in record.results
        ),
        started=0.0,
    )
    got = CHECKS["documented_commands"](_ctx(repo, record))
    assert got.verdict is Verdict.PASS, got.summary
    assert "1 stopped at a limit of this run" in got.summary and "1 not run here" in got.summary


def test_an_evaluation_still_running_at_its_budget_is_slow_here_not_wrong(tmp_path: Path) -> None:
    """DnCNN_paddle's documented val.py over BSD68 prints a PSNR per image on a CPU for longer than the
    budget: both rules FAILed it as a failed command; it was only stopped."""
    repo = _repo(tmp_path)
    progress = "data/BSD68/test019.png PSNR 30.815724\n"
    record = _record(repo, {"python eval.py": (Status.TIMEOUT, progress)})
    commands = CHECKS["documented_commands"](_ctx(repo, record))
    assert commands.verdict is Verdict.PASS, commands.summary
    assert "2 stopped at a limit of this run" in commands.summary
    accuracy = CHECKS["documented_accuracy"](_ctx(repo, record))
    assert accuracy.verdict is Verdict.NA, accuracy.summary
    assert "did not finish within its time budget" in accuracy.summary
    assert "--docs-step-timeout" in accuracy.summary
    # a command that ended with an error is still a FAIL of both
    record = _record(repo, {"python eval.py": (Status.FAILED, "ValueError: no such file\n")})
    assert CHECKS["documented_commands"](_ctx(repo, record)).verdict is Verdict.FAIL
    assert CHECKS["documented_accuracy"](_ctx(repo, record)).verdict is Verdict.FAIL


def test_a_command_stopped_at_the_disk_limit_ran_until_a_limit_of_this_run(tmp_path: Path) -> None:
    """Step6's documented training (a checkpoint per epoch on the lite data) filled the real-repo tier's
    1 GiB --disk-limit in one review and not in the next: a limit of this run, like its time budget, is
    no failure of the command."""
    repo = _repo(tmp_path)
    disk = Cause("disk-limit", "hit the run's disk limit (1.0 GiB)", "write less, or raise --disk-limit")
    stopped = _record(repo, {"python train.py": (Status.FAILED, "Epoch 40 Acc@1 0.06\n")})
    record = _with_cause(stopped, disk, lambda r: r.status is Status.FAILED, exit_code=-9)
    got = CHECKS["documented_commands"](_ctx(repo, record))
    assert got.verdict is Verdict.PASS, got.summary
    assert "1 stopped at a limit of this run" in got.summary
    assert any("disk limit" in e.text and "--disk-limit" in e.text for e in got.evidence), got.evidence
    # the same command failing on an error of its own, with no limit hit, is a FAIL
    failed = _record(repo, {"python train.py": (Status.FAILED, "ValueError: bad shape\n")})
    assert CHECKS["documented_commands"](_ctx(repo, failed)).verdict is Verdict.FAIL
    # an evaluation of the provided weights stopped there gives no accuracy: N-A, not a FAIL
    evaluation = _record(repo, {"python eval.py": (Status.FAILED, "[Eval] 12/500\n")})
    evaluation = _with_cause(evaluation, disk, lambda r: r.status is Status.FAILED, exit_code=-9)
    accuracy = CHECKS["documented_accuracy"](_ctx(repo, evaluation))
    assert accuracy.verdict is Verdict.NA, accuracy.summary
    assert "this run's limits" in accuracy.summary and "disk limit" in accuracy.summary


def test_weights_made_outside_the_code_blocks_are_not_the_commands_failure(tmp_path: Path) -> None:
    """Paddle-Cutpaste's README trains in inline code (or has models/ downloaded by hand) and exports in a
    code block: the export fails offline on the missing weights, which following the code blocks cannot
    make. After a documented training that ran to its end, the same error is the docs' fault."""
    repo = _repo(tmp_path)
    missing = "ValueError: The ``path`` (models/m.pdparams) to load model not exists.\n"
    (repo / "README.md").write_text("# m\n\nTrain: `python train.py`\n\n```bash\npython export.py\n```\n")
    export = {"python export.py": (Status.FAILED, missing)}
    alone = CHECKS["documented_commands"](_ctx(repo, _record(repo, export)))
    assert alone.verdict is Verdict.NA, alone.summary
    assert "needs the weights models/m.pdparams, which the repo does not ship" in alone.summary
    (repo / "README.md").write_text("# m\n\n```bash\npython train.py --epochs=5\npython export.py\n```\n")
    trained = CHECKS["documented_commands"](_ctx(repo, _record(repo, export)))
    assert trained.verdict is Verdict.FAIL and "python export.py" in trained.summary, trained.summary
    stopped = {**export, "python train.py": (Status.TIMEOUT, "epoch 3\n")}
    budget = CHECKS["documented_commands"](_ctx(repo, _record(repo, stopped)))
    assert budget.verdict is Verdict.PASS, budget.summary
    assert any("stopped at a limit of this run" in e.text for e in budget.evidence if "export" in e.text)
    # the inference after it, failing on the model the export should have made, follows from it
    (repo / "README.md").write_text("# m\n\n```bash\npython export.py\npython infer.py\n```\n")
    chain = _record(repo, {**export, "python infer.py": (Status.FAILED, "Cannot open file m.pdmodel\n")})
    export_id = next(r.step_id for r in chain.results if r.step_id.endswith(":4"))
    lacks = Cause("upstream-failed", "m.pdmodel is what the export should have made", "", upstream=export_id)
    chain = _with_cause(chain, lacks, lambda r: r.step_id.endswith(":5"))
    followed = CHECKS["documented_commands"](_ctx(repo, chain))
    assert followed.verdict is Verdict.NA, followed.summary
    assert any("its input comes from README.md:4, which could not" in e.text for e in followed.evidence)
    # a missing file that is not weights stays the command's failure
    data = {"python export.py": (Status.FAILED, "FileNotFoundError: No such file or directory: 'cfg.yml'\n")}
    (repo / "README.md").write_text("# m\n\n```bash\npython export.py\n```\n")
    assert CHECKS["documented_commands"](_ctx(repo, _record(repo, data))).verdict is Verdict.FAIL


def test_the_documented_accuracy_fails_with_both_numbers(tmp_path: Path) -> None:
    repo = _repo(tmp_path, claim="0.9900")
    record = _record(
        repo, {"python eval.py --pretrained": (Status.PASSED, "loss: 0.16\n[Eval] acc: 0.9600\n")}
    )
    got = CHECKS["documented_accuracy"](_ctx(repo, record))
    assert got.verdict is Verdict.FAIL
    assert "claims top-1 accuracy 0.9900" in got.summary and "gives 0.9600" in got.summary
    assert {n for e in got.evidence for n, _ in e.numbers} >= {"claimed", "measured", "diff"}


def test_an_evaluation_of_weights_this_check_trained_is_not_the_provided_model(tmp_path: Path) -> None:
    """cutpaste_paddle's documented eval reads logs/bottle/final.pdparams, which the lite chain had just
    written in the same sandbox: its AUC is no measure of the weights the README's table is about."""
    import json
    from dataclasses import replace

    from tipc.core.steps import Stage
    from tipc.execute.lineage import dir_for, sanitise

    repo = _repo(tmp_path, claim="0.9900")
    record = _record(repo, {"python eval.py": (Status.PASSED, "[Eval] acc: 0.9600\n")})
    lineage = dir_for(record.plan, repo)
    lineage.mkdir(parents=True)
    read = {"path": str(repo / "w.pdparams"), "mode": "read", "pid": 1, "time": 1.0, "via": "paddle.load"}
    for step in record.plan.steps:
        if step.stage is Stage.EVAL:
            (lineage / f"{sanitise(step.id)}.jsonl").write_text(json.dumps(read) + "\n")
    shipped = CHECKS["documented_accuracy"](_ctx(repo, record))
    assert shipped.verdict is Verdict.FAIL, shipped.summary  # the repo's own w.pdparams: judged
    made = replace(record, sandbox={"changes": [{"path": "w.pdparams", "kind": "created", "size": 1}]})
    got = CHECKS["documented_accuracy"](_ctx(repo, made))
    assert got.verdict is Verdict.NA, got.summary
    assert "read w.pdparams, weights this check's own training wrote" in got.summary


def test_an_evaluation_given_only_in_inline_code_is_not_reproduced_here_not_missing(tmp_path: Path) -> None:
    """Lieberk's Paddle-Cutpaste lists `python eval.py ...` as inline code: tipc, which runs code blocks,
    FAILed it for giving "no evaluation command"."""
    repo = _repo(tmp_path)
    readme = repo / "README.md"
    text = readme.read_text(encoding="utf-8").replace("python eval.py --pretrained=./w.pdparams\n", "")
    text = text.replace("python eval.py --data_dir=/datasets/full --pretrained=./w.pdparams\n", "")
    readme.write_text(text + "\n- evaluate: `python eval.py --pretrained=./w.pdparams`\n", encoding="utf-8")
    got = CHECKS["documented_accuracy"](_ctx(repo, _record(repo, {})))
    assert got.verdict is Verdict.NA, got.summary
    assert "only in inline code (README.md:12: `python eval.py --pretrained=./w.pdparams`)" in got.summary
    readme.write_text(text, encoding="utf-8")  # no evaluation anywhere: the docs lack it
    assert CHECKS["documented_accuracy"](_ctx(repo, _record(repo, {}))).verdict is Verdict.FAIL


def test_the_documented_accuracy_passes_within_tolerance(tmp_path: Path) -> None:
    repo = _repo(tmp_path, claim="96.0")
    record = _record(repo, {"python eval.py --pretrained": (Status.PASSED, "[Eval] acc: 0.9580\n")})
    got = CHECKS["documented_accuracy"](_ctx(repo, record))
    assert got.verdict is Verdict.PASS, got.summary
    assert "0.9580 vs claimed 0.9600" in got.summary


def test_an_evaluation_on_substituted_lite_data_is_a_smoke_run(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "README.md").write_text(
        README.format(claim="0.96").replace("python eval.py --pretrained=./w.pdparams\n", "")
    )
    record = _record(repo, {"python eval.py": (Status.PASSED, "acc: 0.31\n")})
    got = CHECKS["documented_accuracy"](_ctx(repo, record))
    assert got.verdict is Verdict.NA
    assert "smoke run (top1 0.31)" in got.summary
    assert any("/datasets/full is not in the repo" in e.text for e in got.evidence)


def test_no_claim_and_no_record(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "README.md").write_text("```bash\npython eval.py --pretrained=./w.pdparams\n```\n")
    record = _record(repo, {})
    assert CHECKS["documented_accuracy"](_ctx(repo, record)).verdict is Verdict.FAIL
    empty = CheckContext(repo=repo, record=None, records={})
    assert CHECKS["documented_commands"](empty).verdict is Verdict.SKIP
    assert CHECKS["documented_accuracy"](empty).verdict is Verdict.SKIP


def test_served_results_are_compared_per_image() -> None:
    def res(image: str, cls: float, prob: float) -> _Row:
        return {"image": image, "class_id": cls, "prob": prob, "log": "l", "line": 1, "text": image}

    served = [res("../../a/digit_0.png", 0.0, 0.99), res("../../a/digit_1.png", 1.0, 0.5)]
    same = _compare(served, [res("./a/digit_0.png", 0.0, 0.99), res("./a/digit_1.png", 1.0, 0.5)], "x", 1e-5)
    assert same.verdict is Verdict.PASS and same.data["compared"] == 2
    other = _compare(served, [res("./a/digit_1.png", 7.0, 0.5)], "x", 1e-5)
    assert other.verdict is Verdict.FAIL and "digit_1.png: class_id 1 served vs 7 inferred" in other.summary


def test_backbones_table_log_and_chain(tmp_path: Path) -> None:
    repo = tmp_path / "bb"
    config = "test_tipc/configs/MobileNetV3_small_x1_0/train_infer_python.txt"
    (repo / config).parent.mkdir(parents=True)
    shutil.copy(DEMO_CONFIG, repo / config)
    (repo / "README.md").write_text(
        "| 骨干网络 | 模型指标 | 模型训练超参 |\n|:---:|:---:|:---:|\n"
        "| MobileNetV3_small_x1_0 | 0.90 | batchsize=32 |\n"
        "| ShuffleNetV2_x1_0 | `coming soon` | batchsize=32 |\n"
    )
    (repo / "logs").mkdir()
    (repo / "logs/train_MobileNetV3_small_x1_0.log").write_text("[Eval] acc: 0.80\n[Eval] acc: 0.9010\n")
    chain = RunRecord(
        plan=plan_documented(repo, model_name="m").plan,
        results=(StepResult("s", Status.PASSED, started=1.0),),
        started=0.0,
    )
    ctx = CheckContext(repo=repo, record=None, records={f"backbone:{config}": chain})
    got = CHECKS["backbones"](ctx)
    assert got.verdict is Verdict.FAIL
    problems = got.data["backbones"]
    assert problems["MobileNetV3_small_x1_0"]["problems"] == []
    assert "gives no metric" in problems["ShuffleNetV2_x1_0"]["problems"][0]
    assert "1 of 2 backbone(s) not verified: ShuffleNetV2_x1_0" in got.summary
    none = CHECKS["backbones"](CheckContext(repo=tmp_path / "m", record=None))
    assert none.verdict is Verdict.NA
