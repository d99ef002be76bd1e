"""Locate data shipped with tipc: rulesets (specs/) and init templates (test_tipc_template/).

In a source checkout or editable install they sit at the repo root; in a wheel under tipc/_data/.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # the tipc package


def data_dir(name: str) -> Path:
    for candidate in (_PKG.parent / name, _PKG / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"tipc data folder {name!r} is missing from this installation")


def package_parent() -> Path:
    """The folder holding the tipc package: put first on PYTHONPATH, it makes this tipc importable by
    another interpreter (a site-packages folder when tipc is installed)."""
    return _PKG.parent
