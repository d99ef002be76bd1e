"""Fuzz the ground-truth result readers (test_tipc/results/python_*.txt and inference output lines)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tipc.judge.checks.ground_truth import compare_results, load_gt, parse_result

TOKENS = [
    "image.png",
    "\t",
    " ",
    "class_ids: ",
    "[",
    "]",
    "{",
    "}",
    '"a": ',
    ", ",
    "0.5",
    "1e999",
    "nan",
    "-",
    "7",
    "scores: (0.1, 0.2)",
    "\n",
    "\r",
    "\x00",
    "true",
    "null",
    ":",
    ";",
]
text = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=40).map("".join)


@settings(max_examples=200, deadline=None)
@given(text, text)
def test_parse_and_compare_never_raise(a: str, b: str) -> None:
    gt, pred = parse_result(a), parse_result(b)
    assert isinstance(gt, dict | list) and isinstance(pred, dict | list)
    ok, why, worst = compare_results(gt, pred, 1e-3, 1e-3)
    assert ok or why
    assert ok is False or not math.isnan(worst)


@settings(max_examples=100, deadline=None)
@given(st.one_of(text.map(lambda s: s.encode("utf-8", "surrogatepass")), st.binary(max_size=200)))
def test_load_gt_never_raises_and_locates_problems(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "python_infer_cpu_fp32.txt"
        path.write_bytes(data)
        results, problems = load_gt(path)
    n_lines = data.count(b"\n") + 1
    for _result, line in results.values():
        assert 1 <= line <= n_lines
    for problem in problems:
        assert 1 <= int(problem.split(":")[0]) <= n_lines
