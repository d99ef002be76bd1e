"""Fuzz results_python.log reading: any line is a status line or None, never an exception."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tipc.core.results import STATUS_FORMATS, parse_results_log, parse_status_line, status_line

TOKENS = [
    "Run successfully",
    "Run failed",
    " with command - ",
    " - ",
    "  ",
    "!",
    " ! ",
    "!  ",
    "\x1b[32m",
    "\x1b[0m",
    "\033[33m",
    "python train.py",
    "log.txt",
    "model",
    "\r",
    "\n",
    "\x00",
    " ",
]
line = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=20).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(line, max_size=8), st.sampled_from([None, *STATUS_FORMATS]))
def test_parse_results_log_never_raises(lines: list[str], fmt: str | None) -> None:
    for parsed in parse_results_log(lines, fmt):
        assert parsed.format in STATUS_FORMATS


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(STATUS_FORMATS)), st.booleans(), st.text(min_size=1, max_size=30))
def test_written_status_lines_read_back(fmt: str, ok: bool, command: str) -> None:
    command = command.replace("\n", " ").replace("\r", " ")
    written = status_line(fmt, ok=ok, command=command, model_name="model", log_path="log.txt")
    parsed = parse_status_line(written, fmt)
    assert parsed is not None and parsed.ok is ok
