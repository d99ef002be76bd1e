from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tipc.config import dialects
from tipc.config.parse import array_lines, parse_file, parse_text
from tipc.config.reader import build
from tipc.core.errors import ConfigError
from tipc.core.steps import Mode


def test_blank_lines_vanish_from_the_array_and_keep_their_physical_numbers() -> None:
    parsed = parse_text("a:1\n\nb:2\nc:3\n")
    array = parsed.array(None)
    assert [(x.index, x.number, x.text) for x in array] == [(0, 1, "a:1"), (1, 3, "b:2"), (2, 4, "c:3")]


def test_read_limit_counts_physical_lines() -> None:
    assert [x.text for x in array_lines(("a", "", "b", "c"), 3)] == ["a", "b"]


def test_crlf_keeps_carriage_returns() -> None:
    parsed = parse_text("x:True\r\ny:2\r\n")
    assert parsed.crlf
    assert parsed.array(None)[0].text == "x:True\r"


def test_blank_line_shifts_slots(tmp_path: Path) -> None:
    from tests.config.fixtures import OCR_DET

    text = OCR_DET.replace("Global.auto_cast:null\n", "Global.auto_cast:null\n\n", 1)
    cfg = build(parse_text(text), dialects.get("ocr"))
    # The epoch slot (idx 6) now reads line 8: save_model_dir moved up one slot.
    assert cfg.epoch.key == "Global.epoch_num" and cfg.epoch.line == 8
    assert cfg.infer_param1.line == 0 or cfg.infer_param1.line == 52


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"\x00\x01binary", "binary"), (b"model_name:\xff\xfe\n", "not UTF-8")],
)
def test_unreadable_files_raise_located_config_errors(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        parse_file(path)
    assert message in info.value.message and info.value.line == 1


def test_missing_file_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        parse_file(tmp_path / "nope.txt")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:|=\n\r #-*?null01 ")), max_size=400))
def test_parser_and_planner_never_crash(text: str) -> None:
    from tipc.config.lint import _slot_checks, _structure_checks
    from tipc.planning.chain import build as build_chain

    parsed = parse_text(text, "fuzz.txt")
    for name in ("ocr", "clas", "det", "seg", "compact", "template"):
        profile = dialects.get(name)
        cfg = build(parsed, profile)
        _slot_checks(cfg, profile.splitter)
        _structure_checks(cfg)
        for mode in (Mode.LITE_TRAIN_LITE_INFER, Mode.WHOLE_INFER):
            steps, findings, _ = build_chain(cfg, profile, mode, "/repo")
            assert all(f.line >= 0 for f in findings)
            assert len({s.id for s in steps}) == len(steps)


def test_entries_classify_every_line() -> None:
    parsed = parse_text("====train_params====\nmodel_name:x\n##\n\nrunner.model_save_path\nurl:https://a\n")
    kinds = [(e.line, e.kind, e.key, e.value) for e in parsed.entries()]
    assert kinds == [
        (1, "header", "train_params", ""),
        (2, "kv", "model_name", "x"),
        (3, "separator", "##", ""),
        (4, "blank", "", ""),
        (5, "bare", "runner.model_save_path", ""),
        (6, "kv", "url", "https"),
    ]
    assert parsed.entries("first_colon")[5].value == "https://a"
