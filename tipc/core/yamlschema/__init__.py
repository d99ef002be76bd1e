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

This package's public face; its modules, each importing only those listed before it: `located` (the
located tree, paths of keys), `reading` (YAML text -> located tree), `nodes` (the schema node types),
`validation` (a tree checked against a schema), `document` (a file as loaders use it).
"""

from __future__ import annotations

from tipc.core.yamlschema.document import Document, regex_problem
from tipc.core.yamlschema.located import (
    Keys,
    LMap,
    LSeq,
    Pos,
    YamlShapeError,
    dotted,
    line_at,
    plain,
    pos_at,
)
from tipc.core.yamlschema.nodes import (
    Anything,
    Bool,
    Enum,
    Field,
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
from tipc.core.yamlschema.reading import MAX_DEPTH, MAX_FOREIGN_VALUES, decode, load_located
from tipc.core.yamlschema.validation import Issue, got, validate

__all__ = [
    "MAX_DEPTH",
    "MAX_FOREIGN_VALUES",
    "Anything",
    "Bool",
    "Document",
    "Enum",
    "Field",
    "Int",
    "Issue",
    "Keys",
    "LMap",
    "LSeq",
    "Lazy",
    "Map",
    "Num",
    "OneOf",
    "Pos",
    "Scalar",
    "Schema",
    "Seq",
    "Str",
    "Tagged",
    "YamlShapeError",
    "decode",
    "dotted",
    "got",
    "line_at",
    "load_located",
    "plain",
    "pos_at",
    "regex_problem",
    "validate",
]
