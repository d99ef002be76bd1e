"""Cyclomatic complexity of tipc's functions (radon), side by side with an earlier revision.

PYTHONPATH=. python bench/code_health.py [--before REV] [--worst N]

Prints how many functions fall in each radon grade (A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F 41+) and
the worst functions, for the working tree and, with --before, for tipc/ at REV (read with `git archive`, so
the working tree is not touched). The code-health test holds the tree to grade C or better.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from io import BytesIO
from pathlib import Path

from radon.complexity import cc_rank, cc_visit

ROOT = Path(__file__).resolve().parents[1]
GRADES = "ABCDEF"


def complexities(package: Path) -> list[tuple[int, str]]:
    """(complexity, "file:line name") of every function and method under `package`."""
    found: list[tuple[int, str]] = []
    for path in sorted(package.rglob("*.py")):
        for block in cc_visit(path.read_text()):
            if block.letter == "C":  # a class: its methods are listed on their own
                continue
            name = f"{block.classname}.{block.name}" if getattr(block, "classname", None) else block.name
            found.append((block.complexity, f"{path.relative_to(package.parent)}:{block.lineno} {name}"))
    return found


def _at_revision(rev: str, dest: Path) -> Path:
    argv = ["git", "-C", str(ROOT), "archive", rev, "tipc"]
    archive = subprocess.run(argv, capture_output=True, check=True)
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "tipc"


def _histogram(found: list[tuple[int, str]]) -> dict[str, int]:
    counts = Counter(cc_rank(c) for c, _ in found)
    return {g: counts.get(g, 0) for g in GRADES}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="git revision to compare with")
    parser.add_argument("--worst", type=int, default=10, metavar="N", help="the N most complex functions")
    args = parser.parse_args(argv)
    columns = {"now": complexities(ROOT / "tipc")}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            columns = {args.before: complexities(_at_revision(args.before, Path(tmp))), **columns}
    print(f"{'grade':<8}" + "".join(f"{name:>14}" for name in columns))
    histograms = {name: _histogram(found) for name, found in columns.items()}
    for grade in GRADES:
        print(f"{grade:<8}" + "".join(f"{h[grade]:>14}" for h in histograms.values()))
    for name, found in columns.items():
        over = sum(1 for c, _ in found if c > 20)
        worst = max(c for c, _ in found)
        print(f"{name}: {len(found)} functions, {over} over 20 (grade D or worse), max {worst}")
    print(f"\nworst {args.worst} now:")
    for complexity, where in sorted(columns["now"], reverse=True)[: args.worst]:
        print(f"  {cc_rank(complexity)} {complexity:>3}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
