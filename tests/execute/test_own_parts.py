"""Where tipc's own parts run (tipc.execute.own_parts): the repo's interpreter as it is, that interpreter with
tipc's packages appended last, tipc's own interpreter, or exit 3 naming what to install where."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tipc.core.errors import EXIT_INTERNAL
from tipc.execute import own_parts, proc


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter of tipc's Python version with no packages at all (no numpy, no paddle, no tipc)."""
    folder = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return str(folder / "bin" / "python")


def test_missing_modules_are_asked_of_the_interpreter(bare: str) -> None:
    assert own_parts.missing(sys.executable, ("json", "numpy", "tipc_no_such_module")) == (
        "tipc_no_such_module",
    )
    assert own_parts.missing(bare, ("json", "numpy")) == ("numpy",)
    assert own_parts.missing("/nonexistent/python", ("json",)) == ("json",)  # does not run: nothing there


def test_an_interpreter_with_every_module_is_used_as_it_is() -> None:
    placed = own_parts.place("the worker", sys.executable, ("json", "numpy"))
    assert (placed.python, placed.prefix, placed.note) == (sys.executable, ("-m",), "")


def test_tipcs_packages_are_appended_last_to_an_interpreter_of_the_same_version(
    bare: str, tmp_path: Path
) -> None:
    placed = own_parts.place("the worker", bare, ("numpy",))
    assert placed.python == bare and placed.prefix[0].endswith("tailpath.py")
    assert "appended last" in placed.note and "lacks numpy" in placed.note
    # the part really runs there and finds numpy from tipc's packages
    env = proc.build_env(None, own_parts.with_tipc(placed.env))
    code, out = proc.capture(
        placed.argv("tipc.execute.probes.findmodules", "numpy", "json"), cwd=tmp_path, env=env
    )
    assert code == 0, out


def test_without_paddle_the_part_moves_to_tipcs_interpreter(bare: str) -> None:
    placed = own_parts.place("the worker", bare, ("numpy", "paddle"))
    assert placed.python == sys.executable and "ran under tipc's interpreter" in placed.note
    assert own_parts.tell(placed) is placed
    assert placed.note in own_parts.drain_notes() and own_parts.drain_notes() == []


def test_nowhere_to_run_is_exit_3_naming_what_to_install_where(bare: str) -> None:
    with pytest.raises(own_parts.PartsMissing) as info:
        own_parts.place("the reference server", bare, ("numpy", "tipc_no_such_module"))
    message = str(info.value)
    assert info.value.exit_code == EXIT_INTERNAL
    assert f"{bare} lacks numpy, tipc_no_such_module" in message
    assert f"{bare} -m pip install numpy tipc_no_such_module" in message
    assert "tipc's own interpreter" in message and "lacks tipc_no_such_module" in message


def test_a_pir_model_needs_paddle_3_under_tipcs_interpreter(
    bare: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "inference.json").write_text("{}")
    (model / "inference.pdiparams").write_bytes(b"")
    monkeypatch.setattr(own_parts, "_own_paddle_major", lambda: 2)
    with pytest.raises(own_parts.PartsMissing, match="cannot load this PIR model"):
        own_parts.place("the worker", bare, ("numpy", "paddle"), model_dir=model)


def test_a_step_running_tipc_itself_is_placed_like_tipcs_parts(bare: str) -> None:
    assert own_parts.for_command(["python", "train.py"]) is None
    assert own_parts.for_command([bare, "-m", "paddle.distributed.launch", "train.py"]) is None
    here = own_parts.for_command([sys.executable, "-m", "tipc", "serve", "model"])
    assert here is not None and here.python == sys.executable and here.prefix == ("-m",)
    moved = own_parts.for_command([bare, "-m", "tipc", "serve", "model"])
    assert moved is not None and moved.python == sys.executable  # no paddle there: tipc's interpreter
    env = own_parts.step_env({"PYTHONPATH": "/inject:/shim"}, moved)
    assert env["PYTHONPATH"].split(":") == ["/inject", "/shim", own_parts.tipc_root()]
