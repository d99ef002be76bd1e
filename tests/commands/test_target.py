"""tipc.commands._target: which interpreter runs the chain (tipc's own, with paddle, over a bare `python`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tipc.commands._target import PythonChoice, choose_python, config_pythons, paddle_findable

OWN = "/venv/bin/python"


def pick(
    given: str | None, written: list[str], *, has_paddle: bool = True, on_path: str | None = "/usr/bin/python"
) -> PythonChoice:
    return choose_python(
        given, written, own=OWN, own_has_paddle=lambda: has_paddle, which=lambda word: on_path
    )


def test_given_python_wins() -> None:
    choice = pick("/opt/py/bin/python", ["python"])
    assert choice.python == "/opt/py/bin/python" and "--python" in choice.why


def test_bare_python_becomes_tipcs_own_interpreter_when_it_has_paddle() -> None:
    choice = pick(None, ["python"])
    assert choice.python == OWN
    assert "/usr/bin/python" in choice.why and "in place of the config's 'python'" in choice.why


def test_versioned_bare_word_counts_as_bare() -> None:
    assert pick(None, ["python3.7"]).python == OWN


def test_path_interpreter_in_config_is_kept() -> None:
    choice = pick(None, ["/opt/conda/bin/python"])
    assert choice.python is None and "/opt/conda/bin/python" in choice.why


def test_own_interpreter_without_paddle_keeps_the_configs() -> None:
    choice = pick(None, ["python"], has_paddle=False)
    assert choice.python is None and "has no paddle" in choice.why


def test_python_on_path_already_tipcs_own_needs_no_substitution() -> None:
    choice = pick(None, ["python"], on_path=OWN)
    assert choice.python is None and OWN in choice.why


def test_config_pythons_reads_each_python_line_once(tmp_path: Path) -> None:
    cfg = tmp_path / "train_infer_python.txt"
    cfg.write_text(
        "===train_params===\nmodel_name:m\npython:python3.7\ngpu_list:0\n"
        "===serving===\npython:python3.7|python\npython:null\n",
        encoding="utf-8",
    )
    assert config_pythons(cfg) == ["python3.7"]
    assert config_pythons(tmp_path / "missing.txt") == []


def test_paddle_findable_locates_without_importing() -> None:
    import importlib.util

    if "paddle" in sys.modules:
        pytest.skip("paddle was imported by an earlier test in this process")
    assert paddle_findable() == (importlib.util.find_spec("paddle") is not None)
    assert "paddle" not in sys.modules  # the CLI stays light: located, never imported
