"""`tipc check` with fakes at its seams: exit codes 0/1/2/3/130, report files, nothing written elsewhere."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

import tipc.commands.check as check_cmd
from tipc.cli import build_parser, main
from tipc.commands.check import Seams, check, default_report_dir
from tipc.core.findings import Finding, Level
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.proc import DEFAULT_LOG_LIMIT
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict

if TYPE_CHECKING:
    from tipc.execute.runner import RunOptions
    from tipc.judge.checks.settings import Settings

CONFIG = "test_tipc/configs/lenet/train_infer_python.txt"
RULESET = """\
schema: tipc.ruleset/1
name: mini
rules:
  - id: mini.train_py
    source: "seed002 §2.2.1"
    severity: error
    description: train.py exists
    check: {file_exists: {path: train.py}}
  - id: mini.chain
    source: "seed002 §4.2.2"
    severity: error
    description: the chain passes
    check: {step_passed: {}}
  - id: mini.log
    source: "seed002 §2.2.3"
    severity: error
    description: log fields
    check: {log_has_fields: {}}
  - id: mini.serving
    source: "seed004 §4.2.3"
    severity: error
    description: serving
    check: {check: {name: serving}}
"""


class Fakes:
    def __init__(self, repo: Path, statuses: dict[str, Status] | None = None) -> None:
        self.repo = repo
        self.statuses = statuses or {}
        self.executed: list[Plan] = []
        self.options: list[dict[str, Any]] = []
        self.findings: list[Finding] = []
        self.record_on_disk: RunRecord | None = None
        self.check_verdict = Verdict.PASS
        self.planned: list[tuple[Any, ...]] = []

    def plan(self, config: Path, mode: Mode, *, repo: Path, overrides: Any, dialect: str | None) -> Plan:
        self.planned.append((config, mode, repo, overrides, dialect))
        steps = (
            Step(
                id="train",
                stage=Stage.TRAIN,
                argv=("python", "train.py"),
                log="test_tipc/output/lenet/train.log",
            ),
            Step(id="export", stage=Stage.EXPORT, argv=("python", "export_model.py"), depends_on=("train",)),
            Step(id="infer", stage=Stage.INFER, argv=("python", "infer.py"), depends_on=("export",)),
        )
        return Plan(
            str(config),
            str(repo),
            mode,
            "template",
            "lenet",
            f"test_tipc/output/lenet/{mode}",
            "r.log",
            "t",
            steps,
        )

    def execute(self, plan: Plan, options: Any, observer: Any) -> RunRecord:
        self.executed.append(plan)
        results = tuple(
            StepResult(s.id, self.statuses.get(s.id, Status.PASSED), 0, 1.0, 2.0, log=s.log)
            for s in plan.steps
        )
        return RunRecord(plan, results, 1.0, 3.0)

    def log_fields(self, ctx: CheckContext, **args: Any) -> CheckOutcome:
        assert ctx.record is not None and ctx.settings == {"agreement": {}}
        return CheckOutcome(self.check_verdict, "fields present")

    def run_options(self, **kw: Any) -> RunOptions:
        self.options.append(kw)
        return cast("RunOptions", kw)  # a stand-in: the fake execute reads the keywords

    def load_record(self, path: Path) -> RunRecord:
        assert self.record_on_disk is not None  # find_record names a path only when there is one
        return self.record_on_disk

    def seams(self) -> Seams:
        return Seams(
            find_configs=lambda repo: [repo / CONFIG],
            lint_paths=lambda paths, dialect=None: list(self.findings),
            plan=self.plan,
            execute=self.execute,
            run_options=self.run_options,
            find_record=lambda repo, plan: Path("rec.json") if self.record_on_disk else None,
            load_record=self.load_record,
            load_settings=lambda repo: cast("Settings", {"agreement": {}}),  # a stand-in the checks see
            checks={"log_fields": self.log_fields},
        )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "test_tipc" / "configs" / "lenet").mkdir(parents=True)
    (root / CONFIG).write_text("model_name:lenet\n", encoding="utf-8")
    (root / "train.py").write_text("print('train')\n", encoding="utf-8")
    return root


@pytest.fixture
def ruleset(tmp_path: Path) -> Path:
    path = tmp_path / "mini.yaml"
    path.write_text(RULESET, encoding="utf-8")
    return path


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _run(argv: list[str], fakes: Fakes) -> tuple[int, str, str]:
    args = build_parser().parse_args(["check", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = check(args, fakes.seams(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_all_error_rules_pass_exits_0_and_writes_only_the_report_dir(repo: Path, ruleset: Path) -> None:
    before = _files(repo)
    fakes = Fakes(repo)
    code, out, err = _run([str(repo), "--ruleset", str(ruleset), "--no-color"], fakes)
    assert code == 0, out
    report_dir = repo / "test_tipc" / "output" / "lenet" / "tipc_report"
    assert report_dir == default_report_dir(repo, "lenet")
    names = {"report.json", "report.md", "report.junit.xml", "report.html"}
    assert {p.name for p in report_dir.iterdir()} == names
    created = _files(repo) - before
    assert all(
        c.startswith("test_tipc/output/lenet/tipc_report")
        or c in ("test_tipc/output", "test_tipc/output/lenet")
        for c in created
    )
    data = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert data["overall"] == "PASS" and data["exit_code"] == 0
    assert {r["id"]: r["verdict"] for r in data["rules"]} == {
        "mini.train_py": "PASS",
        "mini.chain": "PASS",
        "mini.log": "PASS",
        "mini.serving": "SKIP",
    }
    # a PASS folds the rules that need no attention into one line; -v lists them
    assert "mini.serving" not in out and "Rules: 4 not listed (3 PASS, 1 SKIP)" in out
    assert "Overall: PASS" in out
    assert "reports written to" in err
    # lite modes get a 10-minute step limit by default

    assert fakes.options == [
        {
            "step_timeout_s": 600.0,
            "python": None,
            "no_color": True,
            "forced_env": (),
            "log_limit_bytes": DEFAULT_LOG_LIMIT,
        }
    ]


def test_verbose_lists_every_rule(repo: Path, ruleset: Path) -> None:
    code, out, _ = _run([str(repo), "--ruleset", str(ruleset), "--no-color", "-v"], Fakes(repo))
    assert code == 0
    assert all(rule in out for rule in ("mini.train_py", "mini.chain", "mini.log", "mini.serving"))
    assert "not listed" not in out


def test_a_failing_step_exits_1(repo: Path, ruleset: Path) -> None:
    fakes = Fakes(repo, {"infer": Status.FAILED})
    code, out, _ = _run([str(repo), "--ruleset", str(ruleset)], fakes)
    assert code == 1
    assert "Overall: FAIL" in out


def test_a_failing_check_exits_1_but_a_warning_rule_does_not(
    repo: Path, ruleset: Path, tmp_path: Path
) -> None:
    fakes = Fakes(repo)
    fakes.check_verdict = Verdict.FAIL
    assert _run([str(repo), "--ruleset", str(ruleset)], fakes)[0] == 1
    soft = tmp_path / "soft.yaml"
    soft.write_text(
        RULESET.replace(
            "severity: error\n    description: log fields", "severity: warning\n    description: log fields"
        )
    )
    assert _run([str(repo), "--ruleset", str(soft)], fakes)[0] == 0


def test_a_lint_error_exits_1_and_shows_in_the_report(repo: Path, ruleset: Path) -> None:
    fakes = Fakes(repo)
    fakes.findings = [Finding(str(repo / CONFIG), 5, 1, Level.ERROR, "TIPC101", "bad slot")]
    code, _, _ = _run([str(repo), "--ruleset", str(ruleset), "--format", "junit"], fakes)
    assert code == 1
    junit = ET.parse(repo / "test_tipc/output/lenet/tipc_report/report.junit.xml").getroot()
    lint = junit.find("testsuite[@name='lint']")
    assert lint is not None and lint.get("failures") == "1"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--mode", "nope"], "--mode"),
        (["--set", "novalue"], "KEY=VALUE"),
        (["--config", "missing.txt"], "config file not found"),
        (["--ruleset", "no-such-ruleset"], "no built-in ruleset"),
        (["--step-timeout", "0"], "positive"),
    ],
)
def test_usage_errors_exit_2_before_anything_runs(
    repo: Path,
    argv: list[str],
    words: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fakes = Fakes(repo)
    monkeypatch.setattr(check_cmd, "default_seams", fakes.seams)
    before = _files(repo)
    assert main(["check", str(repo), *argv]) == 2
    assert words in capsys.readouterr().err
    assert fakes.executed == [] and _files(repo) == before


def test_a_bad_ruleset_file_exits_2_with_its_location(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        RULESET.replace("file_exists: {path: train.py}", "file_exist: {path: train.py}"), encoding="utf-8"
    )
    fakes = Fakes(repo)
    monkeypatch.setattr(check_cmd, "default_seams", fakes.seams)
    assert main(["check", str(repo), "--ruleset", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:8:13: rules[0].check.file_exist: unknown operator 'file_exist'" in err, err
    assert fakes.executed == []


def test_no_config_and_not_a_folder_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    fakes = Fakes(empty)
    seams = fakes.seams()
    seams.find_configs = lambda repo: []
    monkeypatch.setattr(check_cmd, "default_seams", lambda: seams)
    assert main(["check", str(empty)]) == 2
    assert "no train_infer_python config" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "nope")]) == 2


def test_internal_errors_exit_3(repo: Path, ruleset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fakes = Fakes(repo)
    seams = fakes.seams()

    def crashing(ctx: CheckContext, **args: Any) -> CheckOutcome:
        raise ZeroDivisionError("division by zero")  # a check that crashes

    seams.checks = {"log_fields": crashing}
    args = build_parser().parse_args(["check", str(repo), "--ruleset", str(ruleset)])
    assert check(args, seams, stdout=io.StringIO(), stderr=io.StringIO()) == 3

    def broken_runner(plan: Plan, options: Any, observer: Any) -> RunRecord:
        raise RuntimeError("worker pool died")

    seams = fakes.seams()
    seams.execute = broken_runner
    monkeypatch.setattr(check_cmd, "default_seams", lambda: seams)
    assert main(["check", str(repo), "--ruleset", str(ruleset)]) == 3


def test_reuse_run_skips_execution(repo: Path, ruleset: Path) -> None:
    fakes = Fakes(repo)
    plan = fakes.plan(repo / CONFIG, Mode.LITE_TRAIN_LITE_INFER, repo=repo, overrides=None, dialect=None)
    fakes.record_on_disk = RunRecord(
        plan, tuple(StepResult(s.id, Status.PASSED, 0, 1.0, 2.0) for s in plan.steps), 1.0, 2.0
    )
    code, out, _ = _run([str(repo), "--ruleset", str(ruleset), "--reuse-run", "--format", "json"], fakes)
    assert code == 0 and fakes.executed == []
    data = json.loads(out)
    assert data["run"]["reused"] is True


def test_reuse_run_without_a_record_runs_and_says_so(repo: Path, ruleset: Path) -> None:
    fakes = Fakes(repo)
    code, out, _ = _run([str(repo), "--ruleset", str(ruleset), "--reuse-run", "--format", "markdown"], fakes)
    assert code == 0 and len(fakes.executed) == 1
    assert "no run record of this config and mode" in out


def test_report_dir_elsewhere_leaves_the_repo_untouched(repo: Path, ruleset: Path, tmp_path: Path) -> None:
    before = _files(repo)
    target = tmp_path / "reports"
    code, _, _ = _run(
        [str(repo), "--ruleset", str(ruleset), "--report-dir", str(target), "--format", "html"], Fakes(repo)
    )
    assert code == 0
    assert _files(repo) == before
    assert (target / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_overrides_reach_the_planner(repo: Path, ruleset: Path) -> None:
    fakes = Fakes(repo)
    _run(
        [
            str(repo),
            "--ruleset",
            str(ruleset),
            "--device",
            "cpu",
            "--set",
            "epoch=1",
            "--python",
            "python3.11",
            "--mode",
            "whole_infer",
        ],
        fakes,
    )
    config, mode, _, overrides, _ = fakes.planned[0]
    assert config == repo / CONFIG and mode == "whole_infer"
    assert (
        overrides.device == "cpu" and overrides.sets == (("epoch", "1"),) and overrides.python == "python3.11"
    )


def test_interrupted_run_exits_130_and_still_reports(repo: Path, ruleset: Path) -> None:
    fakes = Fakes(repo, {"export": Status.INTERRUPTED})
    code, _, err = _run([str(repo), "--ruleset", str(ruleset)], fakes)
    assert code == 130 and "interrupted" in err
    assert (repo / "test_tipc/output/lenet/tipc_report/report.json").is_file()


def test_default_rulesets_are_tipc_basic_and_competition(repo: Path) -> None:
    code, out, _ = _run([str(repo), "--format", "json"], Fakes(repo))
    data = json.loads(out)
    assert data["rulesets"] == ["tipc-basic", "competition"]
    assert code == 1  # this bare repo lacks most of the spec's files
    assert {r["ruleset"] for r in data["rules"]} == {"tipc-basic", "competition"}


def test_check_module_import_is_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tipc.commands.check\n"
        "print(sorted(m for m in ('rich', 'jinja2', 'yaml', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_repo_argument_may_be_the_config_itself(repo: Path, ruleset: Path) -> None:
    fakes = Fakes(repo)
    code, _, _ = _run([str(repo / CONFIG), "--ruleset", str(ruleset)], fakes)
    assert code == 0
    config, _, planned_repo, _, _ = fakes.planned[0]
    assert planned_repo == repo.resolve() and config == (repo / CONFIG).resolve()


def test_rulesets_can_be_comma_separated(repo: Path) -> None:
    _, out, _ = _run([str(repo), "--ruleset", "modelzoo,tipc-basic", "--format", "json"], Fakes(repo))
    assert json.loads(out)["rulesets"] == ["modelzoo", "tipc-basic"]


def test_check_executes_the_isolated_plan(repo: Path, ruleset: Path) -> None:
    class Writing(Fakes):
        def plan(self, config: Path, mode: Mode, **kw: Any) -> Plan:
            base = super().plan(config, mode, **kw)
            export = Step(
                id="export",
                stage=Stage.EXPORT,
                argv=("python", "export_model.py", "--save_inference_dir=./pretrained"),
                writes=(("--save_inference_dir", "./pretrained"),),
            )
            return replace(base, steps=(base.steps[0], export, base.steps[2]))

    fakes = Writing(repo)
    code, _, _ = _run([str(repo), "--ruleset", str(ruleset), "--format", "json"], fakes)
    assert code == 0
    (ran,) = fakes.executed
    assert ran.isolated
    out = "./test_tipc/output/lenet/lite_train_lite_infer/tipc_isolated/pretrained"
    assert ran.steps[1].argv[-1] == f"--save_inference_dir={out}"


def test_reuse_run_reads_the_record_of_its_own_mode_in_a_shared_output_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo (template dialect) logs both modes to test_tipc/output: `--reuse-run` must find the record of
    the mode it checks even after the other mode ran (`--python false`: all steps fail fast, no training)."""
    import shutil

    from tipc.execute.record import load_record, record_location
    from tipc.execute.sandbox import run_key, stored_path
    from tipc.planning.planner import plan as make_plan

    demo = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
    repo = tmp_path / "repo"
    shutil.copytree(demo, repo, ignore=shutil.ignore_patterns("lite_data", "output", "__pycache__", "*.tar"))
    modes = ("lite_train_lite_infer", "whole_infer")
    for mode in modes:
        assert main(["run", "--python", "false", "--mode", mode, str(repo)]) == 1
    capsys.readouterr()
    config = "test_tipc/configs/lenet_digits/train_infer_python.txt"
    for mode in modes:
        the_plan = make_plan(repo / config, mode, repo=repo)
        key = run_key(the_plan.model_name, the_plan.config_path, mode)
        stored = stored_path(repo, key, the_plan.output_dir, str(record_location(the_plan)))
        started = load_record(stored).started
        rc = main(
            ["check", "--reuse-run", "--python", "false", "--mode", mode, "--format", "json", str(repo)]
        )
        out = capsys.readouterr().out
        assert rc == 1
        run = json.loads(out)["run"]
        # the report names the record where it is on disk after the check (not where the chain saw it)
        assert (run["mode"], run["reused"], run["record_path"]) == (
            mode,
            True,
            stored.relative_to(repo).as_posix(),
        )
        assert (repo / run["record_path"]).is_file()
        assert load_record(stored).started == started  # read, not re-run


@pytest.mark.parametrize(
    ("given", "has_paddle", "expected", "said"),
    [
        (None, True, "OWN", "in place of the config's 'python' (/nowhere/python)"),
        (None, False, None, "has no paddle"),
        ("/opt/py/bin/python", True, "/opt/py/bin/python", "(--python)"),
    ],
)
def test_the_interpreter_with_paddle_is_chosen_and_said(
    repo: Path,
    ruleset: Path,
    monkeypatch: pytest.MonkeyPatch,
    given: str | None,
    has_paddle: bool,
    expected: str | None,
    said: str,
) -> None:
    """`.venv/bin/tipc check` unactivated: the config's bare `python` is another one, without paddle."""
    import sys

    import tipc.commands._target as target

    (repo / CONFIG).write_text("model_name:lenet\npython:python\n", encoding="utf-8")
    monkeypatch.setattr("tipc.commands._target.shutil.which", lambda word: "/nowhere/python")
    monkeypatch.setattr(target, "paddle_findable", lambda: has_paddle)
    fakes = Fakes(repo)
    argv = [str(repo), "--ruleset", str(ruleset)] + (["--python", given] if given else [])
    code, _, err = _run(argv, fakes)
    assert code == 0
    chosen = sys.executable if expected == "OWN" else expected
    assert fakes.options[0]["python"] == chosen
    assert fakes.planned[0][3].python == chosen  # the plan's overrides (the serving plan's python too)
    line = next(ln for ln in err.splitlines() if ln.startswith("tipc: python: "))
    assert said in line
    report = json.loads((repo / "test_tipc/output/lenet/tipc_report/report.json").read_text(encoding="utf-8"))
    assert line.removeprefix("tipc: ") in report["notes"]


def test_a_misspelled_check_name_exits_2_naming_its_line_before_anything_runs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        RULESET.replace("{check: {name: serving}}", "{check: {name: log_fieldz}}"), encoding="utf-8"
    )
    assert "log_fieldz" in bad.read_text(encoding="utf-8")
    fakes = Fakes(repo)
    monkeypatch.setattr(check_cmd, "default_seams", fakes.seams)
    assert main(["check", str(repo), "--ruleset", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:23:21:" in err and "unknown check 'log_fieldz'; did you mean 'log_fields'?" in err, err
    assert fakes.executed == [] and fakes.planned == []


def test_a_bad_check_argument_exits_2_naming_its_line_before_anything_runs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        RULESET + "  - id: mini.loss\n    source: s\n    severity: error\n    description: d\n"
        "    check: {check: {name: convergence, args: {max_iters: many}}}\n",
        encoding="utf-8",
    )
    fakes = Fakes(repo)
    monkeypatch.setattr(check_cmd, "default_seams", fakes.seams)
    assert main(["check", str(repo), "--ruleset", str(bad)]) == 2
    err = capsys.readouterr().err
    line = (
        bad.read_text(encoding="utf-8")
        .splitlines()
        .index("    check: {check: {name: convergence, args: {max_iters: many}}}")
    )
    assert (
        f"{bad}:{line + 1}:" in err and "max_iters: check 'convergence': expected an integer >= 1" in err
    ), err
    assert fakes.executed == [] and fakes.planned == []
