"""Summaries of repeated measurements, and the margin a later run is judged with (docs/model-ci.md explains
the rule and why with a worked example).

    reference = median of the n recorded runs
    identical samples (a seeded loss, GPU memory):  margin = exact tolerance (1e-4 relative for effect
                                                    metrics, 2 % for the others), at least the resolution
    otherwise: a one-sided prediction interval for the median of m new runs (m = --repeat at check time):
        margin = t(1 - ALPHA, n - 1) x s x sqrt(1/m + 1/n),  at least the exact tolerance and the resolution

- The prediction interval is the bound one more run of the same distribution stays within with probability
  1 - ALPHA (normal noise, mean and std both estimated from the n samples: hence Student's t, which is wide
  for small n: t(0.999, 2) = 22.3, t(0.999, 4) = 7.2, t(0.999, 9) = 4.3). A fixed 3 x std of three samples
  underestimates the spread about half the time; this does not.
- A metric that did not vary at all over n >= 2 runs is deterministic: it is judged exactly (effect) or
  within a tight relative tolerance (memory, timings), never with a floor of tens of percent.
- A metric whose robust spread (1.4826 x MAD) exceeds UNSTABLE_SPREAD of its reference was unstable when
  recorded: it stays inactive (INFO) until a re-recording finds it stable (Model CE's admission gate,
  TorchBench's stable/unstable classes). One run says nothing about noise: a metric seen once is inactive.
An explicit `margin:` in the baseline file (a human's decision) overrides the derived one.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass

ALPHA = 1e-3  # one-sided false-alarm rate of one metric in one check, for normal noise
DOCUMENTED_RUNS = 10  # `tipc baseline record`'s default --repeat; docs/model-ci.md says why
# Relative tolerance of a metric that did not vary: effect metrics of a seeded run are judged exactly (the
# logs print 4-6 significant digits); memory and timings keep a little room for rounding and page granularity.
EXACT_REL = {"effect": 1e-4, "performance": 0.02, "resource": 0.02}
# The smallest difference a unit can show: CPU time comes in clock ticks, logs print milliseconds to 2-4
# decimals, NVML counts MiB.
RESOLUTION_BY_UNIT = {"s": 0.02, "ms": 0.05, "MiB": 1.0, "%": 1.0}
RESOLUTION_DEFAULT = 1e-6
MAD_TO_STD = 1.4826
# Robust spread above this share of the reference: unstable at record time, inactive until stable (Model CE
# rejected KPIs above 5 % std/mean; TorchBench calls tests stable up to 7 %; a loaded CI machine needs a bit
# more room).
UNSTABLE_SPREAD = 0.10
_IDENTICAL_REL = 1e-9


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
    def identical(self) -> bool:
        """Every recorded run gave the same value (at least two runs)."""
        if self.n < 2 or not (math.isfinite(self.min) and math.isfinite(self.max)):
            return False
        return self.max - self.min <= _IDENTICAL_REL * max(abs(self.max), abs(self.min), 1e-300)

    @property
    def relative_spread(self) -> float:
        ref = abs(self.reference)
        if not math.isfinite(self.spread):
            return 0.0
        return self.spread / ref if ref > 0 else (0.0 if self.spread == 0 else math.inf)

    @property
    def stable(self) -> bool:
        """Enough runs that agree: at least two, and a robust spread within UNSTABLE_SPREAD."""
        return self.n >= 2 and self.relative_spread <= UNSTABLE_SPREAD


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


def resolution(unit: str) -> float:
    return RESOLUTION_BY_UNIT.get(unit, RESOLUTION_DEFAULT)


def derive_margin(summary: Summary, kind: str, unit: str, repeats: int = 1) -> tuple[float, str]:
    """The margin for the median of `repeats` new runs and, in words, where it came from."""
    exact_rel = EXACT_REL.get(kind, EXACT_REL["performance"])
    exact = exact_rel * abs(summary.reference)
    floor = max(exact, resolution(unit))
    unit_text = f" {unit}" if unit else ""
    if summary.n < 2 or not math.isfinite(summary.std):
        return (
            floor,
            f"one run: no spread known (tolerance {exact_rel:g} relative, resolution {resolution(unit):g})",
        )
    if summary.identical:
        if exact >= resolution(unit):
            return floor, f"identical in all {summary.n} runs: exact within {exact_rel:g} relative"
        return (
            floor,
            f"identical in all {summary.n} runs: exact within the resolution {resolution(unit):g}{unit_text}",
        )
    t = t_quantile(1.0 - ALPHA, summary.n - 1)
    factor = math.sqrt(1.0 / max(repeats, 1) + 1.0 / summary.n)
    interval = t * summary.std * factor
    runs = f"median of {repeats} runs" if repeats > 1 else "one run"
    origin = (
        f"prediction interval for {runs}: t({1 - ALPHA:g}, {summary.n - 1}) {t:.3g} x std {summary.std:.4g} "
        f"x {factor:.3g} over n={summary.n} runs"
    )
    if interval >= floor:
        return interval, origin
    return floor, f"{origin} = {interval:.4g}, below the tolerance {floor:.4g}"


# ---- Student's t, from the regularised incomplete beta function (no scipy in the judge)


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_cf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: int) -> float:
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with df degrees of freedom (p > 0.5), by bisection on the CDF."""
    if not 0.5 < p < 1.0 or df < 1:
        raise ValueError(f"t_quantile({p}, {df}): expected 0.5 < p < 1 and df >= 1")
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0
