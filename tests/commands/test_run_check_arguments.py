"""Arguments `tipc run` and `tipc check` refuse with exit 2 before anything runs (issue 15), and the one
plan both verbs execute (`_sandboxed.plan_to_run`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from tests.config.fixtures import COMPACT, make_repo
from tipc.cli import main
from tipc.commands import _sandboxed
from tipc.core.steps import Overrides
from tipc.execute.sandbox import SandboxOptions

CONFIG = "test_tipc/configs/mnv3/train_infer_python.txt"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo",
        {CONFIG: COMPACT, "test_tipc/prepare.sh": "echo preparing\n", "train.py": "print('trained')\n"},
    )


@pytest.mark.parametrize("verb", ["run", "check"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "NaN"])
def test_a_step_timeout_that_is_no_positive_finite_number_is_a_usage_error(
    verb: str, value: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([verb, str(repo), f"--step-timeout={value}", "--no-sandbox"]) == 2
    assert "--step-timeout must be a positive number of seconds" in capsys.readouterr().err
    assert not (repo / "test_tipc" / "output").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "-5"])
def test_a_run_timeout_or_stage_timeout_that_is_no_positive_number_is_a_usage_error(
    value: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(repo), f"--timeout={value}", "--no-sandbox"]) == 2
    assert main(["run", str(repo), "--stage-timeout", f"train={value}", "--no-sandbox"]) == 2
    err = capsys.readouterr().err
    assert "--timeout must be a positive number" in err and "--stage-timeout" in err


@pytest.mark.parametrize("report_dir", ["/proc/x", "/proc/x/y", "/proc/self/x"])
def test_an_unwritable_report_dir_is_refused_before_anything_runs(
    report_dir: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The default sandbox too: the folder is probed before the chain (or the sandbox) starts.
    assert main(["check", str(repo), "--report-dir", report_dir]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tipc: /proc/") and err.rstrip().endswith("(--report-dir)"), err
    assert "running" not in err and not (repo / "test_tipc" / "output").exists()


def _args(**more: object) -> _sandboxed.ChainOptions:
    """What `tipc run` / `tipc check` build from their arguments (tipc.commands._sandboxed.chain_options)."""
    values: dict[str, object] = {"mode": "lite_train_lite_infer", "stage_args": []}
    values.update(more)
    return _sandboxed.chain_options(argparse.Namespace(**values))


def test_one_plan_for_both_verbs_prepare_first_then_the_stage_args_and_limits(repo: Path) -> None:
    from tipc.execute.observation import plan_for_run

    args = _args(stage_args=["prepare=--offline", "train=--epochs 1"])
    plan, notes = _sandboxed.plan_to_run(
        plan_for_run,
        args,
        repo,
        repo / CONFIG,
        Overrides(),
        SandboxOptions(backend="none"),
        {"train": 7.0, "prepare": 3.0},
    )
    prepare, train = plan.steps[0], plan.steps[1]
    assert prepare.stage.value == "prepare" and prepare.argv[-1] == "--offline"  # --args reach prepare.sh
    assert train.stage.value == "train" and train.argv[-2:] == ("--epochs", "1")
    assert (prepare.timeout_s, train.timeout_s) == (3.0, 7.0)
    assert notes == []
    # --no-prepare: the planner's steps only
    plain, _ = _sandboxed.plan_to_run(
        plan_for_run, _args(no_prepare=True), repo, repo / CONFIG, Overrides(), SandboxOptions(), {}
    )
    assert plain.steps[0].stage.value == "train"


def test_run_shows_the_same_plan(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(repo), "--dry-run", "--format", "json", "--args", "prepare=--offline"]
    assert main([*argv, "--stage-timeout", "train=7"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert steps[0]["stage"] == "prepare" and steps[0]["argv"][-1] == "--offline"
    assert next(s for s in steps if s["stage"] == "train")["timeout_s"] == 7.0


def test_chain_options_are_one_typed_value_with_defaults() -> None:
    words = argparse.Namespace(
        mode="whole_infer",
        pass_env=["WANDB_*"],
        stage_timeout=["train=5"],
        baseline="",
        no_seed=True,
        own_process=True,
        invocation=["check", "."],
    )
    opts = _sandboxed.chain_options(words)
    assert opts == _sandboxed.ChainOptions(
        mode="whole_infer",
        pass_env=("WANDB_*",),
        stage_timeout=("train=5",),
        model_ci=True,
        no_seed=True,
        own_process=True,
        invocation=("check", "."),
    )
    unseeded = _sandboxed.seed_env(_sandboxed.ChainOptions())
    assert _sandboxed.seed_env(opts) == unseeded  # --no-seed beats the baseline's default seed
    assert _sandboxed.seed_env(dataclasses.replace(opts, no_seed=False)) != unseeded
    assert _sandboxed.stage_timeouts(opts) == {"train": 5.0}
    assert _sandboxed.sandbox_options(opts).own_process
    assert _sandboxed.sandbox_options(opts, in_place=True).backend == "none"
    with pytest.raises(AttributeError):
        opts.mode = "x"  # type: ignore[misc]  # frozen
