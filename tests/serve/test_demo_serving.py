"""The demo's serving chain, planned from its config and run for real on a copy of the demo repo.

Needs the demo (examples/lenet_digits, written on another branch); skipped with a reason when it is absent.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.ports import use_free_port
from tests.serve.conftest import REPO_ROOT, child_env
from tipc.core.steps import Overrides
from tipc.execute import proc
from tipc.execute.serving.client import wait_ready
from tipc.execute.serving.requirements import unmet_requirement
from tipc.planning.serving import plan_serving

pytestmark = pytest.mark.integration

DEMO = REPO_ROOT / "examples" / "lenet_digits"


def image_lines(text: str) -> list[str]:
    """`image_name: <path>, ...` lines keyed by file name (the client runs from deploy/serving_python)."""
    lines = [ln for ln in text.splitlines() if ln.startswith("image_name: ")]
    return sorted(f"{Path(ln.split(',')[0][12:]).name},{ln.split(',', 1)[1]}" for ln in lines)


@pytest.mark.skipif(not (DEMO / "infer.py").is_file(), reason="the lenet_digits demo is not in this tree")
def test_demo_serving_chain_matches_paddle_inference(tmp_path: Path) -> None:
    repo = tmp_path / "lenet_digits"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("output", "inference", "log", "__pycache__"))
    use_free_port(repo)
    plan = plan_serving(
        repo / "test_tipc/configs/lenet_digits/serving_infer_python.txt",
        overrides=Overrides(python=sys.executable),
    )
    assert [s.stage.value for s in plan.steps] == ["export", "serve", "client"]
    assert all(unmet_requirement(s, repo) is None for s in plan.steps)
    env = child_env()
    convert, server_step, client_step = plan.steps
    assert (
        proc.run(convert.argv, cwd=repo, env=env, log_path=repo / str(convert.log), timeout_s=300).exit_code
        == 0
    )
    assert server_step.ready_url is not None
    server = proc.Background(
        server_step.argv, cwd=repo / server_step.cwd, env=env, log_path=repo / str(server_step.log)
    )
    try:
        ready, why = wait_ready(server_step.ready_url, deadline_s=120, alive=lambda: server.poll() is None)
        assert ready, why
        client_log = repo / str(client_step.log)
        result = proc.run(
            client_step.argv, cwd=repo / client_step.cwd, env=env, log_path=client_log, timeout_s=120
        )
        assert result.exit_code == 0, client_log.read_text()
    finally:
        server.stop()
    infer_lines: list[str] = []
    infer_argv = [sys.executable, "infer.py", "--model_dir=./inference/lenet_digits_infer"]
    infer_argv += ["--img_path=./lite_data/infer/", "--enable_mkldnn=False"]
    infer = proc.run(infer_argv, cwd=repo, env=env, timeout_s=300, on_line=infer_lines.append)
    assert infer.exit_code == 0
    served = image_lines(client_log.read_text())
    assert served and served == image_lines("\n".join(infer_lines))


@pytest.mark.skipif(not (DEMO / "infer.py").is_file(), reason="the lenet_digits demo is not in this tree")
def test_demo_serving_script_runs_the_chain(tmp_path: Path) -> None:
    repo = tmp_path / "lenet_digits"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("output", "inference", "log", "__pycache__"))
    use_free_port(repo)
    env = child_env()
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # the config's `python`
    lines: list[str] = []
    config = "test_tipc/configs/lenet_digits/serving_infer_python.txt"
    result = proc.run(
        ["bash", "test_tipc/test_serving_infer_python.sh", config, "serving_infer"],
        cwd=repo,
        env=env,
        timeout_s=300,
        on_line=lines.append,
    )
    assert result.exit_code == 0, "\n".join(lines)
    status = (repo / "log/lenet_digits/serving_infer/results_serving.log").read_text()
    assert status.count("Run successfully") == 3 and "Run failed" not in status
    assert len(image_lines("\n".join(lines))) == len(list((repo / "lite_data/infer").glob("*.png")))
