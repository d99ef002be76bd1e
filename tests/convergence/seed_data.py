"""Seed 003's example config and manifest (its BERT demo), shared by the convergence tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# Seed 003's example config for its BERT demo; the application is tests/convergence/fake_bert.py.
SEED_CONFIG = """\
demo:
    directory: "{directory}"
    executable:
        - "python3"
        - "fake_bert.py"
    log_output: "stderr"
    log_parsing:
        step_num:
            regex: "Iteration:\\\\s+(\\\\d+)"
        epoch_num:
            regex: "Epoch:\\\\s+([\\\\d\\\\.]+)"
        loss:
            regex: "Loss\\\\s+\\\\(MLM\\\\s+NSP\\\\):\\\\s+([\\\\d\\\\.]+)\\\\s+([\\\\d\\\\.]+)"
            labels:
                - MLM
                - NSP
        accuracy:
            regex: "Accuracy\\\\s+\\\\(MLM\\\\s+NSP\\\\):\\\\s+([\\\\d\\\\.]+)\\\\s+([\\\\d\\\\.]+)"
            labels:
                - MLM
                - NSP
        model_save:
            regex: "Saving model to: ([^\\\\s+]+)"
    metrics:
        loss:
            margin: 0.2
            comparison: "<="
        accuracy:
            margin: 0.2
            comparison: ">="
    recording:
        steps_to_record_after_save: 3
    flags:
        common:
            log_steps:
              key: "--steps-per-log"
              value: 1
            config:
                key: "--config"
                value: "configs/demo.json"
        gather:
            checkpoint_output:
                set_in_script: true
                key: "--checkpoint-dir"
            misc:
                save_interval:
                    key: "--epochs-per-save"
                    value: 5
                run_for:
                    key: "--epochs"
                    value: 10
        run:
            checkpoint_input:
                key: "--onnx-checkpoint"
                set_in_script: true
            start_step:
                key: "--continue-training-from-epoch"
                set_in_script: true
            run_for:
                key: "--epochs"
                set_in_script: true
            misc:
                engine_cache:
                    key: "--engine-cache"
                    value: "__demo_runtest_engine_cache"
"""

# Seed 003's example manifest, verbatim.
SEED_MANIFEST: dict[str, Any] = {
    "ckpt_logs": {
        "0": {
            "checkpoint": "ckpts/20-04-11-14-23-13/model_0.onnx",
            "start_step": 0,
            "results": {
                "0": {"loss": {"MLM": "9.742", "NSP": "0.718"}},
                "1": {"loss": {"MLM": "7.984", "NSP": "0.704"}},
                "2": {"loss": {"MLM": "7.336", "NSP": "0.666"}},
            },
        },
        "4": {
            "checkpoint": "ckpts/20-04-11-14-23-13/model_4:5.onnx",
            "start_step": 4,
            "results": {
                "5": {"loss": {"MLM": "5.840", "NSP": "0.625"}},
                "6": {"loss": {"MLM": "5.477", "NSP": "0.640"}},
                "7": {"loss": {"MLM": "5.344", "NSP": "0.650"}},
            },
        },
    }
}


def seed_config_text(**subs: str) -> str:
    text = SEED_CONFIG.format(directory=str(HERE))
    for old, new in subs.items():
        text = text.replace(old, new)
    return text


PYTHON = sys.executable
