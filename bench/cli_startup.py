"""Start-up cost of `tipc --help` next to a bare `python -c pass`, measured side by side in one run."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _best(argv: list[str], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    bare = _best([sys.executable, "-c", "pass"])
    help_ = _best([sys.executable, "-m", "tipc", "--help"])
    print(f"python -c pass : {bare * 1000:7.1f} ms (median of 7)")
    print(f"tipc --help    : {help_ * 1000:7.1f} ms (median of 7)")
    print(f"ratio          : {help_ / bare:7.2f}x; tipc's own cost {1000 * (help_ - bare):.1f} ms")


if __name__ == "__main__":
    main()
