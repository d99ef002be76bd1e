"""The compact (32-line) engine: train -> eval -> export -> inference per gpu_list item, or its whole_infer
branch, in the compact scripts' order.
"""

from __future__ import annotations

from dataclasses import dataclass

from tipc.config import bash
from tipc.config.bash import ifs_split, set_param, test_eq, test_ne
from tipc.config.reader import mode_slot_value
from tipc.core.findings import Level
from tipc.core.steps import Stage
from tipc.planning.chain.context import CUDA, _Ctx, _writes
from tipc.planning.chain.infer import _inference
from tipc.planning.chain.loop_items import _classify, _device_item
from tipc.planning.chain.train import _note_mode_values, _train_shape
from tipc.planning.chain.whole_infer import _whole_infer_export

# ---------------------------------------------------------------------------------------------------------
# compact (32 lines)


def _compact(ctx: _Ctx, whole: bool) -> None:
    if whole:
        _compact_whole(ctx)
    else:
        _compact_train(ctx)


def _compact_whole(ctx: _Ctx) -> None:
    """whole_infer in the compact script: the optional export of infer_model, then inference."""
    cfg, d = ctx.cfg, ctx.d
    depends: tuple[str, ...] = ()
    if d.whole_infer_exits_before_export and test_ne(cfg.infer_export.value, "null"):
        ctx.note(
            "TIPC260",
            Level.WARNING,
            cfg.infer_export,
            "this script prints the whole_infer export command and exits 0 before running it: "
            "nothing runs in whole_infer",
        )
        return
    if test_ne(cfg.infer_export.value, "null"):
        log = d.whole_infer_export_log.format(log_root=ctx.log_root) if d.whole_infer_export_log else None
        weight = set_param(cfg.export_weight.key, cfg.infer_model.value)
        save = set_param(cfg.save_infer.key, cfg.save_infer.value)
        cmd = f"{cfg.python.value} {cfg.infer_export.value} {weight} {save}"
        if log:
            cmd += f" > {log} 2>&1 "
        depends = _whole_infer_export(ctx, cfg, "export/whole_infer/0", cmd, log, None, cfg.save_infer.value)
    image = cfg.slot(d.whole_infer_image_slot).value if d.whole_infer_image_slot else ""
    _inference(
        ctx,
        cfg.save_infer.value,
        image,
        "False",
        "0",
        depends=depends,
        base="whole_infer/0",
        trainer=None,
        whole=True,
        extra={"save_infer_param": set_param(cfg.save_infer.key, "")},
    )


@dataclass(frozen=True)
class _CompactRun:
    """One compact training run: what its eval and export steps reuse."""

    trainer: str
    gpu: str
    env: tuple[str, str] | None
    names: dict[str, object]
    save_log: str
    exp_dir: str
    data_dir: str
    base: str
    train_id: str


def _compact_device(ctx: _Ctx, gpu_item: str) -> tuple[str, str, tuple[str, str] | None]:
    """(gpus, ips, env) of one gpu_list item as the compact script reads it."""
    gpu, ips, env = _classify(gpu_item)
    if len(gpu_item) > 15 and ctx.d.compact_multinode:
        firsts = ifs_split(gpu, ",")
        env = (CUDA, firsts[0] if firsts else "")
    elif len(gpu_item) > 15:
        gpu, ips, env = gpu_item, "", (CUDA, ifs_split(gpu_item, ",")[0])
    return gpu, ips, _device_item(ctx, gpu_item, gpu, ips, env)


def _compact_train(ctx: _Ctx) -> None:
    """The compact script's train modes: gpu_list x trainer_list, each trained, evaluated and exported."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    epoch_num = mode_slot_value(cfg.epoch, mode, d)
    batch_value = mode_slot_value(cfg.train_batch, mode, d)
    _note_mode_values(ctx, epoch_num, batch_value)
    if cfg.train_use_gpu.present:
        ctx.note(
            "TIPC250",
            Level.INFO,
            cfg.train_use_gpu,
            "the compact script parses the train use_gpu line but never passes it to training",
        )
    for gpu_item in ifs_split(cfg.gpu_list.value, "|"):
        ctx.tick()
        gpu, ips, env = _compact_device(ctx, gpu_item)
        for trainer in ifs_split(cfg.trainer_list.value, "|"):
            ctx.tick()
            if test_eq(cfg.norm_train.value, "null"):
                continue
            run = _compact_train_step(ctx, trainer, gpu, ips, env, epoch_num, batch_value)
            if test_ne(cfg.eval.value, "null"):
                _compact_eval(ctx, run)
            if test_ne(cfg.norm_export.value, "null"):
                _compact_export(ctx, run)
    ctx.not_applicable = ""


def _compact_train_step(
    ctx: _Ctx,
    trainer: str,
    gpu: str,
    ips: str,
    env: tuple[str, str] | None,
    epoch_num: str,
    batch_value: str,
) -> _CompactRun:
    """Add one compact training step."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    autocast = "True" if trainer == "amp_train" else "False"
    nodes = bash.word_count_nodes(ips) if len(ips) > d.ips_limit else 1
    names: dict[str, object] = {
        "log_root": ctx.log_root,
        "trainer": trainer,
        "gpu": gpu,
        "autocast": autocast,
        "nodes": nodes,
        "nodes_suffix": f"_nodes_{nodes}" if len(ips) > d.ips_limit else "",
    }
    save_log = d.compact_save_log.format(**names)
    exp_dir = set_param(cfg.save_model.key, mode_slot_value(cfg.save_model, mode, d))
    data_dir = set_param(cfg.data_path.key, mode_slot_value(cfg.data_path, mode, d))
    fields = {
        "python": cfg.python.value,
        "run_train": cfg.norm_train.value,
        "exp_dir": exp_dir,
        "data_dir": data_dir,
        "save_model": set_param(cfg.save_model.key, save_log),
        "epoch": set_param(cfg.epoch.key, epoch_num),
        "pretrain": set_param(cfg.pretrain.key, cfg.pretrain.value),
        "batch": set_param(cfg.train_batch.key, batch_value),
        "launcher": d.launcher,
        "gpus": gpu,
        "ips": ips,
    }
    shape = _train_shape(ctx, gpu, ips)
    base = f"{trainer}/gpus_{gpu}/autocast_{autocast}"
    # fastflow's copy trains into the mode-keyed exp_dir value instead of the save_log dir
    train_dir = mode_slot_value(cfg.save_model, mode, d) if "{exp_dir}" in shape else save_log
    writes, unknown = _writes(cfg.save_model, train_dir, "training")
    train_id = ctx.add(
        f"train/{base}",
        Stage.TRAIN,
        shape.format(**fields),
        log=None,
        status_log=None,
        trainer=trainer,
        lines=(cfg.norm_train.line, cfg.epoch.line, cfg.train_batch.line),
        writes=writes,
        writes_unknown=unknown,
    )
    return _CompactRun(trainer, gpu, env, names, save_log, exp_dir, data_dir, base, train_id)


def _compact_eval(ctx: _Ctx, run: _CompactRun) -> None:
    cfg, d = ctx.cfg, ctx.d
    weight = set_param(cfg.pretrain.key, f"{run.save_log}/{cfg.train_model_name.value}")
    ctx.apply_env(run.env)
    log = d.eval_log.format(**run.names) if d.eval_log else None
    ctx.add(
        f"eval/{run.base}",
        Stage.EVAL,
        d.eval_shape.format(
            python=cfg.python.value,
            eval_py=cfg.eval.value,
            weight=weight,
            log=log,
            exp_dir=run.exp_dir,
            data_dir=run.data_dir,
        ),
        log=log,
        status_log=None,
        trainer=run.trainer,
        depends_on=(run.train_id,),
        lines=(cfg.eval.line,),
    )


def _compact_export(ctx: _Ctx, run: _CompactRun) -> None:
    """The export step of a compact training run, then inference on its output."""
    cfg, d = ctx.cfg, ctx.d
    save_log = run.save_log
    log = d.export_log.format(**run.names) if d.export_log else None
    export_weight = set_param(cfg.export_weight.key, f"{save_log}/{cfg.train_model_name.value}")
    writes, unknown = _writes(cfg.save_infer, save_log, "export")
    export_id = ctx.add(
        f"export/{run.base}",
        Stage.EXPORT,
        d.export_shape.format(
            python=cfg.python.value,
            run_export=cfg.norm_export.value,
            weight=export_weight,
            save_infer=set_param(cfg.save_infer.key, save_log),
            log=log,
            exp_dir=run.exp_dir,
        ),
        log=log,
        status_log=None,
        trainer=run.trainer,
        depends_on=(run.train_id,),
        lines=(cfg.norm_export.line,),
        writes=writes,
        writes_unknown=unknown,
    )
    ctx.apply_env(run.env)
    image = cfg.slot(d.train_infer_image_slot).value if d.train_infer_image_slot else ""
    _inference(
        ctx,
        save_log,
        image,
        "False",
        run.gpu,
        depends=(export_id,),
        base=run.base,
        trainer=run.trainer,
        extra={"save_infer_param": set_param(cfg.save_infer.key, save_log)},
    )
    ctx.unset_cuda()
