"""Read YAML safely and keep the line of every value, so schema errors can name `file:line`.

`yaml.compose` with the safe loader builds a node tree (no object construction, no tags beyond the safe
schema); scalars are then resolved by the safe constructor. The result mirrors `yaml.safe_load` but each
mapping and sequence remembers where it and each of its items started.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml


@dataclass
class LMap:
    """A YAML mapping with the 1-based line of itself and of each key."""

    items: dict[str, Any]
    line: int
    key_lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


@dataclass
class LSeq:
    items: list[Any]
    line: int
    item_lines: list[int] = field(default_factory=list)

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


class YamlShapeError(Exception):
    """Raised with a line number when the YAML text itself is unusable."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")
)


def _convert(node: yaml.Node, constructor: yaml.SafeLoader, depth: int) -> Any:
    if depth > 64:
        raise YamlShapeError(_line(node), "nesting is deeper than 64 levels")
    if node.tag not in _PLAIN_TAGS:
        kind = node.tag.rsplit(":", 1)[-1]
        raise YamlShapeError(
            _line(node),
            f"invalid YAML: unsupported type {kind!r} here (only strings, numbers, booleans, "
            "lists and mappings; quote dates and similar values)",
        )
    if isinstance(node, yaml.MappingNode):
        out = LMap({}, _line(node))
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlShapeError(_line(key_node), "mapping keys must be plain strings")
            key = constructor.construct_object(key_node)
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlShapeError(_line(key_node), "merge keys (<<) are not supported")
            if not isinstance(key, str):
                raise YamlShapeError(_line(key_node), f"mapping key {key!r} must be a string")
            if key in out.items:
                raise YamlShapeError(_line(key_node), f"duplicate key {key!r}")
            out.items[key] = _convert(value_node, constructor, depth + 1)
            out.key_lines[key] = _line(key_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = LSeq([], _line(node))
        for item in node.value:
            seq.items.append(_convert(item, constructor, depth + 1))
            seq.item_lines.append(_line(item))
        return seq
    if isinstance(node, yaml.ScalarNode):
        try:
            return constructor.construct_object(node)
        except yaml.YAMLError as exc:
            raise YamlShapeError(_line(node), f"bad scalar: {exc}") from None
    raise YamlShapeError(_line(node), f"unsupported YAML node {type(node).__name__}")


def load_located(text: str) -> Any:
    """Parse one YAML document into LMap/LSeq/scalars. Raises YamlShapeError on any problem."""
    try:
        loader = yaml.SafeLoader(text)
    except yaml.YAMLError as exc:  # the reader rejects control characters up front, at a character position
        position = getattr(exc, "position", None)
        line = text[:position].count("\n") + 1 if isinstance(position, int) else None
        problem = (
            f"unacceptable character #x{ord(text[position]):04x}"
            if isinstance(position, int) and (position < len(text))
            else str(exc)
        )
        raise YamlShapeError(line, f"invalid YAML: {problem}") from None
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = int(mark.line) + 1 if mark is not None else None
            raise YamlShapeError(line, f"invalid YAML: {exc.problem or exc}") from None
        except yaml.YAMLError as exc:
            raise YamlShapeError(None, f"invalid YAML: {exc}") from None
        if node is None:
            return None
        if _has_alias(node, set()):
            raise YamlShapeError(_line(node), "YAML anchors/aliases are not supported")
        return _convert(node, loader, 0)
    except yaml.YAMLError as exc:
        raise YamlShapeError(None, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def _has_alias(node: yaml.Node, seen: set[int]) -> bool:
    # An alias makes the composer reuse a node object; reuse is how billion-laughs documents grow.
    if id(node) in seen:
        return True
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        return any(_has_alias(k, seen) or _has_alias(v, seen) for k, v in node.value)
    if isinstance(node, yaml.SequenceNode):
        return any(_has_alias(v, seen) for v in node.value)
    return False


def line_at(tree: Any, keys: tuple[str | int, ...]) -> int | None:
    """The 1-based line where the value at `keys` is written in a located tree (its key's line in a mapping,
    its item's line in a list); where the path stops existing, the line of the deepest part that exists.
    None for a tree without lines (plain data)."""
    node: Any = tree
    line: int | None = getattr(tree, "line", None)
    for k in keys:
        if isinstance(node, LMap) and isinstance(k, str) and k in node.items:  # noqa: SIM114 - mypy narrows each
            line = node.line_of(k)
            node = node.items[k]
        elif isinstance(node, LSeq) and isinstance(k, int) and 0 <= k < len(node.items):
            line = node.line_of(k)
            node = node.items[k]
        else:
            break
    return line


def plain(value: Any) -> Any:
    """Strip line information: LMap/LSeq back to dict/list."""
    if isinstance(value, LMap):
        return {k: plain(v) for k, v in value.items.items()}
    if isinstance(value, LSeq):
        return [plain(v) for v in value.items]
    return value
