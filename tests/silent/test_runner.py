"""Judging a planted variant against its clean repo: caught only by an expected rule that newly FAILs (or an
expected note), loud when the plant broke a step it had to leave passing, no effect when the planted code
never acted, missed otherwise; n/a when the kind is native, unmet or masked; false alarms are the clean
repo's failing rules its ground truth does not list."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from bench.silent.facts import Facts, load_facts
from bench.silent.injectors import Planted
from bench.silent.model import Kind, Repo, SeenIn
from bench.silent.render import markdown
from bench.silent.runner import Cell, RepoResult, State, false_alarms, judge_native, judge_variant
from bench.silent.variants import Variant, why_not
from tests.silent.conftest import RUN_FOLDER, fixture_report, make_repo

pytestmark = pytest.mark.silent

KIND = Kind(
    id="ips-not-throughput",
    title="t",
    description="d",
    seen_in=(SeenIn("r", "w"),),
    source="",
    expect=("basic.train.ips_is_throughput",),
    expect_notes=(),
    missing_rule="",
    needs=("stage_passed:train", "train_log:avg_ips"),
    silent=("train",),
    injector="print_batch_time_as_ips",
    reuse_run=False,
)
SPEC = Repo("tiny", "demo", "tipc", (), (), {}, {"basic.tipc.scripts_unchanged": "edited copies"})


def _facts(root: Path, rules: dict[str, str] | None = None, failed: tuple[str, ...] = ()) -> Facts:
    repo = make_repo(root)
    record = repo / RUN_FOLDER / "logs" / "tipc_run.json"
    data = json.loads(record.read_text())
    for result in data["results"]:
        if result["step_id"] in failed:
            result["status"] = "failed"
    record.write_text(json.dumps(data))
    return load_facts(repo, fixture_report(repo, rules))


def _variant(facts: Facts, probe: dict[str, int] | None) -> Variant:
    if probe is not None:
        folder = facts.repo / RUN_FOLDER / "upper" / ".silent_bench"
        folder.mkdir(parents=True)
        (folder / f"{KIND.id}.tools_train.py.json").write_text(json.dumps(probe))
    return Variant(
        KIND.id, facts.repo, Planted(KIND.id, ("train.py: prelude",), ("tools/train.py",), "rewritten"), False
    )


def test_an_expected_rule_that_newly_fails_catches_the_kind(tmp_path: Path) -> None:
    clean = _facts(tmp_path / "a")
    variant = _facts(tmp_path / "b", {"basic.train.ips_is_throughput": "FAIL"})
    cell = judge_variant(KIND, SPEC, clean, variant, _variant(variant, {"rewritten": 3}), 1.0)
    assert cell.state is State.CAUGHT and cell.rules == ("basic.train.ips_is_throughput",)
    assert cell.evidence == "basic.train.ips_is_throughput FAIL"


def test_another_rule_failing_is_not_a_catch(tmp_path: Path) -> None:
    clean = _facts(tmp_path / "a")
    variant = _facts(tmp_path / "b", {"basic.train.log_fields": "FAIL"})
    cell = judge_variant(KIND, SPEC, clean, variant, _variant(variant, {"rewritten": 3}), 1.0)
    assert cell.state is State.MISSED
    assert (
        "basic.train.ips_is_throughput: PASS" in cell.evidence and "basic.train.log_fields" in cell.evidence
    )


def test_a_plant_that_breaks_its_silent_stage_is_loud(tmp_path: Path) -> None:
    clean = _facts(tmp_path / "a")
    variant = _facts(tmp_path / "b", {"basic.tipc.train_passes": "FAIL"}, failed=("train/1",))
    cell = judge_variant(KIND, SPEC, clean, variant, _variant(variant, {"rewritten": 3}), 1.0)
    assert cell.state is State.LOUD and cell.evidence == "train/1 failed"
    assert cell.rules == ("basic.tipc.train_passes",)


@pytest.mark.parametrize(("probe", "why"), [(None, "never ran"), ({"rewritten": 0}, "never acted")])
def test_a_plant_that_never_acted_has_no_effect(
    tmp_path: Path, probe: dict[str, int] | None, why: str
) -> None:
    clean = _facts(tmp_path / "a")
    variant = _facts(tmp_path / "b")
    cell = judge_variant(KIND, SPEC, clean, variant, _variant(variant, probe), 1.0)
    assert cell.state is State.NO_EFFECT and why in cell.evidence


def test_a_kind_whose_rules_already_fail_on_the_clean_repo_is_masked(tmp_path: Path) -> None:
    clean = _facts(tmp_path / "a", {"basic.train.ips_is_throughput": "FAIL"})
    assert (why_not(KIND, SPEC, clean) or "").startswith("masked: basic.train.ips_is_throughput already")


def test_a_need_the_clean_run_does_not_meet_says_so(tmp_path: Path) -> None:
    clean = _facts(tmp_path / "a", failed=("train/1",))
    assert why_not(KIND, SPEC, clean) == "train does not pass on the clean repo (train/1: failed)"
    other = replace(KIND, needs=("train_log:avg_speed",))
    assert why_not(other, SPEC, _facts(tmp_path / "b")) == "the train log prints no avg_speed"


def test_a_native_kind_is_judged_on_the_clean_check(tmp_path: Path) -> None:
    spec = replace(SPEC, native={KIND.id: "avg_ips equals avg_batch_cost"})
    assert why_not(KIND, spec, _facts(tmp_path / "a")) == "present natively: avg_ips equals avg_batch_cost"
    caught = judge_native(KIND, spec, _facts(tmp_path / "b", {"basic.train.ips_is_throughput": "FAIL"}))
    assert caught.state is State.CAUGHT and caught.native
    missed = judge_native(KIND, spec, _facts(tmp_path / "c"))
    assert missed.state is State.MISSED and "PASS" in missed.evidence


def test_a_note_catches_a_kind_that_names_notes(tmp_path: Path) -> None:
    kind = replace(KIND, expect=(), expect_notes=("ships .*results_python",), missing_rule="m")
    clean = _facts(tmp_path / "a")
    variant = _facts(tmp_path / "b")
    variant = replace(variant, notes=(*variant.notes, "the repo ships test_tipc/output/results_python.log"))
    cell = judge_variant(kind, SPEC, clean, variant, _variant(variant, None), 1.0)
    assert cell.state is State.CAUGHT and cell.rules == ("note",)


def test_false_alarms_are_the_failing_rules_nobody_labelled(tmp_path: Path) -> None:
    clean = _facts(tmp_path / "a", {"basic.tipc.scripts_unchanged": "FAIL", "basic.lineage.weights": "FAIL"})
    failing, alarms, unseen = false_alarms((KIND,), SPEC, clean)
    assert set(failing) == {"basic.tipc.scripts_unchanged", "basic.lineage.weights"}
    assert set(alarms) == {"basic.lineage.weights"} and unseen == []
    # a rule a native kind expects is no false alarm
    native = replace(SPEC, native={KIND.id: "x"})
    assert (
        false_alarms((KIND,), native, _facts(tmp_path / "b", {"basic.train.ips_is_throughput": "FAIL"}))[1]
        == {}
    )


def test_the_matrix_shows_each_cell_and_the_false_alarms(tmp_path: Path) -> None:
    cells = (
        Cell(KIND.id, "tiny", State.CAUGHT, rules=("basic.train.ips_is_throughput",), evidence="avg_ips 0.5"),
    )
    result = RepoResult(
        SPEC, cells, {"basic.lineage.weights": "read x"}, {"basic.lineage.weights": "read x"}, (), 60
    )
    text = markdown((KIND,), [result])
    assert "| ips-not-throughput | CAUGHT train.ips_is_throughput |" in text
    assert (
        "`basic.lineage.weights`: read x" in text
        and "caught by basic.train.ips_is_throughput: avg_ips 0.5" in text
    )


def test_the_clean_repo_is_left_alone_by_judging(tmp_path: Path) -> None:
    clean = _facts(tmp_path / "a")
    before = sorted(p for p in clean.repo.rglob("*"))
    variant = _facts(tmp_path / "b", {"basic.train.ips_is_throughput": "FAIL"})
    judge_variant(KIND, SPEC, clean, variant, _variant(variant, {"rewritten": 1}), 1.0)
    assert sorted(p for p in clean.repo.rglob("*")) == before
    shutil.rmtree(variant.repo)


def test_a_plant_whose_observed_data_is_the_clean_repos_had_no_effect(tmp_path: Path) -> None:
    # a model whose output ignores its input predicts the same from a shifted input: nothing to catch there
    kind = replace(
        KIND,
        expect=("competition.predict_infer.identical",),
        observe=("competition.predict_infer.identical", "commands"),
    )
    clean = _facts(tmp_path / "a")
    variant = _facts(tmp_path / "b")
    cell = judge_variant(kind, SPEC, clean, variant, _variant(variant, {"rewritten": 1}), 1.0)
    assert cell.state is State.NO_EFFECT and "commands is the clean repo's" in cell.evidence
    # where the data differs, the verdict stands: a PASS is a miss
    rule = variant.rules["competition.predict_infer.identical"]
    changed = replace(rule, data={"commands": [["python", "predict.py", "--img_path=y.png"]]})
    variant = replace(variant, rules={**variant.rules, rule.id: changed})
    cell = judge_variant(kind, SPEC, clean, variant, _variant(variant, None), 1.0)
    assert cell.state is State.MISSED


def test_a_plant_that_breaks_a_stage_before_its_own_is_loud_even_without_expected_rules(
    tmp_path: Path,
) -> None:
    kind = replace(KIND, expect=(), missing_rule="m", silent=("eval",))
    clean = _facts(tmp_path / "a")
    variant = _facts(tmp_path / "b", {"basic.tipc.train_passes": "FAIL"}, failed=("train/1",))
    cell = judge_variant(kind, SPEC, clean, variant, _variant(variant, {"rewritten": 1}), 1.0)
    assert cell.state is State.LOUD and cell.evidence == "train/1 failed"
