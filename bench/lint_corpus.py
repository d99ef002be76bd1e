"""Lint + plan every corpus config in every mode; print per-repo match counts and configs/s.

PYTHONPATH=. python bench/lint_corpus.py [CORPUS_DIR] [-v]
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from pathlib import Path


def _corpus(argv: list[str]) -> Path:
    for arg in argv:
        if not arg.startswith("-"):
            return Path(arg)
    env = os.environ.get("TIPC_CORPUS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "tipc-corpus"


def main(argv: list[str]) -> int:
    from tipc.config.corpus import compare, iter_cases
    from tipc.config.lint import lint_paths
    from tipc.plan import plan
    from tipc.steps import MODES

    corpus = _corpus(argv)
    verbose = "-v" in argv
    # --no-fingerprint: detect from the config alone, as when the repo's script is not available.
    use_fingerprint = "--no-fingerprint" not in argv
    if not corpus.is_dir():
        print(f"corpus not found at {corpus} (pass it as an argument or set TIPC_CORPUS)")
        return 2
    cases = list(iter_cases(corpus))
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    # Throughput: lint every config, then plan it in all five modes.
    start = time.perf_counter()
    findings = 0
    planned_steps = 0
    for case in cases:
        dialect = case.dialect if use_fingerprint else None
        findings += len(lint_paths([case.config], dialect=dialect))
        for mode in MODES:
            planned_steps += len(plan(case.config, mode, repo=case.repo, dialect=dialect).steps)
    elapsed = time.perf_counter() - start
    # Fidelity: the recorded modes against the commands the repo's own script logged.
    for case in cases:
        dialect = case.dialect if use_fingerprint else None
        for mode, expected in case.expected.items():
            result = compare(plan(case.config, mode, repo=case.repo, dialect=dialect), expected)
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
    print(
        f"{len(cases)} configs: lint ({findings} findings) + plan in all {len(MODES)} modes "
        f"({planned_steps} steps) in {elapsed:.2f}s = {len(cases) / elapsed:.1f} configs/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
