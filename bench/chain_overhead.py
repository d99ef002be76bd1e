"""tipc's own cost on the demo chain, next to the repo's bash script, measured side by side in one run.

Two chains, each on fresh temp copies of examples/lenet_digits (the demo itself is only read; the bench checks
that it is unchanged at the end):
  real  the demo as it is: real Paddle training, eval, export, inference;
  stub  the same copy with every top-level *.py entry script replaced by a no-op, so the same config plans
        the same commands but each step is a bare python start-up: what remains is mostly driver cost.
For each repetition the sides alternate (tipc, bash, then bash, tipc, ...), so neither always runs first:
  tipc  `python -m tipc run COPY --mode MODE`: wall time, the sum of its steps' own durations (run record),
        own = wall - steps (start-up, planning, probes, record writes, everything between steps), split into
        "outside the run" (interpreter start-up, imports, planning, exit) and "inside the run", and the CPU
        time of its resource sampler (the record's monitor_cpu_s) per second of step time;
  bash  `bash test_tipc/test_train_inference_python.sh CONFIG MODE`: wall time.
Both get the same PATH (this interpreter's bin dir first), so `python` in the config is the same interpreter.
Figures are medians over the repetitions, with the minimum beside them.

By default the tipc child runs with Python's normal bytecode cache (PYTHONDONTWRITEBYTECODE removed, one
warm-up run first), as an installed tipc does; --as-env keeps the caller's environment as it is.

    python bench/chain_overhead.py [--repeat N] [--mode MODE] [--chains real,stub] [--as-env]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "lenet_digits"
CONFIG = "test_tipc/configs/lenet_digits/train_infer_python.txt"
NOOP = "import sys\nsys.exit(0)\n"


@dataclass
class TipcRun:
    wall: float
    steps: float
    inside: float  # record ended - started: the run proper, after start-up and planning
    monitor_cpu: float
    code: int
    counts: dict[str, int]

    @property
    def own(self) -> float:
        return self.wall - self.steps


def _digest(tree: Path) -> str:
    """Paths, sizes and contents of every file under `tree`: proof that the bench left it alone."""
    h = hashlib.sha256()
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(tree)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _copy(dest: Path, chain: str) -> Path:
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    if chain == "stub":
        for script in dest.glob("*.py"):
            script.write_text(NOOP, encoding="utf-8")
    return dest


def _env(as_env: bool) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "CI": "true",  # plain progress lines, no live view
    }
    if not as_env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _tipc(repo: Path, mode: str, env: dict[str, str]) -> TipcRun:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "tipc", "run", str(repo), "--config", CONFIG, "--mode", mode],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    records = sorted(repo.glob("test_tipc/output/**/tipc_run.json"))
    if not records:
        sys.exit(f"tipc wrote no run record (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    data = json.loads(records[-1].read_text())
    results = data["results"]
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return TipcRun(
        wall=wall,
        steps=sum(r["duration_s"] or 0.0 for r in results),
        inside=(data["ended"] or 0.0) - data["started"],
        monitor_cpu=sum(r["resources"].get("monitor_cpu_s") or 0.0 for r in results),
        code=proc.returncode,
        counts=counts,
    )


def _bash(repo: Path, mode: str, env: dict[str, str]) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["bash", "test_tipc/test_train_inference_python.sh", CONFIG, mode],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    ok = sum(
        p.read_text(errors="replace").count("Run successfully")
        for p in repo.glob("test_tipc/output/**/results_python.log")
    )
    return wall, proc.returncode, ok


def _fmt(values: list[float], unit: str = "s", scale: float = 1.0, digits: int = 3) -> str:
    med, low = statistics.median(values) * scale, min(values) * scale
    return f"{med:9.{digits}f} {unit}  (min {low:.{digits}f})"


def _pct(values: list[float]) -> str:
    return f"{statistics.median(values):9.2%}    (min {min(values):.2%}, max {max(values):.2%})"


def _measure(chain: str, repeat: int, mode: str, env: dict[str, str]) -> None:
    tipc_runs: list[TipcRun] = []
    bash_walls: list[float] = []
    for i in range(repeat):
        with tempfile.TemporaryDirectory(prefix=f"tipc-bench-{chain}-") as tmp:
            # alternate the order so neither side always runs on a warm page cache
            order = ("bash", "tipc") if i % 2 else ("tipc", "bash")
            for side in order:
                if side == "tipc":
                    run = _tipc(_copy(Path(tmp) / "tipc", chain), mode, env)
                    tipc_runs.append(run)
                    print(
                        f"  {chain} {i + 1}: tipc {run.wall:7.2f} s wall, steps {run.steps:7.2f} s, "
                        f"own {run.own:6.3f} s, exit {run.code}, {run.counts}",
                        flush=True,
                    )
                else:
                    wall, code, ok = _bash(_copy(Path(tmp) / "bash", chain), mode, env)
                    bash_walls.append(wall)
                    print(
                        f"  {chain} {i + 1}: bash {wall:7.2f} s wall, exit {code}, "
                        f"{ok} 'Run successfully' lines",
                        flush=True,
                    )
    walls = [r.wall for r in tipc_runs]
    steps = [r.steps for r in tipc_runs]
    timed = [r for r in tipc_runs if r.steps > 0]
    rows = [
        ("tipc wall", _fmt(walls)),
        ("sum of tipc's steps", _fmt(steps)),
        ("tipc's own time (wall - steps)", _fmt([r.own for r in tipc_runs])),
        (
            "  outside the run: start-up, imports, planning, exit",
            _fmt([r.wall - r.inside for r in tipc_runs]),
        ),
        ("  inside the run: probes, records, between steps", _fmt([r.inside - r.steps for r in tipc_runs])),
        ("own / tipc wall", _pct([r.own / r.wall for r in tipc_runs])),
        ("own / sum of steps", _pct([r.own / r.steps for r in timed])),
        ("monitor CPU / step time", _pct([r.monitor_cpu / r.steps for r in timed])),
        ("bash script wall", _fmt(bash_walls)),
        ("tipc wall - bash wall", _fmt([t - b for t, b in zip(walls, bash_walls, strict=True)])),
        ("tipc wall / bash wall", f"{statistics.median(walls) / statistics.median(bash_walls):9.3f}x"),
    ]
    print(f"\n{chain} chain, {mode}: median of {repeat} (min)")
    for label, value in rows:
        print(f"  {label:<53}{value}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mode", default="lite_train_lite_infer")
    parser.add_argument("--chains", default="real,stub", help="comma-separated: real, stub")
    parser.add_argument(
        "--as-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE and the rest as they are"
    )
    args = parser.parse_args()
    chains = [c.strip() for c in args.chains.split(",") if c.strip()]
    if not chains or any(c not in ("real", "stub") for c in chains):
        sys.exit("--chains: expected a comma-separated list of real, stub")
    if not (DEMO / CONFIG).is_file():
        sys.exit(f"the demo repo is missing ({DEMO / CONFIG}); this benchmark needs it")
    env = _env(args.as_env)
    cache = "off" if env.get("PYTHONDONTWRITEBYTECODE") else "on"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load}, bytecode cache {cache}")
    before = _digest(DEMO)
    # warm-up (not timed): fills the bytecode cache and the page cache the same way for both sides
    subprocess.run([sys.executable, "-m", "tipc", "--help"], env=env, capture_output=True, check=True)
    for chain in chains:
        _measure(chain, args.repeat, args.mode, env)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    untouched = _digest(DEMO) == before
    print(f"load at the end {load}; examples/lenet_digits unchanged: {'yes' if untouched else 'NO'}")
    if not untouched:
        sys.exit(1)


if __name__ == "__main__":
    main()
