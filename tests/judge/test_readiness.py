"""The readiness report before the chain runs (tipc.judge.readiness): modules the interpreter lacks, the
repo's own packages missing from it, Paddle APIs the interpreter's Paddle lacks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tipc.core.steps import Mode, Plan, Stage, Step
from tipc.judge import readiness


def _plan(repo: Path, *argvs: tuple[str, ...]) -> Plan:
    steps = tuple(Step(f"s{i}", Stage.TRAIN, argv) for i, argv in enumerate(argvs))
    return Plan(
        "c.txt", str(repo), Mode.LITE_TRAIN_LITE_INFER, "template", "m", "out", "out/r.log", "template", steps
    )


def test_the_report_lists_every_missing_module_with_one_pip_line(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import json\nimport cv2\nimport tipc_absent_mod\nimport auto_log\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .models import net\n")
    (tmp_path / "eval.py").write_text("import pkg\n")
    plan = _plan(tmp_path, ("python", "train.py"), ("python", "eval.py"))
    found = readiness.check(plan, sys.executable, tmp_path)
    assert found.entries == ("train.py", "eval.py")
    missing = {m for m, _, _ in found.missing}
    assert (
        "tipc_absent_mod" in missing and "json" not in missing and "auto_log" not in missing
    )  # tipc gives it
    lines = found.lines()
    assert any("tipc_absent_mod (train.py:3)" in line for line in lines)
    pip = next(line for line in lines if "-m pip install" in line)
    assert "tipc_absent_mod" in pip and ("opencv-python" in pip) == ("cv2" in missing)
    assert any("`pkg.models`" in line and "not in it" in line for line in lines)


def test_an_interpreter_with_everything_says_so(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import json\nimport numpy\n")
    found = readiness.check(_plan(tmp_path, ("python", "train.py")), sys.executable, tmp_path)
    assert found.ready and "can import every module train.py import" in found.lines()[0]


def test_nothing_of_the_repo_is_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "paddle.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (tmp_path / "train.py").write_text("import evil\nimport paddle\nx = paddle.nn.Linear\n")
    readiness.check(_plan(tmp_path, ("python", "train.py")), sys.executable, tmp_path)
    assert not marker.exists()


def test_removed_paddle_apis_name_the_version_to_use(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import paddle\nimport paddle.fluid as fluid\nx = paddle.nn.Linear\n")
    monkeypatch.setattr(
        readiness, "paddle_apis", lambda python, names, timeout_s: ("3.3.1", ["paddle.fluid"], "")
    )
    found = readiness.check(_plan(tmp_path, ("python", "train.py")), sys.executable, tmp_path)
    [problem] = found.api_problems
    assert problem.api == "paddle.fluid" and str(problem.use) == "train.py:2"
    assert "removed in Paddle 2.6" in problem.advice and "paddlepaddle==2.5.2" in problem.advice


@pytest.mark.integration
def test_the_paddle_api_probe_asks_the_interpreters_paddle(tmp_path: Path) -> None:
    pytest.importorskip("paddle")
    version, missing, error = readiness.paddle_apis(
        sys.executable, ["paddle.nn.Linear", "paddle.fluid", "paddle.optimizer.RMSprop"]
    )
    assert version and not error
    assert set(missing) == {"paddle.fluid", "paddle.optimizer.RMSprop"}


def test_the_data_tables_load() -> None:
    assert readiness.pip_names()["PIL"] == "Pillow"
    assert any(r.api == "paddle.fluid" for r in readiness.removed_apis())
