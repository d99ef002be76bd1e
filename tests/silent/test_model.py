"""The benchmark's data: the catalogue and the repos' ground truth load, name only rules the rulesets have,
and a malformed entry is refused with the file named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bench.silent import model

pytestmark = pytest.mark.silent

SPECS = Path(__file__).resolve().parents[2] / "specs"


def _rule_ids() -> set[str]:
    ids = {"lint.config"}
    for path in SPECS.glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        ids |= {r["id"] for r in data.get("rules") or []}
    return ids


def test_the_catalogue_holds_the_fourteen_kinds_of_issue_23() -> None:
    kinds = model.load_catalogue()
    assert len(kinds) == 14 and len({k.id for k in kinds}) == 14
    for kind in kinds:
        assert kind.expect or kind.missing_rule, kind.id
        assert kind.seen_in or kind.source, f"{kind.id}: where does it come from?"


def test_every_rule_the_data_names_is_a_rule_of_the_rulesets() -> None:
    known = _rule_ids()
    kinds = model.load_catalogue()
    assert {r for k in kinds for r in k.expect} <= known
    for repo in model.load_repos(kinds=kinds):
        assert set(repo.legit) <= known, repo.name


def test_every_seen_in_repo_and_native_kind_is_one_the_benchmark_knows() -> None:
    kinds = model.load_catalogue()
    repos = model.load_repos(kinds=kinds)
    names = {r.name for r in repos}
    for kind in kinds:
        for seen in kind.seen_in:
            assert seen.repo in names, (kind.id, seen.repo)
    # a native kind is judged on the clean check: it must name a rule or a note that shows it
    for repo in repos:
        for kind_id in repo.native:
            kind = next(k for k in kinds if k.id == kind_id)
            assert kind.expect or kind.expect_notes, kind_id


def test_an_unknown_key_is_refused_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "catalogue.yaml"
    bad.write_text(
        "schema: tipc-bench.silent-catalogue/1\nkinds:\n  - {id: x, title: t, description: d, expect: [a],"
        " needs: [], injector: i, colour: red}\n"
    )
    with pytest.raises(model.DataError, match=r"catalogue.yaml kinds\[0\]: unknown key\(s\) \['colour'\]"):
        model.load_catalogue(bad)


def test_an_unknown_need_and_a_kind_without_any_catch_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "catalogue.yaml"
    head = "schema: tipc-bench.silent-catalogue/1\nkinds:\n"
    bad.write_text(
        head + "  - {id: x, title: t, description: d, expect: [a], needs: [gpu_cluster], injector: i}\n"
    )
    with pytest.raises(model.DataError, match="unknown need"):
        model.load_catalogue(bad)
    bad.write_text(head + "  - {id: x, title: t, description: d, needs: [], injector: i}\n")
    with pytest.raises(model.DataError, match="missing_rule"):
        model.load_catalogue(bad)


def test_a_native_kind_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "repos.yaml"
    bad.write_text(
        "schema: tipc-bench.silent-repos/1\nrepos:\n"
        "  - {name: r, source: demo, python: tipc, native: {nope: x}}\n"
    )
    with pytest.raises(model.DataError, match=r"unknown kind\(s\) \['nope'\]"):
        model.load_repos(bad)


def test_every_need_the_catalogue_may_name_has_a_check() -> None:
    from bench.silent.variants import NEED_CHECKS

    assert {n.partition(":")[0] for k in model.load_catalogue() for n in k.needs} <= set(NEED_CHECKS)
    # the loader accepts exactly the needs that have a check
    samples = {
        name: f"{name}:train" if name in ("stage_passed", "train_log") else name for name in NEED_CHECKS
    }
    assert all(model.NEEDS.match(sample) for sample in samples.values())
    assert not model.NEEDS.match("gpu_cluster") and not model.NEEDS.match("stage_passed:serve")
