"""Seed 004 §4.1.3: "前100轮loss收敛正常" (the loss converges normally over the first 100 iterations).

The loss curve comes from the training log's iteration lines (see tipc.judge.checks.logparse). Over the first
`max_iters` iterations (by logged iteration number; by logged points when numbers are absent or too sparse):
- any NaN/Inf loss anywhere in the log => FAIL;
- explosion (a loss above `explosion_factor` x the first window's median) => FAIL;
- Mann-Kendall trend test (tie-corrected, normal approximation) for a downward trend at level `alpha`, AND the
  smoothed first-window mean minus last-window mean must exceed `noise_k` standard errors of the window means
  (the noise bound) => PASS;
- the last window above the first by more than the noise bound => FAIL (diverging);
- a flat curve whose last window is below `flat_ok_below` (fine-tuning from converged weights) => PASS, only
  when that arg is given;
- otherwise FAIL (flat / no significant decrease).
Fewer than `min_points` points => N-A with the values (too little data to judge a trend; a loss that never
changes over 3 or more points, or explodes, still FAILs). No loss in the log => N-A.

Args (override test_tipc/tipc.yaml `convergence`): max_iters, window, alpha, min_points, explosion_factor
(default 10), noise_k (default 2), flat_ok_below (default none), step (substring of the train step id to
use; default the first that passed, else the first that ran), path (judge a log file the repo ships
instead of the run's train log: a repo-relative path or glob, or a list of them; every matching file is
judged and the worst verdict wins; none matching is a FAIL; no run record is needed then).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.core.yamlschema import Field, Int, Map, Num
from tipc.judge.checks._common import (
    excerpt,
    outcome,
    physical_lines,
    ran_train_runs,
    resolve,
    settings_of,
    shipped_logs,
)
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.logparse import ParsedLine, parse_line, step_index
from tipc.judge.checks.registry import (
    COUNT,
    POSITIVE,
    REPO_GLOBS,
    STEP,
    Args,
    arg_int,
    arg_num,
    arg_opt_int,
    arg_str,
    registered,
)
from tipc.judge.checks.settings import ConvergenceSettings
from tipc.judge.checks.stats import mann_kendall, mean, median, spearman, stdev


def analyse_curve(
    curve: list[tuple[int, float]],
    *,
    window: int | None = None,
    alpha: float = 0.05,
    min_points: int = 8,
    explosion_factor: float = 10.0,
    noise_k: float = 2.0,
    flat_ok_below: float | None = None,
) -> tuple[Verdict, str, dict[str, Any]]:
    """Judge a finite (iter, loss) curve. Pure; returns verdict, summary and figures."""
    n = len(curve)
    data: dict[str, Any] = {"curve": [[i, v] for i, v in curve], "points": n}
    if n < min_points:
        return _few_points(curve, min_points, explosion_factor, data)
    losses = [v for _, v in curve]
    w = window if window is not None else max(3, n // 5)
    w = max(1, min(w, n // 2))
    first, last = losses[:w], losses[-w:]
    first_mean, last_mean = mean(first), mean(last)
    # Noise bound: the standard error of the difference of the two window means.
    se = math.sqrt((stdev(first) ** 2 + stdev(last) ** 2) / w) if w > 1 else 0.0
    bound = noise_k * se
    mk = mann_kendall(losses)
    rho = spearman([float(i) for i, _ in curve], losses)
    data.update(
        {
            "window": w,
            "first_window": {"start": curve[0][0], "end": curve[w - 1][0], "mean": first_mean},
            "last_window": {"start": curve[-w][0], "end": curve[-1][0], "mean": last_mean},
            "noise_bound": bound,
            "mann_kendall": {
                "s": mk.s,
                "z": mk.z,
                "tau": mk.tau,
                "p_decreasing": mk.p_decreasing,
                "p_two_sided": mk.p_two_sided,
            },
            "spearman_rho": rho,
            "alpha": alpha,
        }
    )
    base = median(first)
    peak_i, peak = max(curve, key=lambda c: c[1])
    if base > 0 and peak > explosion_factor * base:
        data["explosion"] = {"iter": peak_i, "loss": peak, "first_window_median": base}
        return (
            Verdict.FAIL,
            f"loss exploded: {peak:.6g} at iter {peak_i} is over {explosion_factor:g}x the first window's "
            f"median {base:.6g}",
            data,
        )
    drop = first_mean - last_mean
    if -drop > bound:
        p_increasing = 1.0 - mk.p_decreasing
        return (
            Verdict.FAIL,
            f"loss diverges: last window mean {last_mean:.4g} is above the first window's "
            f"{first_mean:.4g} by more than the noise bound {bound:.3g} "
            f"(Mann-Kendall p={p_increasing:.2g} for an upward trend)",
            data,
        )
    if mk.p_decreasing < alpha and drop > bound:
        return (
            Verdict.PASS,
            f"loss decreases: {first_mean:.4g} -> {last_mean:.4g} over {n} points "
            f"(Mann-Kendall z={mk.z:.2f}, p={mk.p_decreasing:.2g})",
            data,
        )
    if flat_ok_below is not None and last_mean < flat_ok_below:
        return (
            Verdict.PASS,
            f"loss already converged: flat at {last_mean:.4g}, below flat_ok_below={flat_ok_below:g} "
            f"(Mann-Kendall p={mk.p_decreasing:.2g})",
            data,
        )
    return (
        Verdict.FAIL,
        f"loss does not decrease significantly: {first_mean:.4g} -> {last_mean:.4g} over {n} points "
        f"(Mann-Kendall p={mk.p_decreasing:.2g}, alpha {alpha:g}; window change {drop:.3g}, noise bound "
        f"{bound:.3g})",
        data,
    )


def _fmt_losses(values: list[float], limit: int = 8) -> str:
    shown = ", ".join(f"{v:.4g}" for v in values[:limit])
    return shown + (f", ... ({len(values)} points)" if len(values) > limit else "")


def _few_points(
    curve: list[tuple[int, float]], min_points: int, explosion_factor: float, data: dict[str, Any]
) -> tuple[Verdict, str, dict[str, Any]]:
    """A short curve (a lite run logs a handful of iterations) is too little data to judge a trend: N-A, with
    the values, whichever way they go (the official tutorial's 6.96, 4.88, 6.48, 5.25, 6.33 falls in one
    run and rises in the next; 2 points rising say nothing). What needs no trend test still FAILs: a loss
    that is exactly the same at every one of 3 or more points (nothing is learned), or that explodes."""
    n = len(curve)
    losses = [v for _, v in curve]
    few = f"{n} loss point(s), fewer than the {min_points} needed to judge convergence"
    if n == 0:
        return Verdict.NA, f"no loss point to judge convergence ({few})", data
    first, last = losses[0], losses[-1]
    data["first_loss"], data["last_loss"] = first, last
    scale = max(abs(first), abs(last), 1e-12)
    if n >= 3 and all(abs(v - first) <= 1e-6 * scale for v in losses):
        return (
            Verdict.FAIL,
            f"the loss does not change: {first:.6g} at every one of {n} iterations ({curve[0][0]} to "
            f"{curve[-1][0]})",
            data,
        )
    base = losses[0]
    peak_i, peak = max(curve, key=lambda c: c[1])
    if base > 0 and peak > explosion_factor * base:
        data["explosion"] = {"iter": peak_i, "loss": peak, "first_loss": base}
        return (
            Verdict.FAIL,
            f"loss exploded: {peak:.6g} at iter {peak_i} is over {explosion_factor:g}x the first loss "
            f"{base:.6g} ({_fmt_losses(losses)})",
            data,
        )
    way = "rises" if last > first else "falls" if last < first else "ends where it starts"
    return (
        Verdict.NA,
        f"{few}: {_fmt_losses(losses)} (it {way}: {first:.4g} at iter {curve[0][0]}, {last:.4g} at iter "
        f"{curve[-1][0]})",
        data,
    )


def extract_curve(lines: list[ParsedLine]) -> list[tuple[int, float, ParsedLine]]:
    iters = [p for p in lines if p.is_iteration]
    idx = step_index(iters)
    out = []
    for i, p in zip(idx, iters, strict=True):
        f = p.loss()
        if f is not None:
            out.append((i, f.value, p))
    return out


@dataclass(frozen=True)
class _JudgeArgs:
    """The analysis arguments: the rule's, else test_tipc/tipc.yaml `convergence`, else the defaults."""

    max_iters: int
    alpha: float
    min_points: int
    window: int | None
    explosion_factor: float
    noise_k: float
    flat_ok_below: float | None


def _judge_args(cs: ConvergenceSettings, args: Args) -> _JudgeArgs:
    return _JudgeArgs(
        max_iters=arg_int(args, "max_iters", cs.max_iters),
        alpha=arg_num(args, "alpha", cs.alpha),
        min_points=arg_int(args, "min_points", cs.min_points),
        window=arg_opt_int(args, "window") if "window" in args else cs.window,
        explosion_factor=arg_num(args, "explosion_factor", 10.0),
        noise_k=arg_num(args, "noise_k", 2.0),
        flat_ok_below=arg_num(args, "flat_ok_below", 0.0) if "flat_ok_below" in args else None,
    )


def _judge_shipped(ctx: CheckContext, pattern: object, judge_args: _JudgeArgs) -> CheckOutcome:
    """Every log file the repo ships that `pattern` matches, judged; the worst verdict wins."""
    shipped = shipped_logs(ctx, "convergence", pattern)
    if isinstance(shipped, CheckOutcome):
        return shipped
    judged = [_judge_log(ctx.repo, "the shipped log", rel, judge_args) for rel in shipped]
    if len(judged) == 1:
        return judged[0]
    order = (Verdict.FAIL, Verdict.WARN, Verdict.SKIP, Verdict.NA, Verdict.PASS)
    worst = min(judged, key=lambda o: order.index(o.verdict))
    return CheckOutcome(
        worst.verdict,
        f"{len(judged)} logs: {worst.summary}",
        tuple(e for o in judged for e in o.evidence),
        {**worst.data, "logs": [o.data.get("log") for o in judged]},
    )


@registered(
    "convergence",
    args=Map(
        {
            "max_iters": Field(COUNT),
            "window": Field(COUNT),
            "alpha": Field(Num(minimum=0, maximum=1, exclusive_minimum=True, exclusive_maximum=True)),
            "min_points": Field(Int(minimum=3)),
            "explosion_factor": Field(POSITIVE, default=10.0),
            "noise_k": Field(POSITIVE, default=2.0),
            "flat_ok_below": Field(Num()),
            "step": Field(STEP),
            "path": Field(REPO_GLOBS),
        }
    ),
)
def check_convergence(ctx: CheckContext, **args: object) -> CheckOutcome:
    """The loss converges over the first `max_iters` iterations of the training log."""
    settings = settings_of(ctx)
    if isinstance(settings, CheckOutcome):
        return settings
    judge_args, step_filter = _judge_args(settings.convergence, args), arg_str(args, "step")
    if "path" in args:
        return _judge_shipped(ctx, args["path"], judge_args)
    ran = ran_train_runs(ctx, step_filter)
    if isinstance(ran, CheckOutcome):
        return ran
    run = next((r for r in ran if r.passed), ran[0])
    return _judge_log(ctx.repo, run.step.id, str(run.log), judge_args)


def _judge_log(repo: Path | str, label: str, rel: str, judge_args: _JudgeArgs) -> CheckOutcome:
    """The convergence verdict of one training log (`label` names it: a step id or the file)."""
    path = resolve(repo, rel)
    if not path.is_file():
        return outcome(Verdict.FAIL, f"train log of {label} not found", Evidence("missing log", path=rel))
    parsed = [parse_line(seg, no) for no, seg in physical_lines(path)]
    full = extract_curve(parsed)
    if not full:
        return outcome(
            Verdict.NA,
            f"no loss values found in the training log of {label}",
            Evidence("no iteration line with a loss", path=rel),
        )
    for it, value, p in full:
        if not math.isfinite(value):
            return outcome(
                Verdict.FAIL,
                f"loss is {value} at iter {it} ({rel}:{p.line_no})",
                Evidence(f"non-finite loss at iter {it}", path=rel, line=p.line_no, excerpt=excerpt(p.text)),
                curve=[[i, v if math.isfinite(v) else str(v)] for i, v, _ in full[:2000]],
                step=label,
            )
    max_iters = judge_args.max_iters
    min_points = judge_args.min_points
    first_iter = full[0][0]
    selected = [c for c in full if c[0] - first_iter < max_iters]
    selection = f"first {max_iters} iterations"
    if len(selected) < min_points and len(full) > len(selected):
        selected = full[:max_iters]
        selection = f"first {len(selected)} logged points (iterations are logged sparsely)"
    verdict, summary, data = analyse_curve(
        [(i, v) for i, v, _ in selected],
        window=judge_args.window,
        alpha=judge_args.alpha,
        min_points=min_points,
        explosion_factor=judge_args.explosion_factor,
        noise_k=judge_args.noise_k,
        flat_ok_below=judge_args.flat_ok_below,
    )
    data.update({"step": label, "log": rel, "selection": selection, "total_points": len(full)})
    first_p, last_p = selected[0][2], selected[-1][2]
    ev = [
        Evidence(
            f"{selection} of {label}: {len(selected)} loss points",
            path=rel,
            line=first_p.line_no,
            excerpt=excerpt(first_p.text),
            numbers=(
                ("points", len(selected)),
                ("first_window_mean", data.get("first_window", {}).get("mean")),
                ("last_window_mean", data.get("last_window", {}).get("mean")),
                ("mk_p_decreasing", data.get("mann_kendall", {}).get("p_decreasing")),
            ),
        ),
        Evidence("last point used", path=rel, line=last_p.line_no, excerpt=excerpt(last_p.text)),
    ]
    return CheckOutcome(verdict, summary, tuple(ev), data)
