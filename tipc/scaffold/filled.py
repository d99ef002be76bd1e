"""What `tipc init` fills, as values: the train chain's slots and TODOs (`Filled`, by tipc.scaffold.fill)
and the serving chain's (`ServingFilled`, by tipc.scaffold.serving)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tipc.config.script_flags import ScriptFlags
from tipc.scaffold.detect import LiteData

DEFAULT_PORT = 9998  # tipc serve's default


@dataclass(frozen=True)
class Todo:
    slot: str | None
    message: str
    candidates: tuple[str, ...] = ()  # flags seen that might fill the slot, with file:line

    def format(self, line: int | None = None) -> str:
        where = f"{self.slot} (line {line})" if self.slot and line else (self.slot or "repo")
        seen = f" (candidates seen: {', '.join(self.candidates[:6])})" if self.candidates else ""
        return f"{where}: {self.message}{seen}"


@dataclass
class Filled:
    dialect: str
    model: str
    slots: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (key, value)
    todos: list[Todo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was inferred, and from where
    scripts: dict[str, str] = field(default_factory=dict)
    flags: dict[str, ScriptFlags] = field(default_factory=dict)
    serving: ServingFilled | None = None  # the serving chain, when the repo ships a serving deployment
    lite: LiteData | None = None  # the lite data the slots point at (prepare.sh extracts or checks it)

    def line(self, name: str) -> str:
        key, value = self.slots[name]
        return f"{key}:{value}"

    def todo(self, slot: str | None, message: str) -> None:
        self.todos.append(Todo(slot, message))


@dataclass(frozen=True)
class ServingDeploy:
    """A Python serving deployment found in the repo (paths relative to the repo root)."""

    dir: str  # e.g. "deploy/serving_python"
    client: str  # the client script, relative to `dir`, e.g. "pipeline_http_client.py"


@dataclass
class ServingFilled:
    deploy: ServingDeploy
    slots: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (key, value)
    todos: list[Todo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    port: int = DEFAULT_PORT
    service: str = ""
    export_dir: str = ""  # repo-relative folder the conversion writes and the server loads

    def todo(self, slot: str | None, message: str) -> None:
        self.todos.append(Todo(f"serving {slot}" if slot else "serving", message))
