"""Which Paddle wheel an interpreter has, from package metadata only (no paddle import, ~50 ms).

Run as a standalone script under the run's python (`python wheelprobe.py`); prints one JSON line
{"cpu": bool, "gpu": bool}: whether `paddlepaddle` / `paddlepaddle-gpu` are installed. Standard library only.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json


def has(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    print(json.dumps({"cpu": has("paddlepaddle"), "gpu": has("paddlepaddle-gpu")}))
