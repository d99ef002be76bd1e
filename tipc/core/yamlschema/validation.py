"""One validation function (`validate`): a located tree (or plain data) walked against a schema, giving
plain dicts and lists with defaults filled and the problems found, each an `Issue` located where it is
written and worded `<where>: expected <what>, got <what>` (`got` says what a value is).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TypeAlias

from tipc.core.yamlschema.located import Keys, LMap, LSeq, Pos, dotted, plain
from tipc.core.yamlschema.nodes import (
    Anything,
    Bool,
    Enum,
    Int,
    Lazy,
    Map,
    Num,
    OneOf,
    Scalar,
    Schema,
    Seq,
    Str,
    Tagged,
)


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


class _Invalid(Exception):
    """Internal: unwinds a branch of the walk once its issue is recorded."""


_BAD = object()


_ABSENT = object()
# A mapping's entries: YAML keys may be any scalar (a non-string key is reported, not assumed away).
_Raw: TypeAlias = "dict[str, object] | dict[object, object]"


def got(value: object) -> str:
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

    def fail(self, keys: Keys, pos: Pos | None, message: str) -> object:
        self.issues.append(Issue(keys, pos, message))
        if len(self.issues) >= self.limit:
            raise _Invalid
        return _BAD

    def expected(
        self, schema: Schema, value: object, keys: Keys, pos: Pos | None, detail: str = ""
    ) -> object:
        extra = f" ({detail})" if detail else ""
        return self.fail(keys, pos, f"expected {schema.describe()}, got {got(value)}{extra}")

    def walk(self, value: object, schema: Schema, keys: Keys, pos: Pos | None) -> object:
        if isinstance(schema, Lazy):
            schema = schema.get()
        handler = _HANDLERS.get(type(schema))
        if handler is None:
            raise TypeError(f"not a schema: {schema!r}")
        return handler(self, value, schema, keys, pos)

    def _int(self, value: object, schema: Int, keys: Keys, pos: Pos | None) -> object:
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or (schema.minimum is not None and value < schema.minimum)
            or (schema.maximum is not None and value > schema.maximum)
        ):
            return self.expected(schema, value, keys, pos)
        return value

    def _bool(self, value: object, schema: Bool, keys: Keys, pos: Pos | None) -> object:
        return value if isinstance(value, bool) else self.expected(schema, value, keys, pos)

    def _enum(self, value: object, schema: Enum, keys: Keys, pos: Pos | None) -> object:
        hashable = not isinstance(value, LMap | LSeq | dict | list)
        if hashable and any(value == v and type(value) is type(v) for v in schema.values):
            return value
        return self.expected(schema, value, keys, pos)

    def _scalar(self, value: object, schema: Scalar, keys: Keys, pos: Pos | None) -> object:
        if value is None or isinstance(value, str | int | float):
            return value
        return self.expected(schema, value, keys, pos)

    def _anything(self, value: object, schema: Anything, keys: Keys, pos: Pos | None) -> object:
        return plain(value)

    def _str(self, value: object, schema: Str, keys: Keys, pos: Pos | None) -> object:
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

    def _num(self, value: object, schema: Num, keys: Keys, pos: Pos | None) -> object:
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

    def _entries(self, value: LMap | _Raw) -> Iterator[tuple[object, object, Pos | None]]:
        if isinstance(value, LMap):
            for key, item in value.items.items():
                yield key, item, value.pos_of(key)
        else:
            for k, v in value.items():
                yield k, v, None

    def _map(self, value: object, schema: Map, keys: Keys, pos: Pos | None) -> object:
        if value is None and schema.nullable:
            value = {}
        if not isinstance(value, LMap | dict):
            return self.expected(schema, value, keys, pos)
        if not self._identified(value, schema, keys, pos):
            return _BAD
        out: dict[str, object] = {}
        bad = self._given(value, schema, keys, pos, out)
        bad = self._not_given(_keys(value), schema, keys, pos, out) or bad
        if not bad and len(out) < schema.min_items:
            return self.expected(schema, value, keys, pos)
        return _BAD if bad else out

    def _given(
        self, value: LMap | _Raw, schema: Map, keys: Keys, pos: Pos | None, out: dict[str, object]
    ) -> bool:
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

    def _not_given(self, raw: _Raw, schema: Map, keys: Keys, pos: Pos | None, out: dict[str, object]) -> bool:
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

    def _identified(self, value: LMap | _Raw, schema: Map, keys: Keys, pos: Pos | None) -> bool:
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

    def _map_entry(self, schema: Map, key: str, item: object, here: Keys, kpos: Pos | None) -> object:
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

    def _seq(self, value: object, schema: Seq, keys: Keys, pos: Pos | None) -> object:
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

    def _one_of(self, value: object, schema: OneOf, keys: Keys, pos: Pos | None) -> object:
        # The first alternative of the value's kind decides, so its message is the precise one.
        for option in schema.options:
            if _same_kind(value, option):
                return self.walk(value, option, keys, pos)
        return self.expected(schema, value, keys, pos)

    def _tagged(self, value: object, schema: Tagged, keys: Keys, pos: Pos | None) -> object:
        if not isinstance(value, LMap | dict) or len(_keys(value)) != 1:
            where = pos
            names = ""
            if isinstance(value, LMap | dict):
                names = f" with keys {', '.join(sorted(map(str, _keys(value))))}" if _keys(value) else ""
                where = (value.line, value.col) if isinstance(value, LMap) and value.items else pos
            return self.fail(keys, where, f"expected {schema.describe()}, got {got(value)}{names}")
        ((name, item, kpos),) = list(self._entries(value))
        if not isinstance(name, str) or name not in schema.variants:
            known = sorted(schema.variants)
            return self.fail(
                (*keys, str(name)),
                kpos,
                f"unknown {schema.noun} {name!r}; {_suggest(str(name), known)}known: {', '.join(known)}",
            )
        result = self.walk(item, schema.variants[name], (*keys, name), kpos)
        return _BAD if result is _BAD else {name: result}


# Each handler takes its own schema class: the table pairs them, so the schema parameter is not one type.
_Handler = Callable[..., object]


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


def _key_pos(value: object, key: str, default: Pos | None) -> Pos | None:
    return value.pos_of(key) if isinstance(value, LMap) else default


def _keys(value: LMap | _Raw) -> _Raw:
    return value.items if isinstance(value, LMap) else value


def _same_kind(value: object, schema: Schema) -> bool:
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
    value: object, schema: Schema, *, root: Pos | None = None, limit: int = 1
) -> tuple[object, list[Issue]]:
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
