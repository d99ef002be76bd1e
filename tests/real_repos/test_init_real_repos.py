"""Issue 16 on the published repos: `tipc init` on each repo with its test_tipc/ removed, then `tipc run` of
the generated chain with only tipc's own switches, reaches the stages the repo's own test_tipc/ reaches
(shared/real-repos/README.md): no hand edit, no `null=null` token, the TODO list short and located."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.real_repos.conftest import Outcome

pytestmark = [pytest.mark.integration, pytest.mark.real_repos]

Run = Callable[..., Outcome]
SWITCHES = ("--device", "cpu", "--paddle-compat", "export")
STAGES = ("train", "eval", "export", "infer")


def _init(repo: Path) -> subprocess.CompletedProcess[str]:
    shutil.rmtree(repo / "test_tipc")
    done = subprocess.run(
        [sys.executable, "-m", "tipc", "init", str(repo), "--model", "m"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _planned(repo: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "tipc", "run", str(repo), "--dry-run", "--format", "json", "--no-sandbox"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [" ".join(step["argv"]) for step in json.loads(done.stdout)["steps"]]


def _stages(out: Outcome) -> dict[str, str]:
    """Status of the first step of each stage of the run."""
    found: dict[str, str] = {}
    for step_id, status in out.statuses().items():
        stage = step_id.split("/", 1)[0]
        found.setdefault(stage, status)
    return {stage: found.get(stage, "absent") for stage in STAGES}


@pytest.mark.parametrize(
    "name",
    ["PaddlePaddle__models__Step6", "liuxtakeoff__cutpaste_paddle"],
)
def test_scaffold_of_a_repo_whose_own_chain_runs_reaches_every_stage(
    name: str, unpack: Callable[[str], Path], tipc: Run
) -> None:
    repo = unpack(name)
    done = _init(repo)
    todos = [line for line in done.stderr.splitlines() if line.strip().startswith("TODO")]
    # Only whole_infer's pretrained weights (and the serving export of them) may be left to fill.
    assert all("infer_model" in t or "serving" in t for t in todos), todos
    out = tipc("run", repo, *SWITCHES)
    assert _stages(out) == dict.fromkeys(STAGES, "passed"), out.stderr[-4000:]


@pytest.mark.parametrize(
    "name",
    [
        "PaddlePaddle__models__Step6",
        "liuxtakeoff__cutpaste_paddle",
        "sldyns__DnCNN_paddle",
        "Lieberk__Paddle-Cutpaste",
        "Lllllolita__CAN_Paddle",
    ],
)
def test_every_scaffold_plans_only_tokens_a_script_accepts(name: str, unpack: Callable[[str], Path]) -> None:
    repo = unpack(name)
    _init(repo)
    commands = _planned(repo)
    assert commands
    assert not any("null=null" in c or "=null " in c + " " for c in commands), commands
    readme = (repo / "test_tipc" / "README.md").read_text()
    assert "## How the config was filled" in readme
