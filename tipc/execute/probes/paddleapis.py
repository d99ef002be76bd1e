"""Which of the named Paddle APIs (dotted names such as `paddle.fluid.layers`) an interpreter's Paddle lacks.

Run as a standalone script under the repo's python from an empty folder (`python paddleapis.py NAME...`): it
imports paddle (nothing of the repo) and prints one line `TIPC-PADDLE-APIS {"version": ..., "missing": [...]}`
(version null and every name missing when paddle itself cannot be imported). A name is there when each part
resolves as an attribute or, failing that, as a submodule. Standard library only, Python 3.7+ syntax.
"""

from __future__ import annotations

import importlib
import json
import sys

MARKER = "TIPC-PADDLE-APIS "


def resolves(name: str) -> bool:
    parts = name.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except Exception:
        return False
    for i, part in enumerate(parts[1:], start=1):
        if hasattr(obj, part):
            try:
                obj = getattr(obj, part)
            except Exception:
                return False
            continue
        try:
            obj = importlib.import_module(".".join(parts[: i + 1]))
        except Exception:
            return False
    return True


def main(names: list[str]) -> dict[str, object]:
    try:
        paddle = importlib.import_module("paddle")
    except Exception as exc:  # an interpreter without paddle, or one whose paddle cannot load
        return {"version": None, "error": f"{type(exc).__name__}: {exc}"[:300], "missing": names}
    return {
        "version": str(getattr(paddle, "__version__", "")),
        "missing": [n for n in names if not resolves(n)],
    }


if __name__ == "__main__":
    sys.path[0] = ""  # the working folder (an empty one), never this script's
    print(MARKER + json.dumps(main(sys.argv[1:])))
