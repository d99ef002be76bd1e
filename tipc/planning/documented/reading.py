"""Reading the docs: which docs, in order (`doc_paths`: README.md, `test_tipc/docs/*.md`,
`deploy/**/README*.md`, through a bounded walk of the repo, `repo_glob`), a doc's text read bounded and
inside the repo only (`read_doc`), its fenced code blocks (`code_blocks`) and their logical lines
(`logical_lines`: prompts removed, continuation lines joined, output left out).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tipc.core.errors import ConfigError
from tipc.planning.docs_vocab import Vocabulary

DOC_LIMIT_BYTES = 2 * 1024 * 1024
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")


# ------------------------------------------------------------------------------------------ reading docs


@dataclass(frozen=True)
class _Block:
    line: int  # line of the opening fence
    info: str  # the info string's first word, lower case ("" none)
    lines: tuple[tuple[int, str], ...]


def read_doc(path: Path, repo: Path) -> str | None:
    from tipc.config.parse import read_bytes_bounded

    try:
        data = read_bytes_bounded(path, DOC_LIMIT_BYTES, "a doc", within=repo)
    except ConfigError:
        return None
    return data.decode("utf-8", errors="replace")


def doc_paths(repo: Path, vocab: Vocabulary) -> list[str]:
    """The docs read, repo-relative, in order (each once)."""
    found: list[str] = []
    for source in vocab.docs:
        if source.first_of:
            for name in source.first_of:
                match = repo_glob(repo, name)
                if match:
                    found.append(match[0])
                    break
        elif source.glob:
            found.extend(repo_glob(repo, source.glob))
    return list(dict.fromkeys(found))


_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv"})
MAX_WALKED = 50_000


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.IGNORECASE)


def repo_glob(repo: Path, pattern: str) -> list[str]:
    """Repo-relative regular files matching `pattern` (case ignored; `**/` spans folders), sorted; tipc's
    output, VCS folders and links are not walked."""
    regex = _glob_regex(pattern)
    top = pattern.split("/", 1)[0]
    start = repo
    if "/" in pattern and not any(ch in top for ch in "*?["):
        matches = [p for p in (repo.iterdir() if repo.is_dir() else []) if p.name.lower() == top.lower()]
        if not matches:
            return []
        start = matches[0]
    found: list[str] = []
    walked = 0
    for root, dirs, files in os.walk(start):
        rel_root = Path(root).relative_to(repo).as_posix()
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _SKIP_DIRS
            and not os.path.islink(os.path.join(root, d))
            and f"{rel_root}/{d}".lstrip("./") != "test_tipc/output"
        )
        for name in sorted(files):
            walked += 1
            rel = name if rel_root == "." else f"{rel_root}/{name}"
            full = os.path.join(root, name)
            if regex.fullmatch(rel) and os.path.isfile(full) and not os.path.islink(full):
                found.append(rel)
        if walked > MAX_WALKED or "/" not in pattern:
            break
    return sorted(found)


def code_blocks(text: str) -> list[_Block]:
    """Fenced code blocks (``` or ~~~, indented in lists too), with their first line numbers."""
    blocks: list[_Block] = []
    fence: str | None = None
    indent = 0
    start, info = 0, ""
    body: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(raw)
        if fence is None:
            if match:
                fence, indent, start, info = (
                    match.group(2),
                    len(match.group(1)),
                    number,
                    match.group(3).lower(),
                )
                body = []
            continue
        if (
            match
            and match.group(2)[0] == fence[0]
            and len(match.group(2)) >= len(fence)
            and not match.group(3)
        ):
            blocks.append(_Block(start, info, tuple(body)))
            fence = None
            continue
        line = raw[indent:] if raw[:indent].strip() == "" else raw.lstrip()
        body.append((number, line))
    return blocks


def logical_lines(block: _Block, vocab: Vocabulary) -> list[tuple[int, str, bool]]:
    """(line, text, prompted) of each command candidate: prompts removed, `\\` continuations joined,
    comment-only lines dropped."""
    out: list[tuple[int, str, bool]] = []
    pending: tuple[int, str, bool] | None = None
    for number, raw in block.lines:
        line = raw.rstrip()
        if pending is not None:
            start, text, prompted = pending
            joined = text + " " + line.strip()
            if joined.endswith("\\"):
                pending = (start, joined[:-1].rstrip(), prompted)
            else:
                out.append((start, joined, prompted))
                pending = None
            continue
        stripped = line.strip()
        prompted = False
        for prompt in vocab.prompts:
            m = prompt.match(stripped)
            if m:
                stripped, prompted = stripped[m.end() :], True
                break
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending = (number, stripped[:-1].rstrip(), prompted)
        else:
            out.append((number, stripped, prompted))
    if pending is not None:
        out.append(pending)
    return out
