"""What an observed command is: its stage by its entry script or the log it writes (`stage_of_command`), or
by the config key that names it (`_stage_from_key`).
"""

from __future__ import annotations

import os

from tipc.core.steps import Stage

_SCRIPT_STAGES = (
    ("export", Stage.EXPORT),
    ("quant", Stage.QUANT),
    ("infer", Stage.INFER),
    ("eval", Stage.EVAL),
    ("train", Stage.TRAIN),
)


def stage_of_command(argv: tuple[str, ...], log: str | None = None) -> Stage:
    """What a command is by its entry script (`deploy/infer.py`, `tools/export_model.py`, `-m
    tools.train`), else by the name of the log it writes (`python_infer_cpu_batchsize_1.log`); OTHER when
    neither tells."""
    entry = next((a for a in argv[1:] if a.endswith(".py")), None)
    if entry is None and "-m" in argv[:-1]:
        entry = argv[argv.index("-m") + 1].replace(".", "/")
    for text in (entry, os.path.basename(log) if log else None):
        if not text:
            continue
        lowered = text.lower()
        name = os.path.basename(lowered)
        for word, stage in _SCRIPT_STAGES:
            if word in name:
                return stage
        # PaddleOCR-style inference scripts: tools/infer/predict_det.py, deploy/python/predict.py
        if "predict" in name and any(part in lowered for part in ("infer", "deploy")):
            return Stage.INFER
    return Stage.OTHER


def _stage_from_key(key: str) -> Stage | None:
    key = key.strip().lower()
    if "export" in key:
        return Stage.EXPORT
    if "eval" in key:
        return Stage.EVAL
    if "infer" in key or "predict" in key:
        return Stage.INFER
    if "train" in key:
        return Stage.TRAIN
    if "quant" in key:
        return Stage.QUANT
    return None
