"""Fixtures of the silent-failure tier: a small repo with a template config and scripts that print what they
load and log (they run under tests/silent/fake_paddle, a stand-in for the paddle API the preludes patch),
and the facts of a clean run of it as tipc's report and run record would give them."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench.silent.facts import Facts, load_facts

FAKE_PADDLE = Path(__file__).resolve().parent / "fake_paddle"
OUT = "test_tipc/output"
TRAIN_OUT = f"{OUT}/norm_train_gpus_-1"
RUN_FOLDER = f"{OUT}/tipc/tiny/train_infer_python/lite_train_lite_infer"

CONFIG = """\
===========================train_params===========================
model_name:tiny
python:python
gpu_list:-1
--device:cpu
--epochs:lite_train_lite_infer=1
--output_dir:./output/
--batch_size:lite_train_lite_infer=16
--pretrained:null
train_model_name:latest.pdparams
##
trainer:norm_train
norm_train:tools/train.py
##
===========================eval_params===========================
eval:eval.py
##
===========================infer_params===========================
--save_inference_dir:./output/
norm_export:export_model.py
inference:infer.py
--use_gpu:False
"""

TRAIN = """\
\"\"\"Train (fixture).\"\"\"
from __future__ import annotations

import argparse

import paddle


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="out")
    args, _ = parser.parse_known_args()
    for i in range(1, 4):
        loss = paddle.to_tensor(2.0 / i)
        loss.backward()
        print(f"[Epoch 1/1][Iter {i}/3] loss: {2.0 / i:.4f}, avg_reader_cost: 0.01000 sec, "
              f"avg_batch_cost: 0.50000 sec, avg_ips: 32.0 images/sec")
    print("[Eval] acc: 0.9000")
    print("backward of", " ".join(f"{v:g}" for v in paddle.BACKWARD))
    paddle.save({"w": paddle.to_tensor(1.0)}, args.output_dir + "/latest.pdparams")
    print("done")


if __name__ == "__main__":
    main()
"""

EVAL = """\
import argparse
import sys

import paddle


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained")
    args, _ = parser.parse_known_args()
    print("argv", " ".join(sys.argv[1:]))
    state = paddle.load(args.pretrained)
    print("loaded", args.pretrained, state["w"].value)
    seen = sum(1 for _ in paddle.io.DataLoader([1, 2, 3]))
    print(f"evaluated {seen} samples")


if __name__ == "__main__":
    main()
"""

INFER = """\
import argparse
import os

import paddle.inference as inference


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir")
    args, _ = parser.parse_known_args()
    config = inference.Config(os.path.join(args.model_dir, "inference.pdmodel"),
                              os.path.join(args.model_dir, "inference.pdiparams"))
    print("config", *config.args)


if __name__ == "__main__":
    main()
"""

PREDICT = """\
import paddle


class Net(paddle.nn.Layer):
    def forward(self, x):
        return x


if __name__ == "__main__":
    print("class_id: 0, prob:", Net()(paddle.to_tensor(1.0)).value)
"""

TRAIN_LOG = "".join(
    f"[Epoch 1/1][Iter {i}/3] loss: {2.0 / i:.4f}, avg_reader_cost: 0.01000 sec, "
    "avg_batch_cost: 0.50000 sec, avg_ips: 32.0 images/sec\n"
    for i in range(1, 4)
)


def _step(sid: str, stage: str, argv: list[str], log: str | None, lines: list[int]) -> dict[str, Any]:
    return {"id": sid, "stage": stage, "argv": argv, "cwd": ".", "log": log, "source_lines": lines}


STEPS = [
    _step(
        "train/1",
        "train",
        ["python", "tools/train.py", f"--output_dir=./{TRAIN_OUT}"],
        f"{OUT}/train.log",
        [3, 4, 6, 7, 8, 13],
    ),
    _step(
        "eval/1",
        "eval",
        ["python", "eval.py", f"--pretrained=./{TRAIN_OUT}/latest.pdparams"],
        f"{OUT}/eval.log",
        [9, 16],
    ),
    _step(
        "export/1",
        "export",
        [
            "python",
            "export_model.py",
            f"--pretrained=./{TRAIN_OUT}/latest.pdparams",
            f"--save_inference_dir=./{TRAIN_OUT}",
        ],
        f"{OUT}/export.log",
        [19, 20],
    ),
    _step(
        "infer/1",
        "infer",
        ["python", "infer.py", "--use_gpu=False", f"--model_dir=./{TRAIN_OUT}"],
        f"{OUT}/infer.log",
        [21, 22],
    ),
]


def _rule(rule_id: str, verdict: str = "PASS", data: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": rule_id,
        "verdict": verdict,
        "severity": "error",
        "summary": f"{rule_id} {verdict}",
        "data": data or {},
    }


def _file(path: str, kind: str, written_by: list[str], read_by: list[str]) -> dict[str, Any]:
    return {"path": path, "kind": kind, "origin": "run", "written_by": written_by, "read_by": read_by}


def fixture_report(repo: Path, rules: dict[str, str] | None = None) -> dict[str, Any]:
    """The report of a clean check of the fixture repo: every rule PASSes unless `rules` says otherwise."""
    verdicts = {
        "basic.lineage.weights": "PASS",
        "basic.train.log_fields": "PASS",
        "basic.train.ips_is_throughput": "PASS",
        "competition.train.loss_converges": "PASS",
        **(rules or {}),
    }
    listed = [_rule(r, v) for r, v in verdicts.items()]
    listed.append(
        _rule(
            "competition.predict_infer.identical",
            verdicts.get("competition.predict_infer.identical", "PASS"),
            {"commands": [["python", "predict.py", "--img_path=x.png"]]},
        )
    )
    listed.append(_rule("competition.serving.equals_inference", "PASS", {"repo_serving": "passed"}))
    return {
        "run": {"sandbox": {"folder": RUN_FOLDER}, "record_path": None},
        "rules": listed,
        "notes": ["sandbox: overlay"],
        "lineage": {
            "files": [
                _file(f"{TRAIN_OUT}/latest.pdparams", "weights", ["train/1"], ["eval/1", "export/1"]),
                _file(f"{TRAIN_OUT}/inference.pdmodel", "model", ["export/1"], ["infer/1"]),
                _file(f"{TRAIN_OUT}/inference.pdiparams", "model", ["export/1"], ["infer/1"]),
            ]
        },
    }


def make_repo(root: Path) -> Path:
    """The fixture repo with its clean run folder (record, logs, the weights and model train and export
    wrote), as `tipc check` leaves it."""
    repo = root / "tiny"
    files = {
        "tools/train.py": TRAIN,
        "eval.py": EVAL,
        "export_model.py": EVAL.replace("evaluated", "exported"),
        "infer.py": INFER,
        "predict.py": PREDICT,
        "test_tipc/configs/tiny/train_infer_python.txt": CONFIG,
        "test_tipc/configs/tiny/serving_infer_python.txt": (
            "model_name:tiny\n--pretrained:./pretrained/w.pdparams\n"
        ),
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    folder = repo / RUN_FOLDER
    logs = folder / "logs"
    (logs / "norm_train_gpus_-1").mkdir(parents=True)
    (logs / "train.log").write_text(TRAIN_LOG)
    (logs / "results_python.log").write_text(
        "Run successfully with command - tiny - python tools/train.py!\n"
        "Run failed with command - tiny - infer!\n"
    )
    sys.path.insert(0, str(FAKE_PADDLE))
    try:
        import paddle  # the fixture's stand-in

        with open(logs / "norm_train_gpus_-1" / "latest.pdparams", "wb") as f:
            pickle.dump({"w": paddle.to_tensor(1.0)}, f)
    finally:
        sys.path.remove(str(FAKE_PADDLE))
        for name in [m for m in sys.modules if m == "paddle" or m.startswith("paddle.")]:
            del sys.modules[name]
    (logs / "norm_train_gpus_-1" / "inference.pdmodel").write_text("program")
    record = {
        "plan": {
            "config_path": str(repo / "test_tipc/configs/tiny/train_infer_python.txt"),
            "output_dir": OUT,
            "results_log": f"{OUT}/results_python.log",
            "chain": "train_infer_python",
            "steps": STEPS,
        },
        "results": [
            {"step_id": s["id"], "status": "passed", "argv": s["argv"], "log": s["log"]} for s in STEPS
        ],
    }
    (logs / "tipc_run.json").write_text(json.dumps(record))
    serving = {
        "plan": {
            "chain": "serving",
            "config_path": "test_tipc/configs/tiny/serving_infer_python.txt",
            "steps": [
                {
                    "id": "serving/convert",
                    "stage": "export",
                    "cwd": ".",
                    "argv": ["python", "export_model.py", "--pretrained=./pretrained/w.pdparams"],
                }
            ],
        },
        "results": [],
    }
    (folder / "serving").mkdir()
    (folder / "serving" / "tipc_run.json").write_text(json.dumps(serving))
    return repo


@dataclass(frozen=True)
class Fixture:
    repo: Path
    facts: Facts


@pytest.fixture
def tiny(tmp_path: Path) -> Fixture:
    repo = make_repo(tmp_path / "clean")
    return Fixture(repo, load_facts(repo, fixture_report(repo)))


def run_script(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`python ARGV` in the repo, under the fake paddle; the output as written ('\r' kept)."""
    env = dict(os.environ, PYTHONPATH=str(FAKE_PADDLE))
    done = subprocess.run(
        [sys.executable, *argv], cwd=repo, capture_output=True, env=env, timeout=60, check=False
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())
