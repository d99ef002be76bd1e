"""Submissions made from the demo repo (examples/lenet_digits) for `tipc review` tests and bench/review_*.py:
a clean copy, mutated copies that fail in different ways, a hostile one, one that hangs, one that eats memory,
and the same content as a folder, a .tar.gz, a .zip or a git repo@ref."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
_FUTURE = "from __future__ import annotations\n"


def copy_demo(dest: Path) -> Path:
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    return dest


def _inject(path: Path, code: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(_FUTURE) == 1, path
    path.write_text(text.replace(_FUTURE, _FUTURE + code, 1), encoding="utf-8")


def hang(repo: Path) -> None:
    """Training never ends (a deadlock, an endless loop): only the review's budget stops it."""
    _inject(repo / "train.py", "import time as _t\nwhile True:\n    _t.sleep(1)\n")


def eat_memory(repo: Path) -> None:
    """Training allocates without bound (touching every page); without a limit it gives up at 3 GiB."""
    _inject(
        repo / "train.py",
        "_hog = []\nfor _ in range(30):\n    _hog.append(bytearray(100 << 20))\n"
        "raise SystemExit('allocated 3 GiB: no memory limit stopped this step')\n",
    )


def hostile(canaries: list[Path]) -> Callable[[Path], None]:
    """Training reaches the network and writes outside its work area (each path in `canaries`, and $HOME);
    it stops when the network is unreachable, as a script that downloads its weights does."""

    def mutate(repo: Path) -> None:
        targets = [str(c) for c in canaries]
        _inject(
            repo / "train.py",
            "import os as _os, socket as _socket\n"
            f"for _p in {targets!r} + [_os.path.expanduser('~/.tipc_review_escape')]:\n"
            "    try:\n"
            "        open(_p, 'w').write('escaped')\n"
            "        print('wrote', _p)\n"
            "    except OSError as _e:\n"
            "        print('could not write', _p, _e)\n"
            "try:\n"
            "    _socket.create_connection(('1.1.1.1', 80), timeout=5).close()\n"
            "    print('network reached')\n"
            "except OSError as _e:\n"
            "    raise SystemExit(f'cannot download the pretrained weights: {_e}')\n",
        )

    return mutate


def missing_helper(repo: Path) -> None:
    """An inference notebook importing a helper module the submission lacks (seed 001 artefact 6)."""
    import json

    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Inference"]},
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": ["from lenet_digits.visualise import show_predictions\n", "show_predictions()\n"],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (repo / "infer_demo.ipynb").write_text(json.dumps(nb), encoding="utf-8")


def broken_export(repo: Path) -> None:
    """The export script crashes: no inference model, so everything after export fails."""
    _inject(repo / "export_model.py", "raise SystemExit('export: unsupported op in this model')\n")


def train_crash(repo: Path) -> None:
    _inject(repo / "train.py", "raise ValueError('lr schedule: warmup steps exceed the total steps')\n")


def no_config(repo: Path) -> None:
    """The TIPC config is gone: the check cannot plan anything (tipc check exits 2)."""
    for config in (repo / "test_tipc" / "configs").rglob("train_infer_python.txt"):
        config.unlink()


def no_licence(repo: Path) -> None:
    """No LICENSE file and no licence section in the README (seed 001 artefact 7)."""
    for p in repo.iterdir():
        if p.name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            p.unlink()
    readme = repo / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(
        "\n".join(
            line.replace("licence", "notes").replace("License", "Notes").replace("license", "notes")
            if line.startswith("#")
            else line
            for line in text.splitlines()
        )
        + "\n",
        encoding="utf-8",
    )


def as_tar_gz(repo: Path, dest: Path) -> Path:
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(repo, arcname=repo.name)
    return dest


def as_zip(repo: Path, dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(repo.rglob("*")):
            if path.is_file():
                zf.write(path, f"{repo.name}/{path.relative_to(repo).as_posix()}")
    return dest


def git_repo(repo: Path) -> Path:
    """`repo` made a git repository with one commit tagged `v1`; returns it."""
    env_args = ["-c", "user.name=tipc", "-c", "user.email=tipc@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *env_args, "commit", "-qm", "submission"], check=True)
    subprocess.run(["git", "-C", str(repo), "tag", "v1"], check=True)
    return repo


def git_commit_all(repo: Path, message: str) -> None:
    env_args = ["-c", "user.name=tipc", "-c", "user.email=tipc@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *env_args, "commit", "-qm", message], check=True)
