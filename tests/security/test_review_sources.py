"""Issue 22, item 5, and what holds today of `tipc review`'s unpacking: git submissions are read without
running their filters, hooks or another repo's; archive members that escape the work area are rejected;
zip bombs are bounded."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import copy_demo
from tests.security.conftest import Reviewer, contained, ended

pytestmark = pytest.mark.integration


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _git_submission(folder: Path, marker: Path) -> Path:
    """The demo as a git repo whose local config defines a smudge filter every file uses."""
    repo = copy_demo(folder)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "attacker@example.invalid")
    _git(repo, "config", "user.name", "attacker")
    (repo / ".gitattributes").write_text("* filter=pwn\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "submission")
    _git(repo, "config", "filter.pwn.smudge", f"sh -c 'touch {marker}; cat'")
    _git(repo, "config", "filter.pwn.clean", "cat")
    return repo


def _review(reviewer: Reviewer, *subs: str, budget: str = "30") -> subprocess.CompletedProcess[str]:
    out = reviewer.base / "review"
    return reviewer.tipc(
        "review",
        *subs,
        "--out",
        str(out),
        "--format",
        "json",
        "--no-color",
        "--jobs",
        "1",
        "--device",
        "cpu",
        "--budget",
        budget,
    )


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_a_git_submissions_smudge_filter_does_not_run(reviewer: Reviewer) -> None:
    marker = reviewer.host / "smudged.txt"
    repo = _git_submission(reviewer.base / "sub", marker)
    reviewer.give(repo)
    done = _review(reviewer, f"{repo}@HEAD")
    ended(done, 0, 1)  # reviewed: the tree was read from the object store, not refused
    contained(not marker.exists(), f"the submission's smudge filter ran on the host ({marker})")


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_a_git_file_pointing_at_another_repo_is_not_followed(reviewer: Reviewer) -> None:
    marker = reviewer.host / "other_smudged.txt"
    other = _git_submission(reviewer.base / "other", marker)
    sub = copy_demo(reviewer.base / "sub")
    (sub / ".git").write_text(f"gitdir: {other / '.git'}\n")
    reviewer.give(other, sub)
    done = _review(reviewer, f"{sub}@HEAD")
    ended(done, 0, 1, 2)
    contained(not marker.exists(), f"git followed the .git file to {other} and ran its filter on the host")
    contained(
        done.returncode == 2 or "outside" in done.stdout + done.stderr,
        "the .git file leading out was not refused",
    )


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_an_archive_member_escaping_the_work_area_is_rejected(reviewer: Reviewer) -> None:
    """Holds today: `../` members are rejected with the member named, nothing lands outside."""
    escaped = reviewer.base / "escaped.txt"
    archive = reviewer.base / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"escaped\n"
        info = tarfile.TarInfo("lenet_digits/../../../escaped.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    done = _review(reviewer, str(archive))
    ended(done, 0, 1, 2)
    assert not escaped.exists() and not (reviewer.base / "review" / "escaped.txt").exists()
    assert "escaped.txt" in done.stdout + done.stderr, done.stdout[-2000:]


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_a_zip_bomb_is_bounded(reviewer: Reviewer) -> None:
    """Holds today: a member over the per-file limit (1 GiB of zeros, ~1 MiB compressed) is rejected while it
    is being copied, and nothing of it is left in the work area."""
    archive = reviewer.base / "bomb.zip"
    block = bytes(1 << 20)
    with (
        zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        zf.open("lenet_digits/weights.bin", "w", force_zip64=True) as member,
    ):
        for _ in range(1025):
            member.write(block)
    assert archive.stat().st_size < 16 << 20
    done = _review(reviewer, str(archive))
    ended(done, 0, 1, 2)
    assert "weights.bin" in done.stdout + done.stderr, done.stdout[-2000:]
    left = sum(
        p.stat().st_size for p in (reviewer.base / "review").rglob("*") if p.is_file() and not p.is_symlink()
    )
    assert left < 64 << 20, f"{left} bytes left in the review folder"
    json.loads(done.stdout) if done.stdout.strip() else None
