"""Issue 26's acceptance on the demo, as seed 004 §4.1.3 / §4.2.3 state it: the documented commands run, the
provided model reaches the documented accuracy, predict == infer on the provided weights, and the documented
serving answers with the inference results; a README claiming more than the model gives, or a training
command with a wrong flag, FAILs with the numbers or the command.

The unchanged demo is the suite's shared check (tests/conftest.py: demo_checked, default rulesets, so the
`competition` ruleset in full). The mutants reuse what ran: the claim copy reuses the documented chain's
record (only the README's table changed), the flag copy runs the documented chain anew; both are judged by
the very rules of specs/competition.yaml that the issue names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import DemoCheck, DemoRun, copy_demo, tipc, tree_hashes

pytestmark = pytest.mark.integration

SPECS = Path(__file__).resolve().parents[2] / "specs"
RULES = ("competition.docs.commands_run", "competition.eval.documented_accuracy")


def _competition_subset(dest: Path, ids: tuple[str, ...]) -> Path:
    """The `competition` ruleset with only the rules `ids`, each as specs/competition.yaml writes it."""
    data = yaml.safe_load((SPECS / "competition.yaml").read_text(encoding="utf-8"))
    data["rules"] = [r for r in data["rules"] if r["id"] in ids]
    assert [r["id"] for r in data["rules"]] == list(ids)
    path = dest / "competition-subset.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _check(repo: Path, ruleset: Path) -> tuple[int, dict[str, Any]]:
    done = tipc(
        "check", str(repo), "--reuse-run", "--no-color", "--format", "json", "--ruleset", str(ruleset)
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    return done.returncode, {r["id"]: r for r in json.loads(done.stdout)["rules"]}


def test_the_unchanged_demo_passes_the_acceptance_in_the_competition_ruleset(demo_checked: DemoCheck) -> None:
    rules = {r["id"]: r for r in demo_checked.report["rules"] if r["ruleset"] == "competition"}
    for rid in (
        *RULES,
        "competition.predict_infer.pretrained",
        "competition.serving.documented_equals_inference",
    ):
        assert rules[rid]["verdict"] == "PASS", (rid, rules[rid]["summary"])
    accuracy = rules["competition.eval.documented_accuracy"]
    assert "top-1 accuracy 0.9600 vs claimed 0.9600" in accuracy["summary"]
    docs = rules["competition.docs.commands_run"]["data"]
    assert any(s["state"] == "passed" and s["id"].startswith("doc/README.md:") for s in docs["steps"])
    assert tree_hashes(demo_checked.repo) == demo_checked.before


def test_a_readme_claiming_more_than_the_model_gives_fails_with_both_numbers(
    demo_checked: DemoCheck, tmp_path: Path
) -> None:
    repo = copy_demo(tmp_path / "claim" / "lenet_digits", source=demo_checked.repo, keep_output=True)
    readme = repo / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert "| 0.9600 | [pretrained/" in text
    readme.write_text(text.replace("| 0.9600 | [pretrained/", "| 0.9900 | [pretrained/"), encoding="utf-8")
    code, rules = _check(repo, _competition_subset(tmp_path, RULES))
    assert code == 1
    accuracy = rules["competition.eval.documented_accuracy"]
    assert accuracy["verdict"] == "FAIL"
    assert "claims top-1 accuracy 0.9900; the provided model gives 0.9600" in accuracy["summary"]
    numbers = {k: v for e in accuracy["evidence"] for k, v in e["numbers"].items()}
    assert numbers["claimed"] == pytest.approx(0.99) and numbers["measured"] == pytest.approx(0.96)
    assert rules["competition.docs.commands_run"]["verdict"] == "PASS"


def test_a_wrong_flag_in_the_documented_training_fails_naming_the_command(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    repo = demo_run.copy(tmp_path / "flag" / "lenet_digits")
    readme = repo / "README.md"
    text = readme.read_text(encoding="utf-8")
    written = "python train.py --device=cpu --epochs=5 --batch_size=16"
    assert written in text
    readme.write_text(
        text.replace(written, written.replace("--epochs=5", "--epoch_count=5")), encoding="utf-8"
    )
    before = tree_hashes(repo)
    code, rules = _check(repo, _competition_subset(tmp_path, RULES))
    assert code == 1
    docs = rules["competition.docs.commands_run"]
    assert docs["verdict"] == "FAIL"
    assert docs["summary"].startswith("README.md:76: `python train.py --device=cpu --epoch_count=5")
    assert "error: unrecognized arguments: --epoch_count=5" in docs["summary"]
    # the rest of the documented commands still ran, and the evaluation of the provided model passes
    assert rules["competition.eval.documented_accuracy"]["verdict"] == "PASS"
    assert tree_hashes(repo) == before  # ./output, ./inference: written in the sandbox, not in the repo
