"""Start-up cost of `tipc --help` and `tipc run --help` beside a bare `python -c pass`, measured side by side.

The budget: `tipc --help` answers in under 0.2 s (median). Python's bytecode cache is on as in an installed
tipc (PYTHONDONTWRITEBYTECODE is removed for the children; one warm-up run fills the cache); --as-env keeps
the caller's environment as it is.

    python bench/cli_startup.py [--repeat N] [--as-env]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELP_BUDGET_S = 0.2


def _times(argv: list[str], env: dict[str, str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--as-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as it is")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not args.as_env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    tipc = [sys.executable, "-m", "tipc"]
    subprocess.run([*tipc, "--help"], capture_output=True, check=True, env=env)  # warm-up, not timed
    cache = "off" if env.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f}, bytecode cache {cache}")
    bare = _times([sys.executable, "-c", "pass"], env, args.repeat)
    rows = {
        "python -c pass": bare,
        "tipc --help": _times([*tipc, "--help"], env, args.repeat),
        "tipc run --help": _times([*tipc, "run", "--help"], env, args.repeat),
    }
    for label, times in rows.items():
        med = statistics.median(times)
        print(
            f"{label:<16}: {1000 * med:7.1f} ms median of {args.repeat} (min {1000 * min(times):.1f}); "
            f"{med / statistics.median(bare):5.2f}x python -c pass"
        )
    help_med = statistics.median(rows["tipc --help"])
    ok = help_med < HELP_BUDGET_S
    print(f"tipc --help under {HELP_BUDGET_S:g} s: {'yes' if ok else 'NO'} ({help_med:.3f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
