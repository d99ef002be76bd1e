"""Summaries of repeated measurements and the margin derived from their spread.

The rule (documented with a worked example in docs/model-ci.md):

    reference = median of the n runs
    margin    = max(K * robust_std, REL_FLOOR[kind] * |median|, ABS_FLOOR[unit])
    robust_std = 1.4826 * MAD   (MAD = median of |x_i - median|)

- the median and the MAD-based spread are used rather than the mean and the sample std because one run
  slowed by a busy machine must not widen the band for every later check: with n = 3 runs a, b, c the MAD is
  the smaller of |a - b| and |c - b|, so two runs that agree set the spread. (1.4826 scales the MAD to the
  std of normal noise.) The file also keeps mean, std (n - 1), min and max for the reader;
- K = 3: a run from the same distribution lands within 3 std of the mean about 99.7 % of the time (normal
  noise), so a FAIL is rarely noise;
- the floors stop a metric that happened not to vary in n runs (a seeded CPU loss, a lucky timing) from
  failing on the next tiny change: with n = 3 a std is itself very uncertain. Timings on shared CI machines
  vary by 10-20 % run to run (peer systems measured 5 % std on dedicated ones), hence the 20 % floor for
  performance metrics; peak RSS is sampled a few times a step and misses short peaks, hence 30 % for
  resource metrics; effect metrics come from seeded runs: 5 %.
An explicit `margin:` in the baseline file (a human's decision) overrides the derived one.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

K = 3.0
REL_FLOOR = {"effect": 0.05, "performance": 0.20, "resource": 0.30}
ABS_FLOOR_BY_UNIT = {"s": 0.05, "ms": 0.5, "MiB": 16.0, "%": 5.0}
ABS_FLOOR_DEFAULT = 1e-3


MAD_TO_STD = 1.4826
# A metric whose robust spread exceeds this share of its reference over the recorded runs is marked unstable
# (Model CE rejected KPIs above 5 % std/mean; TorchBench calls tests stable up to 7 %): its margin is wide and
# a busy machine, not the model, is the likely cause.
UNSTABLE_SPREAD = 0.10


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float
    min: float
    max: float
    median: float = math.nan
    robust_std: float = math.nan

    @property
    def reference(self) -> float:
        return self.median if math.isfinite(self.median) else self.mean

    @property
    def spread(self) -> float:
        return self.robust_std if math.isfinite(self.robust_std) else self.std

    @property
    def relative_spread(self) -> float:
        ref = abs(self.reference)
        return self.spread / ref if ref > 0 and math.isfinite(self.spread) else 0.0

    @property
    def stable(self) -> bool:
        return self.n < 2 or self.relative_spread <= UNSTABLE_SPREAD


def summarise(samples: list[float]) -> Summary:
    finite = [s for s in samples if math.isfinite(s)]
    if not finite:
        return Summary(len(samples), math.nan, math.nan, math.nan, math.nan)
    std = statistics.stdev(finite) if len(finite) > 1 else 0.0
    median = statistics.median(finite)
    mad = statistics.median(abs(v - median) for v in finite)
    return Summary(
        len(samples), statistics.fmean(finite), std, min(finite), max(finite), median, MAD_TO_STD * mad
    )


def derive_margin(summary: Summary, kind: str, unit: str) -> tuple[float, str]:
    """The margin and, in words, where it came from (which of the three terms won, with its numbers)."""
    spread = K * summary.spread
    rel = REL_FLOOR.get(kind, REL_FLOOR["performance"])
    rel_term = rel * abs(summary.reference)
    abs_term = ABS_FLOOR_BY_UNIT.get(unit, ABS_FLOOR_DEFAULT)
    margin = max(spread, rel_term, abs_term)
    if margin == spread and spread > 0:
        origin = f"{K:g} x robust std over n={summary.n} runs ({K:g} x {summary.spread:.4g})"
    elif margin == rel_term:
        origin = f"{rel:.0%} floor of the median for {kind} metrics ({K:g} x robust std = {spread:.4g})"
    else:
        unit_text = f" {unit}" if unit else ""
        origin = f"absolute floor {abs_term:g}{unit_text} ({K:g} x robust std = {spread:.4g})"
    return margin, origin
