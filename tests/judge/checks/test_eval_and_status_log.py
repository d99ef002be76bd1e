"""The eval step evaluated something (its own log), and the repo ships no status log of an earlier run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.judge.checks.checks_fixtures import ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckContext, Verdict
from tipc.judge.checks.status_log import shipped_status_logs

LOG = "test_tipc/output/demo/lite_train_lite_infer/eval.log"

# What real eval steps print (the demo, the official tutorial, cutpaste_paddle, DnCNN), and the demo's eval
# when its data loader yields nothing (the silent-failure benchmark's plant).
CLEAN = {
    "demo": "evaluated ./output/latest.pdparams on 120 test images, loss: 0.3112\n[Eval] acc: 0.9250\n",
    "tutorial": "Test:  [0/1]  eta: 0:00:01  loss: 60.0000 (60.0000)  acc1: 0.0625 (0.0625)  acc5: 0.3125 "
    "(0.3125)  time: 1.6805  data: 0.7616\nTest: Total time: 0:00:01\n * Acc@1 0.062 Acc@5 0.312\n",
    "cutpaste": "loading images\nloaded 8 images\nbottle AUC: 0.75\naverage auroc:0.7500\n",
    "dncnn": "PSNR on test data 33.798509\n\n10 times test on test data, Averate PSNR: 33.80383329460084, "
    "Variance: 0.000777060001279338\n",
}
EMPTY = "evaluated ./output/latest.pdparams on 0 test images, loss: 0.0000\n[Eval] acc: 0.0000\n"


def _run(tmp_path: Path, text: str, status: Status = Status.PASSED) -> tuple[Verdict, str]:
    write_tree(tmp_path, {LOG: text})
    record = make_record(tmp_path, [("eval/1", Stage.EVAL, ["python", "eval.py"], LOG, status)])
    out = CHECKS["eval_output"](ctx_for(tmp_path, record))
    return out.verdict, out.summary


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_real_evals_evaluated_something(name: str, tmp_path: Path) -> None:
    verdict, summary = _run(tmp_path, CLEAN[name])
    assert verdict is Verdict.PASS, summary


def test_an_eval_over_no_sample_fails(tmp_path: Path) -> None:
    verdict, summary = _run(tmp_path, EMPTY)
    assert verdict is Verdict.FAIL and "evaluated nothing" in summary and "on 0 test images" in summary
    verdict, summary = _run(tmp_path, "[Eval] loss: 0.0000 acc: 0.0000\n")
    assert verdict is Verdict.FAIL and "a loss of exactly 0 and every metric 0" in summary
    verdict, summary = _run(tmp_path, "mIoU: nan  acc: 0.5\n")
    assert verdict is Verdict.FAIL and "mIoU nan" in summary


def test_an_eval_that_prints_no_field_or_did_not_pass_is_not_applicable(tmp_path: Path) -> None:
    assert _run(tmp_path, "done\n")[0] is Verdict.NA
    assert _run(tmp_path, EMPTY, Status.FAILED)[0] is Verdict.NA  # the step rules judge a failed step
    record = make_record(tmp_path, [("train/1", Stage.TRAIN, ["python", "t.py"], LOG, Status.PASSED)])
    assert CHECKS["eval_output"](ctx_for(tmp_path, record)).verdict is Verdict.NA


CAN_LOG = (
    "can - python tools/train.py --config config_for_tipc.yaml Run successfully with command - "
    "norm_train_gpus_0.log!\n"
)


def test_a_shipped_status_log_fails_naming_it(tmp_path: Path) -> None:
    # Lllllolita/CAN_Paddle commits test_tipc/output/results_python.log with 10 "Run successfully" lines
    write_tree(tmp_path, {"test_tipc/output/results_python.log": CAN_LOG * 10, "test_tipc/output/x.log": "x"})
    out = CHECKS["shipped_status_log"](CheckContext(repo=tmp_path))
    assert out.verdict is Verdict.FAIL
    assert out.summary.startswith("the repo ships test_tipc/output/results_python.log, a chain status log")
    assert out.data["status_logs"] == [
        {"path": "test_tipc/output/results_python.log", "lines": 10, "successes": 10, "failures": 0}
    ]


def test_what_the_repo_held_before_the_run_decides_not_the_runs_own_log(tmp_path: Path) -> None:
    # in the sandbox the run's fresh results log covers the shipped one: the check reads what tipc gathered
    write_tree(tmp_path, {"test_tipc/output/results_python.log": CAN_LOG})
    shipped = shipped_status_logs(tmp_path)
    (tmp_path / "test_tipc/output/results_python.log").unlink()
    out = CHECKS["shipped_status_log"](CheckContext(repo=tmp_path, before_run={"status_logs": shipped}))
    assert out.verdict is Verdict.FAIL
    clean = CHECKS["shipped_status_log"](CheckContext(repo=tmp_path, before_run={"status_logs": []}))
    assert clean.verdict is Verdict.PASS
    # tipc's own run folder is never the author's
    write_tree(tmp_path, {"test_tipc/output/tipc/m/c/lite/logs/results_python.log": CAN_LOG})
    assert shipped_status_logs(tmp_path) == []


# The silent-failure benchmark's plant on DnCNN: paddle.save refuses to write, the excepthook prints the
# traceback and the process exits 0 (the repo's script calls it success; export then loads other weights).
CRASHED = """\
[epoch 1][2/2] loss: 0.031 PSNR_train: 17.2
Traceback (most recent call last):
  File "/repo/train.py", line 196, in <module>
    main()
  File "/repo/train.py", line 180, in main
    paddle.save(model.state_dict(), os.path.join(opt.log_dir, 'net.pdparams'))
  File "<string>", line 11, in save
OSError: [Errno 28] No space left on device: './test_tipc/output/DnCNN/norm_train_gpus_0/net.pdparams'
I1127 00:41:02.301 12345 dynamic_loader.cc:123] shutting down
"""
SHUTDOWN = """\
[Train] done; latest weights: ./output/latest.pdparams
Exception ignored in: <function _DataLoaderIterMultiProcess.__del__ at 0x7f>
Traceback (most recent call last):
  File "/venv/paddle/io/dataloader/dataloader_iter.py", line 562, in __del__
AttributeError: 'NoneType' object has no attribute 'shutdown'
"""
HANDLED = (
    'Traceback (most recent call last):\n  File "t.py", line 1\nImportError: no visualdl\nepoch 1 loss 0.3\n'
)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        (CRASHED, Verdict.FAIL),
        (SHUTDOWN, Verdict.PASS),
        (HANDLED, Verdict.PASS),
        (CLEAN["demo"], Verdict.PASS),
    ],
)
def test_a_step_that_exits_0_after_an_uncaught_exception(tmp_path: Path, text: str, verdict: Verdict) -> None:
    write_tree(tmp_path, {LOG: text})
    record = make_record(tmp_path, [("train/1", Stage.TRAIN, ["python", "train.py"], LOG, Status.PASSED)])
    out = CHECKS["exit_after_crash"](ctx_for(tmp_path, record))
    assert out.verdict is verdict, out.summary
    if verdict is Verdict.FAIL:
        assert (
            "train/1 exited 0, but its log ends in an uncaught exception: OSError: [Errno 28]" in out.summary
        )
        assert out.evidence[0].line == 8
    failed = make_record(tmp_path, [("train/1", Stage.TRAIN, ["python", "train.py"], LOG, Status.FAILED)])
    assert CHECKS["exit_after_crash"](ctx_for(tmp_path, failed)).verdict is Verdict.NA  # the step rules' case
