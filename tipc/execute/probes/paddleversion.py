"""Paddle's version as an interpreter sees it: package metadata first (milliseconds), importing paddle
(seconds) only for builds without metadata.

Run as a standalone script under the run's python (`python paddleversion.py`); the version is the last stdout
line (paddle may print while importing). Exits non-zero when paddle is not there. Standard library only,
Python 3.7+ syntax (3.7 has no importlib.metadata, so it falls through to the import).
"""

from __future__ import annotations

import importlib
import sys


def from_metadata() -> str | None:
    try:
        metadata = importlib.import_module("importlib.metadata")
    except ImportError:
        return None
    for dist in ("paddlepaddle-gpu", "paddlepaddle"):
        try:
            return str(metadata.version(dist))
        except metadata.PackageNotFoundError:
            pass
    return None


def from_import() -> str:
    paddle = importlib.import_module("paddle")
    return str(paddle.__version__)


if __name__ == "__main__":
    # As under `python -c`: the working folder (the repo) is searched first, not this script's folder.
    sys.path[0] = ""
    version = from_metadata()
    print(version if version is not None else from_import())
