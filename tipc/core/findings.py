"""Located findings: what lint, plan and check report about input files."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum


class Level(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based; 0 when the finding is about the whole file
    col: int  # 1-based; 0 when unknown
    level: Level
    code: str  # stable, e.g. "TIPC101"
    message: str

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.level.value.upper()} {self.code} {self.message}"

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["level"] = self.level.value
        return data
