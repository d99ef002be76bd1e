from pathlib import Path
from typing import get_args

import pytest

from tipc.core.results import (
    STATUS_FORMATS,
    StatusFormatName,
    append_status_line,
    echo_e,
    parse_results_log,
    parse_status_line,
    status_line,
)

ESC = "\x1b"
CMD = "python3.7 tools/train.py -c a.yml -o Global.epoch_num=1"
LOG = "./test_tipc/output/m/lite_train_lite_infer/norm_train_gpus_0_autocast_null.log"

# The success lines of notes tipc-format.md §6.9, written out byte by byte.
EXPECTED_OK = {
    "template": f"{ESC}[33m Run successfully with command - {CMD}!  {ESC}[0m",
    "compact": f"{ESC}[33m Run successfully with command - m - {CMD}!  {ESC}[0m",
    "ocr": f"{ESC}[33m Run successfully with command - m - {CMD} - {LOG} {ESC}[0m",
    "seg_det": f"{ESC}[33m Run successfully with command - m - {CMD} - {LOG}  {ESC}[0m",
    "clas": f"{ESC}[33m Run successfully with command - m - {CMD} - {LOG} ! {ESC}[0m",
    "rec": f"{ESC}[33m Run successfully with command - m - {CMD} - {LOG}!  {ESC}[0m",
}


def test_every_format_is_covered() -> None:
    assert set(EXPECTED_OK) == set(STATUS_FORMATS) == set(get_args(StatusFormatName))


@pytest.mark.parametrize("fmt", sorted(EXPECTED_OK))
def test_success_line_bytes(fmt: str) -> None:
    assert status_line(fmt, ok=True, command=CMD, model_name="m", log_path=LOG) == EXPECTED_OK[fmt]


@pytest.mark.parametrize("fmt", sorted(EXPECTED_OK))
def test_failure_line_differs_only_in_verdict(fmt: str) -> None:
    line = status_line(fmt, ok=False, command=CMD, model_name="m", log_path=LOG)
    assert line == EXPECTED_OK[fmt].replace("Run successfully", "Run failed")


@pytest.mark.parametrize("fmt", sorted(EXPECTED_OK))
def test_no_color_drops_only_the_escape_codes(fmt: str) -> None:
    line = status_line(fmt, ok=True, command=CMD, model_name="m", log_path=LOG, color=False)
    assert line == EXPECTED_OK[fmt].removeprefix(f"{ESC}[33m").removesuffix(f"{ESC}[0m")


def test_missing_fields_keep_their_separators() -> None:
    assert (
        status_line("ocr", ok=True, command="c")
        == f"{ESC}[33m Run successfully with command -  - c -  {ESC}[0m"
    )


def test_real_fastflow_line_is_reproduced() -> None:
    # lelexx/fastflow_paddle results_python.log (notes §6.9, `cat -A` view)
    cmd = (
        "python3 deploy/infer.py --use_gpu=False "
        "--save_inference_dir=./test_tipc/output/fastflow/lite_train_lite_infer/norm_train_gpus_0 "
        "--batch_size=1   "
        "--benchmark=False --image_path=images/bottle_good.png > "
        "./test_tipc/output/fastflow/lite_train_lite_infer/python_infer_cpu_batchsize_1.log 2>&1 "
    )
    expected = f"^[[33m Run successfully with command - {cmd}!  ^[[0m"
    assert status_line("template", ok=True, command=cmd).replace(ESC, "^[") == expected


def test_echo_e_interprets_backslashes_like_bash() -> None:
    assert echo_e(r"a\tb\nc\\d") == "a\tb\nc\\d"
    assert echo_e(r"\x41\0101\e[0m") == "AA\x1b[0m"
    assert echo_e(r"keep \q and \x") == r"keep \q and \x"
    assert echo_e(r"stop\cnever") == "stop"
    assert echo_e("trailing\\") == "trailing\\"
    line = status_line("template", ok=True, command=r"python -c 'print(1)' --sep=\t", color=False)
    assert "--sep=\t!" in line


@pytest.mark.parametrize("fmt", sorted(EXPECTED_OK))
@pytest.mark.parametrize("ok", [True, False])
def test_parse_round_trip(fmt: str, ok: bool) -> None:
    cmd = "python a.py - b - c"  # a command holding the separator itself
    line = status_line(fmt, ok=ok, command=cmd, model_name="m", log_path=LOG)
    for given in (fmt, None):
        parsed = parse_status_line(line, given)
        assert parsed is not None
        assert parsed.ok is ok
        # Guessing cannot tell template/compact/rec apart when the command itself holds " - ".
        if given is not None or fmt in ("ocr", "seg_det", "clas"):
            assert parsed.format == fmt
            assert parsed.command == cmd
            assert parsed.model_name == ("m" if STATUS_FORMATS[fmt].has_model else None)
            assert parsed.log_path == (LOG if STATUS_FORMATS[fmt].has_log else None)


def test_parse_ignores_other_lines_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results_python.log"
    append_status_line(path, status_line("clas", ok=True, command="a", model_name="m", log_path="l1"))
    with path.open("a") as fh:
        fh.write("some echoed log text\n")
    append_status_line(path, status_line("clas", ok=False, command="b", model_name="m", log_path="l2"))
    parsed = parse_results_log(path.read_text().splitlines())
    assert [(p.ok, p.command, p.log_path) for p in parsed] == [(True, "a", "l1"), (False, "b", "l2")]
    assert parse_status_line("nothing here") is None


def test_unknown_format_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown status format"):
        status_line("nope", ok=True, command="c")
