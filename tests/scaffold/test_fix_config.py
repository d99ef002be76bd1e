"""Mechanical config clean-up: every fix keeps the slot positions bash reads, or repairs a plain typo."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tipc.scaffold.fix_config import fix_text, guess_dialect

OCR_LIKE = (
    "===========================train_params===========================\n"
    "model_name:m\n"
    "python:python3.7\n"
    + "\n".join(f"k{i}:v{i}" for i in range(4, 23))
    + "\n===========================eval_params=========================== \n"
    "eval:null\n"
)


def test_clean_text_is_left_alone() -> None:
    clean = "=====train_params=====\nmodel_name:m\npython:python\n"
    report = fix_text(clean, "template")
    assert report.text == clean and report.fixes == []


def test_header_trailing_space_and_missing_newline() -> None:
    report = fix_text(OCR_LIKE.rstrip("\n"), "template")
    assert "eval_params=========================== \n" not in report.text
    assert report.text.endswith("eval:null\n")
    assert [f.split(":")[0] for f in report.fixes] == ["line 23", "line 24"]  # sorted by line


def test_blank_lines_are_dropped_so_slots_stay_where_bash_reads_them() -> None:
    text = "=====train_params=====\nmodel_name:m\n\npython:python\n"
    report = fix_text(text, "template")
    assert report.text.splitlines() == ["=====train_params=====", "model_name:m", "python:python"]
    assert any("line 3: removed a blank line" in f for f in report.fixes)


def test_lower_case_booleans_change_only_in_slots_compared_with_the_words() -> None:
    lines = ["x:y"] * 51
    lines[0] = "=====train_params====="
    lines[12] = "Train.loader.shuffle:false"  # a YAML override value: must stay lower case
    lines[40] = "--use_gpu:true|false"  # line 41, inference use_gpu: compared with True/False
    lines[38] = "infer_quant:Ture"
    report = fix_text("\n".join(lines) + "\n", "template")
    out = report.text.splitlines()
    assert out[12] == "Train.loader.shuffle:false"
    assert out[40] == "--use_gpu:True|False"
    assert out[38] == "infer_quant:True"


def test_blank_stage_script_becomes_null_but_key_only_slots_stay_empty() -> None:
    lines = ["x:y"] * 51
    lines[31] = "fpgm_export: "  # line 32, a stage script
    lines[46] = "--model_dir:"  # line 47, a key-only slot
    out = fix_text("\n".join(lines) + "\n", "template").text.splitlines()
    assert out[31] == "fpgm_export:null" and out[46] == "--model_dir:"


def test_bom_and_lone_cr_are_removed() -> None:
    report = fix_text("\ufeffa:b\rc:d\r\n", "template")
    assert report.text == "a:b\nc:d\n"


def test_dialect_guess() -> None:
    compact = ["==h==", "model_name:m"] + ["k:v"] * 30
    template = ["==h==", "pact_train:null"] + ["k:v"] * 49
    assert guess_dialect(compact) == "compact"
    assert guess_dialect(template) == "template"


line_text = st.text(alphabet="ab:| =\t-TrueFals", max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.one_of(line_text, st.just(""), st.just("##"), st.just("fpgm_export: ")), max_size=60),
    crlf=st.booleans(),
    dialect=st.sampled_from(["template", "compact"]),
)
def test_fixes_keep_every_slot_and_are_idempotent(lines: list[str], crlf: bool, dialect: str) -> None:
    raw = ("\r\n" if crlf else "\n").join(lines) + ("\r\n" if crlf else "\n")
    report = fix_text(raw, dialect)
    out = report.text.split("\n")[:-1]
    assert "\r" not in report.text and (report.text.endswith("\n") or report.text == "")
    assert all(line.strip() for line in out)
    kept = [ln for ln in lines if ln.strip()]
    assert len(out) == len(kept)  # one output line per line bash reads: no slot moves
    for before, after in zip(kept, out, strict=True):
        assert after.partition(":")[0] == before.partition(":")[0].strip() or ":" not in before
    again = fix_text(report.text, dialect)
    assert again.text == report.text and again.fixes == []
