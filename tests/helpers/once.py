"""Results made once per pytest run and shared by every xdist worker: the first worker to need one makes it
under a file lock in the run's shared temp folder; the others wait, then read it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared_dir(factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of this pytest run sees (the parent of the workers' base temp)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(folder: Path, name: str, make: Callable[[], Any]) -> Any:
    """`make()`'s JSON result, made once per pytest run across workers (file lock + result file)."""
    done = folder / f"{name}.json"
    with locked(folder / f"{name}.lock"):
        if not done.exists():
            value = make()
            tmp = done.with_suffix(".tmp")
            tmp.write_text(json.dumps(value))
            tmp.replace(done)
    return json.loads(done.read_text())
