"""tipc's own cost on the demo chain, next to the repo's bash script, measured side by side in one run.

For each repetition, on fresh temp copies of examples/lenet_digits:
  - `tipc run COPY --mode lite_train_lite_infer`: wall time, and the sum of its steps' own durations
    (from the run record), so wall - sum = what tipc adds (planning, probes, sampling, record writes);
  - `bash test_tipc/test_train_inference_python.sh CONFIG lite_train_lite_infer`: wall time.
Both get the same PATH (this interpreter's bin dir first), so `python` in the config is the same interpreter.

    python bench/chain_overhead.py [--repeat N] [--mode MODE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "lenet_digits"
CONFIG = "test_tipc/configs/lenet_digits/train_infer_python.txt"


def _copy(dest: Path) -> Path:
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    return dest


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "CI": "true",  # plain progress lines, no live view
    }


def _tipc(repo: Path, mode: str) -> tuple[float, float, int, dict[str, int]]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "tipc", "run", str(repo), "--config", CONFIG, "--mode", mode],
        env=_env(),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    records = sorted(repo.glob("test_tipc/output/**/tipc_run.json"))
    if not records:
        sys.exit(f"tipc wrote no run record (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    data = json.loads(records[-1].read_text())
    steps = sum(r["duration_s"] or 0.0 for r in data["results"])
    counts: dict[str, int] = {}
    for r in data["results"]:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return wall, steps, proc.returncode, counts


def _bash(repo: Path, mode: str) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["bash", "test_tipc/test_train_inference_python.sh", CONFIG, mode],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    ok = sum(
        p.read_text(errors="replace").count("Run successfully")
        for p in repo.glob("test_tipc/output/**/*.log")
    )
    return wall, proc.returncode, ok


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--mode", default="lite_train_lite_infer")
    args = parser.parse_args()
    if not (DEMO / CONFIG).is_file():
        sys.exit(f"the demo repo is missing ({DEMO / CONFIG}); this benchmark needs it")
    try:
        import tipc.plan  # noqa: F401
    except ImportError:
        sys.exit("tipc.plan is missing (the planner has not landed on this branch); nothing to measure")

    tipc_walls, step_sums, bash_walls = [], [], []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="tipc-bench-") as tmp:
            # alternate the order so neither side always runs on a warm page cache
            order = ("bash", "tipc") if i % 2 else ("tipc", "bash")
            for side in order:
                if side == "tipc":
                    wall, steps, code, counts = _tipc(_copy(Path(tmp) / "tipc"), args.mode)
                    tipc_walls.append(wall)
                    step_sums.append(steps)
                    print(
                        f"run {i + 1}: tipc  {wall:7.2f} s wall, steps {steps:7.2f} s, exit {code}, {counts}"
                    )
                else:
                    wall, code, ok = _bash(_copy(Path(tmp) / "bash"), args.mode)
                    bash_walls.append(wall)
                    print(
                        f"run {i + 1}: bash  {wall:7.2f} s wall, exit {code}, {ok} 'Run successfully' lines"
                    )

    tipc_wall = statistics.median(tipc_walls)
    steps = statistics.median(step_sums)
    bash_wall = statistics.median(bash_walls)
    print()
    print(f"median of {args.repeat} ({args.mode}):")
    print(f"  tipc wall                 {tipc_wall:8.2f} s")
    print(f"  sum of tipc's steps       {steps:8.2f} s")
    own = tipc_wall - steps
    print(f"  tipc's own time           {own:8.2f} s  ({own / tipc_wall:.1%} of its wall)")
    print(f"  bash script wall          {bash_wall:8.2f} s")
    print(f"  tipc wall / bash wall     {tipc_wall / bash_wall:8.2f}x")
    print(f"  tipc steps / bash wall    {steps / bash_wall:8.2f}x")


if __name__ == "__main__":
    main()
