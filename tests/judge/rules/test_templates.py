"""Canonical script hashes: normalisation, the template data file, the operator and the hash_script tool."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tipc.config.known_scripts import load_template, normalise, script_hash, templates_dir
from tipc.core.errors import RuleError
from tipc.judge.checks.base import Verdict
from tipc.judge.rules.hash_script import main as hash_main
from tipc.judge.rules.templates import check_scripts

SCRIPT = """#!/bin/bash
source test_tipc/common_func.sh   # helpers

FILENAME=$1
count=${#array[@]}
echo "#not a comment" '# nor this'
"""


def test_normalise_drops_comments_blank_lines_and_spaces_only() -> None:
    assert normalise(SCRIPT) == (
        "source test_tipc/common_func.sh\nFILENAME=$1\ncount=${#array[@]}\n"
        "echo \"#not a comment\" '# nor this'\n"
    )
    cosmetic = SCRIPT.replace("\n", "\r\n").replace("FILENAME", "  FILENAME") + "\n\n# trailing comment\n"
    assert script_hash(cosmetic) == script_hash(SCRIPT)
    assert script_hash(SCRIPT.replace("$1", "$2")) != script_hash(SCRIPT)


def _template(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "t.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_check_scripts_pass_fail_and_skip(tree: Callable[..., Path], tmp_path: Path) -> None:
    repo = tree({"test_tipc": {"test_train_inference_python.sh": SCRIPT, "common_func.sh": "f() { :; }\n"}})
    templates = tmp_path / "templates"
    raw = hashlib.sha256(b"f() { :; }\n").hexdigest()
    _template(
        templates,
        "schema: tipc.template-hashes/1\nname: t\nfiles:\n"
        f"  test_tipc/test_train_inference_python.sh:\n  - {{origin: demo, sha256: {script_hash(SCRIPT)}}}\n"
        f"  test_tipc/common_func.sh:\n  - {{origin: official, raw_sha256: {raw}}}\n",
    )
    ok = check_scripts(repo, "t", templates)
    assert ok.verdict is Verdict.PASS and "matches demo" in ok.evidence[1].text
    (repo / "test_tipc" / "common_func.sh").write_text("f() { echo changed; }\n", encoding="utf-8")
    changed = check_scripts(repo, "t", templates)
    assert changed.verdict is Verdict.FAIL and "differs" in changed.evidence[0].text
    (repo / "test_tipc" / "common_func.sh").unlink()
    assert check_scripts(repo, "t", templates).verdict is Verdict.FAIL
    _template(templates, "schema: tipc.template-hashes/1\nname: t\nfiles:\n  test_tipc/x.sh:\n")
    assert check_scripts(repo, "t", templates).verdict is Verdict.SKIP


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("schema: x\nname: t\nfiles: {}\n", 1),
        ("schema: tipc.template-hashes/1\nname: t\nfiles:\n  a.sh:\n  - {origin: o, sha256: XYZ}\n", 5),
        ("schema: tipc.template-hashes/1\nname: t\nfiles:\n  a.sh:\n  - {origin: o}\n", 5),
        (
            "schema: tipc.template-hashes/1\nname: t\nfiles:\n  ../a.sh:\n  - {origin: o, sha256: "
            + "a" * 64
            + "}\n",
            4,
        ),
        ("schema: tipc.template-hashes/1\nname: t\nextra: 1\nfiles: {}\n", 3),
    ],
)
def test_bad_template_files_are_located(tmp_path: Path, body: str, line: int) -> None:
    with pytest.raises(RuleError) as info:
        load_template(_template(tmp_path, body))
    assert info.value.line == line


def test_shipped_template_data_loads() -> None:
    template = load_template(templates_dir() / "train_infer_python.yaml")
    assert set(template.files) == {"test_tipc/test_train_inference_python.sh", "test_tipc/common_func.sh"}
    assert all(template.files.values())


def test_hash_script_prints_and_adds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "demo" / "test_tipc" / "test_train_inference_python.sh"
    script.parent.mkdir(parents=True)
    script.write_text(SCRIPT, encoding="utf-8")
    assert hash_main([str(script)]) == 0
    assert capsys.readouterr().out.split()[0] == script_hash(SCRIPT)
    templates = tmp_path / "templates"
    templates.mkdir()
    assert hash_main(["--add", "mine", "--templates-dir", str(templates), str(script)]) == 0
    assert hash_main(["--add", "mine", "--templates-dir", str(templates), str(script)]) == 0  # idempotent
    loaded = load_template(templates / "mine.yaml")
    (entry,) = loaded.files["test_tipc/test_train_inference_python.sh"]
    assert entry.sha256 == script_hash(SCRIPT)
    assert hash_main([str(tmp_path / "missing.sh")]) == 2


def test_hash_script_records_a_dialect(tmp_path: Path) -> None:
    script = tmp_path / "demo" / "test_tipc" / "test_train_inference_python.sh"
    script.parent.mkdir(parents=True)
    script.write_text(SCRIPT, encoding="utf-8")
    templates = tmp_path / "templates"
    templates.mkdir()
    args = ["--add", "mine", "--templates-dir", str(templates)]
    assert hash_main([*args, str(script)]) == 0
    assert hash_main([*args, "--dialect", "template", str(script)]) == 0  # adds the dialect to the entry
    (entry,) = load_template(templates / "mine.yaml").files["test_tipc/test_train_inference_python.sh"]
    assert entry.dialect == "template" and entry.sha256 == script_hash(SCRIPT)
    assert hash_main([*args, "--dialect", "nosuch", str(script)]) == 2


@pytest.mark.parametrize("dialect", ["template", "compact"])
def test_the_scripts_tipc_init_writes_are_canonical(tmp_path: Path, dialect: str) -> None:
    """A freshly scaffolded repo must not fail basic.tipc.scripts_unchanged (an error rule). When the
    test_tipc_template/ scripts change, record their new hashes:
    python -m tipc.judge.rules.hash_script --add train_infer_python --origin "tipc init (...)" FILE..."""
    from tipc.cli import main

    (tmp_path / "train.py").write_text("print('train')\n", encoding="utf-8")
    assert main(["init", str(tmp_path), "--model", "m", "--dialect", dialect]) == 0
    outcome = check_scripts(tmp_path, "train_infer_python")
    assert outcome.verdict is Verdict.PASS, [(e.path, e.text) for e in outcome.evidence]


def test_a_changed_script_points_at_its_first_changed_line(tmp_path: Path) -> None:
    canonical = "#!/bin/bash\n# comment\nset -e\n\necho one\necho two\necho three\n"
    (tmp_path / "tpl").mkdir()
    script = tmp_path / "tpl" / "test_tipc" / "run.sh"
    script.parent.mkdir()
    script.write_text(canonical, encoding="utf-8")
    assert hash_main(["--add", "t", "--templates-dir", str(tmp_path / "tpl"), str(script)]) == 0
    repo = tmp_path / "repo"
    (repo / "test_tipc").mkdir(parents=True)
    cases = {
        "#!/bin/bash\n# comment\nset -e\n\necho one\necho 2\necho three\n": (6, "echo 2", 1),
        "#!/bin/bash\nset -e\necho one\necho two\n": (4, "echo two", 1),  # last line dropped
        "#!/bin/bash\nset -e\necho one\necho two\necho three\necho four\n": (6, "echo four", 1),
    }
    for text, (line, excerpt, changed) in cases.items():
        (repo / "test_tipc" / "run.sh").write_text(text, encoding="utf-8")
        out = check_scripts(repo, "t", tmp_path / "tpl")
        assert out.verdict is Verdict.FAIL
        (e,) = out.evidence
        assert (e.path, e.line, e.excerpt, dict(e.numbers)["changed_lines"]) == (
            "test_tipc/run.sh",
            line,
            excerpt,
            changed,
        ), text
