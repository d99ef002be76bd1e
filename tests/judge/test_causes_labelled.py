"""The failed steps of the runs the silent-failure benchmark kept (snapshots in data/causes/stored, one
folder `<repo>+<variant>` each: the run record and the logs, made by `bench/causes.py --snapshot`) each carry
the cause the labelled list (bench/causes_labels.yaml) says is right, found afresh by tipc.judge.causes. A
snapshot whose causes read the repo's code is explained against that repo: the demo, or a real repo's
tarball (real_repos tier)."""

from __future__ import annotations

import os
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.causes import load_labels, rows_of, snapshot_record, stored_labels  # noqa: E402

STORED = Path(__file__).parent / "data" / "causes" / "stored"
DEMO = ROOT / "examples" / "lenet_digits"
REAL_REPOS = Path(os.environ.get("TIPC_REAL_REPOS", ROOT.parent / "shared" / "real-repos"))
SNAPSHOTS = sorted(p.name for p in STORED.iterdir() if p.is_dir())


def _param(name: str) -> object:
    repo = name.split("+", 1)[0]
    marks = [] if repo == "lenet_digits" else [pytest.mark.real_repos, pytest.mark.integration]
    return pytest.param(name, repo, marks=marks, id=name)


@pytest.fixture(scope="module")
def repos() -> dict[str, Path]:
    """The real repos unpacked so far in this module, by name."""
    return {}


def _repo(name: str, repos: dict[str, Path], tmp: pytest.TempPathFactory) -> Path:
    if name == "lenet_digits":
        return DEMO
    if name not in repos:
        archive = REAL_REPOS / f"{name}.tar.gz"
        if not archive.is_file():
            pytest.skip(f"{archive} is absent (set TIPC_REAL_REPOS)")
        dest = tmp.mktemp(name)
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="tar")
        repos[name] = dest / name
    return repos[name]


@pytest.mark.parametrize(("snapshot", "repo_name"), [_param(n) for n in SNAPSHOTS])
def test_every_failed_step_of_a_kept_run_has_its_labelled_cause(
    snapshot: str, repo_name: str, repos: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    _, stored = load_labels()
    variant = snapshot.split("+", 1)[1]
    labels = stored_labels(stored, repo_name, variant)
    repo = _repo(repo_name, repos, tmp_path_factory)
    rows = rows_of(snapshot, snapshot_record(STORED / snapshot, repo), labels)
    assert rows, "a snapshot is kept only for a run with a failed step"
    wrong = [(r.step, r.expected, r.got) for r in rows if not r.right]
    assert wrong == [], wrong


def test_the_snapshots_cover_every_stored_label() -> None:
    """Each `stored` entry of the labelled list (but the catch-all for prepare.sh) has a snapshot here."""
    _, stored = load_labels()
    named = {(s.repo, s.variant) for s in stored if s.variant != "*"}
    kept = {tuple(n.split("+", 1)) for n in SNAPSHOTS}
    assert named <= kept, sorted(named - kept)
