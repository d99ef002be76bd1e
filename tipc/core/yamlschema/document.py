"""A YAML file as loaders use it (`Document`): parsed once with positions, conformed to its schema (the
first problem raised, located), and the problems a schema cannot express raised at a path with
`Document.error`, all as `path:line:col: <where>: <message>`; and `regex_problem`, the check a schema's
regex fields share.
"""

from __future__ import annotations

import re
from typing import Any

from tipc.core.errors import ConfigError
from tipc.core.yamlschema.located import Keys, Pos, YamlShapeError, dotted, pos_at
from tipc.core.yamlschema.nodes import Schema
from tipc.core.yamlschema.reading import _load, decode
from tipc.core.yamlschema.validation import validate


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
