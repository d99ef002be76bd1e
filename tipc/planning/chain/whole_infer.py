"""The whole_infer branches (template/51-line, Clas klquant, Det): the export of the given weights and the
inference loops over it, with no training.
"""

from __future__ import annotations

from tipc.config.bash import ifs_split, set_param, test_eq, test_ne
from tipc.config.model import TipcConfig
from tipc.core.findings import Level
from tipc.core.steps import Mode, Stage
from tipc.planning.chain.context import _Ctx, _writes, bash_dirname
from tipc.planning.chain.infer import _inference

# ---------------------------------------------------------------------------------------------------------
# whole_infer


def _whole_infer_t51(ctx: _Ctx) -> None:
    cfg, d = ctx.cfg, ctx.d
    python = cfg.python.value
    exports = ifs_split(cfg.infer_export.value, "|")
    quants = ifs_split(cfg.infer_quant.value, "|")
    gpu = d.whole_infer_gpu
    for n, infer_model in enumerate(ifs_split(cfg.infer_model.value, "|")):
        ctx.tick()
        run_export = exports[n] if n < len(exports) else ""
        depends: tuple[str, ...] = ()
        if test_ne(run_export, "null"):
            save_dir = infer_model if d.whole_infer == "ocr" else bash_dirname(infer_model)
            log = (
                d.whole_infer_export_log.format(log_root=ctx.log_root, n=n)
                if d.whole_infer_export_log
                else None
            )
            cmd = (
                f"{python} {run_export} {set_param(cfg.export_weight.key, infer_model)} "
                f"{set_param(cfg.save_infer.key, save_dir)}"
            )
            if log is not None:
                cmd += f" > {log} 2>&1 "
            depends = _whole_infer_export(ctx, cfg, f"export/whole_infer/{n}", cmd, log, log, save_dir)
        else:
            save_dir = infer_model
        quant = quants[n] if n < len(quants) else ""
        if ctx.mode == Mode.KLQUANT_WHOLE_INFER and d.klquant_forces_quant:
            quant = "True"
        this_gpu = gpu
        if d.whole_infer == "gan":
            quant = ""  # PaddleGAN passes no quant flag at all
        elif quant == "":
            # `func_inference ... ${is_quant} "${gpu}"`: the empty unquoted flag vanishes and the gpu id
            # becomes the quant flag.
            ctx.note(
                "TIPC232",
                Level.WARNING,
                cfg.infer_quant,
                f"infer_quant has no item for model {n}: the script shifts its arguments and uses the gpu id "
                "as the quant flag",
            )
            quant, this_gpu = gpu, ""
        _inference(
            ctx,
            save_dir,
            cfg.infer_image.value,
            quant,
            this_gpu,
            depends=depends,
            base=f"whole_infer/{n}",
            trainer=None,
        )


def _whole_infer_clas(ctx: _Ctx) -> None:
    cfg = ctx.cfg
    kl = cfg.export1  # Clas reads its KL-quant command from the export1 slot (line 34)
    if not (test_ne(kl.value, "null") and test_ne(kl.value, "False")):
        ctx.note(
            "TIPC240",
            Level.INFO,
            kl,
            "PaddleClas whole_infer runs only the KL-quant command of line 34, which is null/False: "
            "nothing runs in this mode",
        )
        return
    log = f"{ctx.log_root}/export.log"
    cmd = f"{cfg.python.value} {kl.value} > {log} 2>&1"
    export_id = ctx.add(
        "quant/whole_infer/kl_quant",
        Stage.QUANT,
        cmd,
        log=log,
        status_log=log,
        trainer=None,
        lines=(kl.line,),
        writes_unknown=(
            f"the KL-quant command of line {kl.line} is free-form: where it saves the quantized model is "
            "up to its own arguments (PaddleClas writes under deploy/)"
        ),
    )
    ctx.note(
        "TIPC241",
        Level.INFO,
        kl,
        "the script then symlinks model.pdmodel/.pdiparams to inference.* in "
        f"{cfg.infer_model.value}/quant_post_static_model before inference",
    )
    _inference(
        ctx,
        f"../{cfg.infer_model.value}/quant_post_static_model",
        cfg.infer_image.value,
        "True",
        "0",
        depends=(export_id,),
        base="whole_infer/kl_quant",
        trainer=None,
    )


def _whole_infer_det(ctx: _Ctx) -> None:
    cfg, mode = ctx.cfg, ctx.mode
    python, model_name = cfg.python.value, cfg.model_name.value
    quants = ifs_split(cfg.infer_quant.value, "|")
    count = 0
    exports = {
        "norm": cfg.norm_export,
        "pact": cfg.pact_export,
        "fpgm": cfg.fpgm_export,
        "distill": cfg.distill_export,
        "kl_quant": cfg.kl_quant_export,
    }
    for infer_mode in ifs_split(cfg.infer_model.value, "|"):
        ctx.tick()
        if test_eq(infer_mode, "null"):
            continue
        if mode == Mode.KLQUANT_WHOLE_INFER and infer_mode != "kl_quant":
            continue
        if mode == Mode.WHOLE_INFER and infer_mode == "kl_quant":
            continue
        export = exports.get(infer_mode)
        if export is None:
            ctx.note(
                "TIPC242",
                Level.ERROR,
                cfg.infer_model,
                f"infer_mode {infer_mode!r} is none of norm/pact/fpgm/distill/kl_quant: the script prints "
                "'Undefined infer_mode!' and exits 1",
            )
            return
        cmd = (
            f"{python} {export.value} {set_param(cfg.export_weight.key, cfg.export_weight.value)} "
            f"{set_param('filename', model_name)} {set_param(cfg.save_infer.key, cfg.save_infer.value)} "
        )
        writes, unknown = _writes(cfg.save_infer, cfg.save_infer.value, "export")
        export_id = ctx.add(
            f"export/whole_infer/{infer_mode}",
            Stage.EXPORT,
            cmd,
            log=None,
            status_log=None,
            trainer=None,
            lines=(export.line, cfg.export_weight.line),
            writes=writes,
            writes_unknown=unknown,
        )
        quant = quants[count] if count < len(quants) else ""
        if quant == "":
            quant = "{gpu}"
        _inference(
            ctx,
            f"{cfg.save_infer.value}/{model_name}",
            cfg.infer_image.value,
            quant,
            "0",
            depends=(export_id,),
            base=f"whole_infer/{infer_mode}",
            trainer=None,
        )
        count += 1


def _whole_infer_export(
    ctx: _Ctx, cfg: TipcConfig, step_id: str, cmd: str, log: str | None, status_log: str | None, save_dir: str
) -> tuple[str, ...]:
    """The whole_infer export step (what the later inference steps depend on)."""
    writes, unknown = _writes(cfg.save_infer, save_dir, "export")
    step = ctx.add(
        step_id,
        Stage.EXPORT,
        cmd,
        log=log,
        status_log=status_log,
        trainer=None,
        lines=(cfg.infer_model.line, cfg.infer_export.line),
        writes=writes,
        writes_unknown=unknown,
    )
    return (step,)
