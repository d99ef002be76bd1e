"""Slot layouts of the two dialects `tipc init` writes: which named slot sits on which line.

The config templates in test_tipc_template/ place `{{ s.<name> }}` on exactly these lines; the layout tests
read the rendered files back and compare. Lines not listed are headers or `##` separators.
"""

from __future__ import annotations

# 51-line template dialect (tipc-format.md §2.1): slot name -> 1-based line.
TEMPLATE_SLOTS: dict[str, int] = {
    "model_name": 2,
    "python": 3,
    "gpu_list": 4,
    "train_use_gpu": 5,
    "autocast": 6,
    "epoch": 7,
    "save_model": 8,
    "train_batch": 9,
    "pretrain": 10,
    "train_model_name": 11,
    "train_infer_img_dir": 12,
    "train_param1": 13,
    "trainer": 15,
    "norm_train": 16,
    "pact_train": 17,
    "fpgm_train": 18,
    "distill_train": 19,
    "trainer_key1": 20,
    "trainer_key2": 21,
    "eval": 24,
    "eval_param1": 25,
    "save_inference": 28,
    "export_weight": 29,
    "norm_export": 30,
    "quant_export": 31,
    "fpgm_export": 32,
    "distill_export": 33,
    "export1": 34,
    "export2": 35,
    "inference_dir": 36,
    "infer_model": 37,
    "infer_export": 38,
    "infer_quant": 39,
    "inference": 40,
    "infer_use_gpu": 41,
    "mkldnn": 42,
    "cpu_threads": 43,
    "infer_batch": 44,
    "tensorrt": 45,
    "precision": 46,
    "model_dir": 47,
    "image": 48,
    "save_log": 49,
    "benchmark": 50,
    "infer_param1": 51,
}
TEMPLATE_LINES = 51

# 32-line compact dialect (tipc-format.md §3).
COMPACT_SLOTS: dict[str, int] = {
    "model_name": 2,
    "python": 3,
    "gpu_list": 4,
    "train_use_gpu": 5,
    "epoch": 6,
    "save_model": 7,
    "train_batch": 8,
    "pretrain": 9,
    "train_model_name": 10,
    "data_path": 11,
    "trainer": 13,
    "norm_train": 14,
    "eval": 17,
    "save_inference": 20,
    "export_weight": 21,
    "norm_export": 22,
    "infer_model": 24,
    "infer_export": 25,
    "inference": 27,
    "infer_use_gpu": 28,
    "infer_batch": 29,
    "model_dir": 30,
    "image": 31,
    "benchmark": 32,
}
COMPACT_LINES = 32

DIALECTS = ("template", "compact")


def slots_of(dialect: str) -> dict[str, int]:
    return TEMPLATE_SLOTS if dialect == "template" else COMPACT_SLOTS


def line_count(dialect: str) -> int:
    return TEMPLATE_LINES if dialect == "template" else COMPACT_LINES


# Slots whose value is a stage script: `null` skips the stage, and blank or empty values misbehave (§1.4).
STAGE_SLOTS = frozenset(
    {
        "norm_train",
        "pact_train",
        "fpgm_train",
        "distill_train",
        "eval",
        "norm_export",
        "quant_export",
        "fpgm_export",
        "distill_export",
        "inference",
    }
)
# Slots whose values the scripts compare with the literal words True/False.
BOOL_SLOTS = frozenset({"train_use_gpu", "infer_quant", "infer_use_gpu", "mkldnn", "tensorrt", "benchmark"})
