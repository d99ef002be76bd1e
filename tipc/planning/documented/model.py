"""The values of the documented chain: `Kind` (what tipc makes of a command), `DocCommand` (one command
where the docs write it), `Substitution` (a value replaced by the lite data, and why), `Documented` (the
plan with its commands, substitutions, notes and the docs read); the chain's name, mode and step-id prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tipc.core.steps import Mode, Plan, Stage

MAX_COMMANDS = 200
CHAIN = "documented"
MODE = Mode.DOCUMENTED
ID_PREFIX = "doc/"


class Kind(str, Enum):
    RUN = "run"
    SETUP = "setup"
    CHAIN = "chain"
    STATE = "state"
    HANDLED = "handled"
    OUTSIDE = "outside"
    TEMPLATE = "template"
    REPEAT = "repeat"


_STAGES = {
    "train": Stage.TRAIN,
    "eval": Stage.EVAL,
    "export": Stage.EXPORT,
    "convert": Stage.EXPORT,
    "infer": Stage.INFER,
    "serve": Stage.SERVE,
    "client": Stage.CLIENT,
}
# Purposes of the acceptance's python chain (a doc with none of them documents something else).
ACCEPTANCE_PURPOSES = frozenset({"train", "eval", "predict", "export", "infer", "serve", "client", "convert"})


@dataclass(frozen=True)
class DocCommand:
    """One command of the docs, where it is written and what tipc makes of it."""

    step_id: str  # "" for kinds that are not steps
    doc: str  # repo-relative doc path
    line: int  # 1-based line in the doc
    text: str  # the command as written (prompt removed, continuation lines joined)
    cwd: str  # repo-relative working folder ("." the repo root)
    kind: Kind
    purpose: str  # train, eval, predict, export, infer, serve, client, convert, data, setup, other...
    why: str = ""  # kinds that do not run (or run only with --network): why, and what it would fetch
    background: bool = False

    @property
    def location(self) -> str:
        return f"{self.doc}:{self.line}"

    def to_json(self) -> dict[str, object]:
        return {
            "step_id": self.step_id,
            "doc": self.doc,
            "line": self.line,
            "text": self.text,
            "cwd": self.cwd,
            "kind": self.kind.value,
            "purpose": self.purpose,
            "why": self.why,
            "background": self.background,
        }


@dataclass(frozen=True)
class Substitution:
    """A value of a documented command tipc replaced, and why (a full dataset the repo does not ship)."""

    step_id: str
    key: str
    written: str
    used: str
    source: str  # where the value used comes from, e.g. test_tipc/configs/m/train_infer_python.txt:10

    def text(self) -> str:
        return (
            f"--{self.key}={self.written} is not in the repo: the lite data {self.used} ({self.source}) is "
            "used instead"
        )


@dataclass(frozen=True)
class Documented:
    plan: Plan
    commands: tuple[DocCommand, ...]
    substitutions: tuple[Substitution, ...] = ()
    notes: tuple[str, ...] = ()
    docs: tuple[str, ...] = ()

    def command(self, step_id: str) -> DocCommand | None:
        return next((c for c in self.commands if c.step_id == step_id), None)

    def substitutions_of(self, step_id: str) -> list[Substitution]:
        return [s for s in self.substitutions if s.step_id == step_id]
