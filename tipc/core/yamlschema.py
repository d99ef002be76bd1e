"""tipc's one YAML layer: a safe reader that keeps where every value is written, declarative schemas, and one
validation function whose problems all read `file:line:col: <where>: expected <what>, got <what>`.

Every YAML file tipc reads as its own input goes through here: rulesets (specs/*.yaml), template hashes
(specs/templates/*.yaml), the causes catalogue, a repo's test_tipc/tipc.yaml, convergence configs and
baseline files. A loader parses once (`Document`), checks the shape against its schema (`Document.conform`,
which returns plain dicts/lists with defaults filled), then builds its typed values; a problem the schema
cannot express (a duplicate id, a regex without a group) is raised with `Document.error(keys, ...)`, located
the same way.

Reading: `yaml.compose` with the safe loader builds a node tree (no object construction); scalars are then
resolved by the safe constructor. Only strings, numbers, booleans, null, lists and mappings are accepted;
anchors/aliases and merge keys are refused (alias reuse is how billion-laughs documents grow), so is nesting
deeper than 64 levels. Hand-written rather than jsonschema: importing jsonschema costs ~0.1-0.2 s of
start-up, and its errors know nothing of YAML positions.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from tipc.core.errors import ConfigError

Pos = tuple[int, int]  # 1-based (line, column)


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
Keys = tuple[str | int, ...]
MAX_DEPTH = 64

# ------------------------------------------------------------------------------------------ located tree


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

    def convert(self, node: yaml.Node, depth: int) -> Any:
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
        merged: list[Any] = []
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

    def scalar(self, node: yaml.Node) -> Any:
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


def _load(text: str, foreign: bool = False) -> tuple[Any, Pos]:
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


def pos_at(tree: Any, keys: Keys) -> Pos | None:
    """Where the value at `keys` is written in a located tree (its key in a mapping, its item in a list);
    where the path stops existing, the deepest part that exists. None for plain data."""
    node: Any = tree
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


def line_at(tree: Any, keys: Keys) -> int | None:
    pos = pos_at(tree, keys)
    return pos[0] if pos is not None else None


def plain(value: Any) -> Any:
    """Strip positions: LMap/LSeq back to dict/list."""
    if isinstance(value, LMap):
        return {k: plain(v) for k, v in value.items.items()}
    if isinstance(value, LSeq):
        return [plain(v) for v in value.items]
    return value


# ---------------------------------------------------------------------------------------------- schemas


# Plain classes, not dataclasses: a dozen frozen dataclasses cost ~5 ms of `tipc lint` start-up to create.


class Schema:
    """A shape a value must have. `what` overrides the description used in `expected <what>`."""

    __slots__ = ("what",)
    what: str | None

    def __init__(self, what: str | None = None) -> None:
        self.what = what

    def describe(self) -> str:
        return self.what or self._describe()

    def _describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        names = [n for cls in type(self).__mro__ for n in getattr(cls, "__slots__", ())]
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


class Str(Schema):
    """A string. `scalar`: numbers are accepted and given as text; `pattern`: must match whole; `check`:
    returns a problem (or None) for a string of the right type."""

    __slots__ = ("check", "nonempty", "pattern", "scalar")

    def __init__(
        self,
        nonempty: bool = True,
        pattern: str | None = None,
        scalar: bool = False,
        check: Callable[[str], str | None] | None = None,
        what: str | None = None,
    ) -> None:
        self.nonempty, self.pattern, self.scalar, self.check, self.what = (
            nonempty,
            pattern,
            scalar,
            check,
            what,
        )

    def _describe(self) -> str:
        if self.pattern is not None:
            return f"a string matching {self.pattern}"
        return "a non-empty string" if self.nonempty else "a string"


class Int(Schema):
    __slots__ = ("maximum", "minimum")

    def __init__(
        self, minimum: int | None = None, maximum: int | None = None, what: str | None = None
    ) -> None:
        self.minimum, self.maximum, self.what = minimum, maximum, what

    def _describe(self) -> str:
        return "an integer" + _bounds(self.minimum, self.maximum)


class Num(Schema):
    """A number (integers count). NaN is refused unless `nonfinite`, which also takes the strings nan, inf,
    -inf (how tipc writes non-finite values)."""

    __slots__ = ("exclusive_maximum", "exclusive_minimum", "maximum", "minimum", "nonfinite")

    def __init__(
        self,
        minimum: float | None = None,
        maximum: float | None = None,
        exclusive_minimum: bool = False,
        exclusive_maximum: bool = False,
        nonfinite: bool = False,
        what: str | None = None,
    ) -> None:
        self.minimum, self.maximum, self.what = minimum, maximum, what
        self.exclusive_minimum, self.exclusive_maximum, self.nonfinite = (
            exclusive_minimum,
            exclusive_maximum,
            nonfinite,
        )

    def _describe(self) -> str:
        low = (
            f" {'>' if self.exclusive_minimum else '>='} {self.minimum:g}" if self.minimum is not None else ""
        )
        high = (
            f" {'<' if self.exclusive_maximum else '<='} {self.maximum:g}" if self.maximum is not None else ""
        )
        return "a number" + low + (" and" if low and high else "") + high


class Bool(Schema):
    __slots__ = ()

    def _describe(self) -> str:
        return "true or false"


class Enum(Schema):
    __slots__ = ("values",)

    def __init__(self, values: tuple[Any, ...], what: str | None = None) -> None:
        self.values, self.what = values, what

    def _describe(self) -> str:
        if len(self.values) == 1:
            return repr(self.values[0])
        return "one of " + ", ".join(str(v) for v in self.values)


class Scalar(Schema):
    """Any single value: a string, number, boolean or null."""

    __slots__ = ()

    def _describe(self) -> str:
        return "a single value (string, number, boolean or null)"


class Anything(Schema):
    __slots__ = ()

    def _describe(self) -> str:
        return "any value"


class Seq(Schema):
    """A list of `item`. `one_or_many`: a single item stands for a one-item list; `nullable`: null is []."""

    __slots__ = ("item", "max_items", "min_items", "nullable", "one_or_many")

    def __init__(
        self,
        item: Schema,
        min_items: int = 0,
        max_items: int | None = None,
        one_or_many: bool = False,
        nullable: bool = False,
        what: str | None = None,
    ) -> None:
        self.item, self.min_items, self.max_items, self.what = item, min_items, max_items, what
        self.one_or_many, self.nullable = one_or_many, nullable

    def _describe(self) -> str:
        size = "a non-empty list" if self.min_items == 1 else "a list"
        if self.min_items > 1:
            size = f"a list of at least {self.min_items}"
        if self.max_items == 1:
            size = "a one-item list"
        return f"{size} of {_plural(self.item.describe())}"


class Field:
    """A known key of a Map. `nullable`: null counts as absent (the default applies); `identifies`: the key
    names the kind of file (`schema: tipc.ruleset/1`), so it is required and checked before the rest."""

    __slots__ = ("default", "identifies", "nullable", "required", "schema")

    def __init__(
        self,
        schema: Schema,
        required: bool = False,
        default: Any = None,
        nullable: bool = False,
        identifies: bool = False,
    ) -> None:
        self.schema, self.required, self.default = schema, required, default
        self.nullable, self.identifies = nullable, identifies


class Map(Schema):
    """A mapping. `fields` are the known keys; other keys are checked against `values` when given, else kept
    as they are (`closed=False`) or refused with a "did you mean" (closed, the default)."""

    __slots__ = ("closed", "fields", "hint", "keys", "min_items", "nullable", "values")

    def __init__(
        self,
        fields: Mapping[str, Field] | None = None,
        values: Schema | None = None,
        keys: Str | None = None,
        closed: bool = True,
        nullable: bool = False,
        min_items: int = 0,
        hint: str = "",  # added to the unknown-key message
        what: str | None = None,
    ) -> None:
        self.fields: Mapping[str, Field] = fields or {}
        self.values, self.keys, self.closed, self.nullable = values, keys, closed, nullable
        self.min_items, self.hint, self.what = min_items, hint, what

    def _describe(self) -> str:
        if self.fields and self.closed and self.values is None:
            return "a mapping with " + ", ".join(self.fields)
        return "a non-empty mapping" if self.min_items else "a mapping"


class OneOf(Schema):
    """The first alternative of the value's kind decides (alternatives must differ in kind)."""

    __slots__ = ("options",)

    def __init__(self, options: tuple[Schema, ...], what: str | None = None) -> None:
        self.options, self.what = options, what

    def _describe(self) -> str:
        return " or ".join(o.describe() for o in self.options)


class Tagged(Schema):
    """A mapping with exactly one key naming a variant (an operator) whose value has that variant's schema."""

    __slots__ = ("noun", "variants")

    def __init__(
        self, variants: Mapping[str, Schema], noun: str = "operator", what: str | None = None
    ) -> None:
        self.variants, self.noun, self.what = variants, noun, what

    def _describe(self) -> str:
        return f"a mapping with exactly one {self.noun}"


class Lazy(Schema):
    """A schema built on first use (for recursive shapes: checks inside combinators)."""

    __slots__ = ("_built", "build")

    def __init__(self, build: Callable[[], Schema]) -> None:
        self.build, self.what = build, None
        self._built: Schema | None = None

    def get(self) -> Schema:
        if self._built is None:
            self._built = self.build()
        return self._built

    def describe(self) -> str:
        return self.get().describe()

    def __repr__(self) -> str:
        return "Lazy(...)"


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" from {low:g} to {high:g}"
    if low is not None:
        return f" >= {low:g}"
    if high is not None:
        return f" <= {high:g}"
    return ""


_NOUNS = frozenset(
    {"mapping", "string", "integer", "number", "glob", "regex", "path", "check", "rule", "condition"}
)


def _plural(what: str) -> str:
    """`a non-empty string` -> `non-empty strings` (for "a list of ...")."""
    words = what.split(" ")
    if words[0] in ("a", "an"):
        words = words[1:]
    for i, word in enumerate(words):
        if word in _NOUNS:
            words[i] = word + ("es" if word.endswith("x") else "s")
            break
    return " ".join(words)


# ------------------------------------------------------------------------------------------- validation


class Issue:
    """One located problem: `keys` is the path in the document, `pos` where it is written (None for plain
    data without positions)."""

    __slots__ = ("keys", "message", "pos")

    def __init__(self, keys: Keys, pos: Pos | None, message: str) -> None:
        self.keys, self.pos, self.message = keys, pos, message

    def __repr__(self) -> str:
        return f"Issue({self.keys!r}, {self.pos!r}, {self.message!r})"

    @property
    def where(self) -> str:
        return dotted(self.keys)

    def text(self) -> str:
        return f"{self.where}: {self.message}"


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


class _Invalid(Exception):
    """Internal: unwinds a branch of the walk once its issue is recorded."""


_BAD = object()
_ABSENT = object()


def got(value: Any) -> str:
    """What a value is, for `got <what>`."""
    if isinstance(value, LMap | dict):
        return "an empty mapping" if not _keys(value) else "a mapping"
    if isinstance(value, LSeq | list):
        return "an empty list" if not (value.items if isinstance(value, LSeq) else value) else "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "...'"
    return f"{type(value).__name__} {value!r}"[:60]


def _suggest(word: str, known: list[str]) -> str:
    import difflib  # only on the error path: keeps start-up lean

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


class _Walker:
    def __init__(self, limit: int) -> None:
        self.issues: list[Issue] = []
        self.limit = limit

    def fail(self, keys: Keys, pos: Pos | None, message: str) -> Any:
        self.issues.append(Issue(keys, pos, message))
        if len(self.issues) >= self.limit:
            raise _Invalid
        return _BAD

    def expected(self, schema: Schema, value: Any, keys: Keys, pos: Pos | None, detail: str = "") -> Any:
        extra = f" ({detail})" if detail else ""
        return self.fail(keys, pos, f"expected {schema.describe()}, got {got(value)}{extra}")

    def walk(self, value: Any, schema: Schema, keys: Keys, pos: Pos | None) -> Any:
        if isinstance(schema, Lazy):
            schema = schema.get()
        handler = _HANDLERS.get(type(schema))
        if handler is None:
            raise TypeError(f"not a schema: {schema!r}")
        return handler(self, value, schema, keys, pos)

    def _int(self, value: Any, schema: Int, keys: Keys, pos: Pos | None) -> Any:
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or (schema.minimum is not None and value < schema.minimum)
            or (schema.maximum is not None and value > schema.maximum)
        ):
            return self.expected(schema, value, keys, pos)
        return value

    def _bool(self, value: Any, schema: Bool, keys: Keys, pos: Pos | None) -> Any:
        return value if isinstance(value, bool) else self.expected(schema, value, keys, pos)

    def _enum(self, value: Any, schema: Enum, keys: Keys, pos: Pos | None) -> Any:
        hashable = not isinstance(value, LMap | LSeq | dict | list)
        if hashable and any(value == v and type(value) is type(v) for v in schema.values):
            return value
        return self.expected(schema, value, keys, pos)

    def _scalar(self, value: Any, schema: Scalar, keys: Keys, pos: Pos | None) -> Any:
        if value is None or isinstance(value, str | int | float):
            return value
        return self.expected(schema, value, keys, pos)

    def _anything(self, value: Any, schema: Anything, keys: Keys, pos: Pos | None) -> Any:
        return plain(value)

    def _str(self, value: Any, schema: Str, keys: Keys, pos: Pos | None) -> Any:
        if schema.scalar and isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or (schema.nonempty and not value.strip()):
            return self.expected(schema, value, keys, pos)
        if schema.pattern is not None and not re.fullmatch(schema.pattern, value):
            return self.expected(schema, value, keys, pos)
        if schema.check is not None:
            problem = schema.check(value)
            if problem is not None:
                return self.expected(schema, value, keys, pos, problem)
        return value

    def _num(self, value: Any, schema: Num, keys: Keys, pos: Pos | None) -> Any:
        given = value
        if schema.nonfinite and isinstance(value, str) and value in ("nan", "inf", "-inf"):
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return self.expected(schema, given, keys, pos)
        if value != value:
            return value if schema.nonfinite else self.expected(schema, given, keys, pos)
        low, high = schema.minimum, schema.maximum
        if (low is not None and (value <= low if schema.exclusive_minimum else value < low)) or (
            high is not None and (value >= high if schema.exclusive_maximum else value > high)
        ):
            return self.expected(schema, given, keys, pos)
        return value

    def _entries(self, value: Any) -> Iterator[tuple[Any, Any, Pos | None]]:
        if isinstance(value, LMap):
            for k, v in value.items.items():
                yield k, v, value.pos_of(k)
        else:
            for k, v in value.items():
                yield k, v, None

    def _map(self, value: Any, schema: Map, keys: Keys, pos: Pos | None) -> Any:
        if value is None and schema.nullable:
            value = {}
        if not isinstance(value, LMap | dict):
            return self.expected(schema, value, keys, pos)
        if not self._identified(value, schema, keys, pos):
            return _BAD
        out: dict[str, Any] = {}
        bad = self._given(value, schema, keys, pos, out)
        bad = self._not_given(_keys(value), schema, keys, pos, out) or bad
        if not bad and len(out) < schema.min_items:
            return self.expected(schema, value, keys, pos)
        return _BAD if bad else out

    def _given(self, value: Any, schema: Map, keys: Keys, pos: Pos | None, out: dict[str, Any]) -> bool:
        """Check the mapping's entries into `out`; True if any was bad."""
        own: Pos | None = (value.line, value.col) if isinstance(value, LMap) else pos
        bad = False
        for key, item, kpos in self._entries(value):
            if not isinstance(key, str):
                bad = self.fail(keys, own, f"keys must be strings, got {got(key)}") is _BAD or bad
                continue
            result = self._map_entry(schema, key, item, (*keys, key), kpos)
            if result is _BAD:
                bad = True
            elif result is not _ABSENT:
                out[key] = result
        return bad

    def _not_given(self, raw: Any, schema: Map, keys: Keys, pos: Pos | None, out: dict[str, Any]) -> bool:
        """The fields the mapping leaves out: a default into `out`, or a missing required key (True)."""
        bad = False
        for name, spec in schema.fields.items():
            if name in out or (name in raw and (raw[name] is not None or not spec.nullable)):
                continue  # given (and checked above)
            if spec.required:
                bad = self.fail(keys, pos, f"missing required key {name!r}") is _BAD or bad
            elif spec.default is not None:
                out[name] = spec.default
        return bad

    def _identified(self, value: Any, schema: Map, keys: Keys, pos: Pos | None) -> bool:
        """The fields naming the kind of file, checked first: without them the rest is noise."""
        raw = _keys(value)
        for name, spec in schema.fields.items():
            if not spec.identifies:
                continue
            if name not in raw:
                self.fail(keys, pos, f"missing required key {name!r}")
                return False
            if self.walk(raw[name], spec.schema, (*keys, name), _key_pos(value, name, pos)) is _BAD:
                return False
        return True

    def _map_entry(self, schema: Map, key: str, item: Any, here: Keys, kpos: Pos | None) -> Any:
        spec = schema.fields.get(key)
        if spec is not None:
            if item is None and spec.nullable:
                return _ABSENT
            return self.walk(item, spec.schema, here, kpos)
        if schema.values is not None:
            if schema.keys is not None and self._str(key, schema.keys, here, kpos) is _BAD:
                return _BAD
            return self.walk(item, schema.values, here, kpos)
        if not schema.closed:
            return plain(item)
        known = sorted(schema.fields)
        hint = f" ({schema.hint})" if schema.hint else ""
        return self.fail(
            here,
            kpos,
            f"unknown key {key!r}; {_suggest(key, known)}expected one of: {', '.join(known) or 'none'}{hint}",
        )

    def _seq(self, value: Any, schema: Seq, keys: Keys, pos: Pos | None) -> Any:
        if value is None and schema.nullable:
            return []
        if not isinstance(value, LSeq | list):
            if schema.one_or_many and value is not None and not isinstance(value, LMap | dict):
                one = self.walk(value, schema.item, keys, pos)
                return _BAD if one is _BAD else [one]
            return self.expected(schema, value, keys, pos)
        items = value.items if isinstance(value, LSeq) else value
        if len(items) < schema.min_items or (schema.max_items is not None and len(items) > schema.max_items):
            return self.expected(schema, value, keys, pos)
        out = []
        bad = False
        for i, item in enumerate(items):
            ipos = value.pos_of(i) if isinstance(value, LSeq) else pos
            result = self.walk(item, schema.item, (*keys, i), ipos)
            bad = bad or result is _BAD
            out.append(result)
        return _BAD if bad else out

    def _one_of(self, value: Any, schema: OneOf, keys: Keys, pos: Pos | None) -> Any:
        # The first alternative of the value's kind decides, so its message is the precise one.
        for option in schema.options:
            if _same_kind(value, option):
                return self.walk(value, option, keys, pos)
        return self.expected(schema, value, keys, pos)

    def _tagged(self, value: Any, schema: Tagged, keys: Keys, pos: Pos | None) -> Any:
        if not isinstance(value, LMap | dict) or len(_keys(value)) != 1:
            where = pos
            names = ""
            if isinstance(value, LMap | dict):
                names = f" with keys {', '.join(sorted(map(str, _keys(value))))}" if _keys(value) else ""
                where = (value.line, value.col) if isinstance(value, LMap) and value.items else pos
            return self.fail(keys, where, f"expected {schema.describe()}, got {got(value)}{names}")
        ((name, item, kpos),) = list(self._entries(value))
        if name not in schema.variants:
            known = sorted(schema.variants)
            return self.fail(
                (*keys, str(name)),
                kpos,
                f"unknown {schema.noun} {name!r}; {_suggest(str(name), known)}known: {', '.join(known)}",
            )
        result = self.walk(item, schema.variants[name], (*keys, name), kpos)
        return _BAD if result is _BAD else {name: result}


_Handler = Callable[[_Walker, Any, Any, Keys, "Pos | None"], Any]
_HANDLERS: dict[type, _Handler] = {
    Map: _Walker._map,
    Seq: _Walker._seq,
    Str: _Walker._str,
    Int: _Walker._int,
    Num: _Walker._num,
    Bool: _Walker._bool,
    Enum: _Walker._enum,
    Scalar: _Walker._scalar,
    Anything: _Walker._anything,
    OneOf: _Walker._one_of,
    Tagged: _Walker._tagged,
}


def _key_pos(value: Any, key: str, default: Pos | None) -> Pos | None:
    return value.pos_of(key) if isinstance(value, LMap) else default


def _keys(value: Any) -> Any:
    return value.items if isinstance(value, LMap) else value


def _same_kind(value: Any, schema: Schema) -> bool:
    if isinstance(schema, Lazy):
        schema = schema.get()
    if isinstance(schema, Map | Tagged):
        return isinstance(value, LMap | dict)
    if isinstance(schema, Seq):
        return isinstance(value, LSeq | list)
    if isinstance(schema, Str):
        return isinstance(value, str) or (
            schema.scalar and isinstance(value, int | float) and not isinstance(value, bool)
        )
    if isinstance(schema, Int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(schema, Num):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(schema, Bool):
        return isinstance(value, bool)
    if isinstance(schema, Scalar | Enum):
        return not isinstance(value, LMap | LSeq | dict | list)
    return True


def validate(
    value: Any, schema: Schema, *, root: Pos | None = None, limit: int = 1
) -> tuple[Any, list[Issue]]:
    """Check `value` (a located tree or plain data) against `schema`: (plain value with defaults, []) when it
    fits, else (None, up to `limit` located issues)."""
    walker = _Walker(max(1, limit))
    if root is None and isinstance(value, LMap | LSeq):
        root = (value.line, value.col)
    try:
        result = walker.walk(value, schema, (), root)
    except _Invalid:
        result = _BAD
    except RecursionError:
        return None, [Issue((), root, "nesting is too deep")]
    if result is _BAD or walker.issues:
        return None, walker.issues
    return result, []


# ------------------------------------------------------------------------------------------- documents


class Document:
    """One YAML file parsed once with positions. Every problem is an `error` (ConfigError or a subclass such
    as RuleError): `path:line:col: <where>: <message>`."""

    def __init__(self, text: str, path: str, error: type[ConfigError] = ConfigError) -> None:
        self.path = path
        self.error_type = error
        try:
            self.tree, self.root = _load(text)
        except YamlShapeError as exc:
            raise error(path, exc.line, exc.message, exc.col) from None
        if self.tree is None:
            self.root = (1, 1)

    @classmethod
    def from_bytes(cls, data: bytes, path: str, error: type[ConfigError] = ConfigError) -> Document:
        return cls(decode(data, path, error), path, error)

    def conform(self, schema: Schema) -> Any:
        """The document as plain data shaped by `schema`; raises the first problem, located."""
        value, issues = validate(self.tree, schema, root=self.root)
        if issues:
            first = issues[0]
            raise self._at(first.pos, first.text())
        return value

    def pos(self, keys: Keys) -> Pos:
        return pos_at(self.tree, keys) or self.root

    def line(self, keys: Keys) -> int:
        return self.pos(keys)[0]

    def error(self, keys: Keys, message: str) -> ConfigError:
        """A located problem at `keys` that the schema cannot express."""
        return self._at(self.pos(keys), f"{dotted(keys)}: {message}")

    def _at(self, pos: Pos | None, message: str) -> ConfigError:
        line, col = pos if pos is not None else (None, None)
        return self.error_type(self.path, line, message, col)


def decode(data: bytes, path: str, error: type[ConfigError] = ConfigError) -> str:
    """UTF-8 text of a file's bytes; the first bad byte is a located error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(path, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", col) from None


def regex_problem(text: str) -> str | None:
    """For `Str(check=...)`: why `text` is not a Python regular expression, None when it compiles."""
    import warnings

    with warnings.catch_warnings():
        # Python warns of patterns whose meaning a later version changes ("possible nested set"): refused
        # here, located, rather than a warning at match time.
        warnings.simplefilter("error", FutureWarning)
        try:
            re.compile(text)
        except re.error as exc:
            return f"not a valid regular expression: {exc}"
        except FutureWarning as exc:
            return f"a regular expression whose meaning changes in a later Python: {exc}"
    return None
