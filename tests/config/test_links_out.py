"""A repo's config (or a script tipc reads for its flags) that is a link leading out of the repo, or lies
under a linked folder leading out, is refused with a located exit-2 error and never read: no finding, plan or
message can print a line of the file it leads to (issue 22: `tipc lint` printed such a file's lines)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.config.fixtures import OCR_DET, make_repo
from tests.conftest import tipc
from tipc.config.discover import find_configs
from tipc.config.parse import OutsideRepo, read_text
from tipc.config.script_flags import read_flags
from tipc.planning.lint import lint_paths
from tipc.planning.planner import plan

CONFIG = "test_tipc/configs/demo/train_infer_python.txt"
SENTINEL = "SECRET_LINE_7f3a"


def _secret(folder: Path) -> Path:
    """A file outside the repo, shaped like a config so that a reader would echo its lines."""
    folder.mkdir(parents=True, exist_ok=True)
    secret = folder / "secret.txt"
    secret.write_text(OCR_DET.replace("ocr_det", SENTINEL, 1) + f"\n{SENTINEL}:{SENTINEL}\n")
    return secret


def _linked_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {CONFIG: OCR_DET})
    config = repo / CONFIG
    config.unlink()
    config.symlink_to(_secret(tmp_path / "outside"))
    return repo


def test_a_config_linked_out_of_the_repo_is_refused_by_every_reader(tmp_path: Path) -> None:
    repo = _linked_repo(tmp_path)
    config = repo / CONFIG
    for read in (
        lambda: read_text(config),
        lambda: lint_paths([repo]),
        lambda: lint_paths([config]),
        lambda: plan(config, "lite_train_lite_infer"),
        lambda: find_configs(repo),
    ):
        with pytest.raises(OutsideRepo) as refused:
            read()
        assert refused.value.exit_code == 2
        assert refused.value.render().startswith(f"{config}: is a link leading outside the repo")
        assert SENTINEL not in refused.value.render()


def test_a_config_under_a_linked_folder_leading_out_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {CONFIG: OCR_DET})
    outside = tmp_path / "outside" / "demo"
    outside.mkdir(parents=True)
    os.replace(repo / CONFIG, outside / "train_infer_python.txt")
    (repo / CONFIG).parent.rmdir()
    (repo / CONFIG).parent.symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutsideRepo):
        lint_paths([repo / CONFIG])
    # the whole test_tipc folder linked elsewhere: the same
    repo2 = make_repo(tmp_path / "repo2", {"README.md": "x\n"})
    (repo2 / "test_tipc").symlink_to(repo / "test_tipc", target_is_directory=True)
    with pytest.raises(OutsideRepo):
        plan(repo2 / CONFIG, "lite_train_lite_infer")


def test_links_inside_the_repo_are_read(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"test_tipc/configs/shared/base.txt": OCR_DET})
    config = repo / CONFIG
    config.parent.mkdir(parents=True)
    config.symlink_to(Path("..") / "shared" / "base.txt")
    assert read_text(config) == OCR_DET
    linked_repo = tmp_path / "alias"  # the repo itself reached through a link
    linked_repo.symlink_to(repo, target_is_directory=True)
    assert read_text(linked_repo / CONFIG) == OCR_DET


def test_a_script_linked_out_or_to_a_device_declares_no_flags(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "x\n"})
    secret = tmp_path / "outside" / "secret.py"
    secret.parent.mkdir()
    secret.write_text(f"import argparse\np = argparse.ArgumentParser()\np.add_argument('--{SENTINEL}')\n")
    (repo / "train.py").symlink_to(secret)
    flags = read_flags(repo / "train.py", repo)
    assert flags.flags == () and "leading outside the repo" in str(flags.error)
    (repo / "zero.py").symlink_to("/dev/zero")  # read whole, it would never end
    assert "leading outside the repo" in str(read_flags(repo / "zero.py", repo).error)
    os.mkfifo(repo / "eval.py")  # opened plainly, it would block until a writer came
    flags = read_flags(repo / "eval.py", repo)
    assert flags.flags == () and "FIFO" in str(flags.error)


def test_tipc_lint_and_plan_refuse_with_exit_2_and_print_nothing_of_the_file(tmp_path: Path) -> None:
    repo = _linked_repo(tmp_path)
    for args in (("lint", str(repo)), ("lint", "--format", "json", str(repo)), ("plan", str(repo / CONFIG))):
        done = tipc(*args, timeout=120)
        assert done.returncode == 2, (args, done.stdout[-500:], done.stderr[-500:])
        assert f"{repo / CONFIG}: is a link leading outside the repo" in done.stderr
        assert SENTINEL not in done.stdout + done.stderr
        assert "Traceback" not in done.stderr
