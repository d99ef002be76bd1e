"""What a prediction script printed, and whether two scripts printed the same results.

A result line carries a class (`class_id`, `label`, ...) and/or a score (`prob`, `score`, `confidence`, ...)
as `key: value` or `key=value` fields: an image classifier prints both, an anomaly detector or a regressor a
score only. Two scripts' results are compared on what both print: classes exactly, scores within a tolerance
scaled to the numbers (`atol`, `rtol` times the larger score, and, when one script rounds its print, half a
unit of its last digit: 0.4545 against 0.4543665 is judged at the 4 decimals of the first).

A log with no result line either printed nothing a result could be (no number outside warnings and paths:
the script ran nothing) or printed its result in a form tipc cannot read (a sentence, another language);
`unreadable_line` tells them apart, so the check can FAIL the first and say N-A to the second.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from tipc.judge.checks._common import physical_lines
from tipc.judge.checks.logparse import parse_fields

CLASS_KEYS = ("class_id", "class_ids", "clas_id", "label", "cls_id", "class", "pred_label", "category_id")
SCORE_KEYS = ("prob", "probs", "score", "scores", "confidence", "anomaly_score", "pred_score")
_NAME = re.compile(
    r"(?:image_name|image_file|image_path|img_path|img_name|image|img|file_name|filename|file)"
    r"\s*[:=]\s*['\"]?([^,'\"\s]+)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_NOISE = re.compile(r"warn|deprecat|traceback|^\s*file \"|error|info:|debug", re.IGNORECASE)
_DECIMALS = re.compile(r"[-+]?\d*\.(\d+)(?:[eE]([-+]?\d+))?")


@dataclass(frozen=True)
class Prediction:
    line: int
    text: str
    image: str | None  # the file name the line names, if any
    label: float | None
    score: float | None
    score_text: str | None  # the score as printed (its digits set the tolerance)

    def to_json(self, log: str) -> dict[str, str | int | float | None]:
        return {
            "line": self.line,
            "image": self.image,
            "class_id": self.label,
            "prob": self.score,
            "log": log,
        }


def parse_predictions(path: Path) -> list[Prediction]:
    """One entry per line that carries a class or a score field."""
    out = []
    for no, seg in physical_lines(path):
        fields = {f.key.lower(): f for f in parse_fields(seg)}
        label = next((fields[k] for k in CLASS_KEYS if k in fields), None)
        score = next((fields[k] for k in SCORE_KEYS if k in fields), None)
        if label is None and score is None:
            continue
        m = _NAME.search(seg)
        out.append(
            Prediction(
                line=no,
                text=seg,
                image=Path(m.group(1)).name if m else None,
                label=label.value if label is not None else None,
                score=score.value if score is not None else None,
                score_text=_value_text(score.raw) if score is not None else None,
            )
        )
    return out


def _value_text(raw: str) -> str:
    """The number as a field printed it (`prob: 0.4545` -> `0.4545`)."""
    m = _NUMBER.search(raw.split(":", 1)[-1].split("=", 1)[-1])
    return m.group(0) if m else raw


def unreadable_line(path: Path) -> str | None:
    """The last line that carries a number outside warnings and paths (a result tipc cannot read), or None
    when the log holds no such line (the script printed no result at all)."""
    found = None
    for _, seg in physical_lines(path):
        if _NOISE.search(seg):
            continue
        words = " ".join(w for w in seg.split() if "/" not in w and "\\" not in w)
        if _NUMBER.search(words):
            found = seg.strip()
    return found


def _decimals(text: str | None) -> int | None:
    m = _DECIMALS.fullmatch(text.strip()) if text else None
    return None if m is None else len(m.group(1)) - int(m.group(2) or 0)


def resolution(a: str | None, b: str | None) -> float:
    """Half a unit of the last digit of the coarser of two printed numbers (`0.4545` beside
    `0.4543665051460266` -> 5e-5), when they were printed to different precisions: one side rounded. A print
    with fewer than 2 decimals is taken as exact (Python prints 1.0 or 0.5 in full)."""
    da, db = _decimals(a), _decimals(b)
    if da is None or db is None or da == db:
        return 0.0
    coarse = min(da, db)
    return 0.5 * 10.0**-coarse if coarse >= 2 else 0.0


def score_tolerance(a: Prediction, b: Prediction, atol: float, rtol: float) -> float:
    """The tolerance two printed scores are compared at: the absolute one, the relative one on the larger
    score, or the rounding of the coarser print, whichever is largest."""
    assert a.score is not None and b.score is not None
    scale = max(abs(a.score), abs(b.score))
    return max(atol, rtol * scale, resolution(a.score_text, b.score_text))


def _pairs(
    pred: list[Prediction], inf: list[Prediction], diffs: list[str]
) -> list[tuple[Prediction, Prediction]]:
    """The results paired by the image they name (by position when a side names none)."""
    if all(p.image for p in pred) and all(i.image for i in inf):
        inf_by = {str(i.image): i for i in inf}
        pairs = []
        for p in pred:
            if str(p.image) not in inf_by:
                diffs.append(f"{p.image}: predicted by predict.py but missing from infer.py's output")
                continue
            pairs.append((p, inf_by[str(p.image)]))
        for name in sorted(set(inf_by) - {str(p.image) for p in pred}):
            diffs.append(f"{name}: in infer.py's output but missing from predict.py's")
        return pairs
    if len(pred) != len(inf):
        diffs.append(f"predict.py printed {len(pred)} result(s), infer.py {len(inf)}")
    return list(zip(pred, inf, strict=False))


@dataclass(frozen=True)
class Comparison:
    diffs: list[str]
    compared: int
    worst_score_diff: float
    fields: tuple[str, ...]  # what was compared: class, score


def compare(pred: list[Prediction], inf: list[Prediction], atol: float, rtol: float) -> Comparison:
    """Differences in words (first ones), on the fields both sides print."""
    diffs: list[str] = []
    pairs = _pairs(pred, inf, diffs)
    worst = 0.0
    fields: set[str] = set()
    for n, (p, i) in enumerate(pairs):
        label = p.image or f"result {n + 1}"
        if p.label is not None and i.label is not None:
            fields.add("class")
            if p.label != i.label:
                diffs.append(f"{label}: class {_num(p.label)} (predict.py) vs {_num(i.label)} (infer.py)")
                continue
        if p.score is not None and i.score is not None:
            fields.add("score")
            d = abs(p.score - i.score)
            tol = score_tolerance(p, i, atol, rtol)
            worst = max(worst, d) if math.isfinite(d) else math.inf
            if not (math.isfinite(d) and d <= tol):
                diffs.append(
                    f"{label}: score {p.score_text or p.score} (predict.py) vs {i.score_text or i.score} "
                    f"(infer.py): |diff| {d:.3g} > {tol:.3g}"
                )
    if pairs and not fields:
        diffs.append("predict.py and infer.py print no field in common (one a class, the other a score)")
    return Comparison(diffs, len(pairs), worst, tuple(sorted(fields)))


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
