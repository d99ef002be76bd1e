"""A repo that ships a chain status log (`results_python.log` full of "Run successfully" lines) in its TIPC
folder claims a success no run of this check produced: an appending script adds its own lines below them,
and a reviewer reading the file takes them as the chain's result.

The status logs are read from the repo as its author left it, before the sandbox puts the run's fresh output
folder over them: `tipc check` gathers them then (`shipped_status_logs`) and hands them over in
`CheckContext.before_run["status_logs"]`; without that (a check called from code on a repo at rest) they are
read from the repo itself. FAIL naming each file and how many success lines it holds; PASS when none.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tipc.judge.checks._common import outcome
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import registered

STATUS_LOG = re.compile(r"^results[\w.-]*\.log$")
_STATUS_LINE = re.compile(r"Run (successfully|failed) with command", re.IGNORECASE)
_MAX_FILES = 20000  # files looked at under test_tipc/
_MAX_BYTES = 8 << 20  # per log read


def shipped_status_logs(repo: Path) -> list[dict[str, Any]]:
    """Every status log under the repo's test_tipc/ folder: {"path", "lines", "successes", "failures"}. Read
    before a run: tipc's own run folder (test_tipc/output/tipc) is not the author's."""
    root = Path(repo) / "test_tipc"
    own = root / "output" / "tipc"
    found: list[dict[str, Any]] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if Path(folder, d) != own and not d.startswith("."))
        for name in sorted(files):
            seen += 1
            if seen > _MAX_FILES:
                return found
            if not STATUS_LOG.match(name):
                continue
            path = Path(folder, name)
            try:
                with path.open("rb") as fh:
                    text = fh.read(_MAX_BYTES).decode("utf-8", errors="replace")
            except OSError:
                continue
            marks = [m.group(1).lower() for m in _STATUS_LINE.finditer(text)]
            if marks:
                found.append(
                    {
                        "path": path.relative_to(repo).as_posix(),
                        "lines": len(text.splitlines()),
                        "successes": marks.count("successfully"),
                        "failures": marks.count("failed"),
                    }
                )
    return found


@registered("shipped_status_log")
def check_shipped_status_log(ctx: CheckContext) -> CheckOutcome:
    """The repo ships no chain status log claiming a result no run of this check produced."""
    before = dict(getattr(ctx, "before_run", None) or {})
    logs = before["status_logs"] if "status_logs" in before else shipped_status_logs(Path(ctx.repo))
    if not logs:
        return outcome(Verdict.PASS, "the repo ships no chain status log (results*.log) in test_tipc/")
    evidence = [
        Evidence(
            f"{log['path']}: {log['successes']} 'Run successfully' and {log['failures']} 'Run failed' "
            f"line(s), from a run that is not this one",
            path=log["path"],
            numbers=(("lines", log["lines"]), ("successes", log["successes"])),
        )
        for log in logs
    ]
    first = logs[0]
    more = f" and {len(logs) - 1} more" if len(logs) > 1 else ""
    return CheckOutcome(
        Verdict.FAIL,
        f"the repo ships {first['path']}{more}, a chain status log claiming {first['successes']} success(es) "
        "this check did not produce (tipc ignores it; a reviewer or an appending script would not)",
        tuple(evidence),
        {"status_logs": logs},
    )
