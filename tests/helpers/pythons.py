"""Other Python interpreters on this machine, for the tests that run one (an old Python, Paddle 2.x's).

pyenv's installs are found under $PYENV_ROOT (the suite's guards keep it naming the real pyenv while HOME is
a temp folder), else ~/.pyenv.
"""

from __future__ import annotations

import os
from pathlib import Path


def pyenv_pythons(version: str) -> list[Path]:
    """pyenv's `python{version}` of every installed `{version}.*` ("3.10" -> 3.10.x), oldest first."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    return sorted(root.glob(f"versions/{version}.*/bin/python{version}"))
