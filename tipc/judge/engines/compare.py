"""Pairwise output comparison (numpy; worker side)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

# The worker runs under the repo's interpreter (Python 3.7 has no typing.TypedDict): a type only.
if TYPE_CHECKING:
    from typing import TypedDict

    class Figures(TypedDict, total=False):
        """One output pair's figures (JSON: the worker's reply and the reports carry them as they are).
        Shapes, dtypes, `shape_match` and `allclose` always; the rest only when the shapes match."""

        shape_ref: list[int]
        shape_other: list[int]
        dtype_ref: str
        dtype_other: str
        shape_match: bool
        allclose: bool
        finite: bool
        size: int
        max_abs: float
        max_rel: float
        mean_abs: float
        cosine: float
        argmax_agree: float | None
        mismatched: int
        atol_used: float
        worst_index: int
        worst_ref: float | None
        worst_other: float | None
        # Set by the engines worker: the output's position and names, or why one engine has no such output.
        index: int
        name_a: str
        name_b: str
        error: str


def compare_arrays(ref: np.ndarray, other: np.ndarray, atol: float, rtol: float) -> Figures:
    """Figures for one output; `ref` is the pair's first engine (allclose: |a-b| <= atol' + rtol*|ref|, where
    atol' is the larger of atol and rtol times the output's largest |value|)."""
    out: Figures = {
        "shape_ref": list(ref.shape),
        "shape_other": list(other.shape),
        "dtype_ref": str(ref.dtype),
        "dtype_other": str(other.dtype),
    }
    if ref.shape != other.shape:
        # a squeezed/unsqueezed batch dim is not a disagreement of values
        if ref.size == other.size:
            other = other.reshape(ref.shape)
        else:
            out.update({"shape_match": False, "allclose": False})
            return out
    a = ref.astype(np.float64).ravel()
    b = other.astype(np.float64).ravel()
    finite = bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))
    diff = np.abs(a - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.maximum(np.abs(a), np.finfo(np.float64).tiny)
    # The absolute tolerance scales with the output's magnitude: float32 error grows with the values an
    # output is computed from, so an element near 0 of an output that reaches 1000 is judged at rtol x 1000.
    finite_a = np.abs(a[np.isfinite(a)])
    scale = float(finite_a.max()) if finite_a.size else 0.0
    atol_used = max(atol, rtol * scale)
    bad = diff > atol_used + rtol * np.abs(a)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 and nb == 0.0:
        cosine = 1.0
    elif na == 0.0 or nb == 0.0:
        cosine = 0.0
    else:
        cosine = float(np.dot(a, b) / (na * nb))
    argmax_agree = None
    if ref.ndim >= 1 and ref.shape[-1] > 1 and np.issubdtype(ref.dtype, np.floating):
        ra = ref.reshape(-1, ref.shape[-1]).argmax(axis=1)
        rb = other.reshape(-1, ref.shape[-1]).argmax(axis=1)
        argmax_agree = float(np.mean(ra == rb))
    worst = int(np.argmax(diff)) if diff.size else 0
    out.update(
        {
            "shape_match": True,
            "finite": finite,
            "size": int(a.size),
            "max_abs": float(diff.max()) if diff.size else 0.0,
            "max_rel": float(np.nanmax(rel)) if rel.size else 0.0,
            "mean_abs": float(diff.mean()) if diff.size else 0.0,
            "cosine": cosine,
            "argmax_agree": argmax_agree,
            "mismatched": int(bad.sum()),
            "atol_used": atol_used,
            "worst_index": worst,
            "worst_ref": float(a[worst]) if a.size else None,
            "worst_other": float(b[worst]) if b.size else None,
            "allclose": finite and not bool(bad.any()),
        }
    )
    return out


def within(fig: Figures, cosine_min: float) -> bool:
    return bool(
        fig.get("shape_match")
        and fig.get("allclose")
        and fig.get("cosine", 0.0) >= cosine_min
        and fig.get("argmax_agree") in (None, 1.0)
    )
