"""The inference loops (`_inference`): for one model folder, every CPU (mkldnn x threads x precision) and GPU
(trt x precision) combination the dialect's loop runs, minus the ones its skip rules (`_cpu_skip`,
`_gpu_skip`: the scripts' `continue` conditions, named in the profile) leave out, one step each.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from tipc.config.bash import OMITTED, ifs_split, set_param, test_eq, test_ne
from tipc.core.findings import Level
from tipc.core.steps import Stage
from tipc.planning.chain.context import _Ctx

# ---------------------------------------------------------------------------------------------------------
# inference loops


def _gpu_skip(rule: str, quant: str, precision: str, trt: str) -> bool:
    if rule == "G1":
        return quant == "False" and "int8" in precision
    if rule == "G2":
        return ("fp16" in precision or "int8" in precision) and test_eq(trt, "False")
    if rule == "G3and":
        return trt == "False" and "int8" in precision and test_eq(quant, "True")
    if rule == "G3or":
        return (trt == "False" or "int8" in precision) and test_eq(quant, "True")
    if rule == "Clas":
        return test_eq(precision, "True") and test_eq(trt, "False")
    if rule == "Det":
        if precision != "paddle":
            if quant == "False" and precision == "trt_int8":
                return True
            if quant == "True" and precision != "trt_int8":
                return True
        return False
    raise ValueError(rule)


def _cpu_skip(rule: str, quant: str, precision: str, mkldnn: str) -> bool:
    if rule == "C1":
        return test_eq(mkldnn, "False") and test_eq(precision, "fp16")
    if rule == "C2":
        return test_eq(quant, "True") and test_ne(precision, "int8")
    if rule == "C4":
        return test_eq(quant, "False") and test_ne(precision, "fp32")
    if rule == "C3":
        return False  # checked at the mkldnn level
    raise ValueError(rule)


@dataclass(frozen=True)
class _InferRun:
    """What every inference command of one model folder shares."""

    common: dict[str, str]
    quant: str
    gpu: str
    depends: tuple[str, ...]
    base: str
    trainer: str | None
    lines: tuple[int, ...]


def _infer_common(
    ctx: _Ctx, model_dir: str, image: str, whole: bool, extra: dict[str, str] | None
) -> dict[str, str]:
    """The parameters shared by the CPU and GPU inference commands."""
    cfg, d = ctx.cfg, ctx.d
    model_dir = model_dir + d.model_dir_suffix
    param1_value = cfg.infer_param1.value
    model_dir_value = model_dir
    if d.infer_dir_joins_value:
        model_dir_value = f"{model_dir}/{cfg.infer_model_dir.value}"
        param1_value = f"{model_dir}/{cfg.infer_param1.value}"
    if d.infer_model_dir_from_slot:
        model_dir_value = cfg.infer_model_dir.value
    if whole and d.param1_only_in_train:
        param1_value = ""
    return {
        "python": cfg.python.value,
        "script": cfg.inference.value,
        "model_dir": set_param(cfg.infer_model_dir.key, model_dir_value),
        "image": set_param(cfg.infer_image.key, image),
        "benchmark": (
            set_param(cfg.infer_benchmark.key, cfg.infer_benchmark.value) if d.benchmark_parsed else OMITTED
        ),
        "save_log_param": set_param(cfg.infer_save_log.key, ""),
        # Hand-edited copies (e.g. justld/DMNet_paddle) pass the save-log slot with its written value.
        "save_log_value": set_param(cfg.infer_save_log.key, cfg.infer_save_log.value),
        "param1": set_param(cfg.infer_param1.key, param1_value),
        "param2": set_param(cfg.infer_param2.key, cfg.infer_param2.value),
        "image_value": set_param(cfg.infer_image.key, cfg.infer_image.value),
        **(extra or {}),
    }


def _inference(
    ctx: _Ctx,
    model_dir: str,
    image: str,
    quant: str,
    gpu: str,
    *,
    depends: tuple[str, ...],
    base: str,
    trainer: str | None,
    whole: bool = False,
    extra: dict[str, str] | None = None,
) -> None:
    cfg, d = ctx.cfg, ctx.d
    run = _InferRun(
        common=_infer_common(ctx, model_dir, image, whole, extra),
        quant=quant,
        gpu=gpu,
        depends=depends,
        base=base,
        trainer=trainer,
        lines=(cfg.inference.line, cfg.infer_use_gpu.line, cfg.infer_model_dir.line),
    )
    if test_eq(quant, "True"):
        ctx.note(
            "TIPC230", Level.INFO, None, "quantized model: the script's int8-only skip rules apply", once="q"
        )
    for use_gpu in ifs_split(cfg.infer_use_gpu.value, "|"):
        ctx.tick()
        use_gpu_param = f"{cfg.infer_use_gpu.key}={use_gpu}"
        names = {"log_root": ctx.log_root, "gpu": use_gpu if d.infer_log_gpu_is_use_gpu else gpu}
        if test_eq(use_gpu, "False") or test_eq(use_gpu, "cpu"):
            _infer_cpu(ctx, run, names, use_gpu_param)
        elif test_eq(use_gpu, "True") or test_eq(use_gpu, "gpu"):
            _infer_gpu(ctx, run, names, use_gpu_param)
        else:
            ctx.note(
                "TIPC231",
                Level.WARNING if cfg.inference.value in ("null", "") else Level.ERROR,
                cfg.infer_use_gpu,
                f"inference use_gpu value {use_gpu!r} is none of True/False/gpu/cpu: the script prints "
                "'Does not support hardware other than CPU and GPU' and runs nothing for it",
            )


def _infer_loop(ctx: _Ctx, name: str) -> list[str]:
    # A dialect without the slot (compact: no mkldnn/threads/trt/precision lines) loops once, empty.
    return ifs_split(ctx.cfg.slot(name).value, "|") if name in ctx.d.slots else [""]


def _infer_cpu(ctx: _Ctx, run: _InferRun, names: dict[str, str], use_gpu_param: str) -> None:
    """The CPU inference loops: mkldnn x threads x batch (x precision where the dialect loops it)."""
    cfg, d, quant = ctx.cfg, ctx.d, run.quant
    # The lists the loops walk do not change inside them (the script reads them once).
    threads_list = _infer_loop(ctx, "infer_threads")
    # Each item's parameter is the same in every iteration: made once (the loops multiply).
    batches = [
        (batch, set_param(cfg.infer_batch.key, batch)) for batch in ifs_split(cfg.infer_batch.value, "|")
    ]
    precisions = [
        (precision, set_param(cfg.infer_precision.key, precision))
        for precision in (_infer_loop(ctx, "infer_precision") if d.cpu_precision_loop else [""])
    ]
    for mkldnn in _infer_loop(ctx, "infer_mkldnn"):
        ctx.tick()
        if "C3" in d.cpu_skip and test_eq(mkldnn, "False") and test_eq(quant, "True"):
            continue
        mkldnn_param = (
            f"{cfg.infer_mkldnn.key}={mkldnn}" if d.mkldnn_raw else set_param(cfg.infer_mkldnn.key, mkldnn)
        )
        # The skip rules read quant, precision and mkldnn only: decided once per precision here.
        ruled = [
            (precision, param, any(_cpu_skip(r, quant, precision, mkldnn) for r in d.cpu_skip))
            for precision, param in precisions
        ]
        for threads in threads_list:
            ctx.tick()
            outer = {
                **run.common,
                "use_gpu": use_gpu_param,
                "mkldnn": mkldnn_param,
                "threads": set_param(cfg.infer_threads.key, threads),
            }
            for batch, batch_param in batches:
                ctx.tick()
                for precision, precision_param, skipped in ruled:
                    ctx.tick()
                    if skipped:
                        continue
                    log = d.cpu_log.format(
                        **names, mkldnn=mkldnn, threads=threads, precision=precision, batch=batch
                    )
                    fields = {**outer, "batch": batch_param, "precision": precision_param}
                    _infer_emit(ctx, run, d.cpu_shape, log, fields)


def _infer_gpu(ctx: _Ctx, run: _InferRun, names: dict[str, str], use_gpu_param: str) -> None:
    """The GPU inference loops: trt x precision x batch."""
    cfg, d = ctx.cfg, ctx.d
    trts = [""] if d.whole_infer == "det" else _infer_loop(ctx, "infer_trt")
    # Each item's parameter is the same in every iteration: made once (the loops multiply).
    batches = [
        (batch, set_param(cfg.infer_batch.key, batch)) for batch in ifs_split(cfg.infer_batch.value, "|")
    ]
    precisions = [
        (precision, set_param(cfg.infer_precision.key, precision))
        for precision in _infer_loop(ctx, "infer_precision")
    ]
    for trt in trts:
        ctx.tick()
        trt_param = set_param(cfg.infer_trt.key, trt)
        for precision, precision_param in precisions:
            ctx.tick()
            if any(_gpu_skip(r, run.quant, precision, trt) for r in d.gpu_skip):
                continue
            outer = {**run.common, "use_gpu": use_gpu_param, "trt": trt_param, "precision": precision_param}
            for batch, batch_param in batches:
                ctx.tick()
                log = d.gpu_log.format(**names, trt=trt, precision=precision, batch=batch)
                _infer_emit(ctx, run, d.gpu_shape, log, {**outer, "batch": batch_param})


def _infer_emit(ctx: _Ctx, run: _InferRun, shape: str, log: str, fields: dict[str, str]) -> None:
    """Add one inference step: the command of `shape`, its log, and the output folder it may write.

    `fields`: `run.common` updated with this step's loop parameters (a fresh dict: the log is added to it)."""
    cfg, d = ctx.cfg, ctx.d
    results_dir = log[: -len(".log")] + "_results"
    if d.param1_results:
        fields["param1"] = set_param(cfg.infer_param1.key, results_dir)
    fields["log"] = log
    command = shape.format_map(fields)
    if ctx.light:  # lint: the command is all it needs
        ctx.add("", Stage.INFER, command, log=log, status_log=log, trainer=run.trainer)
        return
    name = posixpath.basename(log)
    if name.endswith(".log"):
        name = name[:-4]
    # Inference writes only its log, except where a script passes an output folder: PaddleSeg's results
    # dir (param1) and hand-edited copies passing the save-log slot's value (justld/DMNet_paddle).
    writes: tuple[tuple[str, str], ...] = ()
    save_log_param = set_param(cfg.infer_save_log.key, cfg.infer_save_log.value).strip()
    if d.param1_results and "{param1}" in shape:
        writes = ((cfg.infer_param1.key, results_dir),)
    elif "{save_log_value}" in shape and save_log_param:
        writes = ((cfg.infer_save_log.key, cfg.infer_save_log.value),)
    ctx.add(
        f"infer/{run.base}/{name}",
        Stage.INFER,
        command,
        log=log,
        status_log=log,
        trainer=run.trainer,
        cwd=d.infer_cwd,
        depends_on=run.depends,
        lines=run.lines,
        writes=writes,
    )
