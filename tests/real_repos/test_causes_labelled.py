"""The real repos as a reviewer runs them (the real-repo cases of bench/causes_labels.yaml): every failed
step carries the cause the labelled list says is right, first. The runs are the tier's shared ones where the
switches match (the run and check tests read the same)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.real_repos.conftest import SharedChain

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.causes import Case, case_rows, load_labels  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.real_repos]

REAL_CASES = [c for c in load_labels()[0] if c.repo != "demo" and not c.edits and c.python == "repos"]


@pytest.mark.parametrize("case", REAL_CASES, ids=[c.name for c in REAL_CASES])
def test_each_failed_step_of_a_real_repo_has_its_labelled_cause(
    case: Case, shared_chain: Callable[..., SharedChain]
) -> None:
    out = shared_chain(case.repo, *case.switches).run()
    rows = case_rows(case, out.repo)
    if not case.expect:  # a case labelled with no failure: no step may fail
        assert rows == [], out.stderr[-3000:]
    assert rows or not case.expect, out.stderr[-3000:]
    assert all(any(r.step.startswith(p) for r in rows) for p in case.expect), [r.step for r in rows]
    wrong = [(r.step, r.expected, r.got) for r in rows if not r.right]
    assert wrong == [], wrong
