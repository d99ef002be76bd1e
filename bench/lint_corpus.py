"""Lint and plan throughput over the corpus, side by side with a previous revision; per-repo fidelity; the
slowest fuzzed configs.

    python bench/lint_corpus.py [CORPUS_DIR] [--before REV | --before-dir DIR] [--repeat N] [--rounds R]
                                [--fuzz N] [--no-fingerprint] [--hold-clock] [-v]

Each side runs in its own child process, with its own imports and caches: this checkout, and REV (default
ff674a2: the layer move, before the lint and planning speed work) exported with `git archive` into a
temporary folder (or taken from --before-dir, a folder holding REV's tipc/). Throughput is the CPU time of
that process, best of N passes (default 5), every functools cache of tipc.config and tipc.planning cleared
before each pass (a pass costs what a fresh `tipc lint` of those configs costs, less the imports); the sides
alternate R times (default 3) and each keeps its best, so a change in the machine's load hits both alike.
Both sides must report the same findings, config by config (what makes the ratio a fair one).

--hold-clock: the CPUs held at full clock while measuring (tipc.execute.clock, root only): on a virtual
machine an idle CPU slows down and takes about a second of work to speed up again, which moves CPU seconds
by up to a third between passes.

--fuzz N: N mutants of the corpus configs (tests/config/test_fuzz_bounded.py's seeded mutations) linted and
planned in every mode by both sides; prints the slowest lint and the slowest plan of one mode, in CPU
seconds (the bound is 1 s each).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "ff674a2"


def _corpus(argv: list[str]) -> Path:
    takes_value = ("--repeat", "--rounds", "--before", "--before-dir", "--fuzz", "--child", "--fuzz-dir")
    for i, arg in enumerate(argv):
        if not arg.startswith("-") and (i == 0 or argv[i - 1] not in takes_value):
            return Path(arg)
    env = os.environ.get("TIPC_CORPUS")
    if env:
        return Path(env)
    return ROOT.parent / "shared" / "tipc-corpus"


def _option(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


# --- the child: one side, with tipc imported from the folder it is given --------------------------------


def _clear_caches() -> None:
    for name, module in list(sys.modules.items()):
        if not name.startswith(("tipc.config", "tipc.planning")):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()


def _best(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        _clear_caches()
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def _lint_paths() -> Callable[..., list[Any]]:
    """The whole lint: tipc.planning.lint's since issue 27, tipc.config.lint's before."""
    import importlib

    for name in ("tipc.planning.lint", "tipc.config.lint"):
        try:
            found: Callable[..., list[Any]] = importlib.import_module(name).lint_paths
        except (ImportError, AttributeError):
            continue
        return found
    raise SystemExit("no lint_paths in this tipc")


def _child(corpus: Path, repeat: int, use_fingerprint: bool, fuzz_dir: Path | None) -> dict[str, Any]:
    from tipc.core.steps import MODES
    from tipc.planning.corpus import compare, iter_cases
    from tipc.planning.planner import plan

    lint_paths = _lint_paths()
    cases = list(iter_cases(corpus))
    dialects = {case.config: (case.dialect if use_fingerprint else None) for case in cases}

    def lint_all() -> None:
        for case in cases:
            lint_paths([case.config], dialect=dialects[case.config])

    def plan_modes(modes: tuple[str, ...]) -> Callable[[], None]:
        def work() -> None:
            for case in cases:
                for mode in modes:
                    plan(case.config, mode, repo=case.repo, dialect=dialects[case.config])

        return work

    out: dict[str, Any] = {
        "configs": len(cases),
        "lint": _best(lint_all, repeat),
        "plan": _best(plan_modes(MODES[:1]), repeat),
        "plan5": _best(plan_modes(tuple(MODES)), repeat),
        "findings": [sorted(f.format() for f in lint_paths([c], dialect=d)) for c, d in dialects.items()],
        "fidelity": [],
    }
    for case in cases:
        for mode, want in case.expected.items():
            planned = plan(case.config, mode, repo=case.repo, dialect=dialects[case.config])
            out["fidelity"].append([case.owner_repo, mode, compare(planned, want).ok])
    if fuzz_dir is not None:
        out["fuzz"] = _slowest(fuzz_dir, lint_paths)
    return out


def _slowest(fuzz_dir: Path, lint_paths: Callable[..., list[Any]]) -> dict[str, tuple[float, str]]:
    """The slowest lint and the slowest plan of one mode over the mutants, in CPU seconds."""
    from tipc.core.errors import ConfigError
    from tipc.core.steps import MODES
    from tipc.planning.planner import plan

    worst = {"lint": (0.0, ""), "plan": (0.0, "")}
    for config, dialect in json.loads((fuzz_dir / "mutants.json").read_text(encoding="utf-8")):
        for mode in ("lint", *MODES):
            start = time.process_time()
            try:
                if mode == "lint":
                    lint_paths([Path(config)], dialect=dialect)
                else:
                    plan(Path(config), mode, dialect=dialect)
            except ConfigError:
                pass  # a located error is a fine answer; how long it took is what counts here
            spent = time.process_time() - start
            key = "lint" if mode == "lint" else "plan"
            if spent > worst[key][0]:
                worst[key] = (spent, config if mode == "lint" else f"{config} [{mode}]")
    return worst


# --- the parent ------------------------------------------------------------------------------------------


def _export(rev: str, into: Path) -> Path:
    """`git archive REV tipc` unpacked into `into`; returns the folder to put on PYTHONPATH."""
    archive = subprocess.run(["git", "archive", rev, "tipc"], cwd=ROOT, capture_output=True, check=True)
    into.mkdir(parents=True, exist_ok=True)
    path = into / "archive.tar"
    path.write_bytes(archive.stdout)
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")
    return into


def _mutants(count: int, into: Path) -> Path:
    import random

    from tests.config.test_fuzz_bounded import MUTATIONS, SEED
    from tipc.planning.corpus import iter_cases

    cases = list(iter_cases(_CORPUS))
    rng = random.Random(SEED)
    listed = []
    for n in range(count):
        case = rng.choice(cases)
        lines = case.config.read_text(encoding="utf-8").split("\n")
        for mutation in rng.sample(MUTATIONS, rng.randint(1, 3)):
            mutation(rng, lines)
        config = into / f"m{n}" / "test_tipc" / "configs" / "m" / case.config.name
        config.parent.mkdir(parents=True)
        config.write_text("\n".join(lines), encoding="utf-8", newline="")
        listed.append([str(config), case.dialect])
    (into / "mutants.json").write_text(json.dumps(listed), encoding="utf-8")
    return into


def _best_of(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {**a, **{key: min(a[key], b[key]) for key in ("lint", "plan", "plan5")}}


def _side(code_root: Path, argv: list[str], fuzz_dir: Path | None) -> dict[str, Any]:
    child = [sys.executable, str(Path(__file__).resolve()), "--child", str(code_root), *argv]
    if fuzz_dir is not None:
        child += ["--fuzz-dir", str(fuzz_dir)]
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    done = subprocess.run(child, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(f"{code_root}: the benchmark child failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


_CORPUS = ROOT


def main(argv: list[str]) -> int:
    global _CORPUS
    if "--child" in argv:
        root = Path(_option(argv, "--child", ""))
        sys.path.insert(0, str(root))
        fuzz = Path(argv[argv.index("--fuzz-dir") + 1]) if "--fuzz-dir" in argv else None
        repeat = int(_option(argv, "--repeat", "5"))
        result = _child(_corpus(argv), repeat, "--no-fingerprint" not in argv, fuzz)
        print(json.dumps(result))
        return 0
    sys.path.insert(0, str(ROOT))
    _CORPUS = corpus = _corpus(argv).resolve()
    if not corpus.is_dir():
        print(f"corpus not found at {corpus} (pass it as an argument or set TIPC_CORPUS)")
        return 2
    rev = _option(argv, "--before", BEFORE)
    fuzz_count = int(_option(argv, "--fuzz", "0"))
    passed = [a for a in argv if a == "--no-fingerprint"] + ["--repeat", _option(argv, "--repeat", "5")]
    passed.append(str(corpus))
    with tempfile.TemporaryDirectory(prefix="tipc-bench-") as tmp, contextlib.ExitStack() as stack:
        if "--hold-clock" in argv:  # the sides measure in their own processes: the hold is system-wide
            from tipc.execute import clock

            print(f"clock: {clock.describe(stack.enter_context(clock.hold()))}")
        fuzz_dir = _mutants(fuzz_count, Path(tmp) / "fuzz") if fuzz_count else None
        given = _option(argv, "--before-dir", "")
        before_root = Path(given).resolve() if given else _export(rev, Path(tmp) / "before")
        now, before = _side(ROOT, passed, fuzz_dir), _side(before_root, passed, fuzz_dir)
        for _ in range(int(_option(argv, "--rounds", "3")) - 1):
            # Alternate the sides, keep each one's best: a change in the machine's load hits both alike.
            now = _best_of(now, _side(ROOT, passed, None))
            before = _best_of(before, _side(before_root, passed, None))
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for repo, mode, ok in now["fidelity"]:
        counts[repo][1] += 1
        counts[repo][0] += int(ok)
        if not ok and "-v" in argv:
            print(f"FAIL {repo} [{mode}]")
    for repo, (ok, n) in sorted(counts.items()):
        print(f"{repo:32s} {ok:3d}/{n:<3d} config-modes match")
    print(f"{'TOTAL':32s} {sum(c[0] for c in counts.values()):3d}/{sum(c[1] for c in counts.values()):<3d}")
    n = now["configs"]
    passes = f"best of {_option(argv, '--repeat', '5')} passes x {_option(argv, '--rounds', '3')} rounds"
    print(f"\n{n} configs, CPU time of one process per side, {passes}:")
    print(f"{'':34s}{'now':>12s}{rev[:11]:>12s}{'ratio':>8s}")
    labels = {
        "lint": "lint (configs/s)",
        "plan": "plan one mode (configs/s)",
        "plan5": "plan all modes (configs/s)",
    }
    for key, label in labels.items():
        print(f"{label:34s}{n / now[key]:12.1f}{n / before[key]:12.1f}{before[key] / now[key]:7.2f}x")
    if fuzz_count:
        print(f"\n{fuzz_count} fuzzed configs (seeded), slowest, CPU seconds (bound 1 s):")
        for key in ("lint", "plan"):
            print(f"  {key:4s} now {now['fuzz'][key][0]:6.3f} s   {rev[:11]} {before['fuzz'][key][0]:6.3f} s")
    same = now["findings"] == before["findings"]
    print(f"lint findings identical to {rev}'s: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
