"""What the sandbox costs on the demo chain, measured side by side in one run.

Two figures, printed as ratios of the demo chain's wall time:
  components  the sandbox's own work, measured directly: entering it once per run (namespaces, overlay,
              binds, the read-only rest: the record's `sandbox.setup_s`); commands inherit it, so there is
              no cost per command beyond the overlay's on file access, which the end-to-end figure holds;
  end to end  `tipc run COPY` with the sandbox and with `--no-sandbox` (alternating, medians): the honest
              total, noisier than the components because training time itself varies by a few percent.
The goal is under 2 % of the chain. Each repetition uses fresh temp copies of examples/lenet_digits.

    python bench/sandbox_overhead.py [--repeat N]   (default 7)
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

def _env() -> dict[str, str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("FLAGS_enable_pir_api", None)
    return env


def _copy(tmp: Path, name: str) -> Path:
    dest = tmp / name / "lenet_digits"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    return dest


def _tipc_run(repo: Path, *extra: str) -> tuple[float, dict[str, object]]:
    t = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "tipc", "run", str(repo), "--no-color", *extra],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t
    if result.returncode != 0:
        raise SystemExit(f"tipc run failed ({result.returncode}):\n{result.stderr[-2000:]}")
    record = json.loads(next((repo / "test_tipc" / "output").rglob("tipc_run.json")).read_text())
    return wall, record


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)  # single runs vary by about 10 %
    args = parser.parse_args()
    walls: dict[str, list[float]] = {"sandbox": [], "in place": []}
    setups: list[float] = []
    steps = 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for i in range(args.repeat):
            order = [("sandbox", ()), ("in place", ("--no-sandbox",))]
            for label, extra in order if i % 2 == 0 else order[::-1]:
                wall, record = _tipc_run(_copy(tmp, f"{label}-{i}".replace(" ", "_")), *extra)
                walls[label].append(wall)
                if label == "sandbox":
                    sandbox = record.get("sandbox") or {}
                    assert isinstance(sandbox, dict)
                    setups.append(float(sandbox.get("setup_s", 0.0)))
                    steps = len(record.get("results", []))  # type: ignore[arg-type]
    chain = statistics.median(walls["in place"])
    components = statistics.median(setups)
    sandboxed = statistics.median(walls["sandbox"])
    print(f"demo chain, {args.repeat} repetitions each, {steps} steps (prepare included)")
    print(f"  tipc run --no-sandbox   median {chain:7.3f} s   (min {min(walls['in place']):.3f})")
    print(f"  tipc run (sandbox)      median {sandboxed:7.3f} s   (min {min(walls['sandbox']):.3f})")
    print(f"  entering the sandbox    median {statistics.median(setups) * 1000:7.1f} ms")
    print(f"sandbox components / chain: {components / chain:.2%}  (goal < 2%)")
    print(f"end to end, sandbox / in place: {sandboxed / chain:.3f}x  (noisier: training time varies)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
