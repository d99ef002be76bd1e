"""`tipc run` beside the repo's own bash script on the official TIPC tutorial (PaddlePaddle/models Step6),
wall and CPU time measured side by side in one run; optionally a previous revision of tipc beside them.

    python bench/step6_vs_bash.py [--repeat N] [--chains real,stub] [--before REV | --before-dir DIR]
                                  [--mode MODE] [--tarball PATH] [--repos-python PATH] [--hold-clock]

The repo comes from shared/real-repos/PaddlePaddle__models__Step6.tar.gz, unpacked once into a temp folder
with its lite data extracted and linked as its prepare.sh does (its pip install and wget need the network), so
neither side runs a prepare step: each repetition copies that template afresh for each side.
  real  the tutorial as it is: real Paddle training, eval, export, inference on the CPU;
  stub  the same copy with the config's entry scripts (train.py, tools/export_model.py,
        deploy/inference_python/infer.py) replaced by a no-op, so every step is a bare python start-up and
        what remains is mostly the driver's own cost (the multi-GPU launch step still imports Paddle).
By default the template's config says `gpu_list:0` instead of `0|0,1`, for both sides: on a machine without
two GPUs the `0,1` branch's launch fails, after which tipc blocks the eval, export and inference that depend
on it while the script runs them anyway (they fail at once), so the sides would do different work; --as-is
keeps the config as published.
Sides, alternated in a rotating order so none always runs first:
  bash  `bash test_tipc/test_train_inference_python.sh CONFIG MODE` with `python3.7` (the config's python)
        on PATH as a two-line shim to the real-repo interpreter (.venv-repos, or --repos-python);
  tipc  `python -m tipc run COPY --config CONFIG --mode MODE --python REPOS_PYTHON --no-prepare`;
  tipc@REV  the same with REV's tipc/ and data folders (specs/: exported with `git archive`, or
            --before-dir) first on PYTHONPATH.
Each side's CPU time is user + system of the whole process tree (RUSAGE_CHILDREN around one child, the
sides running one at a time). For tipc, "own CPU" is that minus the CPU time its run record gives each step
(the steps' process trees, measured by tipc's monitor): the fixed cost of a run outside its steps
(start-up, imports, planning, probes, observation, records), whose budget is 0.5 s (issue 27). Figures are
medians over the repetitions (minimum beside them); the machine may be loaded, so CPU figures are the ones
to read. The budget for the real chain: tipc at most 1.0x the bash script.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tipc.execute import clock  # noqa: E402  (this checkout's, whatever is installed)

NAME = "PaddlePaddle__models__Step6"
CONFIG = "test_tipc/configs/mobilenet_v3_small/train_infer_python.txt"
ENTRY_SCRIPTS = ("train.py", "tools/export_model.py", "deploy/inference_python/infer.py")
NOOP = "import sys\nsys.exit(0)\n"
FIXED_BUDGET_S = 0.5


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    code: int
    steps_cpu: float = 0.0  # tipc only: the steps' own CPU time, from its run record
    counts: str = ""


# What a revision's tipc reads beside its package (tipc.core.resources.data_dir): without them its readiness
# check gives up early and skips work the checkout's side does.
_DATA_FOLDERS = ("specs", "test_tipc_template")


def _export(rev: str, into: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", rev], cwd=ROOT, capture_output=True, text=True, check=True
    )
    folders = ["tipc", *(f for f in _DATA_FOLDERS if f in listed.stdout.split())]
    archive = subprocess.run(["git", "archive", rev, *folders], cwd=ROOT, capture_output=True, check=True)
    into.mkdir(parents=True, exist_ok=True)
    (into / "archive.tar").write_bytes(archive.stdout)
    with tarfile.open(into / "archive.tar") as tar:
        tar.extractall(into, filter="data")
    return into


def _template(tarball: Path, into: Path, gpu_list: str | None) -> Path:
    """The repo unpacked, and what its prepare.sh does offline in lite mode: lite data extracted, linked."""
    with tarfile.open(tarball) as tar:
        tar.extractall(into, filter="tar")
    repo = into / NAME
    with tarfile.open(repo / "test_images" / "lite_data.tar") as tar:
        tar.extractall(repo, filter="tar")
    (repo / "data").symlink_to("./lite_data/")
    if gpu_list is not None:
        config = repo / CONFIG
        lines = config.read_text(encoding="utf-8").split("\n")
        config.write_text(
            "\n".join(f"gpu_list:{gpu_list}" if ln.startswith("gpu_list:") else ln for ln in lines),
            encoding="utf-8",
        )
    return repo


def _copy(template: Path, dest: Path, chain: str) -> Path:
    shutil.copytree(template, dest, symlinks=True)
    if chain == "stub":
        for script in ENTRY_SCRIPTS:
            (dest / script).write_text(NOOP, encoding="utf-8")
    return dest


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, _children_cpu() - cpu0, proc.returncode


def _bash(repo: Path, mode: str, env: dict[str, str]) -> Sample:
    wall, cpu, code = _timed(["bash", "test_tipc/test_train_inference_python.sh", CONFIG, mode], repo, env)
    text = "".join(p.read_text(errors="replace") for p in repo.glob("test_tipc/output/**/results_python.log"))
    ok, failed = text.count("Run successfully"), text.count("Run failed")
    return Sample(wall, cpu, code, counts=f"{ok} successfully, {failed} failed")


def _tipc(repo: Path, mode: str, env: dict[str, str], python: Path) -> Sample:
    argv = [sys.executable, "-m", "tipc", "run", str(repo), "--config", CONFIG, "--mode", mode]
    wall, cpu, code = _timed([*argv, "--python", str(python), "--no-prepare"], repo.parent, env)
    records = sorted(repo.glob("test_tipc/output/tipc/**/tipc_run.json"))
    if not records:
        sys.exit(f"tipc wrote no run record (exit {code}) in {repo}")
    results = json.loads(records[-1].read_text())["results"]
    steps_cpu = sum((r.get("resources") or {}).get("cpu_time_s") or 0.0 for r in results)
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return Sample(wall, cpu, code, steps_cpu, " ".join(f"{n} {s}" for s, n in counts.items()))


def _fmt(values: list[float], digits: int = 2) -> str:
    return f"{statistics.median(values):9.{digits}f} s  (min {min(values):.{digits}f})"


def _ratio(a: list[float], b: list[float]) -> str:
    return f"{statistics.median(a) / statistics.median(b):9.3f}x"


def _measure(chain: str, args: argparse.Namespace, template: Path, sides: dict[str, dict[str, str]]) -> None:
    samples: dict[str, list[Sample]] = {side: [] for side in sides}
    names = list(sides)
    for i in range(args.repeat):
        order = names[i % len(names) :] + names[: i % len(names)]
        with tempfile.TemporaryDirectory(prefix=f"tipc-step6-{chain}-") as tmp:
            for n, side in enumerate(order):
                repo = _copy(template, Path(tmp) / f"side{n}" / NAME, chain)
                env = sides[side]
                if side == "bash":
                    sample = _bash(repo, args.mode, env)
                else:
                    sample = _tipc(repo, args.mode, env, args.repos_python)
                samples[side].append(sample)
                extra = f", own CPU {sample.cpu - sample.steps_cpu:5.2f} s" if side != "bash" else ""
                print(
                    f"  {chain} {i + 1}: {side:<14} {sample.wall:7.2f} s wall, "
                    f"{sample.cpu:6.2f} s CPU{extra}, "
                    f"exit {sample.code}, {sample.counts}",
                    flush=True,
                )
    bash = samples["bash"]
    print(f"\n{chain} chain, {args.mode}: median of {args.repeat} (min)")
    print(f"  {'bash script':<34}wall {_fmt([s.wall for s in bash])}   CPU {_fmt([s.cpu for s in bash])}")
    for side in names:
        if side == "bash":
            continue
        runs = samples[side]
        wall, cpu = [s.wall for s in runs], [s.cpu for s in runs]
        own = [s.cpu - s.steps_cpu for s in runs]
        print(f"  {side:<34}wall {_fmt(wall)}   CPU {_fmt(cpu)}")
        print(
            f"    {'/ bash':<32}wall {_ratio(wall, [s.wall for s in bash])}"
            f"            CPU {_ratio(cpu, [s.cpu for s in bash])}"
        )
        verdict = "yes" if statistics.median(own) <= FIXED_BUDGET_S else "no"
        print(f"    {'own CPU outside its steps':<32}     {_fmt(own)}   (<= {FIXED_BUDGET_S} s: {verdict})")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mode", default="lite_train_lite_infer")
    parser.add_argument("--chains", default="real,stub", help="comma-separated: real, stub")
    parser.add_argument(
        "--as-is",
        action="store_true",
        help="keep the config's gpu_list `0|0,1` (by default both sides get `0`: see above)",
    )
    parser.add_argument("--before", help="a previous revision of tipc to run beside this checkout")
    parser.add_argument("--before-dir", type=Path, help="a folder holding the previous revision's tipc/")
    parser.add_argument(
        "--tarball", type=Path, default=ROOT.parent / "shared" / "real-repos" / f"{NAME}.tar.gz"
    )
    parser.add_argument("--repos-python", type=Path, default=ROOT / ".venv-repos" / "bin" / "python")
    parser.add_argument(
        "--hold-clock",
        action="store_true",
        help="hold the CPUs at full clock while measuring (tipc.execute.clock: root only), so CPU seconds "
        "measure work, not how long an idle virtual CPU takes to speed up again",
    )
    args = parser.parse_args()
    chains = [c.strip() for c in args.chains.split(",") if c.strip()]
    if not chains or any(c not in ("real", "stub") for c in chains):
        sys.exit("--chains: expected a comma-separated list of real, stub")
    if not args.tarball.is_file():
        sys.exit(f"no tarball at {args.tarball} (--tarball)")
    if not args.repos_python.is_file():
        sys.exit(
            f"no interpreter for the repo at {args.repos_python} (scripts/repos_env.sh, or --repos-python)"
        )
    with tempfile.TemporaryDirectory(prefix="tipc-step6-") as tmp_name:
        tmp = Path(tmp_name)
        shim = tmp / "shim"
        shim.mkdir()
        (shim / "python3.7").write_text(f'#!/bin/sh\nexec "{args.repos_python}" "$@"\n', encoding="utf-8")
        (shim / "python3.7").chmod(0o755)
        base = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "FLAGS_enable_pir_api")
        }
        base["CI"] = "true"  # plain progress lines, no live view
        sides = {
            "bash": {**base, "PATH": f"{shim}{os.pathsep}{base.get('PATH', '')}"},
            "tipc": {**base, "PYTHONPATH": str(ROOT)},
        }
        before_dir = args.before_dir or (_export(args.before, tmp / "before") if args.before else None)
        if before_dir is not None:
            sides[f"tipc@{args.before or before_dir.name}"] = {**base, "PYTHONPATH": str(before_dir)}
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(
            f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load}; sides: {', '.join(sides)}"
        )
        template = _template(args.tarball, tmp / "template", None if args.as_is else "0")
        for env in sides.values():  # not timed: every side's bytecode cache filled alike
            if "PYTHONPATH" in env:
                tipc_dir = Path(env["PYTHONPATH"]) / "tipc"
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(tipc_dir)], env=env, check=True)
        with contextlib.ExitStack() as stack:
            if args.hold_clock:
                why_not = stack.enter_context(clock.hold())
                print(f"clock: {clock.describe(why_not)}")
            for chain in chains:
                _measure(chain, args, template, sides)
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load at the end {load}")


if __name__ == "__main__":
    main()
