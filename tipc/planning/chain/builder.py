"""A chain's steps from a typed config and its dialect: `build` (the steps `test_train_inference_python.sh`
would run in one mode) and `lint_build` (what lint needs of the same interpretation, without Step objects).

The branch is picked as the script picks it (compact engine, whole_infer variants, train modes); a plan past
its cap stops with a TIPC270 finding. Pure: no file is read or written here.
"""

from __future__ import annotations

from tipc.config.dialects import Dialect
from tipc.config.model import TipcConfig
from tipc.core.findings import Finding, Level
from tipc.core.steps import Mode, Step
from tipc.planning.chain.compact import _compact
from tipc.planning.chain.context import DEFAULT_MAX_STEPS, _Ctx, _PlanTooLarge
from tipc.planning.chain.train import _train_modes
from tipc.planning.chain.whole_infer import _whole_infer_clas, _whole_infer_det, _whole_infer_t51


def build(
    cfg: TipcConfig,
    d: Dialect,
    mode: Mode,
    root: str,
    *,
    device: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> tuple[list[Step], list[Finding], str]:
    """`max_steps`: past that many steps (or `WORK_PER_STEP` times as many loop iterations) planning stops
    with a TIPC270 error finding and the steps planned so far.

    `device="cpu"`: the gpu_list items keep their names (output folders, logs); single-device items run
    without CUDA_VISIBLE_DEVICES (as the script runs a `-1` item), multi-GPU launch items are planned but
    marked not applicable. The use_gpu values are rewritten beforehand
    (`tipc.planning.planner.apply_overrides`)."""
    ctx = _Ctx(cfg, d, mode, root, cpu=device == "cpu", max_steps=max_steps)
    _run(ctx, mode)
    return ctx.steps, ctx.findings, ctx.log_root


def lint_build(
    cfg: TipcConfig, d: Dialect, mode: Mode, root: str, *, max_steps: int = DEFAULT_MAX_STEPS
) -> tuple[list[Finding], int, list[str]]:
    """What lint needs of a plan: (findings, number of steps, command of every inference step).

    The same interpretation as `build`, without building Step objects (lint plans four modes per config)."""
    ctx = _Ctx(cfg, d, mode, root, max_steps=max_steps, light=True)
    _run(ctx, mode)
    return ctx.findings, ctx.count, ctx.infer_commands


def _run(ctx: _Ctx, mode: Mode) -> None:
    try:
        _build(ctx, mode)
    except _PlanTooLarge as exc:
        # Located at the longest `|` list: the likeliest place to cut.
        widest = max(ctx.cfg.slots().values(), key=lambda s: s.value.count("|") if s.present else -1)
        ctx.note(
            "TIPC270",
            Level.ERROR,
            widest if widest.present and "|" in widest.value else None,
            f"planning stopped after {exc}: the `|` alternatives of this config multiply into more "
            f"commands than the cap of {ctx.max_steps} steps (raise it with --max-steps or TIPC_MAX_STEPS)",
        )


def _build(ctx: _Ctx, mode: Mode) -> None:
    cfg, d = ctx.cfg, ctx.d
    model_name = cfg.model_name.value
    ctx.log_root = d.log_root.format(model_name=model_name, mode=mode, root=ctx.root)
    klquant_as_whole = mode == Mode.KLQUANT_WHOLE_INFER and d.klquant_branch == "whole_infer"
    whole = mode == Mode.WHOLE_INFER or klquant_as_whole
    if mode == Mode.KLQUANT_WHOLE_INFER and not whole:
        ctx.note(
            "TIPC206",
            Level.WARNING,
            None,
            "this script has no klquant_whole_infer branch: the mode falls through to the training branch",
        )
    if d.engine == "compact":
        _compact(ctx, whole)
    elif whole:
        if d.whole_infer == "clas_klquant":
            _whole_infer_clas(ctx)
        elif d.whole_infer == "det":
            _whole_infer_det(ctx)
        else:
            _whole_infer_t51(ctx)
    else:
        _train_modes(ctx)
