"""The plain cause of a failed step, as a value: what the run record stores and every reporter shows.

Causes are found by `tipc.judge.causes` (a catalogue of patterns with preconditions, read as data); the runner
only stores what it is handed. Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cause:
    id: str
    cause: str
    remedy: str
    switch: str | None = None
    evidence: str = ""  # the log line that matched (or the fact, e.g. "exit code -11")
    # The earlier step this failure follows from (its missing input is what that step should have made);
    # None when the failure is the step's own.
    upstream: str | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, Any] = {
            "id": self.id,
            "cause": self.cause,
            "remedy": self.remedy,
            "switch": self.switch,
            "evidence": self.evidence,
        }
        if self.upstream is not None:
            data["upstream"] = self.upstream
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cause:
        switch = data.get("switch")
        upstream = data.get("upstream")
        return cls(
            id=str(data["id"]),
            cause=str(data.get("cause", "")),
            remedy=str(data.get("remedy", "")),
            switch=None if switch is None else str(switch),
            evidence=str(data.get("evidence", "")),
            upstream=None if upstream is None else str(upstream),
        )


# tipc's own start-up code injected into every step (tipc/execute/lineage/inject: it wraps paddle.load, save,
# jit.save ...): its frames in a repo's traceback are tipc's plumbing, not the repo's code.
_OWN_FRAME = re.compile(r'^\s*File "[^"]*[/\\]tipc[/\\]execute[/\\]lineage[/\\]inject[/\\][^"]*", line')
_FRAME = re.compile(r'^\s*File "')


def hide_own_frames(text: str) -> str:
    """`text` (a log) without the traceback frames of tipc's injected start-up code: the `File "..."` line of
    each such frame and the indented source and marker lines under it. Everything else stays as it was."""
    if "tipc" not in text:
        return text
    out: list[str] = []
    in_own = False
    for line in text.splitlines(keepends=True):
        if _OWN_FRAME.match(line):
            in_own = True
            continue
        if in_own and line.startswith("    ") and not _FRAME.match(line):
            continue  # the hidden frame's source line, or its ^^^ marker line
        in_own = False
        out.append(line)
    return "".join(out)
