"""Fuzz every loader built on tipc.core.yamlschema with mutated copies of real documents and with mangled
text:
each gives its typed value or a ConfigError (RuleError for rulesets and templates) naming the file, and a
line wherever the YAML parsed. Anything else escaping (a KeyError from a builder trusting a shape the schema
did not guarantee, a TypeError, a RecursionError) fails the test; `test_the_harness_can_fail` shows it does.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from tipc.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, allow_unicode=True, sort_keys=False)


Loader = Callable[[str, Path], object]


def _baseline_text() -> str:
    from tipc.judge.baseline import stats, store

    summary = stats.summarise([1.0, 1.1, 0.9])
    metric = store.MetricBaseline(
        "stage.train.time_s", "performance", "s", "lower", "<=", summary, [1.0, 1.1, 0.9], 0.3, "derived"
    )
    base = store.Baseline(
        "m", "test_tipc/c.txt", "lite", "cpu", {"runs": ["a"]}, {metric.name: metric}, ["train"]
    )
    return base.dumps()


def _ruleset(text: str, path: Path) -> object:
    from tipc.judge.rules.schema import parse_ruleset

    return parse_ruleset(text, str(path))


def _settings(text: str, path: Path) -> object:
    from tipc.judge.checks.settings import parse_settings

    return parse_settings(text, str(path))


def _convergence(text: str, path: Path) -> object:
    from tipc.convergence.config import load_text

    return load_text(text, str(path))


def _from_file(load: Callable[[Path], object]) -> Loader:
    def run(text: str, path: Path) -> object:
        path.write_text(text, encoding="utf-8")
        return load(path)

    return run


def _template(path: Path) -> object:
    from tipc.config.known_scripts import load_template

    return load_template(path)


def _causes(path: Path) -> object:
    from tipc.judge.causes import load_catalogue

    return load_catalogue(path)


def _baseline(path: Path) -> object:
    from tipc.judge.baseline import store

    return store.load(path)


LOADERS: dict[str, tuple[Loader, Callable[[], str]]] = {
    "ruleset": (_ruleset, lambda: (ROOT / "specs" / "tipc-basic.yaml").read_text(encoding="utf-8")),
    "template": (
        _from_file(_template),
        lambda: (ROOT / "specs" / "templates" / "train_infer_python.yaml").read_text(encoding="utf-8"),
    ),
    "causes": (
        _from_file(_causes),
        lambda: (ROOT / "specs" / "causes" / "causes.yaml").read_text(encoding="utf-8"),
    ),
    "settings": (
        _settings,
        lambda: (ROOT / "examples" / "lenet_digits" / "test_tipc" / "tipc.yaml").read_text(encoding="utf-8"),
    ),
    "convergence": (
        _convergence,
        lambda: (ROOT / "examples" / "lenet_digits" / "test_tipc" / "convergence.yaml").read_text(
            encoding="utf-8"
        ),
    ),
    "baseline": (_from_file(_baseline), _baseline_text),
}


def exercise(load: Loader, text: str, path: Path) -> None:
    """The property: a value, or the one located error type. Any other exception propagates."""
    note = event if currently_in_test_context() else (lambda _what: None)
    try:
        load(text, path)
    except ConfigError as exc:
        note("located error")
        assert exc.path == str(path), exc.render()
        assert exc.message, exc.render()
        if not exc.message.startswith(("invalid YAML", "not UTF-8")):
            assert exc.line is not None and exc.line >= 1, exc.render()
    else:
        note("valid")


# --- mutations of a real document -------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["", "(unclosed", "../x", "/abs", "nan", "==", "error", "SIGSEGV", "--x", "a" * 64]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
Mutation = tuple[int, str, Any]
mutations = st.lists(
    st.tuples(st.integers(0, 10**6), st.sampled_from(["replace", "delete", "rename", "add", "wrap"]), values),
    min_size=1,
    max_size=3,
)


def _containers(node: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """(container, key) of every value in the document, depth first."""
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((node, k))
            _containers(v, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((node, i))
            _containers(v, out)
    return out


def mutate(doc: Any, ops: list[Mutation]) -> Any:
    doc = copy.deepcopy(doc)
    for index, op, value in ops:
        spots = _containers(doc, [])
        if not spots:
            return value
        parent, key = spots[index % len(spots)]
        if op == "replace":
            parent[key] = value
        elif op == "delete":
            del parent[key]
        elif op == "wrap":
            parent[key] = [parent[key]] if not isinstance(parent[key], list) else {"k": parent[key]}
        elif isinstance(parent, dict) and op == "rename":
            parent[f"{key}x" if isinstance(key, str) else "x"] = parent.pop(key)
        elif isinstance(parent, dict):
            parent[str(value)[:8] or "new"] = value
        else:
            parent.append(value)
    return doc


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("yamlfuzz")


@pytest.mark.parametrize("kind", sorted(LOADERS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=mutations)
def test_mutated_documents_give_a_value_or_a_located_error(
    kind: str, ops: list[Mutation], folder: Path
) -> None:
    load, seed = LOADERS[kind]
    doc = mutate(yaml.safe_load(seed()), ops)
    exercise(load, dump(doc), folder / f"{kind}.yaml")


@pytest.mark.parametrize("kind", sorted(LOADERS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cut=st.integers(0, 10**6),
    length=st.integers(0, 40),
    insert=st.text(
        alphabet=st.sampled_from(list("ab:- [{}]\n\t'\"&*!%@`|>#,.01\x00\x85\ufeff")), max_size=12
    ),
)
def test_mangled_text_gives_a_value_or_a_located_error(
    kind: str, cut: int, length: int, insert: str, folder: Path
) -> None:
    load, seed = LOADERS[kind]
    text = seed()
    at = cut % (len(text) + 1)
    exercise(load, text[:at] + insert + text[at + length :], folder / f"{kind}.yaml")


def test_the_seeds_are_valid(folder: Path) -> None:
    for kind, (load, seed) in LOADERS.items():
        assert load(seed(), folder / f"{kind}.yaml") is not None, kind


def test_the_harness_can_fail(folder: Path) -> None:
    """A loader that trusts a key the schema does not require: the same property and mutations find it."""
    from tipc.core.yamlschema import Document
    from tipc.judge.checks.settings import _schema

    def careless(text: str, path: Path) -> object:
        data = Document(text, str(path)).conform(_schema())
        return data["agreement"]["engines"]  # optional in the schema: a KeyError waits here

    seed = yaml.safe_load(LOADERS["settings"][1]())

    @settings(max_examples=200, deadline=None, database=None)
    @given(ops=mutations)
    def prop(ops: list[Mutation]) -> None:
        exercise(careless, dump(mutate(seed, ops)), folder / "careless.yaml")

    with pytest.raises(KeyError):
        prop()


SINGLE: tuple[object, ...] = (None, "x", -1, [], {})


def _all_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(map(str, node)).union(*(_all_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_all_keys(v) for v in node))
    return set()


def _trim(node: Any) -> Any:
    """The seed with list items kept only where they bring a key (an operator, a field) not seen before:
    every shape stays represented, the neighbourhood stays small."""
    if isinstance(node, dict):
        return {k: _trim(v) for k, v in node.items()}
    if not isinstance(node, list):
        return node
    kept: list[Any] = []
    seen: set[str] = set()
    for item in node:
        keys = _all_keys(item)
        if not kept or keys - seen:
            kept.append(_trim(item))
            seen |= keys
    return kept


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_every_single_mutation_gives_a_value_or_a_located_error(kind: str, folder: Path) -> None:
    """Each value of the seed deleted or replaced by each of a few shapes: the exhaustive neighbourhood that
    random sampling may miss (an optional key a builder reads with [] is found here for certain)."""
    load, seed = LOADERS[kind]
    doc = _trim(yaml.safe_load(seed()))
    path = folder / f"{kind}.yaml"
    for index in range(len(_containers(doc, []))):
        for value in ("delete", *SINGLE):
            ops: list[Mutation] = [
                (index, "delete", None) if value == "delete" else (index, "replace", value)
            ]
            exercise(load, dump(mutate(doc, ops)), path)


FOREIGN = (
    "Global:\n  use_gpu: true\n  epoch_num: &e 5\nbase: &b {lr: 0.1}\nOptimizer:\n  <<: *b\n"
    "  lr: !PiecewiseDecay {gamma: 0.1, epochs: [*e, 8]}\n  when: 2024-01-01\n_BASE_: ['../runtime.yml']\n"
)


@settings(max_examples=60, deadline=None)
@given(
    cut=st.integers(0, len(FOREIGN)),
    length=st.integers(0, 30),
    insert=st.text(alphabet=st.sampled_from(list("ab:- [{}]\n\t'\"&*!%@<`|>#,.01\x85")), max_size=12),
)
def test_a_foreign_file_gives_a_tree_or_a_located_error(cut: int, length: int, insert: str) -> None:
    """The lenient reader of model configs (tipc.planning.device_flags): a tree or YamlShapeError, no more."""
    from tipc.core.yamlschema import YamlShapeError, load_located

    try:
        load_located(FOREIGN[:cut] + insert + FOREIGN[cut + length :], foreign=True)
    except YamlShapeError as exc:
        assert exc.message
