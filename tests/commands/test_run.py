"""`tipc run` argument handling, with the planner replaced at its seam (`tipc.planning.planner.plan`).

The seam lives in this process, so these runs are in place (`--no-sandbox`): a sandboxed run re-runs tipc as a
child, where the fake planner does not exist. tests/sandbox and the integration tests cover the sandbox.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tipc.cli import main
from tipc.commands._target import resolve_target
from tipc.config.discover import find_repo_root
from tipc.core.errors import UserError
from tipc.core.steps import Mode, Overrides, Plan, Stage, Step
from tipc.planning.planner import default_mode, isolate, select_stages

OUT = "test_tipc/output/m/lite_train_lite_infer"


def make_repo(root: Path, configs: list[str]) -> Path:
    for rel in configs:
        path = root / "test_tipc" / "configs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("model_name:m\n")
    return root


class FakePlanner:
    def __init__(self, steps: tuple[Step, ...]) -> None:
        self.steps = steps
        self.calls: list[dict[str, Any]] = []

    def plan(self, config: Path, mode: Mode, **kw: Any) -> Plan:
        self.calls.append({"config": config, "mode": mode, **kw})
        return Plan(
            config_path=str(config),
            repo=str(kw["repo"]),
            mode=mode,
            dialect="template",
            model_name="m",
            output_dir=OUT,
            results_log=f"{OUT}/results_python.log",
            status_format="template",
            steps=self.steps,
        )

    @staticmethod
    def format_plan(plan: Plan) -> str:
        return "PLAN " + " ".join(s.id for s in plan.steps)


@pytest.fixture
def planner(monkeypatch: pytest.MonkeyPatch) -> FakePlanner:
    fake = FakePlanner((Step("train", Stage.TRAIN, (sys.executable, "-c", "print('hi')")),))
    plan_mod = types.ModuleType("tipc.planning.planner")
    plan_mod.plan = fake.plan  # type: ignore[attr-defined]
    plan_mod.format_plan = fake.format_plan  # type: ignore[attr-defined]
    plan_mod.isolate = isolate  # type: ignore[attr-defined]  # the real transform: pure, works on any Plan
    plan_mod.select_stages = select_stages  # type: ignore[attr-defined]  # pure too
    plan_mod.default_mode = default_mode  # type: ignore[attr-defined]  # reads the config's first line
    disc = types.ModuleType("tipc.config.discover")
    disc.find_configs = lambda repo: sorted(Path(repo).glob("test_tipc/configs/**/*.txt"))  # type: ignore[attr-defined]
    disc.find_repo_root = find_repo_root  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tipc.planning.planner", plan_mod)
    monkeypatch.setitem(sys.modules, "tipc.config.discover", disc)
    monkeypatch.setenv("CI", "true")
    return fake


def test_config_path_as_repo_finds_the_repo_root(tmp_path: Path, planner: FakePlanner) -> None:
    repo = make_repo(tmp_path, ["m/train_infer_python.txt"])
    cfg = repo / "test_tipc/configs/m/train_infer_python.txt"
    assert resolve_target(str(cfg), None) == (repo.resolve(), cfg)


def test_single_config_is_picked(tmp_path: Path, planner: FakePlanner) -> None:
    repo = make_repo(tmp_path, ["m/train_infer_python.txt", "m/model_linux_gpu_normal_normal_serving.txt"])
    assert resolve_target(str(repo), None)[1].name == "train_infer_python.txt"


def test_several_configs_prefer_the_canonical_name(tmp_path: Path, planner: FakePlanner) -> None:
    repo = make_repo(tmp_path, ["a/train_infer_python.txt", "a/b_train_infer_python_amp.txt"])
    assert resolve_target(str(repo), None)[1] == repo / "test_tipc/configs/a/train_infer_python.txt"


def test_ambiguous_configs_are_a_usage_error_listing_them(tmp_path: Path, planner: FakePlanner) -> None:
    repo = make_repo(tmp_path, ["a/x_train_infer_python.txt", "b/y_train_infer_python.txt"])
    with pytest.raises(UserError, match="several") as err:
        resolve_target(str(repo), None)
    assert "x_train_infer_python.txt" in str(err.value) and "y_train_infer_python.txt" in str(err.value)
    assert resolve_target(str(repo), "test_tipc/configs/b/y_train_infer_python.txt")[1].name.startswith("y_")


def test_no_config_is_a_usage_error(tmp_path: Path, planner: FakePlanner) -> None:
    with pytest.raises(UserError, match="no train_infer_python config"):
        resolve_target(str(tmp_path), None)


def test_dry_run_prints_the_plan_and_runs_nothing(
    tmp_path: Path, planner: FakePlanner, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, ["m/train_infer_python.txt"])
    args = ["run", "--no-sandbox", str(repo), "--dry-run", "--device", "cpu"]
    args += ["--set", "epoch=1", "--python", "py"]
    assert main(args) == 0
    assert capsys.readouterr().out.strip() == "PLAN train"
    assert not (repo / OUT).exists()
    call = planner.calls[0]
    assert call["mode"] == "lite_train_lite_infer"
    assert call["overrides"] == Overrides(device="cpu", sets=(("epoch", "1"),), python="py")


def test_run_passes_and_writes_record(
    tmp_path: Path, planner: FakePlanner, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, ["m/train_infer_python.txt"])
    assert main(["run", "--no-sandbox", str(repo)]) == 0
    captured = capsys.readouterr()
    assert not captured.out  # the run's progress and its summary are on stderr
    assert "[1/1] train: PASSED" in captured.err and "tipc_run.json" in captured.err
    assert json.loads((repo / OUT / "tipc_run.json").read_text())["results"][0]["status"] == "passed"


def test_failing_step_exits_1(
    tmp_path: Path, planner: FakePlanner, capsys: pytest.CaptureFixture[str]
) -> None:
    planner.steps = (Step("train", Stage.TRAIN, (sys.executable, "-c", "raise SystemExit(9)")),)
    repo = make_repo(tmp_path, ["m/train_infer_python.txt"])
    assert main(["run", "--no-sandbox", str(repo), "--no-color"]) == 1
    assert "exit code 9" in capsys.readouterr().err
    assert "\x1b" not in (repo / OUT / "results_python.log").read_text()


def test_empty_plan_is_not_a_pass(
    tmp_path: Path, planner: FakePlanner, capsys: pytest.CaptureFixture[str]
) -> None:
    planner.steps = ()
    repo = make_repo(tmp_path, ["m/train_infer_python.txt"])
    assert main(["run", "--no-sandbox", str(repo), "--mode", "whole_infer"]) == 1
    assert "no steps" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["--mode", "fast"],
        ["--only", "training"],
        ["--set", "novalue"],
        ["--resume", "--rerun-failed"],
        ["--step-timeout", "0"],
        ["--config", "missing.txt"],
    ],
)
def test_bad_arguments_exit_2(
    tmp_path: Path, planner: FakePlanner, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    repo = make_repo(tmp_path, ["m/train_infer_python.txt"])
    assert main(["run", "--no-sandbox", str(repo), *args]) == 2
    # one `tipc: ` line says what is wrong (after the usage, for what argparse itself checks: --mode)
    assert any(line.startswith("tipc: ") for line in capsys.readouterr().err.splitlines())


def test_missing_repo_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--no-sandbox", str(tmp_path / "nope")]) == 2


def test_config_warnings_are_shown_before_running(
    tmp_path: Path, planner: FakePlanner, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tipc.core.findings import Finding, Level

    original = planner.plan
    warning = Finding("cfg.txt", 14, 0, Level.WARNING, "TIPC201", "blank line shifts every later slot")
    info = Finding("cfg.txt", 0, 0, Level.INFO, "TIPC000", "dialect template")

    def with_findings(config: Path, mode: Mode, **kw: Any) -> Plan:
        p = original(config, mode, **kw)
        return Plan(**{**p.__dict__, "findings": (warning, info)})

    monkeypatch.setattr(sys.modules["tipc.planning.planner"], "plan", with_findings)
    repo = make_repo(tmp_path, ["m/train_infer_python.txt"])
    assert main(["run", "--no-sandbox", str(repo)]) == 0
    err = capsys.readouterr().err
    assert "cfg.txt:14:0: WARNING TIPC201 blank line shifts every later slot" in err
    assert "TIPC000" not in err
