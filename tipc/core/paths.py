"""Where a file the chain saw really is once tipc has ended: the paths tipc prints and reports.

A sandboxed run sees the repo through a view (an overlay on the repo's own path, or a copy): its output folder
is bound from `<run folder>/<role>` (logs, serving, report), and what it writes elsewhere in the repo's tree
lands in `<run folder>/upper`. The run record keeps the paths as the chain saw them (`test_tipc/output/...`);
every path shown to a person goes through a `PathMap`, which gives where the file is on disk, relative to the
repo (or absolute outside it). Pure: nothing here touches the file system except `PathMap.text`, which
rewrites only paths that exist in the view.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

RUNS_DIR = "test_tipc/output/tipc"  # tipc's own folder in the repo: paths there are already real
# "the repo ships PATH", "PATH (committed DATE)": a file as the repo has it, where it has it (a committed
# file under the output folder the run's own is bound over is shown there, not in the run folder)
_SHIPS = "ships "
_COMMITTED = " (committed"
# A path-looking token in free text: absolute, or relative with at least one folder.
_TOKEN = re.compile(r"""(?<![\w@:/.-])(?:\.{1,2}/|/)?(?:[\w.+-]+/)+[\w.+,-]*[\w+-]|(?<![\w@:/.-])/[\w.+-]+""")


@dataclass(frozen=True)
class PathMap:
    """backend: overlay (the view is the repo's own path), copy (the view is a copy in the run folder),
    none (in place: paths are what they say)."""

    backend: str
    repo: Path  # the user's repo (resolved)
    view: Path  # where the chain saw the repo
    folder: Path | None = None  # the run folder
    binds: Mapping[str, str] = field(default_factory=dict)  # role -> repo-relative folder bound from it
    # where the run's upper layer is readable now: `<folder>/upper` after the run; inside the sandbox's
    # namespaces (where tipc's own folder is hidden) the path the sandbox holds it by
    upper_now: Path | None = None
    exists: Callable[[Path], bool] = field(default=os.path.exists, compare=False)

    def real(self, path: str | Path) -> Path:
        """Where `path` (repo-relative as the chain saw it, or absolute in the view) is on disk."""
        rel = self._view_relative(path)
        if rel is None:
            return Path(path)
        if self.backend == "copy":
            return self.view / rel if rel else self.view
        if self.backend != "overlay" or self.folder is None or _is_own(rel):
            return self.repo / rel
        for role, bound in sorted(self.binds.items(), key=lambda item: -item[1].count("/")):
            bound = bound.strip("/")
            if rel == bound or rel.startswith(bound + "/"):
                return self.folder / role / rel[len(bound) :].lstrip("/")
        if self._written(rel):
            return self.folder / "upper" / rel
        return self.repo / rel

    def shown(self, path: str | Path | None) -> str:
        """`real(path)` as a person reads it: relative to the repo when inside it, else absolute."""
        if path is None or str(path) == "":
            return ""
        real = self.real(path)
        try:
            return real.relative_to(self.repo).as_posix()
        except ValueError:
            return str(real)

    def text(self, text: str) -> str:
        """`text` with every path token the chain saw (one that exists in the view) shown where it really
        is; a token right after "ships " or right before " (committed" names a file as the repo ships it (a
        committed results log or model in the output folder the run's logs are bound over): as it is."""
        if self.backend == "none" or not text:
            return text

        def swap(m: re.Match[str]) -> str:
            token = m.group(0)
            if text[: m.start()].endswith(_SHIPS) or text[m.end() :].startswith(_COMMITTED):
                return token
            rel = self._view_relative(token)
            if rel is None or _is_own(rel) or not self.exists(self.view / rel):
                return token
            shown = self.shown(token)
            return shown if shown != rel or token.startswith("/") else token

        return _TOKEN.sub(swap, text)

    # ------------------------------------------------------------------------------------------

    def _view_relative(self, path: str | Path) -> str | None:
        """`path` relative to the view (POSIX, normalised), or None when it is outside it."""
        text = str(path)
        if not text:
            return None
        pure = PurePosixPath(text)
        if pure.is_absolute():
            for root in (self.view, self.repo):
                try:
                    return _normal(pure.relative_to(root.as_posix()).as_posix())
                except ValueError:
                    continue
            return None
        normal = _normal(text)
        return None if normal.startswith("../") or normal == ".." else normal

    def _written(self, rel: str) -> bool:
        """The run wrote `rel` (it is not a committed file): it lives in the upper layer."""
        if self.folder is None:
            return False
        upper = (self.upper_now or self.folder / "upper") / rel
        return self.exists(upper)


def _normal(rel: str) -> str:
    out = os.path.normpath(rel).replace(os.sep, "/")
    return "" if out == "." else out


def _is_own(rel: str) -> bool:
    return rel == RUNS_DIR or rel.startswith(RUNS_DIR + "/")


def in_place(repo: Path) -> PathMap:
    """The map of a run in place (--no-sandbox) or with no sandbox at all: paths are what they say."""
    return PathMap("none", repo, repo)
