"""Fuzz the training-log readers: any text a training script can print is read without an exception.

Logs are evidence, not input to validate: a line that parses to nothing is fine, a crash is not. The checks
built on them (convergence, log_fields) must answer with a verdict for any log, including progress bars
rewritten with \\r, numbers too large for a float, NaN/inf spelled every way, and binary garbage.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.judge.checks.checks_fixtures import ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckOutcome
from tipc.judge.checks.logparse import parse_fields, parse_line, step_index

LOG = "test_tipc/output/demo/lite_train_lite_infer/norm_train_gpus_-1_autocast_null/train.log"

TOKENS = [
    "[Epoch 1/5]",
    "[Iter 10/40]",
    "Epoch: [0]",
    "[ 0/10]",
    "global_step: ",
    "step: ",
    "epoch: [1/500], ",
    "loss: ",
    "loss:",
    "acc: ",
    "lr: ",
    "avg_reader_cost: ",
    "avg_batch_cost: ",
    "avg_samples: ",
    "avg_ips: ",
    "ips: ",
    " images/sec",
    " sec",
    " s",
    ", ",
    " ",
    "[Eval] ",
    "eval ",
    "Tensor(shape=[1], dtype=float32, place=Place(cpu), stop_gradient=True,\n       [",
    "])",
    "2.1034",
    "0",
    "-1",
    "1e999",
    "-1e999",
    "9" * 400,
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-Infinity",
    "1e-400",
    "0x1F",
    "1,000.5",
    "\r",
    "\n",
    "\r\n",
    "\x1b[32m",
    "\x1b[0m",
    "\x00",
    "\ufffd",
    "/",
    ":",
    "=",
    "%",
    "|#####     | 50%",
]
log_text = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=6)), max_size=60).map("".join)


@settings(max_examples=200, deadline=None)
@given(log_text)
def test_parse_line_and_fields_never_raise(text: str) -> None:
    parsed = [parse_line(seg, n) for n, line in enumerate(text.split("\n"), 1) for seg in line.split("\r")]
    for p in parsed:
        for field in p.fields:
            assert isinstance(field.value, float)
    assert len(step_index(parsed)) <= len(parsed)
    parse_fields(text)


def _run_check(name: str, log: bytes) -> CheckOutcome:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        write_tree(repo, {LOG: log})
        rec = make_record(
            repo, [("train/norm_train", Stage.TRAIN, ["python", "train.py"], LOG, Status.PASSED)]
        )
        out = CHECKS[name](ctx_for(repo, rec))
        assert isinstance(out, CheckOutcome)
        return out


@settings(max_examples=120, deadline=None)
@given(st.one_of(log_text.map(lambda s: s.encode("utf-8", "surrogatepass")), st.binary(max_size=300)))
def test_convergence_and_log_fields_answer_any_log(log: bytes) -> None:
    for name in ("convergence", "log_fields"):
        out = _run_check(name, log)
        assert out.summary


def test_huge_and_nan_losses_get_a_verdict() -> None:
    lines = [
        f"[Epoch 1/1][Iter {i}/100] loss: {v}, avg_ips: 1e999 images/sec"
        for i, v in enumerate(["nan", "1e999", "-inf", "9" * 400] * 25, 1)
    ]
    for name in ("convergence", "log_fields"):
        out = _run_check(name, "\r".join(lines).encode())
        assert out.summary
