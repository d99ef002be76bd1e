"""The schema vocabulary: declarative node types (`Schema` and its kinds: `Str`, `Int`, `Num`, `Bool`,
`Enum`, `Scalar`, `Anything`, `Seq`, `Map` of `Field`s, `OneOf`, `Tagged`, `Lazy` for recursion), each
saying in words what it expects (`describe`). Values only: checking a tree against them is
tipc.core.yamlschema.validation's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

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

    def __init__(self, values: tuple[object, ...], what: str | None = None) -> None:
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
        default: object = None,
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
