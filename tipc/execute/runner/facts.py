"""Facts about a run that its steps do not need: paddle's version as the run's interpreter sees it, the
repo's commit, the host, gathered in a thread beside the first step (`_Facts`); and the earlier run record
of the same config and mode (`record_path`, `find_record`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from tipc.core.errors import ConfigError
from tipc.core.steps import Plan
from tipc.execute import proc
from tipc.execute.monitor import host_info
from tipc.execute.own_parts import paddle_version_on_path as _paddle_version_on_path
from tipc.execute.record import load_record, record_location

# Standalone scripts run under the step's / run's interpreter (any Python 3.7+; see tipc/execute/probes/).
_PROBES = Path(__file__).resolve().parents[1] / "probes"


_FIND_MODULES = _PROBES / "findmodules.py"  # prints the modules it cannot find, exits 1 if any


_PADDLE_VERSION = _PROBES / "paddleversion.py"  # metadata first, importing paddle only without it


# Distribution names as installed folders spell them (`<name>-<version>.dist-info`), GPU build first.
def _is_this_python(python: str) -> bool:
    """Whether `python` is the interpreter running tipc, started the same way (so it sees the same path)."""
    flags = sys.flags
    if not sys.executable or flags.isolated or flags.no_site or flags.ignore_environment:
        return False
    found = shutil.which(python) or python
    # abspath, not realpath: a venv's python is a link to the base one, but sees other packages
    return os.path.abspath(found) == os.path.abspath(sys.executable)


def paddle_version(
    python: str, cwd: Path, on_start: Callable[[int], None] | None = None, *, answered: str | None = None
) -> str | None:
    """Paddle's version as the run's interpreter sees it (paddle is never imported here).

    For tipc's own interpreter the installed folders on its path say it; otherwise, or when they do not,
    `answered` (what the environment probe found by the same lookup, in the same interpreter and folder),
    else that interpreter is asked in a subprocess.
    """
    if _is_this_python(python):
        version = _paddle_version_on_path(sys.path, cwd)
        if version is not None:
            return version
    if answered is not None:
        out = answered
    else:
        code, out = proc.capture([python, str(_PADDLE_VERSION)], cwd=cwd, timeout_s=180, on_start=on_start)
        if code != 0:
            return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    if lines and re.match(r"^\d+\.\d+", lines[-1]):
        return lines[-1]
    return None


def _same_search_path(env: Mapping[str, str] | None) -> bool:
    """Whether a child given `env` finds modules where one given none (proc.base_env) does: then the
    environment probe's paddle lookup is the version probe's."""
    if env is None:
        return True
    base = proc.base_env()
    names = {k for k in (*env, *base) if k.startswith("PYTHON")}
    return all(env.get(k) == base.get(k) for k in names)


def git_commit(repo: Path, on_start: Callable[[int], None] | None = None) -> str | None:
    from tipc.execute import safegit  # the repo's own git config names commands: none of them may run

    if not safegit.available():
        return None
    code, out = safegit.capture(["rev-parse", "HEAD"], cwd=repo, timeout_s=30, on_start=on_start)
    sha = out.strip().splitlines()[-1] if out.strip() else ""
    return sha if code == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def _config_key(plan: Plan) -> tuple[str, str, str, str]:
    # config_path is "as given by the user" (relative to some cwd), so compare by name, model and mode.
    return (os.path.basename(plan.config_path), plan.model_name, plan.mode, plan.chain)


def record_path(plan: Plan) -> Path:
    return Path(plan.repo) / record_location(plan)


def find_record(repo: Path, plan: Plan) -> Path | None:
    """The run record of the same config and mode under `repo`, if a readable one exists."""
    path = repo / record_location(plan)
    if not path.is_file():
        return None
    try:
        old = load_record(path)
    except ConfigError:
        return None
    return path if _config_key(old.plan) == _config_key(plan) else None


class _Facts:
    """Facts for the record that steps do not need: paddle's version, the repo's commit, the host.

    Gathered in a thread beside the first step rather than before it (together ~0.1 s: a python start-up,
    a git call, importing psutil and NVML), so the chain does not wait for them.
    """

    def __init__(
        self, python: str, repo: Path, probe_versions: bool, env: Mapping[str, str] | None = None
    ) -> None:
        self.python = python
        self.repo = repo
        self.probe_versions = probe_versions
        self.env = env
        # tipc.execute.envinfo, as the steps' interpreter sees it
        self.environment: dict[str, object] | None = None
        self.paddle_version: str | None = None
        self.git_commit: str | None = None
        self.host: dict[str, object] = {}
        self._running: int | None = None  # pid of the probe running now
        self._cancelled = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._gather, name="tipc-facts", daemon=True)

    def start(self) -> _Facts:
        self._thread.start()
        return self

    def _gather(self) -> None:
        with contextlib.suppress(Exception):  # a fact we cannot learn stays None; it never fails the run
            self.host = host_info()
        if not self.probe_versions:
            return
        # The environment probe first: it answers the version query too (one interpreter start, not two),
        # where the chain's env leaves the module search path as the version probe would have it.
        answered: str | None = None
        with contextlib.suppress(Exception):
            from tipc.execute.envinfo import collect_with_dist_version

            info, dist = collect_with_dist_version(
                self.python, cwd=self.repo, env=self.env, on_start=self._started
            )
            self.environment = info.to_json()
            answered = dist if _same_search_path(self.env) else None
        self._ended()
        if self._cancelled:
            return
        with contextlib.suppress(Exception):
            self.paddle_version = paddle_version(
                self.python, self.repo, on_start=self._started, answered=answered
            )
        self._ended()
        if self._cancelled:
            return
        with contextlib.suppress(Exception):
            self.git_commit = git_commit(self.repo, on_start=self._started)
        self._ended()

    def _started(self, pid: int) -> None:
        with self._lock:
            self._running = pid

    def _ended(self) -> None:
        with self._lock:
            self._running = None

    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout_s: float | None = None) -> bool:
        self._thread.join(timeout_s)
        return self.done()

    def cancel(self) -> None:
        """Stop the probe running now, if any (its own process group: nothing else is touched)."""
        with self._lock:
            self._cancelled = True
            if self._running is not None:
                proc.kill_group(self._running, grace_s=0.5)
