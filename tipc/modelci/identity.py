"""A repo's identity for model CI history: what stays the same when a CI checks each commit out into a new
folder. The `origin` remote's URL (credentials and a trailing `.git` dropped, so https and ssh clones of one
repo agree only when their URLs do), else the repo's first (root) commit, else its resolved path (a folder
that is no git repo has nothing better)."""

from __future__ import annotations

import re
from pathlib import Path

_CREDENTIALS = re.compile(r"(?<=://)[^/@]+@")


def _git(repo: Path, *args: str) -> str | None:
    from tipc.execute import proc, safegit  # the repo's own git config names commands: none of them runs

    if not safegit.available():
        return None
    try:
        code, out = safegit.capture(list(args), cwd=repo, timeout_s=20)
    except (OSError, proc.Refused):
        return None
    text = out.strip().splitlines()
    return text[-1].strip() if code == 0 and text else None


def normalise_remote(url: str) -> str:
    text = _CREDENTIALS.sub("", url.strip()).rstrip("/")
    return text[:-4] if text.endswith(".git") else text


def repo_identity(repo: Path) -> str:
    """`git:<remote>`, `root:<sha of the root commit>` or `path:<resolved path>`; a model repo that is a
    folder of a larger git repo (a monorepo's tutorial) adds `#<folder inside it>`."""
    repo = Path(repo).resolve()
    if _git(repo, "rev-parse", "--is-inside-work-tree") == "true":
        prefix = (_git(repo, "rev-parse", "--show-prefix") or "").strip("/")
        inside = f"#{prefix}" if prefix else ""
        remote = _git(repo, "config", "--get", "remote.origin.url")
        if remote:
            return "git:" + normalise_remote(remote) + inside
        root = _git(repo, "rev-list", "--max-parents=0", "HEAD")
        if root and re.fullmatch(r"[0-9a-f]{40,64}", root):
            return "root:" + root + inside
    return f"path:{repo}"
