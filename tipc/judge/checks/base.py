"""The value every check returns, and the evidence it carries.

Rule operators (tipc.judge.rules) turn these into verdicts; reporters render them. Checks never raise on bad
repos: a missing log or a crashed worker is an outcome (FAIL or NA with a reason), not an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord
    from tipc.judge.checks.settings import Settings


class Verdict(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    SKIP = "SKIP"  # deliberately not evaluated (e.g. the stage it needs was not run)
    NA = "N-A"  # does not apply to this repo


@dataclass(frozen=True)
class Evidence:
    """Where to look: a file and line, an excerpt, and/or numbers."""

    text: str
    path: str | None = None
    line: int | None = None
    excerpt: str | None = None
    numbers: tuple[tuple[str, float | int | str | None], ...] = ()

    def location(self) -> str:
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "path": self.path,
            "line": self.line,
            "excerpt": self.excerpt,
            "numbers": dict(self.numbers),
        }


@dataclass(frozen=True)
class CheckOutcome:
    verdict: Verdict
    summary: str
    evidence: tuple[Evidence, ...] = ()
    # Structured figures for reports (e.g. a loss curve, an engine x engine matrix). JSON-serialisable.
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "verdict": self.verdict.value,
            "summary": self.summary,
            "evidence": [e.to_json() for e in self.evidence],
            "data": self.data,
        }


@dataclass(frozen=True)
class CheckContext:
    """What every check gets: the repo, the run record (None if nothing ran) and the repo's tipc settings.

    `settings` is the repo's `test_tipc/tipc.yaml`: preferably the typed value from
    `tipc.judge.checks.settings.load_settings(repo)` (which raises ConfigError with file:line on a bad file,
    so the
    command can exit 2), or the raw mapping / an empty mapping, which each check validates itself (a bad
    mapping then gives a FAIL outcome naming the problem).
    """

    repo: Path
    record: RunRecord | None = None
    settings: Settings | Mapping[str, object] = field(default_factory=dict)
    # Records of the other chains run for this check, by Plan.chain (e.g. "serving"); `record` stays the
    # train chain's.
    records: Mapping[str, RunRecord] = field(default_factory=dict)
    # What the repo held before the sandbox hid it behind the run's fresh output folder (gathered by `tipc
    # check` before the run): {"status_logs": [...]} (tipc.judge.checks.status_log).
    before_run: Mapping[str, object] = field(default_factory=dict)

    @property
    def run_record(self) -> RunRecord:
        """The run record, for a check that has returned its no-record outcome when there is none."""
        if self.record is None:
            raise RuntimeError("a check read the run record without first checking that there is one")
        return self.record
