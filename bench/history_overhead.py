"""What recording one run in the history costs, as a ratio of the demo chain's wall time.

Runs the demo chain once (`tipc run` on a temp copy of examples/lenet_digits), then times, N times each, what
`tipc check --baseline/--history` adds per run after the chain: reading the metrics from the record and its
logs (tipc.judge.baseline.metrics.extract), opening the database (migrations checked), and appending the run
with
its metrics in one transaction. SQLite always; PostgreSQL too with `--pg URL`. The goal is under 1 % of the
chain.

    python bench/history_overhead.py [--repeat N] [--pg postgresql://...]   (default N = 20)
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT))


def _env() -> dict[str, str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("FLAGS_enable_pir_api", None)
    return env


def _time(fn: object, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--pg", help="also measure a PostgreSQL history at this URL")
    args = parser.parse_args()

    from tipc.execute.record import load_record
    from tipc.judge.baseline.metrics import extract
    from tipc.modelci.history import open_history

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "lenet_digits"
        shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("output", "__pycache__"))
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "tipc", "run", str(repo), "--no-color"],
            env=_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        chain = time.perf_counter() - t
        if done.returncode != 0:
            raise SystemExit(f"tipc run failed ({done.returncode}):\n{done.stderr[-2000:]}")
        record = load_record(next((repo / "test_tipc" / "output").rglob("tipc_run.json")))
        run = extract(record, repo)
        print(f"demo chain: {chain:.2f} s wall ({len(run.metrics)} metrics per run)")
        t_extract = _time(lambda: extract(record, repo), args.repeat)
        targets = [("sqlite", str(Path(tmp) / "history.sqlite3"))]
        if args.pg:
            targets.append(("postgresql", args.pg))
        for name, target in targets:
            with open_history(target):
                pass  # the first open creates the schema; every later run pays only the check

            def store(target: str = target) -> None:
                with open_history(target) as db:
                    db.store_run(record, run, kind="check", repo=repo)

            t_store = _time(store, args.repeat)
            total = t_extract + t_store
            print(
                f"{name:<10} extract {t_extract * 1e3:6.1f} ms + open and append {t_store * 1e3:6.1f} ms = "
                f"{total * 1e3:6.1f} ms per run = {total / chain:.3%} of the chain (goal < 1 %)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
