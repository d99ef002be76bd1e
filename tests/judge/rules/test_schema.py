"""Loader and schema: every bad shape is a RuleError naming the file and the YAML line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tipc.core.errors import RuleError
from tipc.judge.rules import OPERATORS, load_ruleset, parse_ruleset, resolve_ruleset
from tipc.judge.rules.model import Severity
from tipc.judge.rules.operators import child_specs

GOOD = """\
schema: tipc.ruleset/1
name: demo
rules:
  - id: a.one
    source: "seed002 §2.2.1"
    severity: error
    description: train.py exists
    check:
      file_exists: {path: train.py}
  - id: a.two
    source: "seed002 §4.2.1"
    severity: warning
    description: both
    applies_if: {glob_matches: {pattern: "*.md"}}
    check:
      all_of:
        - file_exists: {path: a}
        - any_of:
            - glob_matches: {pattern: ["x/*.txt", "y/**/*.txt"], exactly: 2}
"""


def _error(text: str) -> RuleError:
    with pytest.raises(RuleError) as info:
        parse_ruleset(text, "rs.yaml")
    return info.value


def test_good_ruleset_loads_with_defaults_and_lines() -> None:
    rs = parse_ruleset(GOOD, "rs.yaml")
    assert rs.name == "demo" and rs.title == "demo"
    one, two = rs.rules
    assert one.severity is Severity.ERROR and two.severity is Severity.WARNING
    assert one.line == 4 and one.check.op == "file_exists" and one.check.line == 9
    assert one.check.arg_dict == {"path": "train.py", "kind": "any"}
    assert two.applies_if is not None and two.applies_if.op == "glob_matches"
    inner = child_specs(child_specs(two.check.arg_dict)[1].arg_dict)[0]
    assert inner.arg_dict["pattern"] == ("x/*.txt", "y/**/*.txt") and inner.arg_dict["exactly"] == 2


def _rule(check: str, extra: str = "") -> str:
    return (
        "schema: tipc.ruleset/1\nname: demo\nrules:\n"
        "  - id: r.one\n    source: s\n    severity: error\n    description: d\n"
        f"{extra}    check:\n{check}"
    )


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("schema: [unclosed\n", 2, "invalid YAML"),
        ("- a\n- b\n", 1, "top level: expected a ruleset mapping"),
        ("", 1, "expected a ruleset mapping (schema, name, rules), got nothing"),
        (
            "schema: tipc.ruleset/9\nname: x\nrules: []\n",
            1,
            "schema: expected 'tipc.ruleset/1', got 'tipc.ruleset/9'",
        ),
        ("schema: tipc.ruleset/1\nname: x\nrules: []\n", 3, "non-empty list"),
        ("schema: tipc.ruleset/1\nname: x\nfoo: 1\nrules: []\n", 3, "unknown key 'foo'"),
        ("schema: tipc.ruleset/1\nname: x\nname: y\nrules: []\n", 3, "duplicate key"),
        (_rule("      no_such_op: {}\n"), 9, "unknown operator 'no_such_op'"),
        (
            _rule("      file_exists: {path: a, colour: red}\n"),
            9,
            "file_exists.colour: unknown key 'colour'; expected one of: kind, path",
        ),
        (_rule("      file_exists: {}\n"), 9, "file_exists: missing required key 'path'"),
        (_rule("      file_exists: {path: ../etc/passwd}\n"), 9, "inside the repo"),
        (_rule("      file_exists: {path: /etc/passwd}\n"), 9, "inside the repo"),
        (_rule("      glob_matches: {pattern: '**/x', at_least: -1}\n"), 9, "whole number"),
        (_rule("      glob_matches: {pattern: '**/x', at_least: true}\n"), 9, "whole number"),
        (
            _rule("      text_matches: {files: a, pattern: '(unclosed'}\n"),
            9,
            "not a valid regular expression",
        ),
        (_rule("      file_exists: {path: a, kind: socket}\n"), 9, "one of any, file, dir"),
        (_rule("      all_of: []\n"), 9, "non-empty list of checks"),
        (_rule("      all_of:\n        - nope: {}\n"), 10, "unknown operator"),
        (
            _rule("      file_exists: {path: a}\n      glob_matches: {pattern: b}\n"),
            9,
            "exactly one operator",
        ),
        (_rule("      file_exists: a\n"), 9, "mapping of parameters"),
        (_rule("      check: {name: x, args: [1]}\n"), 9, "check.args: expected a mapping, got a list"),
        (_rule("      file_exists: {path: a}\n", "    applies_if: {bogus: {}}\n"), 8, "unknown operator"),
        (
            _rule("      file_exists: {path: a}\n", "    weight: 3\n"),
            8,
            "rules[0].weight: unknown key 'weight'",
        ),
        (
            "schema: tipc.ruleset/1\nname: x\nrules:\n  - id: r\n    source: s\n",
            4,
            "rules[0]: missing required key 'severity'",
        ),
        ("schema: tipc.ruleset/1\nname: x\nrules:\n  - just a string\n", 4, "expected a rule mapping"),
        (
            "schema: tipc.ruleset/1\nname: x\nrules:\n"
            "  - {id: Bad Id, source: s, severity: error, description: d, check: {file_exists: {path: a}}}\n",
            4,
            "rules[0].id: expected a rule id matching",
        ),
        (
            "schema: tipc.ruleset/1\nname: x\nrules:\n"
            "  - {id: r, source: s, severity: fatal, description: d, check: {file_exists: {path: a}}}\n",
            4,
            "severity: expected one of error, warning, got 'fatal'",
        ),
        (
            "schema: tipc.ruleset/1\nname: x\nrules:\n"
            "  - {id: r, source: s, severity: error, description: d, check: {file_exists: {path: a}}}\n"
            "  - {id: r, source: s, severity: error, description: d, check: {file_exists: {path: a}}}\n",
            5,
            "duplicate rule id",
        ),
        (
            "schema: tipc.ruleset/1\nname: x\nrules:\n"
            "  - &r {id: r, source: s, severity: error, description: d, check: {file_exists: {path: a}}}\n"
            "  - *r\n",
            1,
            "aliases are not supported",
        ),
        ("schema: tipc.ruleset/1\nname: x\nrules: !!python/object:os.system {}\n", 3, "invalid YAML"),
    ],
)
def test_bad_shapes_give_located_rule_errors(text: str, line: int, words: str) -> None:
    err = _error(text)
    assert err.path == "rs.yaml"
    assert err.line == line, err.render()
    assert words in err.message, err.render()
    assert err.render().startswith(f"rs.yaml:{line}:")  # then the column


@pytest.mark.parametrize(
    ("check", "line", "words"),
    [
        (
            "      check: {name: log_fieldz}\n",
            9,
            "check.name: unknown check 'log_fieldz'; did you mean 'log_fields'?",
        ),
        (
            "      all_of:\n        - file_exists: {path: a}\n        - check:\n"
            "            name: convergence\n            args: {max_iters: 100, windw: 3}\n",
            13,
            "all_of[1].check.args.windw: check 'convergence': unknown key 'windw'; did you mean 'window'?",
        ),
        (
            "      check: {name: lineage, args: {aspect: weight}}\n",
            9,
            "check.args.aspect: check 'lineage': expected one of all, weights, inference_model",
        ),
        (
            "      check:\n        name: log_fields\n        args:\n          path: ../outside.txt\n",
            12,
            "check.args.path: check 'log_fields': expected a glob inside the repo, got '../outside.txt'",
        ),
        (
            "      check: {name: artefacts, args: {gpu: yes please}}\n",
            9,
            "gpu: check 'artefacts': expected true",
        ),
        ("      check: {name: gpu_flag_on_cpu_build, args: {x: 1}}\n", 9, "unknown key 'x'"),
    ],
)
def test_check_names_and_arguments_are_validated_at_load(check: str, line: int, words: str) -> None:
    err = _error(_rule(check))
    assert err.line == line, err.render()
    assert words in err.message, err.render()


def test_every_registered_check_takes_what_the_builtin_rulesets_give_it() -> None:
    from tipc.judge.checks import CHECKS
    from tipc.judge.rules.schema import builtin_ruleset_names

    named: set[str] = set()
    for name in builtin_ruleset_names():
        for rule in resolve_ruleset(name).rules:
            named |= _check_names(rule.check) | (_check_names(rule.applies_if) if rule.applies_if else set())
    assert named <= set(CHECKS)


def _check_names(spec: object) -> set[str]:
    from tipc.judge.rules.model import CheckSpec

    if not isinstance(spec, CheckSpec):
        return set()
    out = {str(spec.arg_dict["name"])} if spec.op == "check" else set()
    for value in spec.arg_dict.values():
        for item in value if isinstance(value, tuple) else (value,):
            out |= _check_names(item)
    return out


def test_deep_nesting_is_refused() -> None:
    nested = "{file_exists: {path: a}}"
    for _ in range(12):
        nested = "{all_of: [" + nested + "]}"
    err = _error(_rule(f"      {nested}\n".replace("      {", "      ", 1)[:-2] + "\n"))
    assert "nest" in err.message or "operator" in err.message


def test_resolve_by_name_and_by_path(tmp_path: Path) -> None:
    assert resolve_ruleset("tipc-basic").name == "tipc-basic"
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD, encoding="utf-8")
    assert resolve_ruleset(str(path)).name == "demo"
    with pytest.raises(RuleError, match="no built-in ruleset"):
        resolve_ruleset("nope")
    with pytest.raises(RuleError, match="no such ruleset file"):
        resolve_ruleset(str(tmp_path / "missing.yaml"))


def test_operator_registry_is_closed_and_documented() -> None:
    assert set(OPERATORS) == {
        "file_exists",
        "glob_matches",
        "archive_contains",
        "text_matches",
        "markdown_has_section",
        "markdown_has_command",
        "markdown_has_image",
        "log_has_fields",
        "step_passed",
        "check",
        "agreement_within",
        "baseline",
        "script_matches_template",
        "imports_resolve",
        "all_of",
        "any_of",
    }
    assert all(op.doc for op in OPERATORS.values())


_yaml_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=8),
    st.sampled_from(["file_exists", "all_of"]),
)
_yaml_values = st.recursive(
    _yaml_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(
                ["id", "source", "severity", "description", "check", "path", "file_exists", "all_of", "x"]
            ),
            children,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_fuzz_arbitrary_text_never_crashes(text: str) -> None:
    try:
        parse_ruleset(text, "fuzz.yaml")
    except RuleError as err:
        assert err.path == "fuzz.yaml"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_yaml_values)
def test_fuzz_structured_documents_never_crash(rules: object) -> None:
    import yaml

    text = yaml.safe_dump({"schema": "tipc.ruleset/1", "name": "f", "rules": [rules]})
    try:
        parse_ruleset(text, "fuzz.yaml")
    except RuleError as err:
        assert err.line is None or err.line >= 1


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


RULE_A = "  - {id: a.one, source: s, severity: error, description: d, check: {file_exists: {path: a}}}\n"


@pytest.mark.parametrize(
    ("include", "line", "words"),
    [
        ("  - {ruleset: nowhere, rules: [x.one]}\n", 6, "no ruleset 'nowhere' (built-in: "),
        ("  - {ruleset: other.yaml, rules: [b.two]}\n", 6, "ruleset 'other' has no rule 'b.two'"),
        ("  - {ruleset: other.yaml, rules: [a.one]}\n", 6, "duplicate rule id 'a.one' (first at line 4)"),
        ("  - {ruleset: self.yaml, rules: [a.one]}\n", 6, "rulesets include each other"),
        ("  - {ruleset: other.yaml}\n", 6, "missing required key 'rules'"),
    ],
)
def test_include_errors_are_located(tmp_path: Path, include: str, line: int, words: str) -> None:
    other = "schema: tipc.ruleset/1\nname: other\nrules:\n" + RULE_A.replace("a.", "b.") + RULE_A
    _write(tmp_path / "other.yaml", other)
    text = "schema: tipc.ruleset/1\nname: self\nrules:\n" + RULE_A + "include:\n" + include
    with pytest.raises(RuleError) as info:
        load_ruleset(_write(tmp_path / "self.yaml", text))
    assert info.value.line == line, info.value.render()
    assert words in info.value.message, info.value.render()


def test_an_included_rule_is_the_other_rulesets_definition(tmp_path: Path) -> None:
    _write(
        tmp_path / "other.yaml", "schema: tipc.ruleset/1\nname: other\nrules:\n" + RULE_A.replace("a.", "b.")
    )
    text = "schema: tipc.ruleset/1\nname: self\nrules:\n" + RULE_A
    text += "include:\n  - {ruleset: other.yaml, rules: [b.one]}\n"
    rs = load_ruleset(_write(tmp_path / "self.yaml", text))
    assert [r.id for r in rs.rules] == ["a.one", "b.one"]
    assert rs.rules[1].path == str(tmp_path / "other.yaml") and rs.rules[1].line == 4
