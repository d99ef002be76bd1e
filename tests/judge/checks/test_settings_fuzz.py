"""Fuzz test_tipc/tipc.yaml: any text gives Settings or a ConfigError naming the file (and a line)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tipc.core.errors import ConfigError
from tipc.judge.checks.settings import Settings, parse_settings

PATH = "repo/test_tipc/tipc.yaml"
KEYS = {
    "": ["python", "agreement", "log_fields", "convergence", "ground_truth", "bogus"],
    "agreement": [
        "inputs",
        "engines",
        "tolerances",
        "seed",
        "timeout_s",
        "predict_args",
        "infer_args",
        "images",
        "prob_atol",
        "plugins",
        "engine_options",
    ],
    "tolerances": ["atol", "rtol", "cosine_min"],
    "log_fields": ["require_eval", "fields"],
    "convergence": ["max_iters", "window", "alpha", "min_points"],
    "ground_truth": ["atol", "rtol", "modes"],
}
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(['a "b', "{image}", "paddle_inference", "onnxruntime", ""]),
)


def _doc(section: str) -> st.SearchStrategy[Any]:
    names = KEYS.get(section, ["x"])
    leaf = st.one_of(scalars, st.lists(scalars, max_size=3))
    value = st.deferred(lambda: st.one_of(leaf, *(_doc(n) for n in names if n in KEYS)))
    return st.dictionaries(st.one_of(st.sampled_from(names), st.integers(0, 3)), value, max_size=4)


def _check(text: str) -> None:
    try:
        out = parse_settings(text, PATH)
    except ConfigError as exc:
        event("located error")
        assert exc.path == PATH
        assert exc.message
        if text.strip():
            assert exc.line is not None and exc.line >= 1, exc.render()
    else:
        event("valid settings")
        assert isinstance(out, Settings)


@settings(max_examples=200, deadline=None)
@given(_doc(""))
def test_structured_settings_never_raise_anything_else(doc: dict[Any, Any]) -> None:
    _check(yaml.safe_dump(doc, allow_unicode=True))


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("agreement:inputs- [{}]\n\t'\"&*!%@`|>#,.0123\x00\x01\x85\ufeff")),
        max_size=120,
    )
)
def test_random_text_never_raises_anything_else(text: str) -> None:
    _check(text)
