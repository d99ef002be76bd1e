"""The PathMap (tipc.core.paths) of the sandbox this process is in: what every printed path goes through."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.paths import PathMap, in_place

if TYPE_CHECKING:
    from tipc.execute.sandbox import Session


def path_map(session: Session | None = None, repo: Path | None = None) -> PathMap:
    """The map of `session` (default: the sandbox this process is in); in place when there is none."""
    from tipc.execute import sandbox

    box = session if session is not None else sandbox.current()
    if box is None or box.backend == "none" or box.folder is None:
        return in_place((repo or (box.repo if box is not None else Path("."))).resolve())
    state = getattr(box, "_state", None)
    upper_now = Path(state) / "upper" if state else box.folder / "upper"
    return PathMap(
        backend=box.backend,
        repo=box.repo,
        view=box.view,
        folder=box.folder,
        binds=dict(box.binds),
        upper_now=upper_now,
    )


def stored_map(repo: Path, folder: Path, binds: dict[str, str], backend: str = "overlay") -> PathMap:
    """The map of a run that has ended, read from its record's sandbox entry (folder, binds)."""
    repo = repo.resolve()
    view = folder / "view" if backend == "copy" else repo
    return PathMap(backend, repo, view, folder, dict(binds), upper_now=folder / "upper")
