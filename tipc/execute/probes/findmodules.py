"""Which of the named modules an interpreter cannot import (found by spec, nothing is imported).

Run as a standalone script under the step's python (`python findmodules.py NAME...`): prints the missing names
on one line (space separated, empty when none) and exits 1 if any is missing, else 0. Standard library only,
Python 3.7+ syntax: it runs under the repo's interpreter, which may be older than tipc's.
"""

from __future__ import annotations

import importlib.util
import sys


def found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a dotted name whose parent is missing; a module without a spec
        return False


def missing(names: list[str]) -> list[str]:
    return [name for name in names if not found(name)]


if __name__ == "__main__":
    # As under `python -c`: the working folder (the repo) is searched first, not this script's folder.
    sys.path[0] = ""
    absent = missing(sys.argv[1:])
    print(" ".join(absent))
    sys.exit(1 if absent else 0)
