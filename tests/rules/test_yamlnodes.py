from __future__ import annotations


def test_line_at_names_the_line_of_a_path() -> None:
    from tipc.rules.yamlnodes import line_at, load_located

    tree = load_located("a:\n  b:\n    - 1\n    - x: 2\nc: 3\n")
    assert line_at(tree, ("a",)) == 1 and line_at(tree, ("a", "b")) == 2
    assert line_at(tree, ("a", "b", 1)) == 4 and line_at(tree, ("a", "b", 1, "x")) == 4
    assert line_at(tree, ("c",)) == 5
    assert line_at(tree, ("a", "missing", "deeper")) == 1  # the deepest part that exists
    assert line_at({"a": 1}, ("a",)) is None  # plain data has no lines


def test_a_control_character_is_located() -> None:
    import pytest

    from tipc.rules.yamlnodes import YamlShapeError, load_located

    with pytest.raises(YamlShapeError) as caught:
        load_located("a: 1\nb: 2\nc: \x01\n")
    assert caught.value.line == 3 and "#x0001" in caught.value.message
