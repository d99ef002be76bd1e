"""Hand-made access records: a record's steps and what each read and wrote, as the recorder writes them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.judge.checks.checks_fixtures import make_record
from tipc.core.steps import Stage, Status
from tipc.execute.lineage import dir_for, finish_step, sanitise
from tipc.execute.record import RunRecord

OUT = "test_tipc/output/demo/lite_train_lite_infer"
W = f"{OUT}/train/latest.pdparams"
M = f"{OUT}/export/inference"


def write_access(
    record: RunRecord,
    step_id: str,
    reads: list[str] = (),  # type: ignore[assignment]
    writes: list[str] = (),  # type: ignore[assignment]
    *,
    via: str = "open",
    create: bool = True,
) -> None:
    """The step's JSON lines (repo-relative paths); written files are created (after the run's start)."""
    repo = Path(record.plan.repo)
    result = record.result(step_id)
    t = (result.started if result is not None and result.started else record.started) + 0.1
    folder = dir_for(record.plan)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {"kind": "process", "pid": 1, "ppid": 0, "step": step_id, "argv": [], "cwd": str(repo), "time": t}
        )
    ]
    for rel in writes:
        path = repo / rel
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"weights of " + rel.encode())
        lines.append(json.dumps({"path": str(path), "mode": "write", "pid": 1, "time": t, "via": via}))
    for rel in reads:
        path = repo / rel
        lines.append(
            json.dumps(
                {"path": str(path), "mode": "read", "pid": 1, "time": t, "via": via, "exists": path.exists()}
            )
        )
    (folder / f"{sanitise(step_id)}.jsonl").write_text("\n".join(lines) + "\n")
    finish_step(folder, step_id)


def committed_file(repo: Path, rel: str, age_s: float = 86400 * 400) -> Path:
    """A file that was there long before the run (what a file from a tarball or a commit looks like)."""
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"old")
    old = time.time() - age_s
    os.utime(path, (old, old))
    return path


def chain(
    repo: Path, *, eval_argv: list[str] | None = None, infer_status: Status = Status.PASSED
) -> RunRecord:
    """A demo-shaped record: train, eval, export, infer, all passed."""
    t0 = time.time() - 30
    return make_record(
        repo,
        [
            ("train", Stage.TRAIN, ["python", "train.py", f"--output_dir={OUT}/train"], None, Status.PASSED),
            (
                "eval",
                Stage.EVAL,
                eval_argv or ["python", "eval.py", f"--pretrained={W}"],
                None,
                Status.PASSED,
            ),
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", f"--pretrained={W}", f"--save_inference_dir={OUT}/export"],
                None,
                Status.PASSED,
            ),
            ("infer", Stage.INFER, ["python", "infer.py", f"--model_dir={OUT}/export"], None, infer_status),
        ],
        started=t0,
    )
