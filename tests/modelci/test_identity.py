"""A repo's identity for the history: the same repo checked out into two folders is one repo; the remote's
credentials never reach the database; a repo that is a folder of a larger one says which folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tipc.modelci.identity import normalise_remote, repo_identities, repo_identity


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _repo(path: Path) -> Path:
    (path / "tutorials" / "step6").mkdir(parents=True)
    (path / "tutorials" / "step6" / "train.py").write_text("print(1)\n")
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "first")
    return path


def test_two_checkouts_of_one_repo_are_one_repo(tmp_path: Path) -> None:
    origin = _repo(tmp_path / "origin")
    root = _git(origin, "rev-list", "--max-parents=0", "HEAD")
    assert repo_identity(origin) == f"root:{root}"
    a, b = tmp_path / "ci-1234", tmp_path / "ci-5678"
    for clone in (a, b):
        subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    # every full clone, with or without a remote, is stored under its root commit
    assert repo_identity(a) == repo_identity(b) == repo_identity(origin)
    assert repo_identities(a) == [f"root:{root}", f"git:{origin}"]
    assert repo_identity(a / "tutorials" / "step6") == f"root:{root}#tutorials/step6"
    # a shallow CI clone has no true root: its remote names it, and a full clone finds it by that too
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin}", str(shallow)], check=True)
    assert repo_identities(shallow) == [f"git:file://{origin}"]


def test_no_git_is_the_folder_and_credentials_are_dropped(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert repo_identity(plain) == f"path:{plain.resolve()}"
    assert normalise_remote("https://user:token@github.com/PaddlePaddle/models.git") == (
        "https://github.com/PaddlePaddle/models"
    )
    assert normalise_remote("git@github.com:PaddlePaddle/models.git/") == "git@github.com:PaddlePaddle/models"


def test_the_repos_git_config_runs_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "hostile")
    marker = tmp_path / "ran"
    _git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    _git(repo, "config", "core.pager", f"touch {marker}; cat")
    assert repo_identity(repo).startswith("root:")
    assert not marker.exists()
