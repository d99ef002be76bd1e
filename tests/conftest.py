"""Shared fixtures: the guards every test runs under, and ONE trained demo for every integration test that
needs a run of examples/lenet_digits.

Guards (tests/helpers/guards.py): HOME is a temp folder for the whole session and the children tests start; a
test that writes under the real $HOME, opens a credential file there or reaches the network (anything but
loopback and this machine's own addresses) fails, saying what it did. `@pytest.mark.real_home("why")` gives a
test the real HOME back.

Training the demo and running its chain is the slowest thing the suite does; each test that needs it used to
do it again. Use these instead:

- `demo_run` (session): a scratch copy of the demo on which `tipc run --mode lite_train_lite_infer` ran once.
  `demo_run.repo` holds the copy, its run record and logs under test_tipc/output. READ-ONLY: a test that
  writes into the repo (a mutation, another run) takes its own copy with `demo_run.copy(tmp_path)`.
- `demo_checked` (session): `tipc check --reuse-run --format json` on a copy of that run, once: `.repo` (the
  checked copy, read-only too), `.code`, `.report` (the tipc.report/1 JSON), `.stderr`, `.verdicts`.
- `copy_demo(dest, keep_output=False)` (tests/helpers/demo.py): a fresh copy of examples/lenet_digits with its
  own serving port.

Under pytest-xdist each worker process has its own session; the run is still made once: the first worker to
need it makes it under a file lock in the run's shared temp folder, the others wait and read it.
"""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import guards
from tests.helpers.children import tipc
from tests.helpers.demo import MODE, DemoCheck, DemoRun, copy_demo
from tests.helpers.once import once, shared_dir
from tests.helpers.trees import tree_hashes


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the children the tests start, however the suite was launched: a background job
    (`bash scripts/test.sh &`, nohup) inherits SIGINT and SIGQUIT ignored, its children too, and every
    interrupt test then waited out its timeout. A handler here is reset to the default at exec."""
    for sig, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGQUIT, signal.SIG_DFL)):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, handler)


@pytest.fixture(scope="session", autouse=True)
def _guarded_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """HOME in a temp folder and the guards on, for the session (session and module fixtures included)."""
    with pytest.MonkeyPatch.context() as patch:
        guards.isolate_home(patch, tmp_path_factory.mktemp("home"))
        # Every model CI verb writes the default history database: the tests' go to a session temp file
        # (children inherit the variable), whatever XDG_DATA_HOME or TIPC_HISTORY the host set.
        patch.setenv("TIPC_HISTORY", str(tmp_path_factory.mktemp("history") / "history.sqlite3"))
        # The matrix's Paddle environments (about 700 MB each): a session folder, removed at its end rather
        # than kept with pytest's last temp folders, whatever TIPC_ENV_CACHE the host set.
        envs = tmp_path_factory.mktemp("envs")
        patch.setenv("TIPC_ENV_CACHE", str(envs))
        with guards.guarding(allowed=[tmp_path_factory.getbasetemp()]):
            yield
        shutil.rmtree(envs, ignore_errors=True)


@pytest.fixture(autouse=True)
def _guarded(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the test if the guards refused anything while it ran, even where its code caught the refusal."""
    mark = len(guards.refusals())
    marker = request.node.get_closest_marker("real_home")
    if marker is None:
        yield
    else:
        reason = marker.args[0] if marker.args else marker.kwargs.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            pytest.fail(
                "@pytest.mark.real_home needs the reason the test must see the real HOME",
                pytrace=False,
            )
        with pytest.MonkeyPatch.context() as patch, guards.paused():
            patch.setenv("HOME", str(guards.REAL_HOME))
            yield
    refused = guards.refused_since(mark)
    if refused:
        pytest.fail("the test touched what tests must not:\n  " + "\n  ".join(refused), pytrace=False)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    shared = shared_dir(tmp_path_factory) / "shared-demo"
    repo = shared / "lenet_digits"

    def make() -> dict[str, Any]:
        if repo.exists():
            shutil.rmtree(repo)
        copy_demo(repo)
        before = tree_hashes(repo, pycache=False)
        done = tipc("run", str(repo), "--mode", MODE, "--no-color")
        return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "before": before}

    made = once(shared, "run", make)
    return DemoRun(repo, made["code"], made["stdout"], made["stderr"], made["before"])


@pytest.fixture(scope="session")
def demo_checked(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> DemoCheck:
    # On its own copy of the run: the check writes reports and a serving run, and demo_run.repo must stay
    # unchanged while other workers copy it.
    shared = demo_run.repo.parent / "checked"
    repo = shared / "lenet_digits"

    def make() -> dict[str, Any]:
        if repo.exists():
            shutil.rmtree(repo)
        demo_run.copy(repo)
        before = tree_hashes(repo, pycache=False)
        done = tipc("check", str(repo), "--reuse-run", "--no-color", "--format", "json")
        assert done.stdout.strip(), done.stderr[-3000:]
        report = json.loads(done.stdout)
        return {"code": done.returncode, "report": report, "stderr": done.stderr, "before": before}

    made = once(shared, "check", make)
    return DemoCheck(repo, made["code"], made["report"], made["stderr"], made["before"])
