"""The demo with a failure planted (the `demo` cases of bench/causes_labels.yaml): `tipc run` gives each
failed step the cause the labelled list says is right, first."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.causes import Case, case_rows, load_labels, make_run  # noqa: E402

pytestmark = pytest.mark.integration

DEMO_CASES = [c for c in load_labels()[0] if c.repo == "demo"]


@pytest.mark.parametrize("case", DEMO_CASES, ids=[c.name for c in DEMO_CASES])
def test_each_failed_step_of_a_planted_demo_has_its_labelled_cause(case: Case, tmp_path: Path) -> None:
    repo = make_run(case, tmp_path, tmp_path, resume=False)
    assert repo is not None
    rows = case_rows(case, repo)
    assert rows, (tmp_path / case.name / "run.stderr").read_text()[-3000:]
    assert all(any(r.step.startswith(p) for r in rows) for p in case.expect), [r.step for r in rows]
    wrong = [(r.step, r.expected, r.got) for r in rows if not r.right]
    assert wrong == [], wrong
