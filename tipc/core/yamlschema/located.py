"""The located tree a YAML file is read into: mappings and lists that keep where each key and item is
written (`LMap`, `LSeq`, positions `Pos` as 1-based (line, column)), a path of keys into it (`Keys`,
written `dotted`), the position or line at a path, the tree as plain data, and the reader's own error
(`YamlShapeError`, line and column). Values only: nothing here parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Pos = tuple[int, int]  # 1-based (line, column)


Keys = tuple[str | int, ...]


@dataclass
class LMap:
    """A YAML mapping with the position of itself and of each key."""

    items: dict[str, Any]
    line: int
    key_lines: dict[str, int] = field(default_factory=dict)
    col: int = 1
    key_cols: dict[str, int] = field(default_factory=dict)

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)

    def pos_of(self, key: str) -> Pos:
        if key in self.key_lines:
            return self.key_lines[key], self.key_cols.get(key, 1)
        return self.line, self.col


@dataclass
class LSeq:
    """A YAML sequence with the position of itself and of each item."""

    items: list[Any]
    line: int
    item_lines: list[int] = field(default_factory=list)
    col: int = 1
    item_cols: list[int] = field(default_factory=list)

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line

    def pos_of(self, index: int) -> Pos:
        if 0 <= index < len(self.item_lines):
            return self.item_lines[index], (self.item_cols[index] if index < len(self.item_cols) else 1)
        return self.line, self.col


class YamlShapeError(Exception):
    """The YAML text itself is unusable; `line`/`col` where known."""

    def __init__(self, line: int | None, message: str, col: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message


def pos_at(tree: object, keys: Keys) -> Pos | None:
    """Where the value at `keys` is written in a located tree (its key in a mapping, its item in a list);
    where the path stops existing, the deepest part that exists. None for plain data."""
    node: object = tree
    pos: Pos | None = (tree.line, tree.col) if isinstance(tree, LMap | LSeq) else None
    for k in keys:
        if isinstance(node, LMap) and isinstance(k, str) and k in node.items:  # noqa: SIM114 - mypy narrows each
            pos = node.pos_of(k)
            node = node.items[k]
        elif isinstance(node, LSeq) and isinstance(k, int) and 0 <= k < len(node.items):
            pos = node.pos_of(k)
            node = node.items[k]
        else:
            break
    return pos


def line_at(tree: object, keys: Keys) -> int | None:
    pos = pos_at(tree, keys)
    return pos[0] if pos is not None else None


def plain(value: object) -> object:
    """Strip positions: LMap/LSeq back to dict/list."""
    if isinstance(value, LMap):
        return {k: plain(v) for k, v in value.items.items()}
    if isinstance(value, LSeq):
        return [plain(v) for v in value.items]
    return value


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dotted(keys: Keys) -> str:
    """`rules[2].check.file_exists`; `top level` for the document itself."""
    out = ""
    for k in keys:
        if isinstance(k, int) or not _PLAIN_KEY.fullmatch(k):
            out += f"[{k!r}]"
        else:
            out += f".{k}" if out else k
    return out or "top level"
