"""A git submission is read from its object store: nothing its config, attributes or hooks name runs, and a
repository that leads to another one (a `.git` file, a link, commondir, alternates) is refused (issue 22)."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from tipc.core.errors import UserError
from tipc.review.sources import Rejected, content_hash, materialise, parse_source

_IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false")


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *_IDENTITY, *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _submission(folder: Path) -> Path:
    """A small repo: a script, an executable, a link inside it, committed and tagged v1."""
    (folder / "pkg").mkdir(parents=True)
    (folder / "train.py").write_text("print('train')\n")
    (folder / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(folder / "run.sh", 0o755)
    (folder / "pkg" / "data.txt").write_text("data\n")
    os.symlink("pkg/data.txt", folder / "data_link")
    _git(folder.parent, "init", "-q", folder.name)
    _git(folder, "add", "-A")
    _git(folder, "commit", "-qm", "submission")
    _git(folder, "tag", "v1")
    return folder


def _arm(repo: Path, markers: Path) -> list[Path]:
    """Every command git can be configured to run, each touching its own marker file; returns the markers.

    The attributes put every file through the filter and the diff driver; the hooks cover what a checkout,
    commit or gc would start."""
    markers.mkdir(exist_ok=True)

    def touch(name: str, then: str = "") -> str:
        return f"sh -c {shlex.quote(f'touch {markers / name}; {then}'.rstrip('; '))}"

    config = {
        "filter.pwn.smudge": touch("smudge", "sed s/train/SMUDGED/"),
        "filter.pwn.clean": touch("clean", "cat"),
        "filter.pwn.process": touch("process"),
        "filter.pwn.required": "true",
        "diff.pwn.textconv": touch("textconv", "cat"),
        "diff.external": touch("external_diff"),
        "core.fsmonitor": touch("fsmonitor"),
        "core.pager": touch("pager", "cat"),
        "core.sshCommand": touch("ssh"),
        "core.askPass": touch("askpass"),
        "core.editor": touch("editor"),
        "gpg.program": touch("gpg"),
        "log.showSignature": "true",
        "core.alternateRefsCommand": touch("alternate_refs"),
    }
    (repo / ".gitattributes").write_text("* filter=pwn diff=pwn export-subst\n")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "attributes")
    for key, value in config.items():
        _git(repo, "config", key, value)
    hooks = repo / ".git" / "hooks"
    for hook in ("post-checkout", "pre-commit", "post-commit", "pre-auto-gc", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {markers / hook}\n")
        os.chmod(hooks / hook, 0o755)
    return [markers / n for n in [*config, "post-checkout", "pre-commit", "post-commit", "pre-auto-gc"]]


def test_nothing_the_submissions_git_config_names_runs_and_the_tree_is_read_as_committed(
    tmp_path: Path,
) -> None:
    repo = _submission(tmp_path / "sub")
    markers = tmp_path / "markers"
    _arm(repo, markers)
    source = parse_source(f"{repo}@HEAD")
    digest = content_hash(source)
    root = materialise(source, tmp_path / "area")
    assert sorted(p.name for p in markers.iterdir()) == [], "a command of the submission's git config ran"
    # the blobs as committed: no smudge, no export-subst; the link and the executable bit kept
    assert (root / "train.py").read_text() == "print('train')\n"
    assert (root / ".gitattributes").read_text() == "* filter=pwn diff=pwn export-subst\n"
    assert os.readlink(root / "data_link") == "pkg/data.txt"
    assert (root / "data_link").read_text() == "data\n"
    assert os.stat(root / "run.sh").st_mode & stat.S_IXUSR
    assert not os.stat(root / "train.py").st_mode & stat.S_IXUSR
    assert not (root / ".git").exists()
    assert digest == content_hash(parse_source(f"{repo}@HEAD"))


def test_a_git_file_leading_to_another_repository_is_refused(tmp_path: Path) -> None:
    other = _submission(tmp_path / "other")
    markers = tmp_path / "markers"
    _arm(other, markers)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".git").write_text(f"gitdir: {other / '.git'}\n")
    with pytest.raises(UserError, match="outside the submission"):
        parse_source(f"{sub}@HEAD")
    assert list(markers.iterdir()) == []


def test_a_git_link_leading_to_another_repository_is_refused(tmp_path: Path) -> None:
    other = _submission(tmp_path / "other")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".git").symlink_to(other / ".git")
    with pytest.raises(UserError, match="outside the submission"):
        parse_source(f"{sub}@v1")


def test_alternates_and_commondir_leading_out_are_refused(tmp_path: Path) -> None:
    other = _submission(tmp_path / "other")
    sub = _submission(tmp_path / "sub")
    alternates = sub / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(f"{other / '.git' / 'objects'}\n")
    with pytest.raises(UserError, match="borrows objects"):
        parse_source(f"{sub}@v1")
    alternates.unlink()
    source = parse_source(f"{sub}@v1")
    (sub / ".git" / "commondir").write_text(str(other / ".git"))
    with pytest.raises(Rejected, match="linked worktree"):
        materialise(source, tmp_path / "area")  # checked again when the tree is read


def test_a_folder_without_git_is_not_read_as_the_repository_above_it(tmp_path: Path) -> None:
    outer = _submission(tmp_path / "outer")
    inner = outer / "pkg"
    with pytest.raises(UserError, match="not a git repository"):
        parse_source(f"{inner}@v1")
    with pytest.raises(UserError, match="not a commit, branch or tag name"):
        parse_source(f"{outer}@--output=x")


def _commit_tree(repo: Path, listing: str, ref: str) -> None:
    tree = _git(repo, "mktree", stdin=listing)
    commit = _git(repo, "commit-tree", tree, "-m", "crafted")
    _git(repo, "update-ref", f"refs/heads/{ref}", commit)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (".git", "lies in a .git folder"),
        (".GIT", "lies in a .git folder"),
        ("..", "escapes the work area"),
    ],
)
def test_crafted_tree_paths_are_rejected(tmp_path: Path, entry: str, why: str) -> None:
    repo = _submission(tmp_path / "sub")
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin="[core]\n\tfsmonitor = evil\n")
    inner = _git(repo, "mktree", stdin=f"100644 blob {blob}\tconfig\n")
    kind = "040000 tree" if entry != ".." else "100644 blob"
    _commit_tree(repo, f"{kind} {inner if entry != '..' else blob}\t{entry}\n", "crafted")
    with pytest.raises(Rejected, match=why):
        materialise(parse_source(f"{repo}@crafted"), tmp_path / "area")
    assert not (tmp_path / "area" / "src").exists()


def test_a_committed_link_out_of_the_work_area_is_rejected(tmp_path: Path) -> None:
    repo = _submission(tmp_path / "sub")
    os.symlink("../../../../etc", repo / "escape")
    _git(repo, "add", "escape")
    _git(repo, "commit", "-qm", "link out")
    with pytest.raises(Rejected, match="points out of the work area"):
        materialise(parse_source(f"{repo}@HEAD"), tmp_path / "area")


def test_a_blob_over_the_member_limit_is_refused_from_its_size(tmp_path: Path) -> None:
    repo = _submission(tmp_path / "sub")
    (repo / "weights.bin").write_bytes(bytes(4096))
    _git(repo, "add", "weights.bin")
    _git(repo, "commit", "-qm", "weights")
    with pytest.raises(Rejected, match=r"weights\.bin.*larger than 1024 bytes"):
        materialise(parse_source(f"{repo}@HEAD"), tmp_path / "area", max_member=1024)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the submission another owner")
def test_a_submission_owned_by_another_user_is_read(tmp_path: Path) -> None:
    """git refuses a repository of another owner unless told it is safe; read under the guards it is."""
    repo = _submission(tmp_path / "sub")
    for folder, dirs, files in os.walk(repo):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(folder, name), 12345, 12345)
    os.lchown(repo, 12345, 12345)
    root = materialise(parse_source(f"{repo}@v1"), tmp_path / "area")
    assert (root / "train.py").read_text() == "print('train')\n"
