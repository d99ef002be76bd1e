"""Wall time of `tipc review` over N demo submissions, side by side in one run:
  local --jobs 1    one check after the other
  local --jobs 2    two at once (goal on 2 cores: <= 0.6x the --jobs 1 time)
  ray   --jobs 2    the same batch as Ray tasks on a private local cluster (started and stopped by the review,
                    its start-up included), against the local pool at --jobs 2

Each configuration reviews fresh copies (distinct content, so none is skipped as a twin) into its own review
folder; every submission must PASS. The rulesets default to tipc-basic + submission-artefacts (no serving
chain) to keep the batch affordable; pass --ruleset to change that.

--before DIR runs the local configurations twice, interleaved (before --jobs 1, after --jobs 1, before --jobs
2, after --jobs 2): once with the tipc source tree in DIR (e.g. `git archive main | tar -x -C DIR`), once
with this one, so a change is judged under the same load as what it replaces.

--threads-ablation adds `local --jobs 2` with `--threads-per-submission 0` (the math libraries' thread counts
left as they are), to show what capping each check's threads at its share of the cores changes.

    python bench/review_jobs.py [--n 8] [--no-ray] [--reverse] [--ruleset NAME ...] [--before DIR]
                                [--threads-ablation]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.review import submissions as subs  # noqa: E402


def _env(tree: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH", "")) if p)
    env.pop("FLAGS_enable_pir_api", None)
    return env


def _batch(tmp: Path, n: int) -> list[str]:
    paths = []
    for i in range(n):
        repo = subs.copy_demo(tmp / f"sub{i:02d}")
        (repo / "SUBMISSION.txt").write_text(f"submission {i}\n")  # distinct content: no twins
        paths.append(str(repo))
    return paths


def _children_cpu() -> float:
    """CPU seconds of every finished child (and their waited-for descendants) so far. Ray's workers are not
    children of the review, so the Ray figure undercounts."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _review(
    paths: list[str], out: Path, extra: list[str], tree: Path = ROOT
) -> tuple[float, dict[str, Any], int]:
    argv = [sys.executable, "-m", "tipc", "review", *paths, "--out", str(out), "--format", "json", *extra]
    t0 = time.monotonic()
    # run from the tree: `python -m` puts the working folder first on sys.path
    res = subprocess.run(argv, capture_output=True, text=True, env=_env(tree), cwd=tree, check=False)
    wall = time.monotonic() - t0
    if not res.stdout.strip():
        sys.stderr.write(res.stderr[-3000:])
        raise SystemExit(f"tipc review gave no summary (exit {res.returncode})")
    return wall, json.loads(res.stdout), res.returncode


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=8, help="demo submissions in the batch (default: 8)")
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray configuration")
    parser.add_argument(
        "--reverse",
        action="store_true",
        help="run the configurations in reverse order (other work's load drifts)",
    )
    parser.add_argument(
        "--ruleset", action="append", default=[], help="rulesets (default: tipc-basic, submission-artefacts)"
    )
    parser.add_argument(
        "--before", metavar="DIR", help="a tipc source tree to compare with, interleaved (see above)"
    )
    parser.add_argument(
        "--threads-ablation",
        action="store_true",
        help="also --jobs 2 with --threads-per-submission 0 (thread counts left as they are)",
    )
    args = parser.parse_args()
    rulesets = args.ruleset or ["tipc-basic", "submission-artefacts"]
    common = [arg for rs in rulesets for arg in ("--ruleset", rs)] + ["--memory-limit", "3G"]
    trees: dict[str, Path] = {}
    configs = [("local --jobs 1", ["--jobs", "1"]), ("local --jobs 2", ["--jobs", "2"])]
    if args.before:
        before = Path(args.before).resolve()
        if not (before / "tipc" / "__main__.py").is_file():
            raise SystemExit(f"--before {before}: not a tipc source tree (no tipc/__main__.py)")
        configs = [
            ("before --jobs 1", ["--jobs", "1"]),
            ("local --jobs 1", ["--jobs", "1"]),
            ("before --jobs 2", ["--jobs", "2"]),
            ("local --jobs 2", ["--jobs", "2"]),
        ]
        trees = {"before --jobs 1": before, "before --jobs 2": before}
    if args.threads_ablation:
        configs.append(("local -j2 threads=0", ["--jobs", "2", "--threads-per-submission", "0"]))
    if not args.no_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("ray is not installed: the Ray configuration is left out (pip install 'tipc[ray]')")
        else:
            configs.append(("ray --jobs 2", ["--jobs", "2", "--executor", "ray"]))
    if args.reverse:
        configs.reverse()
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="tipc-review-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for label, extra in configs:
            paths = _batch(tmp / label.replace(" ", "_"), args.n)
            cpu0 = _children_cpu()
            out = tmp / f"out-{label.replace(' ', '_')}"
            wall, summary, code = _review(paths, out, [*common, *extra], trees.get(label, ROOT))
            cpu = _children_cpu() - cpu0
            verdicts = summary["verdicts"]
            load = os.getloadavg()[0]
            # CPU time the review's processes got per second of wall time: ~1 per busy core we were given
            print(
                f"{label:16s} {wall:7.1f} s  cpu {cpu:6.1f} s ({cpu / wall:.2f} cores)  verdicts {verdicts}  "
                f"exit {code}  load {load:.1f}",
                flush=True,
            )
            for note in summary.get("notes", []):
                if str(note).startswith("threads:"):
                    print(f"  {note}")
            if code != 0:
                print(f"  not every submission passed under {label}: the figure is not comparable")
            results[label] = wall
    print()
    print(f"{args.n} demo submissions, {os.cpu_count()} cores; rulesets {', '.join(rulesets)}")
    print("(a load average above the core count: other work shared the cores; compare with care)")
    print(f"{'configuration':16s} {'wall':>9s} {'vs --jobs 1':>12s}")
    base = results["local --jobs 1"]
    for label, wall in results.items():
        print(f"{label:16s} {wall:7.1f} s {wall / base:11.2f}x")
    ratio = results["local --jobs 2"] / base
    if "before --jobs 1" in results:
        before_ratio = results["before --jobs 2"] / results["before --jobs 1"]
        print(f"\nbefore: --jobs 2 / --jobs 1 = {before_ratio:.2f} ({args.before})")
    print(f"\n--jobs 2 / --jobs 1 = {ratio:.2f} (goal <= 0.60): {'met' if ratio <= 0.6 else 'NOT met'}")
    if "ray --jobs 2" in results:
        print(f"ray / local at --jobs 2 = {results['ray --jobs 2'] / results['local --jobs 2']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
