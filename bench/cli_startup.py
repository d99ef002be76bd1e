"""Start-up cost of `tipc --help` beside a bare `python -c pass`, now and at a previous revision, side by
side.

    python bench/cli_startup.py [--repeat N] [--before REV | --before-dir DIR] [--as-env]

Each command runs N times (default 21), the commands interleaved so that a change in the machine's load hits
them alike; the medians of each child's CPU time (user + system, from wait4) and of its wall time are
printed with their ratio to `python -c pass`. The budget (issue 27): `tipc --help` within 1.5x of
`python -c pass`, in CPU time. `tipc --help` is what the installed console script runs (its three lines,
given to `python -c`); `python -m tipc` adds runpy's own imports. The previous revision (default ff674a2,
before the start-up work) is exported with `git archive` into a temporary folder, or taken from
--before-dir. Python's bytecode cache is on, as in an installed tipc (PYTHONDONTWRITEBYTECODE is removed
for the children, one warm-up run fills the cache); --as-env keeps the caller's environment as it is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "ff674a2"
BUDGET = 1.5  # x python -c pass, CPU time
CONSOLE = "import sys; from tipc.cli import console_main; sys.exit(console_main())"


def _export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev, "tipc"], cwd=ROOT, capture_output=True, check=True)
    into.mkdir(parents=True, exist_ok=True)
    (into / "archive.tar").write_bytes(archive.stdout)
    with tarfile.open(into / "archive.tar") as tar:
        tar.extractall(into, filter="data")
    return into


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of `argv`."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 2):
        raise SystemExit(f"{argv} failed")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--before", default=BEFORE, help="the revision to compare with (git archive)")
    parser.add_argument("--before-dir", type=Path, help="an exported tree of REV (holding its tipc/)")
    parser.add_argument("--as-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as it is")
    args = parser.parse_args()
    base_env = dict(os.environ)
    if not args.as_env:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="tipc-startup-") as tmp:
        before_root = args.before_dir or _export(args.before, Path(tmp) / "before")
        sides = {"now": ROOT, args.before: before_root.resolve()}
        py = sys.executable
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([py, "-c", "pass"], base_env)
        }
        for side, root in sides.items():
            env = {**base_env, "PYTHONPATH": str(root)}
            commands[f"tipc --help ({side})"] = ([py, "-c", CONSOLE, "--help"], env)
            commands[f"python -m tipc --help ({side})"] = ([py, "-m", "tipc", "--help"], env)
            commands[f"tipc run --help ({side})"] = ([py, "-c", CONSOLE, "run", "--help"], env)
        for argv, env in commands.values():  # warm-up: fills the bytecode caches, not timed
            _once(argv, env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, (argv, env) in commands.items():
                times[name].append(_once(argv, env))
    cache = "off" if base_env.get("PYTHONDONTWRITEBYTECODE") else "on"
    load, version = os.getloadavg()[0], sys.version.split()[0]
    print(f"python {version}, load {load:.2f}, bytecode cache {cache}, {args.repeat} runs each")
    bare_cpu = statistics.median(t[0] for t in times["python -c pass"])
    bare_wall = statistics.median(t[1] for t in times["python -c pass"])
    print(f"{'':34s}{'CPU ms':>9s}{'x pass':>8s}{'wall ms':>10s}{'x pass':>8s}")
    for name, runs in times.items():
        cpu = statistics.median(t[0] for t in runs)
        wall = statistics.median(t[1] for t in runs)
        print(f"{name:34s}{1000 * cpu:9.1f}{cpu / bare_cpu:8.2f}{1000 * wall:10.1f}{wall / bare_wall:8.2f}")
    help_ratio = statistics.median(t[0] for t in times["tipc --help (now)"]) / bare_cpu
    ok = help_ratio <= BUDGET
    print(f"tipc --help within {BUDGET}x python -c pass (CPU): {'yes' if ok else 'NO'} ({help_ratio:.2f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
