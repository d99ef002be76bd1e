"""Repo file listing and glob matching for rule operators.

The repo is walked once per evaluation (pruning VCS folders, caches and tipc's own output), and every glob
is matched against that list of repo-relative POSIX paths. Globs: `*` and `?` stay inside one path segment,
`**/` spans any number of folders, `[abc]` and `{a,b}` work as in a shell. Matching ignores case by default
(`readme.md` is the README.md a rule asks for).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

PRUNED_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox", ".mypy_cache"}
)
# tipc's own outputs must not satisfy artefact rules (a log tipc wrote is not a log the author shipped).
PRUNED_PATHS = ("test_tipc/output",)
MAX_FILES = 200_000


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob to an anchored regex over repo-relative POSIX paths."""
    i, n = 0, len(pattern)
    out: list[str] = []
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if j == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
        elif c == "{":
            j = pattern.find("}", i)
            if j == -1:
                out.append(re.escape(c))
                i += 1
            else:
                alternatives = pattern[i + 1 : j].split(",")
                out.append("(?:" + "|".join(glob_regex(a).pattern[4:-3] for a in alternatives) + ")")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("(?s:" + "".join(out) + r")\Z")


@lru_cache(maxsize=512)
def glob_regex_ci(pattern: str) -> re.Pattern[str]:
    """`glob_regex`, ignoring case: the spec's file names (README.md, lite_data, predict.py) name a file, and
    repos spell them `readme.md` or `Readme.md`; on a case-insensitive checkout both are the same file."""
    return re.compile(glob_regex(pattern).pattern, re.IGNORECASE)


class RepoFiles:
    """The repo's files (and folders), listed lazily once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[str] | None = None
        self._dirs: list[str] | None = None

    def _walk(self) -> None:
        files: list[str] = []
        dirs: list[str] = []
        root = str(self.root)
        for current, subdirs, names in os.walk(root):
            rel = os.path.relpath(current, root).replace(os.sep, "/")
            rel = "" if rel == "." else rel + "/"
            subdirs[:] = sorted(d for d in subdirs if d not in PRUNED_DIRS and (rel + d) not in PRUNED_PATHS)
            dirs.extend(rel + d for d in subdirs)
            files.extend(rel + name for name in sorted(names))
            if len(files) > MAX_FILES:
                break
        self._files, self._dirs = files, dirs

    @property
    def files(self) -> list[str]:
        if self._files is None:
            self._walk()
        assert self._files is not None
        return self._files

    @property
    def dirs(self) -> list[str]:
        if self._dirs is None:
            self._walk()
        assert self._dirs is not None
        return self._dirs

    def glob(
        self, patterns: tuple[str, ...], *, include_dirs: bool = False, ignore_case: bool = True
    ) -> list[str]:
        """Sorted unique repo-relative paths matching any pattern (ignoring case unless told otherwise)."""
        regexes = [glob_regex_ci(p) if ignore_case else glob_regex(p) for p in patterns]
        pool = self.files + self.dirs if include_dirs else self.files
        return sorted({p for p in pool if any(r.match(p) for r in regexes)})
