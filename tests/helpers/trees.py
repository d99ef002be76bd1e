"""File trees for tests: build one from a dict, fingerprint one, pack one into a tar."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from collections.abc import Mapping
from pathlib import Path

OUTPUT = "test_tipc/output"


def write_tree(root: Path, files: Mapping[str, str | bytes], *, newline: str | None = None) -> Path:
    """Write {relative path: text or bytes} under `root` (folders made as needed); returns `root`.
    Text is UTF-8; `newline=""` writes it without translating line endings."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline=newline)
    return root


def tree_hashes(
    root: Path, *, skip: str | Path = OUTPUT, dirs: bool = False, links: bool = False, pycache: bool = True
) -> dict[str, str]:
    """sha256 of every file under `root` but the `skip` subtree (tipc's output folder by default): equal
    before and after means the tree is untouched.

    dirs: folders too (`name/` -> "dir"), but those that only exist to hold `skip`; links: a link as
    "-> target" instead of what it points to; pycache: False leaves __pycache__ folders out.
    """
    skipped = Path(skip)
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.is_relative_to(skipped) or (not pycache and "__pycache__" in rel.parts):
            continue
        if links and path.is_symlink():
            out[rel.as_posix()] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif dirs and path.is_dir() and rel not in skipped.parents:
            out[rel.as_posix() + "/"] = "dir"
    return out


def tar_bytes(files: Mapping[str, bytes]) -> bytes:
    """An uncompressed tar holding {member name: content}."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
