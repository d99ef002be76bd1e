"""A child `tipc run` that a verb starts (baseline record, matrix) as a phase of the verb's progress: the
child's step lines are the phase's news, so the terminal is never silent while the chain runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tipc.core.progress import Progress
    from tipc.execute.proc import ProcResult


def run_child(
    argv: Sequence[str], cwd: Path, label: str, progress: Progress, tail: list[str] | None = None
) -> ProcResult:
    """Run `argv` (a child tipc) to its end as the phase `label`; every output line goes to `tail`."""
    from tipc.core.progress import phase
    from tipc.execute import proc
    from tipc.execute.own_parts import with_tipc

    with phase(progress, label) as ph:

        def on_line(line: str) -> None:
            if tail is not None:
                tail.append(line)
            ph.child_line(line)

        # the child is this tipc, wherever it is imported from (an install, or a checkout on the path)
        res = proc.run(argv, cwd=cwd, env=with_tipc(proc.base_env()), on_line=on_line)
        if res.interrupted:
            ph.outcome = "interrupted"
        else:
            ph.outcome = "passed" if res.exit_code == 0 else f"failed (exit {res.exit_code})"
    return res
