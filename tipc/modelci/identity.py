"""A repo's identity for model CI history: what stays the same when a CI checks each commit out into a new
folder. Its first (root) commit, the same in every full clone; its `origin` remote's URL (credentials and a
trailing `.git` dropped), which a shallow clone has; else its resolved path (a folder that is no git repo
has nothing better). Runs are stored under the first a checkout has and found under any of them."""

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


def repo_identities(repo: Path) -> list[str]:
    """Every name of the repo, the one to store under first: `root:<sha of the root commit>` (the same in
    every full clone, with or without a remote), `git:<origin URL>` (what a shallow CI clone has), else
    `path:<resolved folder>`. A model repo that is a folder of a larger git repo (a monorepo's tutorial)
    adds `#<folder inside it>` to each."""
    repo = Path(repo).resolve()
    out: list[str] = []
    if _git(repo, "rev-parse", "--is-inside-work-tree") == "true":
        prefix = (_git(repo, "rev-parse", "--show-prefix") or "").strip("/")
        inside = f"#{prefix}" if prefix else ""
        if _git(repo, "rev-parse", "--is-shallow-repository") != "true":  # a shallow clone's root is a graft
            root = _git(repo, "rev-list", "--max-parents=0", "HEAD")
            if root and re.fullmatch(r"[0-9a-f]{40,64}", root):
                out.append("root:" + root + inside)
        remote = _git(repo, "config", "--get", "remote.origin.url")
        if remote:
            out.append("git:" + normalise_remote(remote) + inside)
    return out or [f"path:{repo}"]


def repo_identity(repo: Path) -> str:
    """The name runs of `repo` are stored under (the first of `repo_identities`)."""
    return repo_identities(repo)[0]
