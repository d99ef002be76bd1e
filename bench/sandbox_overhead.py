"""What the sandbox costs on the demo chain, measured side by side in one run.

Figures, printed as shares of the demo chain's wall time (`tipc run --no-sandbox`):
  layer A     building the run's view once (namespaces, overlay, masks, per-run /tmp, the jail's set-up):
              the record's `sandbox.setup_s`;
  jail        what each command pays for its own jail (bwrap, the seccomp shim, the notifier), measured
              here on `true` against a plain start, times the commands the run started (the record's
              `sandbox.jail.launches`);
  observe     observing the repo's script in the sandbox (`tipc.execute.observation`) against the throw-away
              copy on the host it replaced (`--baseline`'s tipc, when given);
  end to end  `tipc run COPY` with the sandbox and with `--no-sandbox` (alternating, medians): the honest
              total, noisier than the components because training time itself varies by a few percent.
The goal is under 2 % of the chain. With `--baseline DIR` (a checkout of an earlier tipc, e.g. the main
branch before the jail) the same figures are measured for it in the same run, alternating, side by side.
Each repetition uses fresh temp copies of examples/lenet_digits.

    python bench/sandbox_overhead.py [--repeat N] [--baseline DIR]   (default 5)
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
MODE = "lite_train_lite_infer"

# Times observing the demo's script with the tipc found first on sys.path; prints seconds.
_OBSERVE = """
import sys, time
from pathlib import Path
repo = Path(sys.argv[1])
try:
    from tipc.execute.observation import observe
except ImportError:  # a tipc from before the observation moved into the sandbox
    from tipc.planning.observe import observe
started = time.perf_counter()
observe(repo / sys.argv[2], sys.argv[3], repo=repo)
print(time.perf_counter() - started)
"""


def _env(tipc_root: Path) -> dict[str, str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tipc_root), env.get("PYTHONPATH", "")) if p)
    env.pop("FLAGS_enable_pir_api", None)
    return env


def _copy(tmp: Path, name: str) -> Path:
    dest = tmp / name / "lenet_digits"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    return dest


def _tipc_run(tipc_root: Path, repo: Path, *extra: str) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import runpy; runpy.run_module('tipc', run_name='__main__')",
            "run",
            str(repo),
            "--no-color",
            *extra,
        ],
        env=_env(tipc_root),
        cwd="/",
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"tipc run failed ({result.returncode}):\n{result.stderr[-2000:]}")
    record = json.loads(next((repo / "test_tipc" / "output").rglob("tipc_run.json")).read_text())
    return wall, record


def _observe_s(tipc_root: Path, repo: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _OBSERVE, str(repo), CONFIG, MODE],
        env=_env(tipc_root),
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


# Seconds a command's start costs through the jail of the tipc found first on sys.path, beyond a plain start
# (both on `true`, medians); run in a child per tipc, so each column pays its own jail's price.
_JAIL = """
import statistics, sys, time
from tipc.execute import proc
from tipc.execute.sandbox import jail
bwrap, why = jail.find_bwrap()
if bwrap is None:
    raise SystemExit(f"no jail to measure: {why}")
launcher = jail.Jail(jail.JailSpec(bwrap=bwrap, writable=("/tmp",), home="/tmp"))
plain, jailed = [], []
for _ in range(int(sys.argv[1])):
    for into, use in ((plain, None), (jailed, launcher)):
        proc.set_launcher(use)
        started = time.perf_counter()
        proc.run(["true"], cwd="/")
        into.append(time.perf_counter() - started)
proc.set_launcher(None)
print(max(0.0, statistics.median(jailed) - statistics.median(plain)))
"""


def _jail_cost(tipc_root: Path, repeat: int = 15) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _JAIL, str(repeat)],
        env=_env(tipc_root),
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def _measure(label: str, tipc_root: Path, tmp: Path, i: int, out: dict[str, dict[str, list[float]]]) -> None:
    figures = out.setdefault(
        label, {"sandbox": [], "in place": [], "setup": [], "launches": [], "observe": []}
    )
    order = [("sandbox", ()), ("in place", ("--no-sandbox",))]
    for kind, extra in order if i % 2 == 0 else order[::-1]:
        repo = _copy(tmp, f"{label}-{kind}-{i}".replace(" ", "_"))
        wall, record = _tipc_run(tipc_root, repo, *extra)
        figures[kind].append(wall)
        if kind == "sandbox":
            sandbox = record.get("sandbox") or {}
            assert isinstance(sandbox, dict)
            figures["setup"].append(float(sandbox.get("setup_s", 0.0)))
            jail = sandbox.get("jail") or {}
            figures["launches"].append(float(jail.get("launches", 0)) if isinstance(jail, dict) else 0.0)
    figures["observe"].append(_observe_s(tipc_root, _copy(tmp, f"{label}-observe-{i}")))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)  # single runs vary by about 10 %
    parser.add_argument("--baseline", type=Path, help="a checkout of an earlier tipc, measured side by side")
    args = parser.parse_args()
    tipcs = [("this tipc", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    figures: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(dir="/var/tmp" if os.access("/var/tmp", os.W_OK) else None) as tmp_name:
        tmp = Path(tmp_name)
        for i in range(args.repeat):
            for label, root in tipcs if i % 2 == 0 else tipcs[::-1]:
                _measure(label, root, tmp, i, figures)
    per_launch = {label: _jail_cost(root) for label, root in tipcs}
    costs = ", ".join(f"{label} {cost * 1000:.1f} ms" for label, cost in per_launch.items())
    print(f"demo chain, {args.repeat} repetitions each; a jailed start costs more than a plain one: {costs}")
    print(f"{'':24}" + "".join(f"{label:>22}" for label, _ in tipcs))
    rows: list[tuple[str, list[str]]] = []
    shares: dict[str, float] = {}
    for label, _ in tipcs:
        f = figures[label]
        chain = statistics.median(f["in place"])
        launches = statistics.median(f["launches"])
        jail_s = launches * per_launch[label]
        observe_s = statistics.median(f["observe"])
        total = statistics.median(f["setup"]) + jail_s
        shares[label] = total / chain
        rows.append(("chain (--no-sandbox)", [f"{chain:.2f} s"]))
        rows.append(("tipc run (sandbox)", [f"{statistics.median(f['sandbox']):.2f} s"]))
        rows.append(("layer A (setup_s)", [f"{statistics.median(f['setup']) * 1000:.0f} ms"]))
        rows.append(("jailed commands", [f"{launches:.0f} x = {jail_s * 1000:.0f} ms"]))
        rows.append(("observing the script", [f"{observe_s * 1000:.0f} ms"]))
        rows.append(("sandbox / chain", [f"{total / chain:.2%}"]))
        rows.append(("end to end", [f"{statistics.median(f['sandbox']) / chain:.3f}x"]))
    width = len(rows) // len(tipcs)
    for n in range(width):
        name = rows[n][0]
        cells = [rows[n + k * width][1][0] for k in range(len(tipcs))]
        print(f"  {name:22}" + "".join(f"{c:>22}" for c in cells))
    print(f"goal: sandbox / chain < 2% (this tipc: {shares['this tipc']:.2%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
