"""Code health the project holds itself to: no function in tipc/ above radon grade C (cyclomatic complexity
over 20). ruff's C901 (pyproject: mccabe 15, no per-file exceptions) catches most of these at lint time;
radon also counts boolean operators, so a chain of conditions that mccabe lets through is caught here.
`python bench/code_health.py --before REV` prints the grades side by side with an earlier revision."""

from __future__ import annotations

from pathlib import Path

from bench.code_health import complexities

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 20  # radon grade C


def test_no_function_in_tipc_is_over_grade_c() -> None:
    over = sorted((c, where) for c, where in complexities(ROOT / "tipc") if c > LIMIT)
    assert over == [], "split these (radon complexity, where):\n" + "\n".join(f"{c} {w}" for c, w in over)


def test_the_measure_sees_a_complex_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(LIMIT + 1))
    (package / "m.py").write_text(f"def many(x):\n{branches}\n    return -1\n\n\ndef one():\n    return 0\n")
    found = dict((where.split()[-1], c) for c, where in complexities(package))
    assert found == {"many": LIMIT + 2, "one": 1}
