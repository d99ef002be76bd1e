"""Shared fixtures: a tiny exported Paddle model (built in a child process) and a running `tipc serve`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from tests.helpers.processes import our_children
from tipc.execute import proc

REPO_ROOT = Path(__file__).resolve().parents[2]

_BUILD = """
import sys
import paddle

class Tiny(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = paddle.nn.Conv2D(1, 4, 3)
        self.fc = paddle.nn.Linear(4 * 6 * 6, 10)

    def forward(self, x):
        y = paddle.nn.functional.relu(self.conv(x))
        return paddle.nn.functional.softmax(self.fc(paddle.flatten(y, 1)))

paddle.seed(0)
net = Tiny()
net.eval()
spec = [paddle.static.InputSpec([None, 1, 8, 8], "float32", name="x")]
paddle.jit.save(net, sys.argv[1] + "/inference", input_spec=spec)
"""


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def build_model(folder: Path, *, pir: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    env = child_env()
    env["FLAGS_enable_pir_api"] = "1" if pir else "0"
    script = folder.parent / f"build_{folder.name}.py"  # dy2static reads the source, so not `python -c`
    script.write_text(_BUILD, encoding="utf-8")
    result = proc.run(
        [sys.executable, str(script), str(folder)],
        cwd=folder,
        env=env,
        timeout_s=300,
        log_path=folder.parent / f"build_{folder.name}.log",
    )
    assert result.exit_code == 0, (folder.parent / f"build_{folder.name}.log").read_text()
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model(tmp_path_factory.mktemp("model") / "tiny_infer")


@dataclass
class RunningServer:
    url: str
    name: str
    background: proc.Background
    log: Path


def start_server(model_dir: Path, log: Path, *extra: str, name: str = "tiny") -> RunningServer:
    from tipc.execute.serving.launcher import launch

    launched = launch(model_dir, log=log, name=name, extra=extra, env=child_env(), deadline_s=120)
    if not launched.ready or launched.url is None:
        launched.background.stop()
        pytest.fail(f"server not ready: {launched.problem}\n{log.read_text()}")
    return RunningServer(launched.url, name, launched.background, log)


@pytest.fixture(scope="module")
def server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(
        tiny_model,
        tmp_path_factory.mktemp("server") / "server.log",
        "--workers",
        "2",
        "--max-body-bytes",
        "200000",
    )
    try:
        yield running
    finally:
        running.background.stop()


@pytest.fixture(autouse=True, scope="module")
def _no_orphans() -> Iterator[None]:
    """After every test module: no child process of ours is left running (servers, workers)."""
    yield
    leftovers = our_children()
    _, alive = psutil.wait_procs(leftovers, timeout=5)
    assert not alive, f"orphan processes: {[(p.pid, p.cmdline()) for p in alive]}"
