"""The silent-failure benchmark's catalogue on the demo (examples/lenet_digits), for CI: the clean demo raises
no false alarm, and each of a handful of kinds, planted into a copy by its injector and checked with
`tipc check` as bench/silent_failures.py does, is caught by a rule the catalogue expects.

A kind tipc misses is marked xfail(strict=True) with the gap named: fixing the rule flips it (and the strict
xfail then fails until the mark goes); none is today. The full matrix, on the real repos too, is
`python bench/silent_failures.py` (notes: /work/notes/silent_matrix_before.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from bench.silent.facts import Facts, load_facts
from bench.silent.model import load_catalogue, load_repos
from bench.silent.runner import State, false_alarms, judge_variant, tipc_check
from bench.silent.variants import build_variant

pytestmark = [pytest.mark.silent, pytest.mark.integration]

KINDS = {k.id: k for k in load_catalogue()}
DEMO = next(r for r in load_repos() if r.source == "demo")

# Cheap on the demo: the first three reuse the shared demo run (the plant changes only what the check runs
# after the chain); the others run the chain once each (~40 s).
CI_KINDS = [
    "predict-infer-disagree",
    "committed-results-log",
    "serving-differs",
    "committed-weights",
    "ips-not-throughput",
    "script-runs-nothing",
    "eval-evaluates-nothing",
]


@pytest.fixture(scope="module")
def clean(demo_checked: Any) -> Facts:
    """The facts of the shared clean check of the demo (tests/conftest.py: `tipc check --reuse-run`)."""
    return load_facts(demo_checked.repo, demo_checked.report)


def test_the_clean_demo_raises_no_false_alarm(clean: Facts) -> None:
    failing, alarms, _ = false_alarms(tuple(KINDS.values()), DEMO, clean)
    assert alarms == {}, alarms
    assert failing == {}  # the demo follows the spec: nothing of it is labelled as failing


def test_every_kind_can_be_planted_into_the_demo(clean: Facts) -> None:
    from bench.silent.variants import why_not

    assert {k: why_not(kind, DEMO, clean) for k, kind in KINDS.items()} == dict.fromkeys(KINDS)


@pytest.mark.parametrize("kind_id", CI_KINDS)
def test_a_planted_kind_is_caught_by_its_rule(kind_id: str, clean: Facts, tmp_path: Path) -> None:
    kind = KINDS[kind_id]
    variant = build_variant(kind, DEMO, clean, tmp_path, tmp_path, sys.executable)
    done = tipc_check(variant.repo, DEMO, reuse_run=variant.reuse_run, timeout=900)
    assert done.report is not None, done.stderr_tail
    cell = judge_variant(kind, DEMO, clean, load_facts(variant.repo, done.report), variant, done.seconds)
    assert cell.state is State.CAUGHT, f"{cell.state.value}: {cell.evidence} [planted: {cell.why}]"
    assert set(cell.rules) & set(kind.expect) or cell.rules == ("note",), cell.rules
