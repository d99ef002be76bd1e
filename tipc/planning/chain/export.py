"""After one training run: the export step of its trainer (or the note that the trainer exports nothing)
and the inference loops over the exported model (`_export_or_note`, `_export_and_infer`).
"""

from __future__ import annotations

from tipc.config.bash import set_param, test_ne
from tipc.core.findings import Level
from tipc.core.steps import Stage
from tipc.planning.chain.context import _Ctx, _writes
from tipc.planning.chain.infer import _inference
from tipc.planning.chain.loop_items import _Dispatch


def _export_or_note(
    ctx: _Ctx,
    disp: _Dispatch,
    names: dict[str, object],
    train_id: str,
    env: tuple[str, str] | None,
    base: str,
) -> None:
    """Export and inference after a training run, or the note that the trainer exports nothing."""
    trainer = str(names["trainer"])
    if test_ne(disp.run_export, "null"):
        export_id = _export_and_infer(ctx, disp, names, train_id, env, base)
        del export_id
    else:
        if disp.run_export.strip() in ("", "null"):
            ctx.note(
                "TIPC216",
                Level.INFO,
                None,
                f"export script of trainer {trainer!r} is {disp.run_export.strip() or 'empty'}: "
                "no export and no inference run after training",
                once=f"noexport:{trainer}",
            )


def _export_and_infer(
    ctx: _Ctx,
    disp: _Dispatch,
    names: dict[str, object],
    train_id: str,
    env: tuple[str, str] | None,
    base: str,
) -> str:
    cfg, d = ctx.cfg, ctx.d
    python = cfg.python.value
    save_log = str(names["save_log"])
    model_name = cfg.model_name.value
    weight_path = d.export_weight_path.format(**names)
    if d.eval_style == "video":
        weight_path = str(names["video_weight"])
    set_export_weight = set_param(cfg.export_weight.key, weight_path)
    if names.get("rec_model"):
        # The script assigns the RecModel weights to the eval variable by mistake, so export keeps the weight
        # parameter of the previous export (none on the first one).
        set_export_weight = ctx.last_export_weight
        ctx.note(
            "TIPC217",
            Level.WARNING,
            cfg.export_weight,
            f"for {model_name} PaddleClas sets the eval weights instead of the export weights: export reuses "
            f"the previous export's weight parameter ({set_export_weight.strip() or 'none'})",
        )
    ctx.last_export_weight = set_export_weight
    save_infer_value = save_log
    export_log = d.export_log.format(**names) if d.export_log else None
    fields = {
        "python": python,
        "run_export": disp.run_export,
        "weight": set_export_weight,
        "weight_path": weight_path,
        "save_infer_key": cfg.save_infer.key,
        "save_log": save_log,
        "save_infer": set_param(cfg.save_infer.key, save_infer_value),
        "filename": set_param("filename", model_name),
        "log": export_log,
    }
    export_id = ""
    writes, unknown = _writes(cfg.save_infer, save_infer_value, "export")
    if d.whole_infer == "det" and cfg.export2.key == "export_onnx":
        stem = d.export_log.format(**names)[: -len("_export.log")] if d.export_log else ctx.log_root
        onnx_log = f"{stem}_onnx_export.log"
        onnx_cmd = (
            f"{python} {disp.run_export} {fields['weight']} {fields['filename']} export_onnx=True "
            f"{fields['save_infer']} >{onnx_log} 2>&1"
        )
        ctx.add(
            f"export/{base}/onnx",
            Stage.EXPORT,
            onnx_cmd,
            log=onnx_log,
            status_log=onnx_log,
            trainer=str(names["trainer"]),
            depends_on=(train_id,),
            lines=(cfg.export2.line,),
            writes=writes,
            writes_unknown=unknown,
        )
    export_cmd = d.export_shape.format(**fields)
    export_id = ctx.add(
        f"export/{base}",
        Stage.EXPORT,
        export_cmd,
        log=export_log,
        status_log=export_log,
        trainer=str(names["trainer"]),
        depends_on=(train_id,),
        lines=(cfg.save_infer.line, cfg.export_weight.line, disp.lines[-1]),
        writes=writes,
        writes_unknown=unknown,
    )
    ctx.apply_env(env)
    if d.whole_infer == "det":
        model_dir = f"{save_log}/{model_name}"
    elif (
        d.use_inference_dir
        and cfg.inference_dir.value not in ("null", "##")
        and not (d.inference_dir_single_bracket and cfg.inference_dir.value == "")
    ):
        model_dir = f"{save_log}/{cfg.inference_dir.value}"
    else:
        model_dir = save_log
    image = cfg.slot(d.train_infer_image_slot).value if d.train_infer_image_slot else ""
    _inference(
        ctx,
        model_dir,
        image,
        "True" if disp.quant else "False",
        str(names["gpu"]),
        depends=(export_id,),
        base=base,
        trainer=str(names["trainer"]),
    )
    if not d.unset_after_trainer:
        ctx.unset_cuda()
    return export_id
