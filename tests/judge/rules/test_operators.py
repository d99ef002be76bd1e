"""Each operator on small trees built from dicts, through the same evaluator `tipc check` uses."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.judge.rules.conftest import with_fakes
from tipc.core.steps import Stage, Status
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.rules import parse_ruleset
from tipc.judge.rules.evaluate import make_env


def outcome(
    check_yaml: str,
    repo: Path,
    *,
    record: Any = None,
    checks: dict[str, Any] | None = None,
    templates: Path | None = None,
    records: dict[str, Any] | None = None,
) -> CheckOutcome:
    text = (
        "schema: tipc.ruleset/1\nname: t\nrules:\n"
        "  - id: r\n    source: s\n    severity: error\n    description: d\n    check:\n"
        + "".join(f"      {line}\n" for line in check_yaml.strip().splitlines())
    )
    rule = parse_ruleset(text, "t.yaml", checks=with_fakes(*(checks or {}))).rules[0]
    ctx = CheckContext(repo=repo, record=record, settings={}, records=records or {})
    env = make_env(ctx, checks or {}, templates)
    return env.evaluate(rule.check)


def tar_bytes(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name in names:
            data = b"x"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_bytes(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in names:
            zf.writestr(name, "x")
    return buf.getvalue()


# --- files --------------------------------------------------------------------------------------------


def test_file_exists(tree: Callable[..., Path]) -> None:
    repo = tree({"train.py": "", "docs": {"a.md": ""}})
    assert outcome("file_exists: {path: train.py}", repo).verdict is Verdict.PASS
    assert outcome("file_exists: {path: docs, kind: dir}", repo).verdict is Verdict.PASS
    wrong = outcome("file_exists: {path: docs, kind: file}", repo)
    assert wrong.verdict is Verdict.FAIL and "not a file" in wrong.summary
    missing = outcome("file_exists: {path: eval.py}", repo)
    assert missing.verdict is Verdict.FAIL and "eval.py is missing" in missing.summary


def test_glob_matches_counts(tree: Callable[..., Path]) -> None:
    repo = tree(
        {
            "test_tipc": {
                "configs": {"m1": {"train_infer_python.txt": ""}, "m2": {"train_infer_python.txt": ""}}
            },
            "tools": {"train.py": ""},
        }
    )
    pattern = "test_tipc/configs/*/train_infer_python.txt"
    assert outcome(f"glob_matches: {{pattern: {pattern}}}", repo).verdict is Verdict.PASS
    assert outcome(f"glob_matches: {{pattern: {pattern}, exactly: 2}}", repo).verdict is Verdict.PASS
    three = outcome(f"glob_matches: {{pattern: {pattern}, at_least: 3}}", repo)
    assert three.verdict is Verdict.FAIL and "expected at least 3" in three.summary
    assert outcome(f"glob_matches: {{pattern: {pattern}, at_most: 1}}", repo).verdict is Verdict.FAIL
    assert outcome('glob_matches: {pattern: "{,tools/}train.py"}', repo).verdict is Verdict.PASS
    assert outcome('glob_matches: {pattern: "*.py"}', repo).verdict is Verdict.FAIL  # * stays in one folder
    assert outcome('glob_matches: {pattern: "**/*.py"}', repo).verdict is Verdict.PASS
    assert outcome("glob_matches: {pattern: tools, dirs: true}", repo).verdict is Verdict.PASS


def test_glob_ignores_tipc_output_and_vcs(tree: Callable[..., Path]) -> None:
    repo = tree({"test_tipc": {"output": {"log_train.txt": ""}}, ".git": {"log_train.txt": ""}})
    assert outcome('glob_matches: {pattern: "**/log_train.txt"}', repo).verdict is Verdict.FAIL


def test_archive_contains_tar_and_zip(tree: Callable[..., Path]) -> None:
    repo = tree(
        {
            "lite_data.tar": tar_bytes(["./lite_data/", "./lite_data/a.png", "./lite_data/b.png"]),
            "other": {"lite_data.zip": zip_bytes(["lite_data/train/x.png"])},
            "broken": {"lite_data_bad.tar": b"not an archive"},
        }
    )
    good = outcome("archive_contains: {archive: lite_data.tar, member: lite_data/*, at_least: 2}", repo)
    assert good.verdict is Verdict.PASS and good.evidence[0].path == "lite_data.tar"
    assert (
        outcome("archive_contains: {archive: '**/*.zip', member: 'lite_data/**'}", repo).verdict
        is Verdict.PASS
    )
    few = outcome("archive_contains: {archive: lite_data.tar, member: lite_data/*, at_least: 5}", repo)
    assert few.verdict is Verdict.FAIL
    bad = outcome("archive_contains: {archive: broken/*.tar, member: '*'}", repo)
    assert bad.verdict is Verdict.FAIL and "cannot read archive" in bad.evidence[0].text
    none = outcome("archive_contains: {archive: nothing.tar, member: '*'}", repo)
    assert none.verdict is Verdict.FAIL and "no archive" in none.summary


def test_text_matches(tree: Callable[..., Path]) -> None:
    repo = tree({"README.md": "# Title\nData comes from the UCI digits.\n", "b.md": "nothing\n"})
    hit = outcome("text_matches: {files: '*.md', pattern: 'uci digits'}", repo)
    assert hit.verdict is Verdict.PASS and (hit.evidence[0].path, hit.evidence[0].line) == ("README.md", 2)
    assert (
        outcome("text_matches: {files: '*.md', pattern: 'uci digits', ignore_case: false}", repo).verdict
        is Verdict.FAIL
    )
    assert outcome("text_matches: {files: '*.md', pattern: 'i', at_least: 3}", repo).verdict is Verdict.PASS
    assert outcome("text_matches: {files: 'none/*.md', pattern: 'x'}", repo).verdict is Verdict.FAIL


def test_text_is_never_read_through_a_link_out_of_the_repo_nor_from_a_fifo(
    tree: Callable[..., Path], tmp_path: Path
) -> None:
    """Issue 22: a hostile repo's README.md -> /root/secret would put the secret's lines in the evidence; a
    FIFO would make the check wait forever."""
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("uci digits: SECRET_LINE\n")
    repo = tree({"inside.md": "data from uci digits\n"})
    (repo / "README.md").symlink_to(secret)
    (repo / "alias.md").symlink_to("inside.md")
    os.mkfifo(repo / "fifo.md")
    hit = outcome("text_matches: {files: '*.md', pattern: 'uci digits'}", repo)
    assert hit.verdict is Verdict.PASS
    assert sorted(e.path for e in hit.evidence if e.path) == ["alias.md", "inside.md"]
    assert all("SECRET" not in (e.excerpt or "") for e in hit.evidence)


# --- markdown -----------------------------------------------------------------------------------------

README = """\
# Model

## 4. 开始使用
### 4.3 模型预测

Run `python predict.py --img demo.png` or:

```bash
python tools/export_model.py --save-inference-dir=./inference
# a heading inside code must not count
```

Title in setext
---------------

![result](docs/result.png)
<img src="https://example.com/x.png">
"""


def test_markdown_has_section(tree: Callable[..., Path]) -> None:
    repo = tree({"README.md": README})
    hit = outcome("markdown_has_section: {files: README.md, heading: '模型预测'}", repo)
    assert hit.verdict is Verdict.PASS and hit.evidence[0].line == 4
    assert (
        outcome("markdown_has_section: {files: README.md, heading: 'setext'}", repo).verdict is Verdict.PASS
    )
    code = outcome("markdown_has_section: {files: README.md, heading: 'inside code'}", repo)
    assert code.verdict is Verdict.FAIL
    assert outcome("markdown_has_section: {files: NOPE.md, heading: x}", repo).verdict is Verdict.FAIL


def test_markdown_has_command(tree: Callable[..., Path]) -> None:
    repo = tree({"README.md": README})
    inline = outcome(r"markdown_has_command: {files: README.md, command: 'predict\.py'}", repo)
    assert inline.verdict is Verdict.PASS and inline.evidence[0].text == "inline code"
    fenced = outcome(r"markdown_has_command: {files: README.md, command: 'export_model\.py'}", repo)
    assert fenced.verdict is Verdict.PASS and fenced.evidence[0].line == 9
    prose = outcome("markdown_has_command: {files: README.md, command: 'Title in setext'}", repo)
    assert prose.verdict is Verdict.FAIL  # prose is not a command


def test_markdown_has_image(tree: Callable[..., Path]) -> None:
    repo = tree({"README.md": README, "docs": {"result.png": b"\x89PNG"}})
    assert outcome("markdown_has_image: {files: README.md, local_only: true}", repo).verdict is Verdict.PASS
    broken = tree({"README.md": "![x](missing.png)\n"})
    out = outcome("markdown_has_image: {files: README.md}", broken)
    assert out.verdict is Verdict.FAIL and out.evidence[0].excerpt == "missing.png"


# --- the run ------------------------------------------------------------------------------------------


def test_step_passed(tree: Callable[..., Path], record_of: Callable[..., Any]) -> None:
    repo = tree({"test_tipc": {"output": {"train.log": "line 1\nTraceback: boom\n"}}})
    steps = [
        ("train/norm", Stage.TRAIN, Status.PASSED),
        ("export", Stage.EXPORT, Status.PASSED),
        ("infer/cpu", Stage.INFER, Status.FAILED),
        ("infer/cpu2", Stage.INFER, Status.BLOCKED),
    ]
    record = record_of(repo, steps, logs={"infer/cpu": "test_tipc/output/train.log"})
    assert outcome("step_passed: {stage: train}", repo, record=record).verdict is Verdict.PASS
    infer = outcome("step_passed: {stage: infer}", repo, record=record)
    assert infer.verdict is Verdict.FAIL and "2 of 2" in infer.summary
    assert infer.evidence[0].excerpt is not None and "Traceback: boom" in infer.evidence[0].excerpt
    assert infer.evidence[1].path is None and infer.evidence[1].excerpt is None  # blocked: never ran, no log
    assert outcome("step_passed: {}", repo, record=record).verdict is Verdict.FAIL
    assert outcome("step_passed: {stage: serve}", repo, record=record).verdict is Verdict.NA
    assert outcome("step_passed: {step: '^export$'}", repo, record=record).verdict is Verdict.PASS
    assert outcome("step_passed: {trainer: norm_train}", repo, record=record).verdict is Verdict.PASS
    assert outcome("step_passed: {}", repo, record=None).verdict is Verdict.SKIP
    other_mode = outcome("step_passed: {mode: whole_infer}", repo, record=record)
    assert other_mode.verdict is Verdict.SKIP and "lite_train_lite_infer" in other_mode.summary


def test_step_passed_missing_result_and_empty_plan(
    tree: Callable[..., Path], record_of: Callable[..., Any]
) -> None:
    repo = tree({})
    record = record_of(repo, [("train", Stage.TRAIN, None)])
    assert outcome("step_passed: {}", repo, record=record).verdict is Verdict.FAIL
    empty = record_of(repo, [])
    out = outcome("step_passed: {}", repo, record=empty)
    assert out.verdict is Verdict.FAIL and "nothing was verified" in out.summary
    skipped = record_of(repo, [("t", Stage.TRAIN, Status.SKIPPED)])
    assert outcome("step_passed: {}", repo, record=skipped).verdict is Verdict.SKIP


def test_step_passed_leaves_not_applicable_steps_out(
    tree: Callable[..., Path], record_of: Callable[..., Any]
) -> None:
    import dataclasses

    repo = tree({})
    record = record_of(
        repo, [("train", Stage.TRAIN, Status.PASSED), ("train/multi", Stage.TRAIN, Status.SKIPPED)]
    )
    na = dataclasses.replace(record.results[1], reason="not applicable: needs 2 GPUs")
    record = dataclasses.replace(record, results=(record.results[0], na))
    out = outcome("step_passed: {stage: train}", repo, record=record)
    assert out.verdict is Verdict.PASS and out.summary == "1 step(s) passed (stage=train)"
    out = outcome("step_passed: {step: multi}", repo, record=record)
    assert out.verdict is Verdict.NA
    assert out.summary == "every step for step~multi is not applicable here (train/multi)"


def test_step_passed_judges_the_named_chains_record(
    tree: Callable[..., Path], record_of: Callable[..., Any]
) -> None:
    repo = tree({})
    main = record_of(repo, [("train", Stage.TRAIN, Status.PASSED)])
    serving = record_of(repo, [("serve", Stage.SERVE, Status.FAILED)])
    rule = "step_passed: {chain: serving}"
    out = outcome(rule, repo, record=main)
    assert (
        out.verdict is Verdict.SKIP and out.summary == "the serving chain was not run (no run record of it)"
    )
    out = outcome(rule, repo, record=main, records={"serving": serving})
    assert out.verdict is Verdict.FAIL and out.summary == "1 of 1 step(s) did not pass (chain=serving)"


def test_delegating_operators_pass_arguments_and_ctx(tree: Callable[..., Path]) -> None:
    repo = tree({})
    calls: list[tuple[str, Any, dict[str, Any]]] = []

    def fake(name: str, verdict: Verdict) -> Callable[..., CheckOutcome]:
        def fn(ctx: CheckContext, **args: Any) -> CheckOutcome:
            calls.append((name, ctx.repo, args))
            return CheckOutcome(verdict, f"{name} said so", (Evidence("e"),), {"curve": [[1, 2.0]]})

        return fn

    checks = {
        "log_fields": fake("log_fields", Verdict.PASS),
        "agreement": fake("agreement", Verdict.FAIL),
        "convergence": fake("convergence", Verdict.WARN),
    }
    assert outcome("log_has_fields: {fields: [loss, avg_ips]}", repo, checks=checks).verdict is Verdict.PASS
    assert outcome("agreement_within: {atol: 1.0e-5}", repo, checks=checks).verdict is Verdict.FAIL
    conv = outcome("check: {name: convergence, args: {max_iters: 100}}", repo, checks=checks)
    assert conv.verdict is Verdict.WARN and conv.data == {"curve": [[1, 2.0]]}
    assert calls == [
        ("log_fields", repo, {"fields": ("loss", "avg_ips")}),
        ("agreement", repo, {"atol": 1e-5}),
        ("convergence", repo, {"max_iters": 100}),
    ]


def test_missing_check_is_skip_never_pass(tree: Callable[..., Path]) -> None:
    out = outcome("check: {name: serving}", tree({}), checks={})
    assert out.verdict is Verdict.SKIP and out.summary == "serving check not available"
    assert outcome("log_has_fields: {}", tree({}), checks={}).verdict is Verdict.SKIP


# --- combinators --------------------------------------------------------------------------------------


def test_all_of_and_any_of(tree: Callable[..., Path]) -> None:
    repo = tree({"a": "", "b": ""})
    assert (
        outcome("all_of:\n  - file_exists: {path: a}\n  - file_exists: {path: b}", repo).verdict
        is Verdict.PASS
    )
    both = outcome("all_of:\n  - file_exists: {path: a}\n  - file_exists: {path: c}", repo)
    assert both.verdict is Verdict.FAIL and "c is missing" in both.summary
    assert (
        outcome("any_of:\n  - file_exists: {path: c}\n  - file_exists: {path: b}", repo).verdict
        is Verdict.PASS
    )
    assert (
        outcome("any_of:\n  - file_exists: {path: c}\n  - file_exists: {path: d}", repo).verdict
        is Verdict.FAIL
    )
    # a SKIP (missing check) inside all_of keeps the whole from passing
    skip = outcome("all_of:\n  - file_exists: {path: a}\n  - check: {name: serving}", repo)
    assert skip.verdict is Verdict.SKIP


def _constant(verdict: Verdict) -> Callable[..., CheckOutcome]:
    def fn(ctx: CheckContext, **args: Any) -> CheckOutcome:
        return CheckOutcome(verdict, verdict.value)

    return fn


@pytest.mark.parametrize(
    ("verdicts", "all_of", "any_of"),
    [
        ((Verdict.PASS, Verdict.NA), Verdict.PASS, Verdict.PASS),
        ((Verdict.NA, Verdict.NA), Verdict.NA, Verdict.NA),
        ((Verdict.WARN, Verdict.PASS), Verdict.WARN, Verdict.PASS),
        ((Verdict.FAIL, Verdict.SKIP), Verdict.FAIL, Verdict.SKIP),
        ((Verdict.FAIL, Verdict.FAIL), Verdict.FAIL, Verdict.FAIL),
    ],
)
def test_combinator_verdict_table(
    tree: Callable[..., Path], verdicts: tuple[Verdict, Verdict], all_of: Verdict, any_of: Verdict
) -> None:
    checks = {f"c{i}": _constant(v) for i, v in enumerate(verdicts)}
    body = "\n  - check: {name: c0}\n  - check: {name: c1}"
    assert outcome("all_of:" + body, tree({}), checks=checks).verdict is all_of
    assert outcome("any_of:" + body, tree({}), checks=checks).verdict is any_of


def test_file_names_match_ignoring_case(tree: Callable[..., Path]) -> None:
    # sldyns/DnCNN_paddle ships test_tipc/readme.md; the spec names test_tipc/README.md.
    repo = tree({"test_tipc": {"readme.md": "# TIPC\nLinux GPU/CPU 基础训练推理测试\n"}})
    found = outcome("file_exists: {path: test_tipc/README.md, kind: file}", repo)
    assert found.verdict is Verdict.PASS and found.evidence[0].path == "test_tipc/readme.md"
    assert outcome("glob_matches: {pattern: test_tipc/README.md}", repo).verdict is Verdict.PASS
    assert outcome("text_matches: {files: test_tipc/README.md, pattern: 训练}", repo).verdict is Verdict.PASS
    assert outcome("file_exists: {path: test_tipc/README.md, kind: dir}", repo).verdict is Verdict.FAIL
    assert outcome("file_exists: {path: test_tipc/CHANGES.md}", repo).verdict is Verdict.FAIL
