from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.convergence.seed_data import seed_config_text
from tipc.convergence.config import load, load_text, select
from tipc.core.errors import ConfigError


def test_seed_demo_config_loads_unchanged(seed_config: Path) -> None:
    tests = load(seed_config)
    demo = tests["demo"]
    assert demo.log_output == "stderr"
    assert demo.parsers["loss"].labels == ("MLM", "NSP")
    assert demo.metrics["loss"].comparison == "<=" and demo.metrics["loss"].margin == 0.2
    assert demo.steps_to_record == 3
    assert demo.gather_argv("/s/ckpts") == [
        "python3",
        "fake_bert.py",
        "--checkpoint-dir",
        "/s/ckpts",
        "--epochs-per-save",
        "5",
        "--epochs",
        "10",
        "--steps-per-log",
        "1",
        "--config",
        "configs/demo.json",
    ]
    assert demo.run_argv("/s/ckpts/m.onnx", 4, 7) == [
        "python3",
        "fake_bert.py",
        "--onnx-checkpoint",
        "/s/ckpts/m.onnx",
        "--continue-training-from-epoch",
        "4",
        "--epochs",
        "7",
        "--engine-cache",
        "__demo_runtest_engine_cache",
        "--steps-per-log",
        "1",
        "--config",
        "configs/demo.json",
    ]


def test_labels_fall_back_to_indices_when_groups_differ() -> None:
    demo = load_text(seed_config_text(), "c.yml")["demo"]
    line = "Iteration: 5 Loss (MLM NSP): 1.5 0.25"
    assert demo.parsers["loss"].parse(line) == {"MLM": "1.5", "NSP": "0.25"}
    text = seed_config_text(**{"                - NSP\n        accuracy": "        accuracy"})
    one_label = load_text(text, "c.yml")["demo"]
    assert one_label.parsers["loss"].parse(line) == {"0": "1.5", "1": "0.25"}


def test_key_only_flag_passes_no_value() -> None:
    text = seed_config_text(**{'value: "__demo_runtest_engine_cache"': "value: null"})
    demo = load_text(text, "c.yml")["demo"]
    argv = demo.run_argv("c", 0, 3)
    i = argv.index("--engine-cache")
    assert argv[i + 1] == "--steps-per-log"


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if needle in line)


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        ('comparison: "<="', 'comparison: "~="', 'comparison: "~="', "expected one of ==, !=, <=, <, >=, >"),
        ("        step_num:\n", "        step_nr:\n", "log_parsing:", "missing required key 'step_num'"),
        (
            'margin: 0.2\n            comparison: "<="',
            'margin: -1\n            comparison: "<="',
            "margin: -1",
            "expected a number >= 0",
        ),
        (
            "            start_step:\n",
            "            start_stp:\n",
            "start_stp:",
            "unknown key 'start_stp'; did you mean 'start_step'?",
        ),
        ("    log_output:", "    log_outptu:", "log_outptu", "unknown key 'log_outptu'"),
        (
            "steps_to_record_after_save: 3",
            "steps_to_record_after_save: 0",
            "steps_to_record_after_save",
            "integer >= 1",
        ),
        (
            'regex: "Iteration:',
            'regex: "(Iteration:',
            'regex: "(Iteration:',
            "not a valid regular expression",
        ),
    ],
)
def test_schema_errors_are_located(old: str, new: str, needle: str, message: str) -> None:
    text = seed_config_text(**{old: new})
    assert text != seed_config_text()
    with pytest.raises(ConfigError) as info:
        load_text(text, "conv.yml")
    assert info.value.path == "conv.yml"
    assert message in info.value.message
    assert info.value.line == _line_of(text, needle)


def test_metric_without_parser_is_an_error() -> None:
    text = seed_config_text(**{"        accuracy:\n            margin": "        acc:\n            margin"})
    with pytest.raises(ConfigError) as info:
        load_text(text, "c.yml")
    assert "no log_parsing.acc regex" in info.value.message
    assert info.value.line == _line_of(text, "        acc:")


def test_missing_mandatory_run_flag() -> None:
    text = seed_config_text(
        **{'            run_for:\n                key: "--epochs"\n                set_in_script: true\n': ""}
    )
    with pytest.raises(ConfigError, match="missing required key 'run_for'"):
        load_text(text, "c.yml")


def test_bad_yaml_is_located() -> None:
    with pytest.raises(ConfigError) as info:
        load_text("demo:\n  directory: [unclosed\n", "c.yml")
    assert info.value.line is not None


def test_select_unknown_test(seed_config: Path) -> None:
    with pytest.raises(ConfigError, match="no test named 'bert'"):
        select(load(seed_config), ["bert"], str(seed_config))


def test_special_files_are_refused_before_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="FIFO"):
        load(fifo)  # never blocks
    with pytest.raises(ConfigError, match="character device"):
        load("/dev/zero")
    with pytest.raises(ConfigError, match="is a directory"):
        load(tmp_path)
