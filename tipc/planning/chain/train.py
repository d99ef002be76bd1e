"""The train modes (51-line family, Clas, Det): the gpu_list x autocast x trainer loops and, per run, its
training command (shape, save_log folder, pretrain/epoch/batch parameters), its eval and its export in the
script's order; the findings on mode-keyed values a mode leaves empty (`_note_mode_values`, compact reads
them too).
"""

from __future__ import annotations

from dataclasses import dataclass

from tipc.config import bash
from tipc.config.bash import OMITTED, ifs_split, set_param, test_eq, test_ne
from tipc.config.model import Slot
from tipc.config.reader import mode_slot_value
from tipc.core.findings import Level
from tipc.core.steps import Stage
from tipc.planning.chain.context import _Ctx, _writes
from tipc.planning.chain.export import _export_or_note
from tipc.planning.chain.loop_items import _amp, _classify, _device_item, _Dispatch, _dispatch

# ---------------------------------------------------------------------------------------------------------
# train modes (51-line family, Clas, Det)


def _train_use_gpu(ctx: _Ctx, use_gpu_items: list[str], count: int) -> str:
    """The use_gpu value of the gpu_list item at `count` (Det pairs the two lists item by item)."""
    if ctx.d.train_use_gpu_per_item:
        return use_gpu_items[count] if count < len(use_gpu_items) else ""
    return ctx.cfg.train_use_gpu.value


def _save_log(ctx: _Ctx, trainer: str, gpu: str, autocast: str, ips: str) -> tuple[str, int]:
    """(save_log folder, node count) of one training run, as the script names them."""
    d = ctx.d
    nodes = 1
    save_log = f"{ctx.log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}"
    if len(ips) <= d.ips_limit:
        if d.save_log_nodes_always:
            save_log += "_nodes_1"
    else:
        nodes = bash.word_count_nodes(ips)
        save_log += f"_nodes_{nodes}"
    return save_log + d.save_log_suffix, nodes


def _train_shape(ctx: _Ctx, gpu: str, ips: str) -> str:
    """The training command's shape: one device, one node with several, or several nodes."""
    if len(gpu) <= 2:
        return ctx.d.train_shape_single
    if len(ips) <= ctx.d.ips_limit:
        return ctx.d.train_shape_multi
    return ctx.d.train_shape_nodes


def _eval_weight(
    ctx: _Ctx, weight_slot: Slot, names: dict[str, object], save_log: str, train_model_name: str
) -> str:
    """The eval weight parameter after a training run; notes `rec_model` / `video_weight` in `names`."""
    cfg, d = ctx.cfg, ctx.d
    model_name = cfg.model_name.value
    eval_weight_path = d.eval_weight_path.format(**names)
    rec_model = any(n in model_name for n in d.rec_model_names)
    if rec_model:
        # PaddleClas saves these models under RecModel/ instead of <model_name>/.
        eval_weight_path = f"{save_log}/RecModel/{train_model_name}"
    names["rec_model"] = rec_model
    set_eval_weight = set_param(weight_slot.key, eval_weight_path)
    if d.eval_style == "video":
        real_model_name = model_name.replace("PP-", "pp", 1)
        video_weight = f"{save_log}/{real_model_name}_epoch_00001.pdparams"
        set_eval_weight = set_param(cfg.eval_param1.key, video_weight)
        names["video_weight"] = video_weight
    return set_eval_weight


def _eval_step(
    ctx: _Ctx,
    names: dict[str, object],
    base: str,
    train_id: str,
    env: tuple[str, str] | None,
    set_eval_weight: str,
    set_use_gpu: str,
    weight_slot: Slot,
) -> None:
    """The eval step after a training run (or the note that an empty eval script skips it)."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    python = cfg.python.value
    trainer = str(names["trainer"])
    save_log = str(names["save_log"])
    if test_ne(cfg.eval.value, "null"):
        if d.env_before_eval:
            ctx.apply_env(env)
        eval_log = d.eval_log.format(**names) if d.eval_log else None
        video_extra = ""
        if d.eval_style == "video" and "lite_infer" in mode and cfg.train_param1.key != "null":
            video_extra = f"{cfg.train_param1.key}={cfg.train_param1.value}"
        eval_cmd = d.eval_shape.format(
            extra=video_extra,
            save_log=save_log,
            python=python,
            eval_py=cfg.eval.value,
            weight=set_eval_weight,
            use_gpu=set_use_gpu,
            param1=set_param(cfg.eval_param1.key, cfg.eval_param1.value),
            log=eval_log,
        )
        ctx.add(
            f"eval/{base}",
            Stage.EVAL,
            eval_cmd,
            log=eval_log,
            status_log=eval_log,
            trainer=trainer,
            depends_on=(train_id,),
            lines=(cfg.eval.line, weight_slot.line),
        )
    elif cfg.eval.value == "":
        ctx.note("TIPC215", Level.WARNING, cfg.eval, "eval script is empty: the script skips eval")


def _run_train(ctx: _Ctx, disp: _Dispatch, trainer: str) -> str:
    """The trainer's script as the command runs it (with the dialect's suffix); an empty one is noted."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    if disp.run_train.strip() == "":
        ctx.note(
            "TIPC212",
            Level.ERROR,
            cfg.trainer_list,
            f"trainer {trainer!r} has an empty script value: the script runs `{cfg.python.value}` with "
            "the parameters as its script name",
        )
    run_train = disp.run_train
    if d.train_script_suffix and mode != "benchmark_train" and "whole_train" not in mode:
        run_train += d.train_script_suffix
    return run_train


def _train_sets(ctx: _Ctx, epoch_num: str, batch_value: str) -> tuple[str, str, str, str]:
    """The epoch, batch, param1 and param2 parameters (whole_train drops them in some dialects)."""
    cfg = ctx.cfg
    if ctx.d.whole_train_drops_params and "whole_train" in ctx.mode:
        return "", OMITTED, OMITTED, OMITTED
    return (
        set_param(cfg.epoch.key, epoch_num),
        set_param(cfg.train_batch.key, batch_value),
        set_param(cfg.train_param1.key, cfg.train_param1.value),
        set_param(cfg.train_param2.key, cfg.train_param2.value),
    )


@dataclass
class _TrainLoop:
    """What the training loops carry from one run to the next (the script's shell variables)."""

    epoch_num: str
    batch_value: str
    train_model_name: str
    load_norm_train_model: str = ""


@dataclass(frozen=True)
class _TrainDevice:
    """One gpu_list item as the training loop uses it."""

    gpu: str
    ips: str
    env: tuple[str, str] | None
    use_gpu: str


def _train_loop_inputs(ctx: _Ctx) -> _TrainLoop:
    """The epoch, batch and train_model_name values of this mode (mode-keyed lines picked, defaults set)."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    epoch_num = mode_slot_value(cfg.epoch, mode, d) if "epoch" in d.mode_keyed else cfg.epoch.value
    batch_value = (
        mode_slot_value(cfg.train_batch, mode, d) if "train_batch" in d.mode_keyed else cfg.train_batch.value
    )
    _note_mode_values(ctx, epoch_num, batch_value)
    if not epoch_num and d.epoch_default:
        epoch_num = d.epoch_default
    if d.epoch_one_on_device and cfg.train_use_gpu.value == d.epoch_one_on_device:
        epoch_num = "1"
    train_model_name = (
        mode_slot_value(cfg.train_model_name, mode, d)
        if "train_model_name" in d.mode_keyed
        else cfg.train_model_name.value
    )
    return _TrainLoop(epoch_num, batch_value, train_model_name)


def _train_device(ctx: _Ctx, gpu_item: str, use_gpu: str) -> _TrainDevice:
    """Classify one gpu_list item, apply its environment where the dialect does so at the gpu loop."""
    cfg, d = ctx.cfg, ctx.d
    gpu, ips, env = _classify(gpu_item)
    env = _device_item(ctx, gpu_item, gpu, ips, env)
    if d.amp == "det" and test_eq(gpu_item, "-1"):
        use_gpu = "False"
    if d.env_at_gpu_loop and env is not None and len(gpu_item) <= 1:
        ctx.apply_env(env)
    if len(gpu_item) > 15:
        ctx.note(
            "TIPC220",
            Level.INFO,
            cfg.gpu_list,
            f"gpu_list item {gpu_item!r} is longer than 15 characters: the script treats it as "
            f"multi-node (ips={ips!r}, gpus={gpu!r})",
        )
    return _TrainDevice(gpu, ips, env, use_gpu)


def _train_modes(ctx: _Ctx) -> None:
    cfg, d = ctx.cfg, ctx.d
    loop = _train_loop_inputs(ctx)
    use_gpu_items = ifs_split(cfg.train_use_gpu.value, "|")
    for count, gpu_item in enumerate(ifs_split(cfg.gpu_list.value, "|")):
        ctx.tick()
        dev = _train_device(ctx, gpu_item, _train_use_gpu(ctx, use_gpu_items, count))
        for autocast in ifs_split(cfg.autocast.value, "|") if d.engine != "compact" else [""]:
            ctx.tick()
            amp = _amp(ctx, autocast)
            for trainer in ifs_split(cfg.trainer_list.value, "|"):
                ctx.tick()
                disp = _dispatch(ctx, trainer)
                if disp is None or test_eq(disp.run_train, "null"):
                    continue
                _train_run(ctx, loop, dev, autocast, amp, trainer, disp)
    ctx.not_applicable = ""


def _train_pretrain(ctx: _Ctx, loop: _TrainLoop, trainer: str, nodes: int) -> str:
    """The pretrain parameter; PACT/FPGM trainers load the preceding norm_train run's weights."""
    cfg, d = ctx.cfg, ctx.d
    if (
        d.pretrain_from_norm
        and (trainer == cfg.pact_train.key or trainer == cfg.fpgm_train.key)
        and nodes <= 1
    ):
        ctx.note(
            "TIPC213",
            Level.INFO,
            cfg.pretrain,
            f"trainer {trainer!r} loads the weights of the preceding norm_train run "
            f"({loop.load_norm_train_model.strip() or 'none ran first: parameter empty'})",
        )
        return loop.load_norm_train_model
    return set_param(cfg.pretrain.key, cfg.pretrain.value)


def _train_command(
    ctx: _Ctx,
    loop: _TrainLoop,
    dev: _TrainDevice,
    amp: dict[str, str],
    trainer: str,
    disp: _Dispatch,
    save_log: str,
    nodes: int,
) -> tuple[str, str]:
    """(training command, use_gpu parameter) of one training run."""
    cfg, d = ctx.cfg, ctx.d
    set_epoch, set_batch, set_param1, set_param2 = _train_sets(ctx, loop.epoch_num, loop.batch_value)
    set_use_gpu = set_param(cfg.train_use_gpu.key, dev.use_gpu)
    fields = {
        "python": cfg.python.value,
        "run_train": _run_train(ctx, disp, trainer),
        "use_gpu": set_use_gpu,
        "save_model": set_param(cfg.save_model.key, save_log),
        "epoch": set_epoch,
        "pretrain": _train_pretrain(ctx, loop, trainer, nodes),
        "batch": set_batch,
        "param1": set_param1,
        "param2": set_param2,
        "launcher": d.launcher,
        "gpus": dev.gpu,
        "ips": dev.ips,
        "filename": set_param("filename", cfg.model_name.value),
        "shuffle": OMITTED,
        "enable_ce": OMITTED,
        "to_static": disp.to_static,
        **amp,
    }
    return _train_shape(ctx, dev.gpu, dev.ips).format(**fields), set_use_gpu


def _train_step(
    ctx: _Ctx, cmd: str, names: dict[str, object], disp: _Dispatch, trainer: str, base: str
) -> str:
    """Add the training step (its logs, lines and the folder it writes); returns its id."""
    cfg, d = ctx.cfg, ctx.d
    train_log = d.train_log.format(**names) if d.train_log else None
    status_log = d.train_status_log.format(train_log=train_log, **names) if d.train_status_log else None
    lines = (
        cfg.python.line,
        cfg.epoch.line,
        cfg.train_batch.line,
        cfg.pretrain.line,
        cfg.save_model.line,
        *disp.lines[:1],
    )
    writes, unknown = _writes(cfg.save_model, str(names["save_log"]), "training")
    return ctx.add(
        f"train/{base}",
        Stage.TRAIN,
        cmd,
        log=train_log,
        status_log=status_log,
        trainer=trainer,
        lines=lines,
        writes=writes,
        writes_unknown=unknown,
    )


def _seg_iter_fallback(ctx: _Ctx, loop: _TrainLoop) -> None:
    # The script falls back when `<save_log>/<train_model_name>` is missing after training.
    cfg = ctx.cfg
    loop.train_model_name = f"iter_{loop.epoch_num}/model.pdparams"
    ctx.note(
        "TIPC214",
        Level.INFO,
        cfg.train_model_name,
        f"PaddleSeg uses train_model_name {cfg.train_model_name.value!r} only "
        f"if it exists "
        f"after training; otherwise iter_<iters>/model.pdparams ({loop.train_model_name}); "
        "planned with the fallback",
        once="TIPC214",  # the first training run's note stands for all
    )


def _train_run(
    ctx: _Ctx,
    loop: _TrainLoop,
    dev: _TrainDevice,
    autocast: str,
    amp: dict[str, str],
    trainer: str,
    disp: _Dispatch,
) -> None:
    """One trainer's training run, then its eval, export and inference steps."""
    cfg, d = ctx.cfg, ctx.d
    save_log, nodes = _save_log(ctx, trainer, dev.gpu, autocast, dev.ips)
    cmd, set_use_gpu = _train_command(ctx, loop, dev, amp, trainer, disp, save_log, nodes)
    if d.unset_before_train:
        ctx.unset_cuda()
    names: dict[str, object] = {
        "log_root": ctx.log_root,
        "trainer": trainer,
        "gpu": dev.gpu,
        "autocast": autocast,
        "nodes": nodes,
        "save_log": save_log,
    }
    base = f"{trainer}/gpus_{dev.gpu}/autocast_{autocast}"
    train_id = _train_step(ctx, cmd, names, disp, trainer, base)
    if d.seg_iter_fallback:
        _seg_iter_fallback(ctx, loop)
    names["train_model_name"] = loop.train_model_name
    names["model_name"] = cfg.model_name.value
    weight_slot = cfg.export_weight if d.eval_weight_slot == "export_weight" else cfg.pretrain
    set_eval_weight = _eval_weight(ctx, weight_slot, names, save_log, loop.train_model_name)
    if d.pretrain_from_norm and d.record_norm_weights and trainer == cfg.norm_train.key and nodes <= 1:
        loop.load_norm_train_model = set_eval_weight
    _eval_step(ctx, names, base, train_id, dev.env, set_eval_weight, set_use_gpu, weight_slot)
    _export_or_note(ctx, disp, names, train_id, dev.env, base)
    if d.unset_after_trainer:
        ctx.unset_cuda()


def _note_mode_values(ctx: _Ctx, epoch_num: str, batch_value: str) -> None:
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    for name, got in (("epoch", epoch_num), ("train_batch", batch_value)):
        if name not in d.mode_keyed:
            continue
        slot = cfg.slot(name)
        if not got and slot.value not in ("", "null"):
            if not d.mode_arg_passed and name == "epoch":
                ctx.note(
                    "TIPC205",
                    Level.INFO,
                    slot,
                    f"this script reads the epoch line without the mode: the value is ignored "
                    f"(epochs={epoch_num or 'default'})",
                )
            elif bash.is_mode_keyed(slot.value):
                ctx.note(
                    "TIPC201",
                    Level.WARNING,
                    slot,
                    f"mode '{mode}' is missing from the mode-keyed value of {slot.key!r}: the parameter is "
                    "omitted and the training script's default is used",
                )
            else:
                ctx.note(
                    "TIPC202",
                    Level.WARNING,
                    slot,
                    f"{slot.key!r} holds a plain value on a mode-keyed line: the script passes nothing "
                    f"(write `{mode}=<value>|...`)",
                )
