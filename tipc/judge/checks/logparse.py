"""Parse the key/value fields that training and evaluation logs print.

Accepted shapes (all seen in real repos): `loss: 1.2`, `loss=1.2`, `loss 1.2`, `avg_ips: 31.4 images/sec`,
`ips: 31.4 samples/s`, `[Epoch 1/5][Iter 10/40]`, `epoch: [1/500]`, `iter: 10/20`, list/tuple values
(`loss: [1.2]`, `top1: (0.9, 0.8)`: first element), printed Paddle tensors (`loss: Tensor(shape=[1], ...,
[2.3])`), `nan`/`inf` values (kept as non-finite floats so checks can flag them), and `\\r`-rewritten progress
bars (callers split segments on `\\r`).

Heuristic for "an iteration line" (documented, used by log_fields and convergence):
- it is not eval-marked (no eval/evaluation/validation/val/test word, as in `[Eval]`), and
- it has a loss-like key (`loss`, or a key ending in `loss` such as `CELoss`, `total_loss`), and
- it has a speed field (a key containing `cost` or `ips`) OR a progress marker (epoch / iter / step /
  global_step / batch, as a key or as a `[Iter 3/40]`-style bracket).
An eval (metrics) line is an eval-marked line with at least one numeric field, or a line with a known metric
key (acc, top1, mAP, mIoU, hmean, precision, ...; see METRIC_KEYS) that is not shaped like an iteration line
(PaddleOCR's `cur metric, precision: ..., hmean: ...`). "The log says evaluation runs" is prose such as
`start eval`, `Eval begin`, `evaluating ...` (not config-dump lines like `eval_batch_step: [0, 2000]`).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

_NUM = (
    r"[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|NaN|NAN|inf|Inf|INF|infinity|Infinity)"
    r"(?![A-Za-z0-9_:/])"  # not part of a word, a time (0:05:00) or a ratio (1/5)
)
_LIST = rf"[\[(]\s*{_NUM}(?:\s*[, ]\s*{_NUM})*\s*,?\s*[\])]"
_UNIT = r"(?:[A-Za-z]+/(?:sec(?:ond)?s?|s)|sec(?:ond)?s?|ms|s)(?![A-Za-z0-9_/])"
# key, then ':' or '=' or bare whitespace, then a number or a list, then an optional unit
_FIELD = re.compile(
    rf"(?<![A-Za-z0-9_.])(?P<key>[A-Za-z_][A-Za-z0-9_.]*(?:\([A-Za-z0-9_ ]*\))?)"
    rf"(?:\s*[:=]\s*|\s+)(?P<val>{_LIST}|{_NUM})(?:\s*(?P<unit>{_UNIT}))?"
)
_FIRST_NUM = re.compile(_NUM)
_TENSOR = re.compile(
    r"Tensor\(shape=\[[^\]]*\],\s*dtype=\w+,\s*place=[A-Za-z]*\([^)]*\),\s*stop_gradient=\w+,\s*([^)]*)\)"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BRACKET_PROGRESS = re.compile(
    r"\[\s*(?P<key>epoch|iter|iters|iteration|step|batch)\s*:?\s*(?P<cur>\d+)\s*(?:/\s*(?P<tot>\d+))?\s*\]",
    re.IGNORECASE,
)
_KEY_PROGRESS = re.compile(
    r"(?<![A-Za-z0-9_])(?P<key>epoch|iter|iters|iteration|global_step|step|batch(?:_id)?)\s*[:=]?\s*\[?\s*"
    r"(?P<cur>\d+)\s*(?:/\s*(?P<tot>\d+))?",
    re.IGNORECASE,
)
_EVAL_WORD = re.compile(
    r"(?<![A-Za-z])(eval|evaluate|evaluation|evaluating|valid|validation|val|test)(?![A-Za-z])", re.IGNORECASE
)
_SPEED_KEY = re.compile(r"cost|ips", re.IGNORECASE)
# Metric names that mark an evaluation result even without an eval word (PaddleOCR: "cur metric, hmean: ...").
METRIC_KEYS = frozenset(
    k.lower()
    for k in (
        "acc",
        "accuracy",
        "top1",
        "top5",
        "top1_acc",
        "top5_acc",
        "mAP",
        "bbox_mAP",
        "mIoU",
        "hmean",
        "precision",
        "recall",
        "f1",
        "f1_score",
        "psnr",
        "ssim",
        "auc",
        "norm_edit_dis",
        "kappa",
        "fid",
    )
)
# Prose saying evaluation runs ("start eval", "Eval begin", "evaluating ..."), not a config dump line.
_EVAL_RUNS = re.compile(
    r"(?i)\b(?:start(?:ing|s)?|begin(?:ning|s)?|run(?:ning|s)?|do(?:ing)?)\s+(?:to\s+)?"
    r"(?:eval\w*|validat\w*)|\b(?:eval\w*|validation)\s+(?:start\w*|begin\w*|done|finish\w*|end\w*)\b"
    r"|^\W*evaluating\b"
)


def mentions_eval_run(text: str) -> bool:
    return _EVAL_RUNS.search(text) is not None


_PROGRESS_KEYS = {"epoch", "iter", "iters", "iteration", "global_step", "step", "batch", "batch_id"}


@dataclass(frozen=True)
class Field:
    key: str
    value: float
    unit: str | None
    raw: str


@dataclass(frozen=True)
class ParsedLine:
    line_no: int  # 1-based physical line in the file
    text: str
    fields: tuple[Field, ...]
    epoch: int | None = None
    epoch_total: int | None = None
    iter: int | None = None
    iter_total: int | None = None
    global_step: int | None = None

    def get(self, key: str) -> Field | None:
        for f in self.fields:
            if f.key == key:
                return f
        return None

    def loss(self) -> Field | None:
        """The loss: key `loss` first, else the first key ending in `loss` (CELoss, total_loss)."""
        exact = self.get("loss")
        if exact is not None:
            return exact
        for f in self.fields:
            if f.key.lower().endswith("loss"):
                return f
        return None

    @property
    def _eval_marked(self) -> bool:
        return bool(self.fields) and _EVAL_WORD.search(self.text) is not None

    @property
    def is_eval(self) -> bool:
        """Evaluation results: an eval-marked line with numbers, or metrics outside an iteration line."""
        if self._eval_marked:
            return True
        has_metric = any(f.key.lower() in METRIC_KEYS for f in self.fields)
        return has_metric and not self._iteration_shape

    @property
    def has_progress(self) -> bool:
        return (
            self.epoch is not None
            or self.iter is not None
            or self.global_step is not None
            or any(f.key.lower() in _PROGRESS_KEYS for f in self.fields)
        )

    @property
    def _iteration_shape(self) -> bool:
        if self.loss() is None:
            return False
        has_speed = any(_SPEED_KEY.search(f.key) for f in self.fields)
        return has_speed or self.has_progress

    @property
    def is_iteration(self) -> bool:
        return not self._eval_marked and self._iteration_shape


def _to_float(raw: str) -> float:
    m = _FIRST_NUM.search(raw)
    if m is None:
        return math.nan
    try:
        return float(m.group(0))
    except ValueError:
        return math.nan


def parse_fields(text: str) -> tuple[Field, ...]:
    clean = _ANSI.sub("", text)
    clean = _TENSOR.sub(lambda m: m.group(1).strip(), clean)
    out: list[Field] = []
    seen: set[str] = set()
    for m in _FIELD.finditer(clean):
        key = m.group("key")
        # `Iter 10/40`-style markers are progress, not fields; keep the first occurrence of a key
        if key in seen:
            continue
        seen.add(key)
        out.append(Field(key, _to_float(m.group("val")), m.group("unit"), m.group(0)))
    return tuple(out)


def parse_line(text: str, line_no: int) -> ParsedLine:
    clean = _ANSI.sub("", text)
    fields = parse_fields(clean)
    epoch = epoch_total = it = it_total = gstep = None
    for rx in (_BRACKET_PROGRESS, _KEY_PROGRESS):
        for m in rx.finditer(clean):
            key = m.group("key").lower()
            cur = int(m.group("cur"))
            tot = int(m.group("tot")) if m.group("tot") else None
            if key == "epoch" and epoch is None:
                epoch, epoch_total = cur, tot
            elif key in ("iter", "iters", "iteration", "batch", "batch_id") and it is None:
                it, it_total = cur, tot
            elif key in ("global_step", "step") and gstep is None:
                gstep = cur
    return ParsedLine(line_no, text, fields, epoch, epoch_total, it, it_total, gstep)


def _epoch_iter_index(lines: list[ParsedLine]) -> list[int]:
    """epoch x iters-per-epoch + iter for each line (every line has an iter)."""
    per_epoch = max((p.iter_total or 0) for p in lines) or max(int(p.iter or 0) for p in lines) + 1
    first_epoch = min((p.epoch or 0) for p in lines)
    return [((p.epoch or 0) - first_epoch) * per_epoch + int(p.iter or 0) for p in lines]


def step_index(lines: list[ParsedLine]) -> list[int]:
    """A global iteration number per line: global_step, else epoch x iters-per-epoch + iter, else ordinal."""
    if lines and all(p.global_step is not None for p in lines):
        return [int(p.global_step) for p in lines if p.global_step is not None]
    if lines and all(p.iter is not None for p in lines):
        out = _epoch_iter_index(lines)
        # only trust it if strictly increasing; otherwise fall back to ordinals
        if all(b > a for a, b in itertools.pairwise(out)):
            return out
    return list(range(1, len(lines) + 1))
