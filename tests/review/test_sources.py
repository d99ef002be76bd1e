"""Submissions: what names one, its content hash, and unpacking that trusts nothing in an archive."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.review import submissions
from tipc.core.errors import UserError
from tipc.review.sources import Rejected, content_hash, materialise, parse_source


def _repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "train.py").write_text("print('train')\n")
    (root / "pkg" / "__init__.py").write_text("")
    return root


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o644
    return info


def test_parse_source_kinds_and_bad_input(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "sub")
    assert parse_source(str(repo)).kind == "folder"
    archive = submissions.as_tar_gz(repo, tmp_path / "sub.tar.gz")
    src = parse_source(str(archive))
    assert (src.kind, src.label) == ("archive", "sub")
    with pytest.raises(UserError, match="no such file or folder"):
        parse_source(str(tmp_path / "missing"))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(UserError, match="not a folder or a supported archive"):
        parse_source(str(tmp_path / "notes.txt"))
    with pytest.raises(UserError, match="only local submissions"):
        parse_source("https://github.com/x/y")


def test_git_ref_is_the_committed_tree_not_the_working_tree(tmp_path: Path) -> None:
    repo = submissions.git_repo(_repo(tmp_path / "g"))
    (repo / "train.py").write_text("print('edited, not committed')\n")
    src = parse_source(f"{repo}@v1")
    assert (src.kind, src.ref, src.label) == ("git", "v1", "g@v1")
    root = materialise(src, tmp_path / "area")
    assert (root / "train.py").read_text() == "print('train')\n"
    assert not (root / ".git").exists()
    with pytest.raises(UserError, match="not a commit, branch or tag"):
        parse_source(f"{repo}@no-such-ref")
    # the same commit hashes the same; a new commit differs
    before = content_hash(src)
    submissions.git_commit_all(repo, "edit")
    assert content_hash(parse_source(f"{repo}@HEAD")) != before
    assert content_hash(parse_source(f"{repo}@v1")) == before


def test_folder_hash_follows_content_and_ignores_outputs(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "sub")
    src = parse_source(str(repo))
    first = content_hash(src)
    (repo / "test_tipc" / "output").mkdir(parents=True)
    (repo / "test_tipc" / "output" / "log.txt").write_text("a run's output")
    (repo / "pkg" / "__pycache__").mkdir()
    assert content_hash(src) == first
    (repo / "train.py").write_text("print('changed')\n")
    assert content_hash(src) != first
    os.chmod(repo / "train.py", 0o755)
    third = content_hash(src)
    os.chmod(repo / "train.py", 0o644)
    assert content_hash(src) != third


def test_archives_unpack_to_their_single_top_folder(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "sub")
    os.chmod(repo / "train.py", 0o755)
    for archive in (
        submissions.as_tar_gz(repo, tmp_path / "s.tar.gz"),
        submissions.as_zip(repo, tmp_path / "s.zip"),
    ):
        root = materialise(parse_source(str(archive)), tmp_path / f"area-{archive.suffix}")
        assert root.name == "sub"
        assert (root / "pkg" / "__init__.py").is_file()
        assert (root / "train.py").read_text() == "print('train')\n"
    assert os.stat(tmp_path / "area-.gz" / "src" / "sub" / "train.py").st_mode & stat.S_IXUSR


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (_info("../escape.txt"), "escapes the work area"),
        (_info("/etc/evil"), "absolute path"),
        (_info("link", tarfile.SYMTYPE, "../../outside"), "points out of the work area"),
        (_info("abs-link", tarfile.SYMTYPE, "/etc/passwd"), "points out of the work area"),
        (_info("hard", tarfile.LNKTYPE, "/etc/passwd"), "names no earlier member"),
        (_info("dev", tarfile.CHRTYPE), "device, fifo"),
        (_info("fifo", tarfile.FIFOTYPE), "device, fifo"),
    ],
)
def test_hostile_tar_members_are_rejected(tmp_path: Path, member: tarfile.TarInfo, why: str) -> None:
    data = b"x" if member.type == tarfile.REGTYPE else None
    archive = _tar(tmp_path / "evil.tar.gz", [(_info("ok.txt"), b"fine"), (member, data)])
    area = tmp_path / "area"
    with pytest.raises(Rejected, match=why):
        materialise(parse_source(str(archive)), area)
    assert not (area / "src").exists()  # the partial area is removed
    assert not (tmp_path / "escape.txt").exists()


def test_a_member_written_through_an_earlier_link_is_rejected(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = _tar(
        tmp_path / "evil.tar.gz",
        [(_info("d", tarfile.SYMTYPE, "."), None), (_info("d/d/../../../outside/x"), b"x")],
    )
    with pytest.raises(Rejected):
        materialise(parse_source(str(archive)), tmp_path / "area")
    assert list(outside.iterdir()) == []


def test_size_and_count_limits(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "big.tar.gz", [(_info("big.bin"), b"\0" * 5000)])
    with pytest.raises(Rejected, match="larger than 4096 bytes"):
        materialise(parse_source(str(archive)), tmp_path / "a1", max_member=4096)
    many = _tar(tmp_path / "many.tar.gz", [(_info(f"f{i}"), b"x") for i in range(20)])
    with pytest.raises(Rejected, match="more than 10 members"):
        materialise(parse_source(str(many)), tmp_path / "a2", max_members=10)
    with pytest.raises(Rejected, match="unpacked submission is larger"):
        materialise(parse_source(str(many)), tmp_path / "a3", max_total=10)


def test_hostile_zip_members_are_rejected(tmp_path: Path) -> None:
    escape = tmp_path / "escape.zip"
    with zipfile.ZipFile(escape, "w") as zf:
        zf.writestr("../../escape.txt", "x")
    with pytest.raises(Rejected, match="escapes the work area"):
        materialise(parse_source(str(escape)), tmp_path / "a1")
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as zf:
        info = zipfile.ZipInfo("link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(Rejected, match="points out of the work area"):
        materialise(parse_source(str(link)), tmp_path / "a2")
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros", b"\0" * 100_000)
    with pytest.raises(Rejected, match="larger than"):
        materialise(parse_source(str(bomb)), tmp_path / "a3", max_member=50_000)


def test_folder_links_out_are_rejected(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "sub")
    (repo / "secret").symlink_to("/etc/passwd")
    with pytest.raises(Rejected, match="points out of the work area"):
        materialise(parse_source(str(repo)), tmp_path / "area")
    (repo / "secret").unlink()
    (repo / "alias.py").symlink_to("train.py")  # a link inside the submission is kept as a link
    root = materialise(parse_source(str(repo)), tmp_path / "area")
    assert os.readlink(root / "alias.py") == "train.py"
