"""`tipc check` against `tipc run` on the demo (examples/lenet_digits), measured side by side.

Each repetition times `tipc run` and then `tipc check` on fresh temp copies of the demo (the real chain:
train, eval, export, Paddle Inference), with the same interpreter. From the check's own progress lines it
takes the engine work the check adds on top of the chain: the serving chain (`tipc: N steps: ... in Xs`,
after the first) and each check that ran past the quiet threshold (`tipc: check NAME: VERDICT (Xs)`). It
prints

    run s | check s | check / run | engine work s | check / (run + engine work)   (goal: <= 1.1)

and the per-check seconds. The rest of check's time (rules, report, sandbox) is tipc's own overhead.

    python bench/check_vs_run.py [--repeat N] [--python PY] [--load] [--keep] [--tree OLD_CHECKOUT]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "lenet_digits"
GOAL = 1.1

_CHAIN = re.compile(r"^tipc: \d+ steps: .* in (?P<t>\S+)$")
_CHECK = re.compile(r"^tipc: check (?P<name>\S+): (?P<verdict>\S+) \((?P<t>\S+)\)$")


def seconds(text: str) -> float:
    """human_seconds back to seconds: `17.4s`, `1m02s` or `1h01m02s`."""
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(\d+(?:\.\d+)?)s", text)
    if m is None:
        return 0.0
    return 3600 * int(m.group(1) or 0) + 60 * int(m.group(2) or 0) + float(m.group(3))


def timed(argv: list[str], cwd: Path, tree: Path) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
    env.pop("NO_COLOR", None)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    out = done.stdout + done.stderr
    if done.returncode not in (0, 1):  # 1: a rule failed; the timing still stands
        sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{out[-3000:]}")
    return took, out


def engine_work(check_output: str) -> tuple[float, dict[str, float]]:
    """(serving chain seconds + announced checks' seconds, {part: seconds})."""
    parts: dict[str, float] = {}
    chains = [seconds(m.group("t")) for ln in check_output.splitlines() if (m := _CHAIN.match(ln))]
    if len(chains) > 1:
        parts["serving chain"] = sum(chains[1:])
    for ln in check_output.splitlines():
        m = _CHECK.match(ln)
        if m:
            key = f"check {m.group('name')}"
            parts[key] = parts.get(key, 0.0) + seconds(m.group("t"))
    return sum(parts.values()), parts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--python", default=sys.executable, help="python with paddle (default: this)")
    parser.add_argument("--load", action="store_true", help="pass --load to tipc check (the full load test)")
    parser.add_argument("--keep", action="store_true", help="keep the temp copies")
    parser.add_argument("--tree", type=Path, default=ROOT, help="tipc tree to time (an older checkout)")
    args = parser.parse_args()
    tipc = [args.python, "-m", "tipc"]
    rows: list[tuple[float, float, float, dict[str, float]]] = []
    tmp = Path(tempfile.mkdtemp(prefix="tipc-check-vs-run-"))
    try:
        for i in range(args.repeat):
            run_copy, check_copy = tmp / f"run{i}", tmp / f"check{i}"
            shutil.copytree(DEMO, run_copy)
            shutil.copytree(DEMO, check_copy)
            run_s, _ = timed([*tipc, "run", str(run_copy), "--python", args.python], tmp, args.tree)
            extra = ["--load"] if args.load else []
            check_argv = [*tipc, "check", str(check_copy), "--python", args.python, *extra]
            check_s, out = timed(check_argv, tmp, args.tree)
            engine_s, parts = engine_work(out)
            rows.append((run_s, check_s, engine_s, parts))
            print(
                f"rep {i + 1}: run {run_s:.1f} s, check {check_s:.1f} s, engine work {engine_s:.1f} s "
                f"({', '.join(f'{k} {v:.1f}' for k, v in parts.items()) or 'none announced'})"
            )
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"copies kept in {tmp}")
    run_m = statistics.median(r[0] for r in rows)
    check_m = statistics.median(r[1] for r in rows)
    engine_m = statistics.median(r[2] for r in rows)
    ratio = check_m / (run_m + engine_m)
    print()
    print(f"{'run s':>8} {'check s':>8} {'check/run':>10} {'engine s':>9} {'check/(run+engine)':>19}")
    print(f"{run_m:8.1f} {check_m:8.1f} {check_m / run_m:10.2f} {engine_m:9.1f} {ratio:19.2f}")
    print(f"goal: check / (run + engine work) <= {GOAL}: {'met' if ratio <= GOAL else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
