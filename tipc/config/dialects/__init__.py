"""Dialect profiles: how one family of TIPC scripts reads a config and shapes its commands.

A profile is data. The planner (`tipc.planning.chain`) is one interpreter of these fields; each field names
one
behaviour of a real script so a new repo's edited copy is usually a new profile, not new code.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from tipc.core.errors import UserError
from tipc.core.results import StatusFormatName

# Array indices of the 51-line family (template / PaddleOCR / Clas / Det / Seg ...).
SLOTS_51: Mapping[str, int] = {
    "model_name": 1,
    "python": 2,
    "gpu_list": 3,
    "train_use_gpu": 4,
    "autocast": 5,
    "epoch": 6,
    "save_model": 7,
    "train_batch": 8,
    "pretrain": 9,
    "train_model_name": 10,
    "train_infer_img_dir": 11,
    "train_param1": 12,
    "trainer_list": 14,
    "norm_train": 15,
    "pact_train": 16,
    "fpgm_train": 17,
    "distill_train": 18,
    "trainer1": 19,
    "trainer2": 20,
    "eval": 23,
    "eval_param1": 24,
    "save_infer": 27,
    "export_weight": 28,
    "norm_export": 29,
    "pact_export": 30,
    "fpgm_export": 31,
    "distill_export": 32,
    "export1": 33,
    "export2": 34,
    "inference_dir": 35,
    "infer_model": 36,
    "infer_export": 37,
    "infer_quant": 38,
    "inference": 39,
    "infer_use_gpu": 40,
    "infer_mkldnn": 41,
    "infer_threads": 42,
    "infer_batch": 43,
    "infer_trt": 44,
    "infer_precision": 45,
    "infer_model_dir": 46,
    "infer_image": 47,
    "infer_save_log": 48,
    "infer_benchmark": 49,
    "infer_param1": 50,
}

# The 32-line compact dialect (PaddlePaddle/models tutorials/mobilenetv3_prod/Step6 and its copies).
SLOTS_32: Mapping[str, int] = {
    "model_name": 1,
    "python": 2,
    "gpu_list": 3,
    "train_use_gpu": 4,
    "epoch": 5,
    "save_model": 6,
    "train_batch": 7,
    "pretrain": 8,
    "train_model_name": 9,
    "data_path": 10,
    "trainer_list": 12,
    "norm_train": 13,
    "nodes": 14,
    "eval": 16,
    "save_infer": 19,
    "export_weight": 20,
    "norm_export": 21,
    "infer_model": 23,
    "infer_export": 24,
    "inference": 26,
    "infer_use_gpu": 27,
    "infer_batch": 28,
    "infer_model_dir": 29,
    "infer_image": 30,
    "infer_benchmark": 31,
}

# The legacy klquant layout the template re-reads from the first 17 lines (notes §2.2).
SLOTS_KLQUANT_TEMPLATE: Mapping[str, int] = {
    "model_name": 1,
    "python": 2,
    "export_weight": 3,
    "save_infer": 4,
    "infer_model": 5,
    "infer_export": 6,
    "infer_quant": 7,
    "inference": 8,
    "infer_use_gpu": 9,
    "infer_mkldnn": 10,
    "infer_threads": 11,
    "infer_batch": 12,
    "infer_trt": 13,
    "infer_precision": 14,
    "infer_model_dir": 15,
    "infer_image": 16,
    "infer_save_log": 17,
    "infer_benchmark": 18,
    "infer_param1": 19,
}
# PaddleSeg / PaddleVideo variant (no export keys; `awk 'NR==1 NR==17'` reads the whole file).
SLOTS_KLQUANT_SEG: Mapping[str, int] = {
    "model_name": 1,
    "python": 2,
    "infer_model": 3,
    "infer_export": 4,
    "infer_quant": 5,
    "inference": 6,
    "infer_use_gpu": 7,
    "infer_mkldnn": 8,
    "infer_threads": 9,
    "infer_batch": 10,
    "infer_trt": 11,
    "infer_precision": 12,
    "infer_model_dir": 13,
    "infer_image": 14,
    "infer_save_log": 15,
    "infer_benchmark": 16,
    "infer_param1": 17,
}

# Inference command shapes: `{name}` placeholders joined exactly as the scripts join them.
CPU_OCR = (
    "{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {batch} {save_log_param} {image} "
    "{benchmark} {precision} {param1} > {log} 2>&1 "
)
GPU_OCR = (
    "{python} {script} {use_gpu} {trt} {precision} {model_dir} {batch} {image} {benchmark} {param1} "
    "{save_log_param} > {log} 2>&1 "
)


# The closed vocabularies of the profile fields below (a typo in a profile is a type error).
Engine = Literal["t51", "compact", "clas", "det"]
Splitter = Literal["every_colon", "first_colon"]
AmpStyle = Literal["ocr", "clas", "det", "gan", "video", "template", "none"]
TrainerDispatch = Literal["full", "norm_only"]
TrainerFallback = Literal["norm", "skip"]
Trainer1Export = Literal["export1", "norm"]
EvalStyle = Literal["default", "video"]
KlquantBranch = Literal["train", "whole_infer"]
Launcher = Literal["--gpus", "--devices"]  # paddle.distributed.launch's card option: older / newer Paddle
WholeInferStyle = Literal["ocr", "template", "clas_klquant", "det", "compact", "gan"]


@dataclass(frozen=True)
class Dialect:
    name: str
    description: str
    engine: Engine = "t51"  # "t51" (51-line family), "compact", "clas", "det"
    splitter: Splitter = "every_colon"  # "first_colon": PaddleDetection utils_func.sh
    read_limit: int | None = 51  # lines read (None: whole file)
    slots: Mapping[str, int] = field(default_factory=lambda: SLOTS_51)
    mode_keyed: tuple[str, ...] = ("epoch", "train_batch")  # slots read with func_parser_params
    mode_arg_passed: bool = True  # False: the helper gets no MODE (PaddleClas epoch) -> always empty
    epoch_default: str = ""  # PaddleClas: 2 when the epoch came out empty
    epoch_one_on_device: str = ""  # PaddleClas: epochs forced to 1 when the train device value is "npu"
    rec_model_names: tuple[str, ...] = ()  # PaddleClas models saved under RecModel/
    log_root: str = "./test_tipc/output/{model_name}/{mode}"
    results_log: str = "results_python.log"
    status_format: StatusFormatName = "ocr"
    # train
    launcher: Launcher = "--gpus"
    ips_limit: int = 15  # ips longer than this => multi-node
    train_use_gpu_per_item: bool = True  # False: the whole line-5 value (PaddleClas, Det)
    amp: AmpStyle = "ocr"
    emit_autocast: bool = False  # pass `<autocast_key>=<autocast>` (template, Seg)
    save_log_suffix: str = ""  # PaddleRec: ".log" (the model dir's name ends in .log)
    infer_log_gpu_is_use_gpu: bool = False  # PaddleRec: inference log names carry the use_gpu value
    save_log_nodes_always: bool = False  # `_nodes_1` in save_log even on one node (Clas, Video)
    pretrain_from_norm: bool = False  # pact/fpgm load the preceding norm_train's weights (template, Seg)
    env_at_gpu_loop: bool = False  # export CUDA_VISIBLE_DEVICES for one card before training (Clas, Det, Seg)
    env_before_eval: bool = True  # `eval ${env}` right before eval (OCR)
    unset_before_train: bool = False  # template: unset CUDA_VISIBLE_DEVICES right before training
    unset_after_trainer: bool = (
        False  # Clas: unset at the end of every trainer iteration (not only after export)
    )
    trainer_dispatch: TrainerDispatch = "full"  # "norm_only": every trainer runs line 16 (PaddleGAN, compact)
    trainer_fallback: TrainerFallback = "norm"  # Det skips unknown trainer names
    trainer1_is_to_static: bool = False  # Clas: line 20 is the to-static key
    trainer1_export: Trainer1Export = "export1"  # paired with the line-20 trainer ("norm": Video amp_train)
    train_script_suffix: str = ""  # appended to the train script outside benchmark/whole_train (Video)
    whole_train_drops_params: bool = False  # Video: whole_train drops epoch, batch and train params
    record_norm_weights: bool = True  # False: the norm-weights hand-over never fires (Video's broken test)
    eval_style: EvalStyle = "default"  # "video": -w=<save_log>/<model>_epoch_00001.pdparams + train param1
    to_static_from_section: bool = False  # Det/GAN/Video: key from to_static_train_benchmark_params
    train_shape_single: str = (
        "{python} {run_train} {use_gpu}  {save_model} {epoch} {pretrain}  {batch} {param1} {amp} "
    )
    train_shape_multi: str = (
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {use_gpu} {save_model} {epoch} "
        "{pretrain}  {batch} {param1} {amp}"
    )
    train_shape_nodes: str = (
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} {use_gpu} "
        "{save_model} "
        "{pretrain} {epoch}  {batch} {param1} {amp}"
    )
    train_log: str | None = None  # redirect target of training (None: console)
    train_status_log: str | None = "{save_log}.log"  # log path named in the train status line
    eval_weight_slot: str = "pretrain"  # Det: export_weight
    eval_weight_path: str = "{save_log}/{train_model_name}"
    eval_shape: str = "{python} {eval_py} {weight} {use_gpu} {param1} > {log} 2>&1 "
    eval_log: str | None = "{log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}_eval.log"
    export_shape: str = "{python} {run_export} {weight} {save_infer} > {log} 2>&1 "
    export_log: str | None = "{log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}_export.log"
    export_weight_path: str = "{save_log}/{train_model_name}"
    seg_iter_fallback: bool = False  # Seg: train_model_name -> iter_<epoch>/model.pdparams when missing
    # inference
    use_inference_dir: bool = True
    inference_dir_single_bracket: bool = (
        False  # `[ ${inference_dir} != null ]`: an empty value counts as null
    )
    benchmark_parsed: bool = True  # False: the script never reads the benchmark slot (PaddleGAN)
    infer_model_dir_from_slot: bool = False  # PaddleC3D: the model-dir value comes from its own slot
    infer_dir_joins_value: bool = False  # Video: model-dir and param1 values are <dir>/<slot value>
    model_dir_suffix: str = ""  # Seg: "/deploy.yaml"
    infer_cwd: str = "."
    train_infer_image_slot: str | None = "train_infer_img_dir"  # Clas: infer_image; compact: None
    cpu_shape: str = CPU_OCR
    gpu_shape: str = GPU_OCR
    mkldnn_raw: bool = False  # `<key>=<value>` without func_set_params (template, Clas, Det)
    cpu_log: str = (
        "{log_root}/python_infer_cpu_gpus_{gpu}_usemkldnn_{mkldnn}_threads_{threads}_precision_{precision}"
        "_batchsize_{batch}.log"
    )
    gpu_log: str = (
        "{log_root}/python_infer_gpu_gpus_{gpu}_usetrt_{trt}_precision_{precision}_batchsize_{batch}.log"
    )
    cpu_skip: tuple[str, ...] = ("C1", "C2")
    gpu_skip: tuple[str, ...] = ("G1", "G2", "G3and")
    cpu_precision_loop: bool = True
    # compact family
    compact_save_log: str = "{log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}.log"
    compact_multinode: bool = True  # False: no multi-node branch (older Step6 copies)
    whole_infer_image_slot: str | None = "infer_image"
    whole_infer_exits_before_export: bool = False  # lelexx/fastflow_paddle: `exit 0` before the export
    param1_only_in_train: bool = False  # NAFNet: the second image dir is passed only after training
    # klquant_whole_infer
    klquant_branch: KlquantBranch = "train"  # "whole_infer": the whole_infer branch; "train": falls through
    klquant_slots: Mapping[str, int] | None = None  # legacy re-read layout used in klquant_whole_infer
    klquant_read_limit: int | None = 17
    klquant_forces_quant: bool = False  # template: every model is treated as quantized
    # whole_infer
    whole_infer: WholeInferStyle = "ocr"
    whole_infer_export_log: str | None = "{log_root}_export_{n}.log"
    whole_infer_gpu: str = "0"  # the `_gpu` passed to inference in whole_infer
    param1_results: bool = False  # inference param1 = `<log stem>_results`, a folder it writes (PaddleSeg)
    fingerprints: tuple[str, ...] = ()  # sha256 of the repo's test_train_inference_python.sh

    def with_(self, **changes: object) -> Dialect:
        return replace(self, **changes)  # type: ignore[arg-type]


@functools.cache  # the profiles are frozen data: every config's lint and plan looks its dialect up
def _registry() -> dict[str, Dialect]:
    from tipc.config.dialects import profiles

    return {d.name: d for d in profiles.ALL}


def get(name: str) -> Dialect:
    registry = _registry()
    if name not in registry:
        known = ", ".join(sorted(registry))
        raise UserError(f"unknown dialect {name!r}; known dialects: {known}")
    return registry[name]


def names() -> list[str]:
    return sorted(_registry())


def all_dialects() -> list[Dialect]:
    return list(_registry().values())


def render_markdown() -> str:
    """The dialect table of docs/config.md (kept in sync by a test)."""
    lines = [
        "| dialect | engine | splitter | lines read | output root | status format | description |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in all_dialects():
        limit = str(d.read_limit) if d.read_limit else "all"
        root = d.log_root.replace("{root}", "<abs cwd>")
        cells = (d.name, d.engine, d.splitter, limit, f"`{root}`", d.status_format, d.description)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
