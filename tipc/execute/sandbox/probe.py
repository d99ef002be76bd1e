"""What the full sandbox lacks on this machine, found by building one: `weaknesses_here()`.

`tipc review` runs strangers' code by definition: before it starts a check it asks a child tipc (namespaces
are for tipc's own processes) to build layer A over an empty folder and run `true` through the jail, and
refuses to go on with a weak sandbox unless told to (`--allow-weak-sandbox`).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path


def weaknesses_here(timeout_s: float = 120.0) -> list[str]:
    """The weaknesses of the sandbox this machine gives (empty: the full one), in words."""
    from tipc.execute import proc

    lines: list[str] = []
    try:
        res = proc.run(
            proc.module_argv(sys.executable, "tipc.execute.sandbox.probe"),
            cwd="/",
            timeout_s=timeout_s,
            on_line=lines.append,
            trusted=True,
        )
    except OSError as exc:
        return [f"the sandbox could not be tried: {exc}"]
    for line in reversed(lines):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("weaknesses"), list):
            return [str(w) for w in found["weaknesses"]]
    tail = " | ".join(lines[-5:]) or f"exit {res.exit_code}"
    return [f"the sandbox could not be built here: {tail}"]


def _main() -> int:
    from tipc.execute import proc, sandbox
    from tipc.execute.sandbox import SandboxOptions

    scratch = Path(tempfile.mkdtemp(prefix="tipc-probe-"))
    repo = scratch / "repo"
    repo.mkdir()
    layers = scratch / "layers"
    layers.mkdir()
    out = sys.stdout
    try:
        session = sandbox.enter_scratch(repo, layers, SandboxOptions(own_process=True))
        weak = list(session.weaknesses)
        res = proc.run(["true"], cwd=session.view, timeout_s=60)
        if res.exit_code != 0:
            weak.append(f"a command could not run through the jail (exit {res.exit_code})")
        out.write(json.dumps({"weaknesses": weak}) + "\n")
    finally:
        out.flush()
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
