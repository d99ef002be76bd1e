"""Lint and plan throughput over the corpus, side by side with the previous approach; per-repo fidelity.

PYTHONPATH=. python bench/lint_corpus.py [CORPUS_DIR] [-v] [--no-fingerprint] [--repeat N]

Throughput is CPU time in this one process, best of N passes (default 5), caches cleared before each pass.
"previous" is the approach before the bounded-work change, run in the same process for the ratio: shell
words split by `shlex` character by character (no cache) and lint building a full plan in every mode (each
one re-reading the config and re-detecting its dialect) to collect the planner's findings.
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.config.shlex_oracle import shlex_words


def _corpus(argv: list[str]) -> Path:
    for i, arg in enumerate(argv):
        if not arg.startswith("-") and (i == 0 or argv[i - 1] != "--repeat"):
            return Path(arg)
    env = os.environ.get("TIPC_CORPUS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "tipc-corpus"


@contextmanager
def previous_approach() -> Iterator[None]:
    """Swap in the previous tokenizer and lint's previous full-plan path for the duration."""
    from tipc.config import bash
    from tipc.config import lint as lint_mod
    from tipc.planning import chain

    def split_uncached(command: str) -> tuple[tuple[str, ...], bool]:
        words = shlex_words(command)
        tokens = words if words is not None else [t for t in command.split(" ") if t]
        return bash.without_redirections(tokens), words is not None

    notes_uncached = chain._command_notes.__wrapped__

    def plan_findings_full(
        path: Path, parsed: Any, root: Path, dialect: str, cfg: Any, max_steps: int | None
    ) -> tuple[list[Any], set[str] | None]:
        from tipc.core.findings import Finding, Level
        from tipc.core.steps import MODES, Stage
        from tipc.planning.planner import plan

        out: list[Any] = []
        shared: set[str] | None = None
        for mode in [m for m in MODES if m != "klquant_whole_infer" or "kl" in path.name.lower()]:
            result = plan(path, mode, repo=root, dialect=dialect, max_steps=max_steps)
            for step in result.steps:
                if step.stage is Stage.INFER and not step.shell:
                    shared = set(step.argv) if shared is None else shared & set(step.argv)
            for f in result.findings:
                if f.code in ("TIPC000", "TIPC900"):
                    continue
                if f.code == "TIPC100":
                    f = Finding(f.path, f.line, f.col, Level.INFO, f.code, f.message)
                out.append(f)
        return out, shared

    saved = (bash._split_command, chain._command_notes, lint_mod._plan_findings)
    bash._split_command = split_uncached  # type: ignore[assignment]
    chain._command_notes = notes_uncached  # type: ignore[assignment]
    lint_mod._plan_findings = plan_findings_full  # type: ignore[assignment]
    try:
        yield
    finally:
        bash._split_command, chain._command_notes, lint_mod._plan_findings = saved  # type: ignore[assignment]


def _rate(n: int, work: Callable[[], object], repeat: int) -> float:
    from tipc.config import bash
    from tipc.planning import chain

    best = float("inf")
    for _ in range(repeat):
        for cached in (bash._split_command, chain._command_notes):
            clear = getattr(cached, "cache_clear", None)
            if clear is not None:
                clear()
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return n / best if best > 0 else float("inf")


def main(argv: list[str]) -> int:
    from tipc.config.lint import lint_paths
    from tipc.core.steps import MODES
    from tipc.planning.corpus import compare, iter_cases
    from tipc.planning.planner import plan

    corpus = _corpus(argv)
    verbose = "-v" in argv
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
    # --no-fingerprint: detect from the config alone, as when the repo's script is not available.
    use_fingerprint = "--no-fingerprint" not in argv
    if not corpus.is_dir():
        print(f"corpus not found at {corpus} (pass it as an argument or set TIPC_CORPUS)")
        return 2
    cases = list(iter_cases(corpus))
    dialects = {case.config: (case.dialect if use_fingerprint else None) for case in cases}

    def lint_all() -> None:
        for case in cases:
            lint_paths([case.config], dialect=dialects[case.config])

    def plan_one_mode() -> None:
        for case in cases:
            plan(case.config, MODES[0], repo=case.repo, dialect=dialects[case.config])

    def plan_all_modes() -> None:
        for case in cases:
            for mode in MODES:
                plan(case.config, mode, repo=case.repo, dialect=dialects[case.config])

    # Same findings either way (what makes the ratio a fair one).
    now = [sorted(f.format() for f in lint_paths([c.config], dialect=dialects[c.config])) for c in cases]
    with previous_approach():
        before = [
            sorted(f.format() for f in lint_paths([c.config], dialect=dialects[c.config])) for c in cases
        ]
        old = {
            "lint": _rate(len(cases), lint_all, repeat),
            "plan": _rate(len(cases), plan_one_mode, repeat),
            "plan5": _rate(len(cases), plan_all_modes, repeat),
        }
    new = {
        "lint": _rate(len(cases), lint_all, repeat),
        "plan": _rate(len(cases), plan_one_mode, repeat),
        "plan5": _rate(len(cases), plan_all_modes, repeat),
    }
    # Fidelity: the recorded modes against the commands the repo's own script logged.
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        for mode, expected in case.expected.items():
            result = compare(plan(case.config, mode, repo=case.repo, dialect=dialects[case.config]), expected)
            counts[case.owner_repo][1] += 1
            if result.ok:
                counts[case.owner_repo][0] += 1
            elif verbose:
                print(f"FAIL {case.name} [{mode}]\n{result.detail}\n")
    total_ok = sum(c[0] for c in counts.values())
    total = sum(c[1] for c in counts.values())
    for repo, (ok, n) in sorted(counts.items()):
        print(f"{repo:32s} {ok:3d}/{n:<3d} config-modes match")
    print(f"{'TOTAL':32s} {total_ok:3d}/{total:<3d}")
    print(f"\n{len(cases)} configs, CPU time in one process, best of {repeat}:")
    print(f"{'':34s}{'now':>12s}{'previous':>12s}{'ratio':>8s}")
    labels = {
        "lint": "lint (configs/s)",
        "plan": f"plan {MODES[0]} (configs/s)",
        "plan5": f"plan all {len(MODES)} modes (configs/s)",
    }
    for key, label in labels.items():
        print(f"{label:34s}{new[key]:12.1f}{old[key]:12.1f}{new[key] / old[key]:7.1f}x")
    print(f"lint findings identical to the previous approach: {'yes' if now == before else 'NO'}")
    return 0 if now == before else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
