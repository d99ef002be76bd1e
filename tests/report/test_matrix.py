"""The report's full engine x engine matrix (tipc.report.matrix), from the agreement and serving data."""

from __future__ import annotations

from typing import Any

from tipc.report.matrix import engines_matrix, serving_data, worst_figures

CELL = {"within": True, "max_abs": 3e-7, "max_rel": 6e-6, "cosine": 1.0, "argmax_agree": 1.0}
AGREEMENT: dict[str, Any] = {
    "engines": ["paddle_inference", "onnxruntime"],
    "matrix": {
        "paddle_inference": {"paddle_inference": None, "onnxruntime": CELL},
        "onnxruntime": {"paddle_inference": CELL, "onnxruntime": None},
    },
}
GOOD = {"out": {"max_abs": 1e-7, "max_rel": 1e-6, "cosine": 1.0, "within": True}}
BAD = {"out": {"max_abs": 0.4, "max_rel": 0.9, "cosine": 0.7, "within": False}}
SERVING: dict[str, Any] = {
    "agreement": {"v2": GOOD, "pipeline": BAD},
    "tolerances": {"atol": 1e-5, "rtol": 1e-4, "cosine_min": 0.99999},
    "cross": {
        "engines": {"onnxruntime": {"v2": GOOD, "pipeline": BAD}},
        "protocols": {"v2": {"pipeline": BAD}, "pipeline": {}},
        "not_compared": {},
    },
}


def _classes(rows: Any) -> list[list[str]]:
    return [[c.cls for c in row] for row in rows]


def test_every_pair_of_engines_and_protocols_is_a_cell() -> None:
    m = engines_matrix(AGREEMENT, SERVING)
    assert m is not None and m.served
    assert m.names == ("paddle_inference", "onnxruntime", "served (v2)", "served (pipeline)")
    assert _classes(m.rows) == [
        ["self", "agree", "agree", "differ"],
        ["agree", "self", "agree", "differ"],
        ["agree", "agree", "self", "differ"],
        ["differ", "differ", "differ", "self"],
    ]
    assert m.rows[2][1].text.startswith("agree max_abs=1e-07")
    assert m.rows[3][2].text.startswith("DIFFER max_abs=0.4")


def test_a_pair_nobody_compared_says_why() -> None:
    older = {k: v for k, v in SERVING.items() if k != "cross"}  # a serving check before the full matrix
    m = engines_matrix(AGREEMENT, older)
    assert m is not None
    assert _classes(m.rows)[1] == ["agree", "self", "none", "none"]
    assert m.rows[1][2].text == "not compared" and "no comparison with this engine" in m.rows[1][2].title
    assert "no comparison of these protocols" in m.rows[2][3].title
    missing = {
        **SERVING,
        "cross": {"engines": {}, "protocols": {}, "not_compared": {"onnxruntime": "why not"}},
    }
    m = engines_matrix(AGREEMENT, missing)
    assert m is not None and m.rows[2][1].title == "why not"


def test_only_the_agreement_checks_matrix_takes_the_served_model() -> None:
    other = {"matrix": {"paddle_inference": {"onnxruntime": 1e-7}, "onnxruntime": {"paddle_inference": 1e-7}}}
    m = engines_matrix(other, SERVING)
    assert m is not None and not m.served and m.names == ("paddle_inference", "onnxruntime")
    assert [[c.text for c in row] for row in m.rows] == [["—", "1e-07"], ["1e-07", "—"]]
    assert engines_matrix(AGREEMENT, None) is not None and not engines_matrix(AGREEMENT, None).served  # type: ignore[union-attr]
    listed = engines_matrix({"matrix": {"engines": ["a", "b"], "values": [[0, 1e-7], [None, 0]]}})
    assert listed is not None and _classes(listed.rows) == [["self", ""], ["none", "self"]]
    assert engines_matrix({"matrix": "nope"}) is None and engines_matrix({}) is None


def test_worst_figures_and_the_serving_data() -> None:
    two = {"a": GOOD["out"], "b": BAD["out"]}
    assert worst_figures(two, {}) == {"within": False, "max_abs": 0.4, "max_rel": 0.9, "cosine": 0.7}
    # figures recorded without a verdict: the tolerances judge the worst of them
    bare = {"a": {"max_abs": 2e-6, "max_rel": 1.0, "cosine": 1.0}}
    assert worst_figures(bare, {"atol": 1e-5})["within"] is True  # type: ignore[index]
    assert worst_figures(bare, {"atol": 1e-6, "rtol": 1e-4})["within"] is False  # type: ignore[index]
    assert worst_figures({}, {}) is None and worst_figures("x", {}) is None
    assert serving_data([AGREEMENT, SERVING]) is SERVING and serving_data([AGREEMENT]) is None
