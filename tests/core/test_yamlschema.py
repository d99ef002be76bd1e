"""tipc.core.yamlschema: positions kept by the reader, each schema kind, and the located message format."""

from __future__ import annotations

from typing import Any

import pytest

from tipc.core.errors import ConfigError, RuleError
from tipc.core.yamlschema import (
    Anything,
    Bool,
    Document,
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
    YamlShapeError,
    decode,
    dotted,
    line_at,
    load_located,
    plain,
    pos_at,
    regex_problem,
    validate,
)

# --- reading ------------------------------------------------------------------------------------------


def test_positions_of_keys_and_items() -> None:
    tree = load_located("a:\n  b:\n    - 1\n    - x: 2\nc: {d: 3}\n")
    assert line_at(tree, ("a",)) == 1 and line_at(tree, ("a", "b")) == 2
    assert pos_at(tree, ("a", "b", 1)) == (4, 7) and pos_at(tree, ("a", "b", 1, "x")) == (4, 7)
    assert pos_at(tree, ("c", "d")) == (5, 5)
    assert line_at(tree, ("a", "missing", "deeper")) == 1  # the deepest part that exists
    assert line_at({"a": 1}, ("a",)) is None  # plain data has no positions
    assert plain(tree) == {"a": {"b": [1, {"x": 2}]}, "c": {"d": 3}}


@pytest.mark.parametrize(
    ("text", "line", "col", "words"),
    [
        ("a: 1\nb: 2\nc: \x01\n", 3, 4, "#x0001"),
        ("a: [1\n", 2, 1, "invalid YAML"),
        ("a: 1\na: 2\n", 2, 1, "duplicate key 'a'"),
        ("a: &x [1]\nb: *x\n", 1, 1, "aliases are not supported"),
        ("a: 1\n<<: {b: 2}\n", 2, 1, "merge keys"),
        ("d: 2024-01-01\n", 1, 4, "unsupported type 'timestamp'"),
        ("x: !!python/object:os.system {}\n", 1, 4, "unsupported type"),
        ("? [a]\n: 1\n", 1, 3, "keys must be plain strings"),
        ("1: a\n", 1, 1, "must be a string"),
        ("a: " + "[" * 70 + "]" * 70 + "\n", 1, None, "deeper than 64"),
    ],
)
@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
def test_unusable_yaml_is_located(
    text: str, line: int, col: int | None, words: str, loader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    if not hasattr(yaml, loader):
        pytest.skip(f"PyYAML built without {loader}")
    monkeypatch.setattr("tipc.core.yamlschema.reading._Loader", getattr(yaml, loader))
    with pytest.raises(YamlShapeError) as caught:
        load_located(text)
    assert caught.value.line == line and words in caught.value.message, caught.value.message
    if col is not None:
        assert caught.value.col == col


def test_document_errors_carry_the_error_class_and_position() -> None:
    with pytest.raises(RuleError) as caught:
        Document("a: [1\n", "r.yaml", RuleError)
    assert caught.value.render().startswith("r.yaml:2:1: invalid YAML")
    assert Document("", "e.yaml").tree is None and Document("", "e.yaml").root == (1, 1)
    doc = Document("\n\n  7\n", "s.yaml")
    assert doc.root == (3, 3) and doc.error((), "no").render() == "s.yaml:3:3: top level: no"


def test_decode_locates_the_first_bad_byte() -> None:
    assert decode(b"a: 1\n", "f") == "a: 1\n"
    with pytest.raises(ConfigError) as caught:
        decode(b"a: 1\nb: x\xff\n", "f.yaml")
    assert (caught.value.line, caught.value.col) == (2, 5) and "0xff" in caught.value.message


# --- validation ---------------------------------------------------------------------------------------


def _issue(text: str, schema: Schema) -> str:
    with pytest.raises(ConfigError) as caught:
        Document(text, "f.yaml").conform(schema)
    return caught.value.render()


SCHEMA = Map(
    {
        "name": Field(Str(), True),
        "count": Field(Int(minimum=1), default=3),
        "ratio": Field(Num(minimum=0, maximum=1, exclusive_maximum=True)),
        "enabled": Field(Bool(), default=False),
        "mode": Field(Enum(("fast", "slow"))),
        "tags": Field(Seq(Str(), one_or_many=True)),
        "extra": Field(Map(closed=False, nullable=True)),
        "note": Field(Str(), nullable=True),
    }
)


def test_a_fitting_document_gives_plain_data_with_defaults() -> None:
    data = Document("name: n\nratio: 0.5\ntags: one\nextra:\nnote: null\n", "f.yaml").conform(SCHEMA)
    assert data == {"name": "n", "ratio": 0.5, "tags": ["one"], "extra": {}, "count": 3, "enabled": False}


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("count: 2\n", "f.yaml:1:1: top level: missing required key 'name'"),
        ("name: n\ncount: 0\n", "f.yaml:2:1: count: expected an integer >= 1, got int 0"),
        ("name: n\ncount: true\n", "f.yaml:2:1: count: expected an integer >= 1, got true"),
        ("name: n\nratio: 1\n", "f.yaml:2:1: ratio: expected a number >= 0 and < 1, got int 1"),
        ("name: n\nratio: .nan\n", "f.yaml:2:1: ratio: expected a number >= 0 and < 1, got float nan"),
        ("name: ''\n", "f.yaml:1:1: name: expected a non-empty string, got ''"),
        ("name: n\nmode: quick\n", "f.yaml:2:1: mode: expected one of fast, slow, got 'quick'"),
        ("name: n\ntags: [a, 3]\n", "f.yaml:2:11: tags[1]: expected a non-empty string, got int 3"),
        ("name: n\nenabled: yes please\n", "f.yaml:2:1: enabled: expected true or false, got 'yes please'"),
        ("on: 1\n", "f.yaml:1:1: mapping key True must be a string"),
        (
            "name: n\ncuont: 2\n",
            "f.yaml:2:1: cuont: unknown key 'cuont'; did you mean 'count'? expected one of: count, enabled, "
            "extra, mode, name, note, ratio, tags",
        ),
        (
            "- a\n",
            "f.yaml:1:1: top level: expected a mapping with name, count, ratio, enabled, mode, tags, extra, "
            "note, got a list",
        ),
    ],
)
def test_every_problem_reads_file_line_col_where_expected_got(text: str, rendered: str) -> None:
    assert _issue(text, SCHEMA).startswith(rendered)


def test_nested_paths_and_quoted_keys() -> None:
    schema = Map(values=Map({"op": Field(Enum(("<", ">")))}))
    assert _issue("a.b:\n  op: '='\n", schema) == "f.yaml:2:3: ['a.b'].op: expected one of <, >, got '='"
    assert dotted(("rules", 2, "check", "all_of", 0)) == "rules[2].check.all_of[0]"
    assert dotted(()) == "top level"


def test_str_pattern_check_and_scalar() -> None:
    assert "expected 64 hex digits" in _issue(
        "h: abc\n", Map({"h": Field(Str(pattern="[0-9a-f]{64}", what="64 hex digits"))})
    )
    message = _issue("r: '(x'\n", Map({"r": Field(Str(check=regex_problem, what="a regex"))}))
    assert "expected a regex, got '(x' (not a valid regular expression:" in message
    assert Document("v: 12\n", "f").conform(Map({"v": Field(Str(scalar=True))})) == {"v": "12"}


def test_seq_bounds_and_nullable() -> None:
    one = Map({"x": Field(Seq(Int(), min_items=1, max_items=1))})
    assert "expected a one-item list of integers, got a list" in _issue("x: [1, 2]\n", one)
    assert "expected a one-item list of integers, got an empty list" in _issue("x: []\n", one)
    assert Document("x:\n", "f").conform(Map({"x": Field(Seq(Int(), nullable=True))})) == {"x": []}


def test_one_of_lets_the_matching_kind_explain() -> None:
    schema = Map({"cmd": Field(OneOf((Str(), Seq(Str(), min_items=1))))})
    assert Document("cmd: a b\n", "f").conform(schema) == {"cmd": "a b"}
    assert Document("cmd: [a, b]\n", "f").conform(schema) == {"cmd": ["a", "b"]}
    assert "cmd[0]: expected a non-empty string, got int 1" in _issue("cmd: [1]\n", schema)
    assert "cmd: expected a non-empty string or a non-empty list of non-empty strings, got int 3" in _issue(
        "cmd: 3\n", schema
    )


def test_tagged_recursion_through_lazy() -> None:
    check: Schema = Tagged(
        {"leaf": Map({"v": Field(Int(), True)}), "all": Seq(Lazy(lambda: check), min_items=1)}, what="a check"
    )
    doc = Document("c:\n  all:\n    - leaf: {v: 1}\n    - all: [{leaf: {v: x}}]\n", "f.yaml")
    with pytest.raises(ConfigError) as caught:
        doc.conform(Map({"c": Field(check)}))
    assert caught.value.render() == "f.yaml:4:21: c.all[1].all[0].leaf.v: expected an integer, got 'x'"
    assert "unknown operator 'lef'; did you mean 'leaf'? known: all, leaf" in _issue(
        "c: {lef: {}}\n", Map({"c": Field(check)})
    )
    assert "expected a check, got a mapping with keys all, leaf" in _issue(
        "c: {leaf: {v: 1}, all: []}\n", Map({"c": Field(check)})
    )


def test_validate_collects_issues_and_reads_plain_data() -> None:
    value, issues = validate({"count": "x", "bogus": 1}, SCHEMA, limit=10)
    assert value is None
    assert [(i.where, i.pos) for i in issues] == [("count", None), ("bogus", None), ("top level", None)]
    value, issues = validate({"name": "n", 3: 1}, SCHEMA)
    assert "keys must be strings" in issues[0].message
    assert validate({"name": "n"}, SCHEMA) == ({"name": "n", "count": 3, "enabled": False}, [])
    assert validate([1, {"a": None}], Seq(Anything())) == ([1, {"a": None}], [])
    assert validate("x", Scalar()) == ("x", [])


def test_document_error_locates_semantic_problems() -> None:
    doc = Document("rules:\n  - id: a\n  - id: a\n", "r.yaml", RuleError)
    err = doc.error(("rules", 1, "id"), "duplicate rule id 'a'")
    assert isinstance(err, RuleError) and err.render() == "r.yaml:3:5: rules[1].id: duplicate rule id 'a'"


def test_nonfinite_numbers_as_tipc_writes_them() -> None:
    schema = Map({"m": Field(Num(nonfinite=True)), "p": Field(Num(minimum=0, nonfinite=True))})
    data: dict[str, Any] = Document("m: nan\np: inf\n", "f").conform(schema)
    assert data["m"] != data["m"] and data["p"] == float("inf")
    assert "expected a number >= 0, got '-inf'" in _issue("p: '-inf'\n", schema)


def test_the_field_naming_the_kind_of_file_is_checked_first() -> None:
    schema = Map({"rules": Field(Seq(Int()), True), "schema": Field(Enum(("x/1",)), identifies=True)})
    assert _issue("rules: 5\n", schema) == "f.yaml:1:1: top level: missing required key 'schema'"
    assert _issue("rules: 5\nschema: y/1\n", schema) == "f.yaml:2:1: schema: expected 'x/1', got 'y/1'"
    assert (
        _issue("rules: 5\nschema: x/1\n", schema)
        == "f.yaml:1:1: rules: expected a list of integers, got int 5"
    )


def test_a_foreign_file_is_read_as_pyyaml_reads_it_with_positions() -> None:
    text = (
        "base: &b {lr: 0.1, use_gpu: true}\n"
        "Global:\n  <<: *b\n  lr: 0.2\n"
        "opt: !Piecewise {gamma: 0.1}\n"
        "when: 2024-01-01\n"
        "tag: !Custom text\n"
        "3: int key\n"
        "dup: 1\ndup: 2\n"
    )
    tree = load_located(text, foreign=True)
    data = plain(tree)
    assert isinstance(data, dict)
    assert data["Global"] == {"lr": 0.2, "use_gpu": True}
    assert pos_at(tree, ("Global", "use_gpu")) == (1, 20)  # where the merged key is written
    assert data["opt"] == {"gamma": 0.1} and data["tag"] == "text" and data["3"] == "int key"
    assert str(data["when"]) == "2024-01-01" and data["dup"] == 2
    with pytest.raises(YamlShapeError, match="aliases are not supported"):
        load_located(text)  # tipc's own files stay strict


def test_a_foreign_file_cannot_expand_without_bound() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    with pytest.raises(YamlShapeError, match="values"):
        load_located("\n".join(lines) + "\n", foreign=True)
