"""Issue 24 item 8: one `--python` for a whole review batch (an interpreter with the repos' older packages,
without tipc's serving packages): the demo still passes its serving and agreement rules, because tipc's own
parts run where they can (the repo's interpreter with tipc's packages appended last), and the report says
where they ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.demo import copy_demo
from tests.real_repos.conftest import DOCS_BOUND, REPOS_PYTHON

pytestmark = [pytest.mark.integration, pytest.mark.real_repos]


def test_the_demo_checked_under_the_repos_interpreter_passes_its_serving_and_engine_rules(
    tmp_path: Path,
) -> None:
    if not REPOS_PYTHON.is_file():
        pytest.skip(f"no interpreter for the real repos at {REPOS_PYTHON}")
    missing = subprocess.run(
        [str(REPOS_PYTHON), "-c", "import uvicorn, starlette"], capture_output=True, check=False
    ).returncode
    if missing == 0:
        pytest.skip(f"{REPOS_PYTHON} has tipc's serving packages: nothing to place elsewhere")
    repo = copy_demo(tmp_path / "lenet_digits")
    env = {k: v for k, v in os.environ.items() if k != "FLAGS_enable_pir_api"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tipc",
            "check",
            str(repo),
            "--python",
            str(REPOS_PYTHON),
            "--format",
            "json",
            *DOCS_BOUND,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
    )
    report = json.loads(done.stdout)
    verdicts = {r["id"]: r["verdict"] for r in report["rules"]}
    serving = {k: v for k, v in verdicts.items() if ".serving." in k}
    assert serving and all(v in ("PASS", "SKIP", "N-A") for v in serving.values()), serving
    assert verdicts["basic.infer.engines_agree"] == "PASS"
    assert done.returncode == 0, done.stderr[-3000:]
    assert any("tipc's own packages appended last" in n for n in report["notes"]), report["notes"]
