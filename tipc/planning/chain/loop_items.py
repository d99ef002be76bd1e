"""What one item of the train loop's `|` lists becomes: a gpu_list item's device classification (string
length, §6.3) as the scripts compute it and what `--device cpu` makes of it (`_classify`, `_device_item`),
an autocast value's AMP words per dialect (`_amp`), a trainer name's train/export slots (`_dispatch`, or a
finding and None where the script skips it).
"""

from __future__ import annotations

from dataclasses import dataclass

from tipc.config import bash
from tipc.config.bash import OMITTED, ifs_split, set_param, test_eq
from tipc.config.model import Slot
from tipc.core.findings import Level
from tipc.planning.chain.context import CUDA, _Ctx

# ---------------------------------------------------------------------------------------------------------
# device classification (string length, §6.3)


def _classify(gpu: str) -> tuple[str, str, tuple[str, str] | None]:
    """-> (gpu, ips, env) as the scripts compute them from one gpu_list item."""
    if test_eq(gpu, "-1"):
        return gpu, "", None
    if len(gpu) <= 1:
        return gpu, "", (CUDA, gpu)
    if len(gpu) <= 15:
        first = ifs_split(gpu, ",")
        return gpu, "", (CUDA, first[0] if first else "")
    parts = ifs_split(gpu, ";")
    ips = parts[0] if parts else ""
    gpus = parts[1] if len(parts) > 1 else ""
    return gpus, ips, None


def _device_item(
    ctx: _Ctx, gpu_item: str, gpu: str, ips: str, env: tuple[str, str] | None
) -> tuple[str, str] | None:
    """Under --device cpu: the env of this gpu_list item's steps, and `ctx.not_applicable` set for them.

    The item's name is kept. `len(gpu) > 2` is the scripts' own test for the launch command."""
    ctx.not_applicable = ""
    if not ctx.cpu:
        return env
    if len(gpu) > 2:
        where = f"{bash.word_count_nodes(ips)} nodes x " if ips else ""
        ctx.not_applicable = (
            f"gpu_list item {gpu_item!r} is a distributed launch on {where}GPUs {gpu}; "
            "--device cpu runs on the CPU only"
        )
    elif ctx.cpu_item is None:
        ctx.cpu_item = gpu_item
        env = None  # what the script does for a `-1` item: no CUDA_VISIBLE_DEVICES
    else:
        ctx.not_applicable = (
            f"gpu_list item {gpu_item!r} would repeat the CPU run of item {ctx.cpu_item!r} (--device cpu)"
        )
    if ctx.not_applicable:
        ctx.note("TIPC902", Level.INFO, ctx.cfg.gpu_list, f"planned, not run: {ctx.not_applicable}")
    elif not test_eq(gpu_item, "-1"):
        ctx.note(
            "TIPC900",
            Level.INFO,
            ctx.cfg.gpu_list,
            f"overridden (--device cpu): gpu_list item {gpu_item!r} runs on the CPU (no {CUDA}); "
            f"its folders and logs keep the name gpus_{gpu}",
        )
    return env


def _amp(ctx: _Ctx, autocast: str) -> dict[str, str]:
    d, cfg = ctx.d, ctx.cfg
    out = {"amp": OMITTED, "autocast": OMITTED, "amp_level": OMITTED}
    if d.amp in ("ocr", "template") and test_eq(autocast, "amp"):
        out["amp"] = "Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True"
    if d.emit_autocast:
        out["autocast"] = set_param(cfg.autocast.key, autocast)
    clas_amp = "-o AMP.use_amp=True -o AMP.scale_loss=128 -o AMP.use_dynamic_loss_scaling=True -o AMP.level="
    if d.amp == "clas":
        if autocast == "fp16":
            out["autocast"] = clas_amp + "O2"
        elif autocast == "amp":
            out["autocast"] = clas_amp + "O1"
        else:
            out["autocast"] = "-o AMP.use_amp=False"
    elif d.amp == "det" and (test_eq(autocast, "amp") or test_eq(autocast, "fp16")):
        out["autocast"] = "--amp"
        out["amp_level"] = "amp_level=O1" if autocast == "amp" else "amp_level=O2"
    elif d.amp == "video" and test_eq(autocast, "fp16"):
        out["amp"] = "--amp"
    elif d.amp == "gan" and test_eq(autocast, "fp16"):
        out["amp"] = "--amp --amp_level=O2"
    return out


@dataclass(frozen=True)
class _Dispatch:
    run_train: str
    run_export: str
    quant: bool
    to_static: str
    lines: tuple[int, ...]


def _dispatch(ctx: _Ctx, trainer: str) -> _Dispatch | None:
    cfg, d = ctx.cfg, ctx.d

    def is_(slot: Slot) -> bool:
        return trainer != "" and slot.key != "" and trainer == slot.key

    def pick(train: Slot, export: Slot, quant: bool = False, to_static: str = "") -> _Dispatch:
        return _Dispatch(train.value, export.value, quant, to_static, (train.line, export.line))

    if d.trainer_dispatch == "norm_only":
        return pick(cfg.norm_train, cfg.norm_export)

    if d.trainer_fallback == "skip" and is_(cfg.norm_train):
        return pick(cfg.norm_train, cfg.norm_export)
    if is_(cfg.pact_train):
        return pick(cfg.pact_train, cfg.pact_export, quant=True)
    if is_(cfg.fpgm_train):
        return pick(cfg.fpgm_train, cfg.fpgm_export)
    if is_(cfg.distill_train):
        return pick(cfg.distill_train, cfg.distill_export)
    if d.trainer1_is_to_static and is_(cfg.trainer1):
        run = f"{cfg.norm_train.value}  {cfg.trainer1.value}"
        return _Dispatch(run, cfg.norm_export.value, False, "", (cfg.norm_train.line, cfg.trainer1.line))
    if d.to_static_from_section:
        section = cfg.section("to_static_train_benchmark_params")
        key_slot = section.slots[0] if section and section.slots else None
        if key_slot is not None and is_(key_slot):
            return _Dispatch(
                cfg.norm_train.value, cfg.norm_export.value, False, key_slot.value, (cfg.norm_train.line,)
            )
    elif not d.trainer1_is_to_static and is_(cfg.trainer1):
        return pick(cfg.trainer1, cfg.norm_export if d.trainer1_export == "norm" else cfg.export1)
    if is_(cfg.trainer2):
        return pick(cfg.trainer2, cfg.export2)
    if d.trainer_fallback == "skip":
        ctx.note(
            "TIPC210",
            Level.WARNING,
            cfg.trainer_list,
            f"trainer {trainer!r} matches no trainer slot key; this script skips it",
        )
        return None
    if trainer != cfg.norm_train.key:
        ctx.note(
            "TIPC211",
            Level.INFO,
            cfg.trainer_list,
            f"trainer {trainer!r} matches no special trainer key; the script runs norm_train for it",
        )
    return pick(cfg.norm_train, cfg.norm_export)
