"""A missing part of tipc's own installation is not the repo's failure: exit 3 and one line saying what to
install, before anything runs (issue 28). The installation here has every extra, so the missing ones are
simulated at the module lookup (tipc's interpreter) and with an interpreter on PATH that sees no packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.demo import DEMO, copy_demo
from tests.serve.fake_serving import stdlib_python
from tipc.cli import main
from tipc.commands import _extras
from tipc.commands.check import load_rulesets
from tipc.core.errors import MissingExtra
from tipc.core.steps import Mode, Plan, Stage, Step

SERVING_CONFIG = DEMO / "test_tipc" / "configs" / "lenet_digits" / "serving_infer_python.txt"


def _no_serve(name: str) -> bool:
    return name not in _extras.SERVE_MODULES


def _plan(*argvs: tuple[str, ...]) -> Plan:
    steps = tuple(Step(f"s{i}", Stage.SERVE, argv) for i, argv in enumerate(argvs))
    return Plan("serving.txt", ".", Mode.SERVING_INFER, "models_serving", "m", "log", "log/r.log", "x", steps)


def test_the_serve_extra_is_named_with_its_pip_command() -> None:
    with pytest.raises(MissingExtra) as caught:
        _extras.require_serve("tipc serve", found=_no_serve)
    assert caught.value.exit_code == 3
    text = caught.value.render()
    assert "\n" not in text and 'pip install "tipc[serve]"' in text and "uvicorn, starlette" in text
    _extras.require_serve("tipc serve", found=lambda name: True)  # installed: nothing to say


def test_a_check_needs_serve_when_its_serving_chain_or_rules_start_tipc_serve() -> None:
    with_tipc_serve = _plan(("python", "-m", "tipc", "serve", "model", "--port", "1"))
    own_server = _plan(("python", "web_service.py"))
    competition = load_rulesets(["competition"])
    basic = load_rulesets(["tipc-basic"])
    assert _extras.runs_tipc_serve(with_tipc_serve) and not _extras.runs_tipc_serve(own_server)
    assert _extras.uses_check(competition, "serving") and not _extras.uses_check(basic, "serving")
    with pytest.raises(MissingExtra, match="its server is `tipc serve`"):
        _extras.check_serving(with_tipc_serve, basic, found=_no_serve)
    with pytest.raises(MissingExtra, match="the serving rules"):
        _extras.check_serving(own_server, competition, found=_no_serve)
    _extras.check_serving(own_server, basic, found=_no_serve)  # nothing serves through tipc
    _extras.check_serving(None, competition, found=_no_serve)  # no serving chain: serving rules are N-A


def test_paddle_is_asked_for_only_when_no_interpreter_the_chain_could_use_has_it() -> None:
    def which(word: str) -> str | None:
        return {"python": "/usr/bin/python"}.get(word)

    def never(python: str) -> bool:
        raise AssertionError("probed, but the answer was known")

    _extras.require_paddle("/my/python", ["python"], own_has_paddle=lambda: False, has_paddle=never)
    _extras.require_paddle(None, ["python"], own_has_paddle=lambda: True, has_paddle=never)
    _extras.require_paddle(
        None, ["python"], own_has_paddle=lambda: False, which=which, has_paddle=lambda p: True
    )
    with pytest.raises(MissingExtra) as caught:
        _extras.require_paddle(
            None, ["python"], own_has_paddle=lambda: False, which=which, has_paddle=lambda p: False
        )
    text = caught.value.render()
    assert 'pip install "tipc[model,cpu]"' in text and "the config's 'python' (/usr/bin/python)" in text
    assert "--python PATH" in text and "\n" not in text
    with pytest.raises(MissingExtra, match=r"'python3\.7' \(not on this machine\)"):
        _extras.require_paddle(None, ["python3.7"], own_has_paddle=lambda: False, which=lambda w: None)


def test_check_without_the_serve_extra_exits_3_before_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = copy_demo(tmp_path / "lenet_digits")
    monkeypatch.setattr(_extras, "_found", _no_serve)
    assert main(["check", str(repo)]) == 3
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and 'pip install "tipc[serve]"' in lines[0], err
    assert not (repo / "test_tipc" / "output").exists()  # nothing ran
    # the rulesets without serving rules need no server: the check would go on (here: stopped at the next
    # missing part, Paddle, to keep the test cheap)
    monkeypatch.setattr("tipc.commands._target.paddle_findable", lambda: False)
    monkeypatch.setenv("PATH", f"{Path(stdlib_python(tmp_path / 'bin')).parent}:/usr/bin:/bin")
    assert main(["check", str(repo), "--ruleset", "tipc-basic"]) == 3
    err = capsys.readouterr().err
    assert "tipc[serve]" not in err and 'pip install "tipc[model,cpu]"' in err


def test_run_without_paddle_anywhere_exits_3_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A base install (no Paddle for tipc) and a `python` on PATH without Paddle: one line, not nine FAILs."""
    repo = copy_demo(tmp_path / "lenet_digits")
    monkeypatch.setattr("tipc.commands._target.paddle_findable", lambda: False)
    monkeypatch.setenv("PATH", f"{Path(stdlib_python(tmp_path / 'bin')).parent}:/usr/bin:/bin")
    assert main(["run", str(repo)]) == 3
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("tipc:")] == [err.strip()]
    assert "no Paddle to run the chain" in err and 'pip install "tipc[model,cpu]"' in err
    assert not (repo / "test_tipc" / "output").exists()
    # --dry-run runs nothing, so it needs nothing
    assert main(["run", str(repo), "--dry-run"]) == 0


def test_serve_and_a_serving_run_without_the_extra_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = copy_demo(tmp_path / "lenet_digits")
    monkeypatch.setattr(_extras, "_found", _no_serve)
    model = tmp_path / "model"  # the files an exported model has (never loaded: the server does not start)
    model.mkdir()
    (model / "inference.json").write_text("{}")
    (model / "inference.pdiparams").write_bytes(b"")
    assert main(["serve", str(model)]) == 3
    assert "tipc serve needs tipc's serve extra" in capsys.readouterr().err
    config = repo / SERVING_CONFIG.relative_to(DEMO)
    assert main(["run", str(repo), "--config", str(config)]) == 3
    assert 'pip install "tipc[serve]"' in capsys.readouterr().err
