"""The report's engine x engine agreement matrix, every pair filled: the agreement check's engines and the
served model's protocols, from the figures the agreement and serving checks recorded.

The agreement check's data["matrix"] ({a: {b: cell}}) holds its engine pairs. The serving check's
data["agreement"] holds each protocol against Paddle Inference (its verdict), and data["cross"] each protocol
against the other engines the agreement check ran and against the other protocols ({output: figures} per
pair). A pair nobody compared is an explicit "not compared" cell that says why; an engine against itself is
marked as such, so every cell of the square is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from tipc.report.model import matrix_cell

REFERENCE_ENGINE = "paddle_inference"  # what the serving check compares the served replies with
_DEFAULT_TOL = {"atol": 1e-5, "rtol": 1e-4, "cosine_min": 0.99999}


@dataclass(frozen=True)
class Cell:
    """One pair: its text, its class (agree, differ, self, none, or "" for a bare figure), a tooltip."""

    text: str
    cls: str
    title: str = ""


@dataclass(frozen=True)
class Matrix:
    names: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]  # rows[i][j]: names[i] against names[j]
    served: bool  # the served model's protocols joined the engines


def served_name(protocol: str) -> str:
    return f"served ({protocol})"


def _figure_cell(value: object) -> Cell:
    cls = ""
    if isinstance(value, dict) and "within" in value:
        cls = "agree" if value["within"] else "differ"
    return Cell(matrix_cell(value), cls)


def _nested(value: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def worst_figures(per_output: object, tolerances: object) -> dict[str, float | bool | None] | None:
    """One cell from {output: {max_abs, max_rel, cosine[, within]}}: the worst figure over the outputs.
    `within` is the checks' own per-output verdict when recorded; for records without it, the tolerances
    applied to the worst figures (cosine >= cosine_min, and max_abs <= atol or max_rel <= rtol)."""
    if not isinstance(per_output, dict):
        return None
    figs = [f for f in per_output.values() if isinstance(f, dict)]
    if not figs:
        return None

    def worst(key: str, pick: Callable[[list[float]], float]) -> float | None:
        vals = [float(f[key]) for f in figs if isinstance(f.get(key), (int, float))]
        return pick(vals) if vals else None

    max_abs, max_rel, cosine = worst("max_abs", max), worst("max_rel", max), worst("cosine", min)
    if all(isinstance(f.get("within"), bool) for f in figs):
        within = all(f["within"] for f in figs)
    else:
        tol = {**_DEFAULT_TOL, **(tolerances if isinstance(tolerances, dict) else {})}
        within = (
            cosine is not None
            and max_abs is not None
            and max_rel is not None
            and cosine >= float(tol["cosine_min"])
            and (max_abs <= float(tol["atol"]) or max_rel <= float(tol["rtol"]))
        )
    return {"within": within, "max_abs": max_abs, "max_rel": max_rel, "cosine": cosine}


def _columns(m: Mapping[str, Mapping[str, object]]) -> list[str]:
    names = [str(a) for a in m]
    for row in m.values():
        names += [str(b) for b in row if str(b) not in names]
    return names


class _Pairs:
    """Looks a pair up in the engines' matrix and the serving check's figures."""

    def __init__(self, matrix: Mapping[str, object], serving: Mapping[str, object]) -> None:
        self.matrix = matrix
        self.serving = serving
        self.tol = serving.get("tolerances")

    def engines(self, a: str, b: str) -> Cell:
        for x, y in ((a, b), (b, a)):
            row = self.matrix.get(x)
            if isinstance(row, dict) and row.get(y) is not None:
                return _figure_cell(row[y])
        return Cell("not compared", "none", "the agreement check recorded no figures for this pair")

    def served_engine(self, proto: str, engine: str) -> Cell:
        if engine == REFERENCE_ENGINE:
            per_output = _nested(self.serving, "agreement", proto)
        else:
            per_output = _nested(self.serving, "cross", "engines", engine, proto)
        cell = worst_figures(per_output, self.tol)
        if cell is not None:
            return _figure_cell(cell)
        why = _nested(self.serving, "cross", "not_compared", engine)
        if not isinstance(why, str):
            why = "the serving check recorded no comparison with this engine"
        return Cell("not compared", "none", why)

    def cell(self, a: tuple[str, str], b: tuple[str, str]) -> Cell:
        """The cell of (kind, name) a against b, kind "engine" or "served"."""
        if a == b:
            return Cell("—", "self", "the same engine")
        if a[0] == b[0] == "engine":
            return self.engines(a[1], b[1])
        if a[0] == b[0] == "served":
            return self.protocols(a[1], b[1])
        proto, engine = (a[1], b[1]) if a[0] == "served" else (b[1], a[1])
        return self.served_engine(proto, engine)

    def protocols(self, p: str, q: str) -> Cell:
        for x, y in ((p, q), (q, p)):
            cell = worst_figures(_nested(self.serving, "cross", "protocols", x, y), self.tol)
            if cell is not None:
                return _figure_cell(cell)
        return Cell("not compared", "none", "the serving check recorded no comparison of these protocols")


def _protocols(serving: Mapping[str, object]) -> list[str]:
    raw = serving.get("agreement")
    if not isinstance(raw, dict):
        return []
    return [str(p) for p, per in raw.items() if isinstance(per, dict) and per]


def engines_matrix(data: Mapping[str, object], serving: Mapping[str, object] | None = None) -> Matrix | None:
    """The square matrix of one rule's data["matrix"] ({a: {b: cell}} or {engines, values}); the served
    model's protocols join it when this is the agreement check's matrix (data["engines"], Paddle Inference
    among them) and `serving` (the serving check's data) compared any. None when the rule has no matrix."""
    m = data.get("matrix")
    if isinstance(m, dict) and isinstance(m.get("engines"), list) and isinstance(m.get("values"), list):
        return _listed(m["engines"], m["values"])
    if not (isinstance(m, dict) and m and all(isinstance(v, dict) for v in m.values())):
        return None
    engines = _columns(m)
    # the agreement check's matrix names its engines; the served model is compared with Paddle Inference
    ours = isinstance(data.get("engines"), list) and REFERENCE_ENGINE in engines
    protos = _protocols(serving or {}) if ours else []
    pairs = _Pairs(m, serving or {})
    names = [*engines, *(served_name(p) for p in protos)]
    kinds = [("engine", e) for e in engines] + [("served", p) for p in protos]
    rows = tuple(tuple(pairs.cell(a, b) for b in kinds) for a in kinds)
    return Matrix(tuple(names), rows, bool(protos))


def _listed(engines: list[object], values: list[object]) -> Matrix | None:
    """The {engines: [...], values: [[...]]} shape: the values as given (None: not compared)."""
    names = tuple(str(x) for x in engines)
    rows = []
    for i, row in enumerate(values):
        if not isinstance(row, list):
            return None
        cells = [
            Cell("—", "self", "the same engine")
            if i == j
            else (Cell("not compared", "none") if v is None else _figure_cell(v))
            for j, v in enumerate(row)
        ]
        rows.append(tuple(cells))
    return Matrix(names, tuple(rows), False)


def serving_data(datas: Iterable[Mapping[str, object]]) -> Mapping[str, object] | None:
    """The serving check's data among the rules' (the one that recorded per-protocol figures)."""
    for data in datas:
        if _protocols(data):
            return data
    return None
