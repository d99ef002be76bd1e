"""The repo's own code as causes see it: the traceback frame nearest the failure that lies inside the
repo, and a search of the repo's Python files for a pattern (files of the traceback first, then those the
entry script reaches, then the rest, bounded by MAX_CODE_FILES / MAX_CODE_BYTES; reads are cached).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from tipc.judge.causes.model import MAX_CODE_BYTES, MAX_CODE_FILES, _Facts

_FRAME_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _repo_frame(facts: _Facts) -> str | None:
    """The last traceback frame inside the repo (`path:line`, repo-relative), nearest the failure."""
    repo = facts.context.repo
    for line in reversed(facts.lines):
        m = _FRAME_LINE.match(line)
        if not m:
            continue
        rel = _repo_relative(m.group("file"), repo, facts.cwd)
        if rel is not None:
            return f"{rel}:{m.group('line')}"
    return None


def _repo_relative(name: str, repo: Path | None, cwd: Path | None) -> str | None:
    if repo is None or name.startswith("<"):
        return None
    path = Path(name)
    if not path.is_absolute():
        path = (cwd or repo) / path
    try:
        rel = Path(os.path.normpath(path)).relative_to(repo)
    except ValueError:
        return None
    if rel.parts and rel.parts[0] in (".venv", "venv", "site-packages"):
        return None
    return rel.as_posix()


def _search_code(facts: _Facts, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """The first line of the repo's code matching `pattern`: files of the traceback first (nearest the
    failure first), then the files the entry script reaches, then the rest of the repo's Python files."""
    ctx = facts.context
    repo = ctx.repo
    if repo is None:
        return None
    ordered: list[str] = []
    for line in reversed(facts.lines):
        m = _FRAME_LINE.match(line)
        if m:
            rel = _repo_relative(m.group("file"), repo, facts.cwd)
            if rel is not None and rel not in ordered:
                ordered.append(rel)
    ordered += [f for f in ctx.code_files if f not in ordered]
    for rel in ordered:
        hit = _grep(repo / rel, pattern)
        if hit is not None:
            return f"{rel}:{hit[0]}", hit[1]
    if ctx.code_files:
        return None  # the entry script's own code was searched: the rest of the repo is not its code
    for rel in _repo_python_files(str(repo)):
        if rel in ordered:
            continue
        hit = _grep(repo / rel, pattern)
        if hit is not None:
            return f"{rel}:{hit[0]}", hit[1]
    return None


def _grep(path: Path, pattern: re.Pattern[str]) -> tuple[int, str] | None:
    text = _read_code(str(path))
    if not text:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        if pattern.search(line):
            return number, stripped[:200]
    return None


@functools.lru_cache(maxsize=4096)
def _read_code(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_CODE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


@functools.lru_cache(maxsize=16)
def _repo_python_files(repo: str) -> tuple[str, ...]:
    out: list[str] = []
    skip = {".git", "__pycache__", "node_modules", ".venv", "venv", "output", "site-packages"}
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                out.append(os.path.relpath(os.path.join(root, name), repo).replace(os.sep, "/"))
                if len(out) >= MAX_CODE_FILES:
                    return tuple(out)
    return tuple(out)
