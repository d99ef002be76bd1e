"""Reading YAML safely into the located tree: `yaml.compose` with the safe loader (libyaml's where PyYAML
has it) builds nodes, never objects; scalars are resolved by the safe constructor. tipc's own files admit
only strings, numbers, booleans, null, lists and mappings (no anchors, aliases, merge keys or custom tags;
nesting at most MAX_DEPTH deep); `foreign` reads a file tipc does not own as PyYAML would, within a budget
of values. Every problem is a YamlShapeError with its line and column; `decode` locates a byte that is not
UTF-8.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import yaml

from tipc.core.errors import ConfigError
from tipc.core.yamlschema.located import LMap, LSeq, Pos, YamlShapeError

if TYPE_CHECKING:  # CSafeLoader exists only where PyYAML was built with libyaml
    _AnyLoader = yaml.SafeLoader | yaml.CSafeLoader


def _fastest_loader() -> type[_AnyLoader]:
    """libyaml's parser when PyYAML has it (about 14x faster on a ruleset), the pure-Python one otherwise;
    both give the same nodes and marks. Not when the C module builds nodes of another import of `yaml` (an
    in-process pytest run that unloaded and reloaded it): its nodes would match none of our types."""
    c_module = sys.modules.get("yaml._yaml")
    if hasattr(yaml, "CSafeLoader") and getattr(c_module, "MappingNode", None) is yaml.MappingNode:
        return yaml.CSafeLoader
    return yaml.SafeLoader


_Loader = _fastest_loader()


MAX_DEPTH = 64


def _pos(node: yaml.Node) -> Pos:
    return int(node.start_mark.line) + 1, int(node.start_mark.column) + 1


_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")
)


MAX_FOREIGN_VALUES = 200_000  # a foreign file's aliases may repeat values, up to this many in all


_MERGE = "tag:yaml.org,2002:merge"


class _Reader:
    """Node tree -> LMap/LSeq/scalars. Strict for tipc's own files; `foreign` reads a file tipc does not own
    (a model's training config) as PyYAML would: anchors/aliases (within a budget of values), merge keys,
    any tag (a custom one read by its node's kind), later duplicate keys winning."""

    def __init__(self, constructor: _AnyLoader, foreign: bool) -> None:
        self.constructor = constructor
        self.foreign = foreign
        self.left = MAX_FOREIGN_VALUES

    def convert(self, node: yaml.Node, depth: int) -> object:
        line, col = _pos(node)
        if depth > MAX_DEPTH:
            raise YamlShapeError(line, f"nesting is deeper than {MAX_DEPTH} levels", col)
        self.left -= 1
        if self.left < 0:
            raise YamlShapeError(line, f"more than {MAX_FOREIGN_VALUES} values (aliases repeating?)", col)
        if node.tag not in _PLAIN_TAGS and not self.foreign:
            kind = node.tag.rsplit(":", 1)[-1]
            raise YamlShapeError(
                line,
                f"invalid YAML: unsupported type {kind!r} here (only strings, numbers, booleans, "
                "lists and mappings; quote dates and similar values)",
                col,
            )
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, depth)
        if isinstance(node, yaml.SequenceNode):
            seq = LSeq([], line, col=col)
            for item in node.value:
                seq.items.append(self.convert(item, depth + 1))
                iline, icol = _pos(item)
                seq.item_lines.append(iline)
                seq.item_cols.append(icol)
            return seq
        return self.scalar(node)

    def mapping(self, node: yaml.MappingNode, depth: int) -> LMap:
        line, col = _pos(node)
        out = LMap({}, line, col=col)
        merged: list[object] = []
        for key_node, value_node in node.value:
            kline, kcol = _pos(key_node)
            if key_node.tag == _MERGE and self.foreign:
                merged.append(self.convert(value_node, depth + 1))
                continue
            key = self.key(key_node)
            if key is None:
                continue
            if key in out.items and not self.foreign:
                raise YamlShapeError(kline, f"duplicate key {key!r}", kcol)
            out.items[key] = self.convert(value_node, depth + 1)
            out.key_lines[key] = kline
            out.key_cols[key] = kcol
        for source in merged:  # `<<: *base` or `<<: [*a, *b]`: keys written here win, then the first source
            for part in source.items if isinstance(source, LSeq) else [source]:
                if isinstance(part, LMap):
                    for key, value in part.items.items():
                        if key not in out.items:
                            out.items[key] = value
                            out.key_lines[key], out.key_cols[key] = part.pos_of(key)
        return out

    def key(self, node: yaml.Node) -> str | None:
        line, col = _pos(node)
        if node.tag == _MERGE:
            raise YamlShapeError(line, "merge keys (<<) are not supported", col)
        if not isinstance(node, yaml.ScalarNode):
            if self.foreign:
                return None  # a complex key: nothing tipc looks up
            raise YamlShapeError(line, "mapping keys must be plain strings", col)
        key = self.scalar(node)
        if isinstance(key, str):
            return key
        if self.foreign:
            return str(key)
        raise YamlShapeError(line, f"mapping key {key!r} must be a string", col)

    def scalar(self, node: yaml.Node) -> object:
        line, col = _pos(node)
        if node.tag not in _PLAIN_TAGS and not self.foreign:
            raise YamlShapeError(
                line, f"invalid YAML: unsupported type {node.tag.rsplit(':', 1)[-1]!r} here", col
            )
        try:
            return self.constructor.construct_object(node)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:  # e.g. an int too long to convert
            if self.foreign and isinstance(node.value, str):
                return node.value  # a custom tag: its text
            raise YamlShapeError(line, f"bad scalar: {exc}", col) from None


def _reader_error(exc: yaml.YAMLError, text: str) -> YamlShapeError:
    """The reader rejects control characters without a line mark (libyaml counts its position in bytes):
    find the first such character ourselves."""
    found = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if found is None:
        return YamlShapeError(None, f"invalid YAML: {exc}")
    at = found.start()
    line = text[:at].count("\n") + 1
    col = at - text.rfind("\n", 0, at)
    return YamlShapeError(line, f"invalid YAML: unacceptable character #x{ord(text[at]):04x}", col)


def _compose(text: str) -> tuple[yaml.Node | None, _AnyLoader]:
    try:
        loader = _Loader(text)
    except yaml.YAMLError as exc:  # the pure-Python reader checks every character up front
        raise _reader_error(exc, text) from None
    try:
        return loader.get_single_node(), loader
    except yaml.MarkedYAMLError as exc:
        loader.dispose()
        mark = exc.problem_mark or exc.context_mark
        line = int(mark.line) + 1 if mark is not None else None
        col = int(mark.column) + 1 if mark is not None else None
        raise YamlShapeError(line, f"invalid YAML: {exc.problem or exc}", col) from None
    except yaml.YAMLError as exc:  # libyaml's reader errors surface here
        loader.dispose()
        raise _reader_error(exc, text) from None
    except RecursionError:
        loader.dispose()
        raise YamlShapeError(None, f"invalid YAML: nesting is deeper than {MAX_DEPTH} levels") from None


def load_located(text: str, *, foreign: bool = False) -> Any:
    """Parse one YAML document into LMap/LSeq/scalars. Raises YamlShapeError on any problem. `foreign`: a
    file tipc reads but does not own, read as leniently as PyYAML's safe loader (see `_Reader`)."""
    return _load(text, foreign)[0]


def _load(text: str, foreign: bool = False) -> tuple[object, Pos]:
    node, loader = _compose(text)
    try:
        if node is None:
            return None, (1, 1)
        if not foreign and _has_alias(node, set()):
            raise YamlShapeError(*_pos(node)[:1], "YAML anchors/aliases are not supported", _pos(node)[1])
        return _Reader(loader, foreign).convert(node, 0), _pos(node)
    except yaml.YAMLError as exc:
        raise YamlShapeError(None, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def _has_alias(node: yaml.Node, seen: set[int]) -> bool:
    # An alias makes the composer reuse a node object; reuse is how billion-laughs documents grow.
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            return True
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            for k, v in current.value:
                stack += (k, v)
        elif isinstance(current, yaml.SequenceNode):
            stack += current.value
    return False


def decode(data: bytes, path: str, error: type[ConfigError] = ConfigError) -> str:
    """UTF-8 text of a file's bytes; the first bad byte is a located error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(path, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", col) from None
