"""Run a module of tipc under another interpreter with tipc's own packages importable LAST.

`python tailpath.py MODULE ARG...` appends the folders of $TIPC_TAIL_PATH (os.pathsep-separated: the
site-packages of the interpreter tipc runs under) to the END of sys.path, then runs MODULE as `python -m
MODULE ARG...` would. The interpreter's own packages (its numpy, its paddle) are found first; only what it
lacks (onnxruntime, uvicorn ... tipc's parts need) comes from tipc's. Only for an interpreter of the same
Python version as tipc's (compiled packages are built for one). Standard library only, Python 3.7+ syntax.
"""

from __future__ import annotations

import os
import runpy
import sys

if __name__ == "__main__":
    tail = [p for p in os.environ.get("TIPC_TAIL_PATH", "").split(os.pathsep) if p and p not in sys.path]
    del sys.path[0]  # neither this script's folder nor the working one (a repo's own `tipc/` folder)
    sys.path.extend(tail)
    module = sys.argv[1]
    sys.argv = [module, *sys.argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
