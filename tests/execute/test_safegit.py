"""git asked about a repository tipc does not trust runs nothing that repository's config names (issue 22):
the run's commit (`runner.git_commit`) and the lineage's commit dates (`git log`) included."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tipc.execute import safegit
from tipc.execute.runner import git_commit
from tipc.judge.lineage_graph import commit_date, git_files

_IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false")


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *_IDENTITY, *args], input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repo whose HEAD commit carries a signature and whose config asks `git log` to verify it with a
    program of its choosing (and names an fsmonitor and a pager); returns (repo, marker folder)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\ntouch {markers}/"$(basename "$0")_$$"\n')
    evil.chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "weights.pdparams").write_text("w\n")
    _git(tmp_path, "init", "-q", "repo")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "weights")
    tree = _git(repo, "rev-parse", "HEAD^{tree}")
    signed = (
        f"tree {tree}\nauthor a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    commit = _git(repo, "hash-object", "-t", "commit", "-w", "--stdin", stdin=signed)
    _git(repo, "update-ref", "HEAD", commit)
    for key in ("gpg.program", "core.fsmonitor", "core.pager", "diff.external"):
        _git(repo, "config", key, str(evil))
    _git(repo, "config", "log.showSignature", "true")
    return repo, markers


def test_plain_git_would_run_the_repos_program(tmp_path: Path) -> None:
    """The attack is real: without the guards `git log` starts the repo's gpg.program."""
    repo, markers = _hostile_repo(tmp_path)
    subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%cI"], capture_output=True, check=False)
    assert list(markers.iterdir())


def test_the_guarded_queries_run_nothing_the_repo_names(tmp_path: Path) -> None:
    repo, markers = _hostile_repo(tmp_path)
    assert git_commit(repo) == _git(repo, "rev-parse", "HEAD")
    assert commit_date(repo, "weights.pdparams") == "2023-11-14T22:13:20+00:00"
    assert git_files(repo) == {os.path.join(os.path.realpath(repo), "weights.pdparams")}
    assert list(markers.iterdir()) == []


def test_the_guarded_environment_keeps_nothing_of_tipcs_own_git_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "evil")
    env = safegit.guarded_env()
    assert "GIT_EXTERNAL_DIFF" not in env
    assert "GIT_DIR" not in env and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert safegit.guarded_env(tmp_path)["GIT_DIR"] == str(tmp_path)
    argv = safegit.argv(["rev-parse", "HEAD"])
    assert argv[:2] == ["git", "--no-pager"] and argv[-2:] == ["rev-parse", "HEAD"]
    assert "core.fsmonitor=false" in argv and "core.hooksPath=/dev/null" in argv
