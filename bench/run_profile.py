"""Where `tipc run`'s own time goes, phase by phase, on the demo's chain with stub steps.

A temp copy of examples/lenet_digits gets no-op entry scripts (train.py, eval.py, ... just exit 0), so the
config plans the same commands as for real but every step is a bare python start-up and what is left is
tipc's own work. Each repetition is a fresh `python` process that does what `tipc run COPY` does, stamping
the time at each phase; the parent adds interpreter start-up (spawn to first line) and exit (last stamp to
reaped). Prints the median and minimum of each phase (minimum: the figure least disturbed by other load).
With --profile, also a cProfile of one `tipc run` (cumulative time, top entries).

    python bench/run_profile.py [--repeat N] [--profile] [--as-env]
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
TAIL = ("--config", CONFIG)

# Runs in the child: the `tipc run` path (cli -> commands.run -> plan -> runner) with a stamp per phase.
CHILD = """
import json, sys, time
stamps = [("start", time.time())]
def stamp(name):
    stamps.append((name, time.time()))
import tipc.cli
stamp("import tipc.cli")
args = tipc.cli.build_parser(only="run").parse_args(["run", sys.argv[1], "--config", sys.argv[2]])
stamp("build the parser, parse")
from tipc.commands.run import resolve_target
repo, config = resolve_target(args.repo, args.config)
from tipc.planning.planner import plan
stamp("import tipc.planning.planner")
the_plan = plan(config, args.mode, repo=repo)
stamp("plan()")
from tipc.report.progress import make_observer
from tipc.execute.runner import RunOptions, execute
stamp("import runner, progress")
observer = make_observer(plain=True, stream=open("/dev/null", "w"))

class Stamped:
    def __getattr__(self, name):
        return getattr(observer, name)
    def plan_started(self, plan):
        stamp("execute: set-up (lock, python check, record, probes started)")
        observer.plan_started(plan)
    def step_started(self, index, total, step):
        stamp(f"execute: between steps" if index > 1 else "execute: observer start")
        observer.step_started(index, total, step)
    def step_finished(self, index, total, step, result):
        stamps.append(("step", result.started))
        stamps.append(("step-end", result.ended))
        stamp("execute: after a step (monitor stop, record write, status line)")
        observer.step_finished(index, total, step, result)
    def plan_finished(self, plan, record):
        stamp("execute: wrap-up (probes joined, record written)")
        observer.plan_finished(plan, record)

execute(the_plan, RunOptions(), Stamped())
stamp("execute: return")
print(json.dumps(stamps))
sys.stdout.flush()
import gc
gc.freeze()  # as tipc.cli.console_main does before exiting
"""


def _stub_copy(dest: Path) -> Path:
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    for script in dest.glob("*.py"):
        script.write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    return dest


def _env(as_env: bool) -> dict[str, str]:
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "CI": "true",
    }
    if not as_env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _phases(repo: Path, env: dict[str, str]) -> dict[str, float]:
    """Seconds per phase of one run; steps' own time is summed under 'steps'."""
    t0 = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(repo), CONFIG], env=env, capture_output=True, text=True
    )
    t_end = time.time()
    if proc.returncode != 0:
        sys.exit(f"the child failed:\n{proc.stderr}")
    stamps: list[tuple[str, float]] = json.loads(proc.stdout.strip().splitlines()[-1])
    phases: dict[str, float] = {"interpreter start-up": stamps[0][1] - t0}
    prev = stamps[0][1]
    for name, t in stamps[1:]:
        if name == "step":
            key = "execute: before a step starts (gate, env, monitor start)"
        elif name == "step-end":
            key = "steps (their own time)"
        else:
            key = name
        phases[key] = phases.get(key, 0.0) + (t - prev)
        prev = t
    phases["interpreter exit"] = t_end - prev
    shutil.rmtree(repo / "test_tipc" / "output", ignore_errors=True)
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one run")
    parser.add_argument("--as-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as it is")
    args = parser.parse_args()
    env = _env(args.as_env)
    cache = "off" if env.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f}, bytecode cache {cache}")
    with tempfile.TemporaryDirectory(prefix="tipc-profile-") as tmp:
        repo = _stub_copy(Path(tmp) / "stub")
        _phases(repo, env)  # warm-up: bytecode and page cache
        runs = [_phases(repo, env) for _ in range(args.repeat)]
        names = list(dict.fromkeys(k for run in runs for k in run))
        print(f"\n{'phase':<66}{'median ms':>10}{'min ms':>9}")
        for name in names:
            values = [run.get(name, 0.0) * 1000 for run in runs]
            print(f"{name:<66}{statistics.median(values):10.1f}{min(values):9.1f}")
        totals = [sum(run.values()) * 1000 for run in runs]
        own = [sum(v for k, v in run.items() if not k.startswith("steps")) * 1000 for run in runs]
        print(f"{'total wall':<66}{statistics.median(totals):10.1f}{min(totals):9.1f}")
        print(f"{'tipc own time (total - steps)':<66}{statistics.median(own):10.1f}{min(own):9.1f}")
        if args.profile:
            print()
            subprocess.run(
                [sys.executable, "-m", "cProfile", "-s", "cumulative", "-m", "tipc", "run", str(repo), *TAIL],
                env=env,
                check=False,
            )


if __name__ == "__main__":
    main()
