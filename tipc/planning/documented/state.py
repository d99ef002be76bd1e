"""What the planner of the documented commands carries (`_PlannerState`: the repo, the vocabulary, the
switches, the commands, steps and substitutions so far, what earlier commands made) and the values it passes
around (`_Written`: a command as written, classified; `_DocState`: one doc's working folder and exports;
`_Made`: what an earlier command makes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tipc.core.steps import Overrides, Step
from tipc.planning.docs_vocab import Vocabulary
from tipc.planning.documented.model import DocCommand, Kind, Substitution
from tipc.planning.documented.words import _Segment

# ------------------------------------------------------------------------------------------ the planner


@dataclass(frozen=True)
class _Written:
    """A command as the docs write it, classified."""

    line: int
    text: str
    words: tuple[str, ...]
    env: dict[str, str]
    kind: Kind
    purpose: str
    why: str
    seg: _Segment
    redirect: str


@dataclass
class _DocState:
    doc: str
    cwd: str = "."
    outside: str = ""  # why the commands run outside the repo now ("" when inside)
    cwd_dep: str | None = None  # a step that makes the working folder
    cwd_missing: str = ""  # why the working folder cannot exist
    env: dict[str, str] = field(default_factory=dict)
    clones: dict[str, bool] = field(default_factory=dict)  # clone folder (lower case) -> it is this repo
    servers: list[str] = field(default_factory=list)


@dataclass
class _Made:
    """What an earlier command makes or mentions, for the commands after it."""

    step_id: str
    location: str
    text: str
    paths: set[str]  # repo-relative paths it makes or names
    basenames: set[str]
    runs: bool  # a step that runs (else its dependents are skipped with its reason)


@dataclass
class _PlannerState:
    """What the planner of the documented commands carries from doc to doc and command to command (its
    layers: `_Classifier`, `_Inputs`, `_Planner`)."""

    repo: Path
    vocab: Vocabulary
    overrides: Overrides
    lite: dict[str, tuple[str, int, str]]
    config_rel: str
    sandboxed: bool
    network: bool
    gpus: bool | None = None  # whether this machine has a GPU (None: not known, as if it had)
    commands: list[DocCommand] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    substitutions: list[Substitution] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    made: list[_Made] = field(default_factory=list)
    seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], str] = field(default_factory=dict)
    downloads: list[tuple[str, str]] = field(default_factory=list)  # (location, text) of weight fetches
    ids: set[str] = field(default_factory=set)
    _readme: str = ""
    cloned: bool = False
