"""Fuzz the serving-config reader: any serving_infer_python.txt gives a Plan or a located ConfigError."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st

from tipc.core.errors import ConfigError, UserError
from tipc.core.steps import Plan
from tipc.planning.serving import isolate_serving, plan_serving

DEMO = Path(__file__).resolve().parents[2] / "examples/lenet_digits/test_tipc/configs/lenet_digits"
GOOD_LINES = (DEMO / "serving_infer_python.txt").read_text(encoding="utf-8").splitlines()
PIECES = [
    "null",
    ":",
    "|",
    "--port",
    "det_dirname",
    "serving_infer_python_params",
    "-m",
    "'",
    '"',
    " ",
    "",
    "===serving===",
    "python",
    "\r",
    "web_service:",
    "pipline:",
    "op:",
    "--op",
    "cpp_client",
]
line = st.one_of(
    st.sampled_from(GOOD_LINES),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=5)), max_size=6).map("".join),
)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_serving_configs_plan_or_fail_located(data: st.DataObject) -> None:
    lines = list(GOOD_LINES)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        i = data.draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "delete" and lines:
            del lines[i]
        elif op == "insert":
            lines.insert(i, data.draw(line))
        elif lines:
            lines[i] = data.draw(line)
    text = "\n".join(lines) + data.draw(st.sampled_from(["", "\n", "\r\n"]))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_tipc/configs/m").mkdir(parents=True)
        config = root / "test_tipc/configs/m/serving_infer_python.txt"
        config.write_text(text, encoding="utf-8")
        try:
            plan = plan_serving(config, repo=root)
        except ConfigError as exc:
            event("located error")
            assert exc.path == str(config) and exc.message
            assert exc.line is not None and 1 <= exc.line <= text.count("\n") + 1, exc.render()
        except UserError as exc:  # an unplannable command (e.g. unbalanced quotes) names the config too
            assert str(config) in str(exc)
        else:
            event("planned")
            assert isinstance(plan, Plan)
            isolate_serving(plan)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_fail_located_or_plan(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "serving_infer_python.txt"
        config.write_bytes(data)
        try:
            plan_serving(config, repo=Path(tmp))
        except UserError as exc:
            assert str(config) in str(exc)
