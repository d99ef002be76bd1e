"""`tipc check` and the serving chain: the `chain:` selector of step_passed, and when the chain is run."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tipc.commands import check as check_cmd
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import RunRecord, StepResult, record_location
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict
from tipc.judge.rules.evaluate import chains_named, make_env
from tipc.judge.rules.schema import parse_ruleset, resolve_ruleset

if TYPE_CHECKING:
    from tipc.execute.runner import RunOptions
    from tipc.judge.checks.settings import Settings

HEAD = "schema: tipc.ruleset/1\nname: {name}\nrules:\n"
RULE = "  - id: {id}\n    source: s\n    severity: error\n    description: d\n    check:\n      {check}\n"


def ruleset_text(name: str, checks: list[str]) -> str:
    return HEAD.format(name=name) + "".join(RULE.format(id=f"r{i}", check=c) for i, c in enumerate(checks))


def record(chain: str, statuses: dict[str, Status], repo: Path) -> RunRecord:
    steps = tuple(
        Step(id=sid, stage=Stage(sid.split("/")[0]), argv=("python", "x.py"), log=f"out/{sid}.log")
        for sid in statuses
    )
    plan = Plan(
        config_path="c.txt",
        repo=str(repo),
        mode=Mode.SERVING_INFER if chain == "serving" else Mode.LITE_TRAIN_LITE_INFER,
        dialect="d",
        model_name="m",
        output_dir="out",
        results_log="out/results.log",
        status_format="compact",
        steps=steps,
        chain=chain,
    )
    results = tuple(
        StepResult(sid, st, exit_code=0 if st is Status.PASSED else 1, started=1.0, ended=2.0)
        for sid, st in statuses.items()
    )
    return RunRecord(plan=plan, results=results, started=0.0)


def evaluate_one(check_yaml: str, ctx: CheckContext) -> CheckOutcome:
    rule = parse_ruleset(ruleset_text("t", [check_yaml]), "t.yaml").rules[0]
    return make_env(ctx, {}).evaluate(rule.check)


def test_step_passed_reads_the_named_chains_record(tmp_path: Path) -> None:
    train = record("train_infer_python", {"train/a": Status.PASSED}, tmp_path)
    ok = record("serving", {"serve/s": Status.PASSED, "client/c": Status.PASSED}, tmp_path)
    bad = record("serving", {"serve/s": Status.FAILED, "client/c": Status.FAILED}, tmp_path)
    spec = "step_passed: {chain: serving}"
    assert evaluate_one(spec, CheckContext(tmp_path, train)).verdict is Verdict.SKIP
    assert "serving chain was not run" in evaluate_one(spec, CheckContext(tmp_path, train)).summary
    passed = evaluate_one(spec, CheckContext(tmp_path, train, records={"serving": ok}))
    assert passed.verdict is Verdict.PASS and "2 step(s) passed" in passed.summary
    failed = evaluate_one(
        "step_passed: {chain: serving, stage: serve}", CheckContext(tmp_path, train, {}, {"serving": bad})
    )
    assert failed.verdict is Verdict.FAIL
    assert (
        failed.evidence[0].text.startswith("serve/s: failed") and failed.evidence[0].path == "out/serve/s.log"
    )
    # Without `chain`, the train record is read as before; a serving record as the main record also answers.
    assert evaluate_one("step_passed: {stage: serve}", CheckContext(tmp_path, train)).verdict is Verdict.NA
    assert evaluate_one(spec, CheckContext(tmp_path, ok)).verdict is Verdict.PASS


def test_chains_named_finds_chain_arguments_at_any_depth() -> None:
    nested = "all_of: [{file_exists: {path: a}}, {any_of: [{step_passed: {chain: serving}}]}]"
    assert chains_named([parse_ruleset(ruleset_text("n", [nested]), "n.yaml")]) == {"serving"}
    assert chains_named([parse_ruleset(ruleset_text("p", ["step_passed: {}"]), "p.yaml")]) == set()
    # the competition ruleset reads the serving chain and the acceptance chains (issue 26)
    assert chains_named([resolve_ruleset("competition")]) == {
        "serving",
        "documented",
        "pretrained",
        "backbones",
    }
    assert chains_named([resolve_ruleset("tipc-basic")]) == set()


class Fakes:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.executed: list[str] = []
        self.serving_config = repo / "test_tipc/configs/m/serving_infer_python.txt"
        self.ctx: CheckContext | None = None

    def plan(self, config: Path, mode: str, *, repo: Path, overrides: Any, dialect: Any = None) -> Plan:
        chain = "serving" if "serving" in config.name else "train_infer_python"
        steps = {"serve/s": Status.PASSED} if chain == "serving" else {"train/a": Status.PASSED}
        plan = record(chain, steps, repo).plan
        if chain == "serving":  # as plan_serving writes it: isolate_serving must move it
            from dataclasses import replace

            plan = replace(plan, output_dir="log/m/serving_infer", config_path=str(config))
        return plan

    def execute(self, plan: Plan, options: Any, observer: Any) -> RunRecord:
        self.executed.append(f"{plan.chain}:{plan.output_dir}")
        return record(plan.chain, {s.id: Status.PASSED for s in plan.steps}, self.repo)

    def step_check(self, ctx: CheckContext, **args: Any) -> CheckOutcome:
        self.ctx = ctx
        return CheckOutcome(Verdict.PASS, "ok")

    def seams(self, serving: bool = True) -> check_cmd.Seams:
        return check_cmd.Seams(
            find_configs=lambda repo: [repo / "test_tipc/configs/m/train_infer_python.txt"],
            lint_paths=lambda paths, dialect=None: [],
            plan=self.plan,
            execute=self.execute,
            run_options=lambda **kw: cast("RunOptions", kw),  # a stand-in the fake execute ignores
            find_record=lambda repo, plan: None,
            load_record=lambda path: cast("RunRecord", None),  # never called: find_record finds none
            load_settings=lambda repo: cast("Settings", {}),
            checks={"probe": self.step_check},
            find_serving_config=(lambda repo, config: self.serving_config)
            if serving
            else (lambda r, c: None),
        )


def make_repo(tmp_path: Path) -> Path:
    """A repo with its train config (tipc check reads it to choose the default mode)."""
    repo = tmp_path / "repo"
    (repo / "test_tipc/configs/m").mkdir(parents=True)
    (repo / "test_tipc/configs/m/train_infer_python.txt").write_text(
        "===========================train_params===========================\nmodel_name:m\n"
    )
    return repo


def run_check(repo: Path, fakes: Fakes, ruleset: Path, serving: bool = True) -> int:
    parser = argparse.ArgumentParser()
    check_cmd.add_arguments(parser)
    args = parser.parse_args([str(repo), "--ruleset", str(ruleset), "--format", "json"])
    return check_cmd.check(args, fakes.seams(serving), stdout=io.StringIO(), stderr=io.StringIO())


def test_check_runs_the_isolated_serving_chain_only_when_a_rule_reads_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    needs = tmp_path / "needs.yaml"
    needs.write_text(ruleset_text("needs", ["step_passed: {chain: serving}", "check: {name: probe}"]))
    plain = tmp_path / "plain.yaml"
    plain.write_text(ruleset_text("plain", ["step_passed: {}"]))
    fakes = Fakes(repo)
    assert run_check(repo, fakes, needs) == 0
    assert fakes.executed == [
        "train_infer_python:out",
        "serving:test_tipc/output/m/serving_infer",  # isolated before it ran
    ]
    assert fakes.ctx is not None and set(fakes.ctx.records) == {"serving"}
    fakes.executed.clear()
    assert run_check(repo, fakes, plain) == 0
    assert fakes.executed == ["train_infer_python:out"]
    fakes.executed.clear()
    assert run_check(repo, fakes, needs, serving=False) == 0  # no serving config: the rule is SKIP
    assert fakes.executed == ["train_infer_python:out"]


def test_reuse_run_reuses_the_serving_chains_record_too(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    needs = tmp_path / "needs.yaml"
    needs.write_text(ruleset_text("needs", ["step_passed: {chain: serving}"]))
    fakes = Fakes(repo)
    seams = fakes.seams()
    asked: list[str] = []

    def find_record(repo: Path, plan: Plan) -> Path | None:
        asked.append(plan.output_dir)
        return repo / record_location(plan)

    seams.find_record = find_record
    seams.load_record = lambda path: record(
        "serving" if "serving" in str(path) else "train_infer_python",
        {"serve/s": Status.FAILED} if "serving" in str(path) else {"train/a": Status.PASSED},
        repo,
    )
    parser = argparse.ArgumentParser()
    check_cmd.add_arguments(parser)
    args = parser.parse_args([str(repo), "--ruleset", str(needs), "--reuse-run", "--format", "json"])
    out = io.StringIO()
    assert (
        check_cmd.check(args, seams, stdout=out, stderr=io.StringIO()) == 1
    )  # the reused serving run failed
    assert fakes.executed == [] and asked == ["out", "test_tipc/output/m/serving_infer"]
    assert "reused the run record" in out.getvalue()
