"""A chance-level eval is named beside an agreement PASS (a note: the verdict stays the agreement's)."""

from pathlib import Path

from tests.judge.checks.checks_fixtures import OUTPUT_DIR, ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.judge.checks.agreement import with_eval_level
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict
from tipc.judge.checks.degenerate import chance_level_eval

EVAL_LOG = f"{OUTPUT_DIR}/tipc_logs/eval.log"
# The official tutorial's lite eval (PaddlePaddle/models tutorials/mobilenetv3_prod/Step6, --test-only).
STEP6_EVAL = """\
Test:  [0/1]  eta: 0:00:02  loss: 64.0000 (64.0000)  acc1: 0.0000 (0.0000)  acc5: 0.0000 (0.0000)  time: 2.1
Test: Total time: 0:00:02
 * Acc@1 0.000 Acc@5 0.000
"""


def ctx(tmp_path: Path, text: str) -> CheckContext:
    write_tree(tmp_path, {EVAL_LOG: text})
    rec = make_record(
        tmp_path, [("eval", Stage.EVAL, ["python", "train.py", "--test-only"], EVAL_LOG, Status.PASSED)]
    )
    return ctx_for(tmp_path, rec)


def test_accuracy_zero_is_named_beside_a_pass(tmp_path: Path) -> None:
    c = ctx(tmp_path, STEP6_EVAL)
    ev = chance_level_eval(c)
    assert ev is not None and (ev.path, ev.line) == (EVAL_LOG, 3)
    out = with_eval_level(c, CheckOutcome(Verdict.PASS, "2 engines agree on every output"))
    # the tutorial's lite eval reads 0 in one run and 0.062 in the next: a verdict on it would flip
    assert out.verdict is Verdict.PASS and "; note: " in out.summary and "eval accuracy is 0" in out.summary
    assert out.data["eval_level"] == ev.text


def test_a_learning_model_is_left_alone(tmp_path: Path) -> None:
    c = ctx(tmp_path, STEP6_EVAL.replace("Acc@1 0.000", "Acc@1 41.250"))
    assert chance_level_eval(c) is None
    passed = CheckOutcome(Verdict.PASS, "ok")
    assert with_eval_level(c, passed) is passed
