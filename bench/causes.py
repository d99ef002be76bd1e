"""Are failed steps explained right? Failed steps / given a cause / causes right, against a labelled list.

The labelled list is `bench/causes_labels.yaml`, next to this script: each case is a repo (the demo, or a
real repo of ../shared/real-repos) run with tipc's own switches, under an interpreter, with edits that plant
a failure (demo variants), and the right first cause of each step that fails there; `stored` entries label
the failed steps of runs kept by the silent-failure benchmark (`bench/silent_failures.py --keep --work DIR`:
pass that DIR with --silent-work, or let this script build and check the variants with the silent
benchmark's own code: --silent-run DIR).

For every run it finds the causes afresh from the run record and the logs (tipc.judge.causes.explain_record,
as `tipc check --reuse-run` does), so a catalogue change is measured without running the chains again; the
runs it makes itself are kept in --work and reused with --resume.

    python bench/causes.py [--work DIR] [--resume] [--case NAME ...] [--silent-work DIR ...]
                           [--silent-run DIR [--silent-repo NAME ...] [--silent-kind ID ...]]
                           [--repos DIR] [--json OUT] [--snapshot DIR]

It prints a row per failed step (expected cause, cause given, right or not), then the three counts.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LABELS = Path(__file__).resolve().parent / "causes_labels.yaml"
DEMO = ROOT / "examples" / "lenet_digits"
DEFAULT_REPOS = Path(os.environ.get("TIPC_REAL_REPOS", ROOT.parent / "shared" / "real-repos"))
PYTHONS = {
    "tipc": sys.executable,
    "repos": os.environ.get("TIPC_REPOS_PYTHON", str(ROOT / ".venv-repos" / "bin" / "python")),
}
FAILED = ("failed", "timeout")


@dataclass(frozen=True)
class Edit:
    file: str
    replace: str
    with_: str


@dataclass(frozen=True)
class Case:
    name: str
    repo: str  # "demo" or the name of a real-repo tarball
    python: str  # a key of PYTHONS, or a path
    switches: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = ()
    expect: dict[str, tuple[str, ...]] = field(default_factory=dict)  # step id prefix -> right cause ids
    why: str = ""


@dataclass(frozen=True)
class Stored:
    repo: str
    variant: str  # fnmatch pattern over the silent benchmark's variant folders
    expect: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    case: str
    step: str
    status: str
    expected: tuple[str, ...]
    got: tuple[str, ...]  # cause ids, root first

    @property
    def given(self) -> bool:
        return bool(self.got)

    @property
    def right(self) -> bool:
        return bool(self.got) and self.got[0] in self.expected


def _binds(box: Mapping[str, object]) -> dict[str, str]:
    """The record's sandbox binds (outside path -> path the steps saw)."""
    binds = box.get("binds")
    return {str(k): str(v) for k, v in binds.items()} if isinstance(binds, dict) else {}


def load_labels(path: Path = LABELS) -> tuple[list[Case], list[Stored]]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema") != "tipc-bench.causes/1":
        raise ValueError(f"{path}: not a labelled list of schema tipc-bench.causes/1")

    def expect(raw: Any) -> dict[str, tuple[str, ...]]:
        return {str(k): tuple(v) if isinstance(v, list) else (str(v),) for k, v in (raw or {}).items()}

    cases = [
        Case(
            name=str(c["name"]),
            repo=str(c["repo"]),
            python=str(c.get("python", "tipc")),
            switches=tuple(str(s) for s in c.get("switches") or ()),
            edits=tuple(
                Edit(str(e["file"]), str(e["replace"]), str(e["with"])) for e in c.get("edits") or ()
            ),
            expect=expect(c.get("expect")),
            why=str(c.get("why", "")),
        )
        for c in data.get("cases") or ()
    ]
    stored = [
        Stored(str(s["repo"]), str(s.get("variant", "*")), expect(s.get("expect")))
        for s in data.get("stored") or ()
    ]
    return cases, stored


def expected_of(expect: dict[str, tuple[str, ...]], step_id: str) -> tuple[str, ...]:
    """The labelled causes of a step: the longest step-id prefix that matches."""
    keys = [k for k in expect if step_id.startswith(k)]
    return expect[max(keys, key=len)] if keys else ()


# --- making a case's run ---------------------------------------------------------------------------------


def materialise(case: Case, folder: Path, repos_dir: Path) -> Path:
    """A fresh copy of the case's repo in `folder`, with its edits applied."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if case.repo == "demo":
        dest = folder / DEMO.name
        shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"), symlinks=True)
    else:
        archive = repos_dir / f"{case.repo}.tar.gz"
        if not archive.is_file():
            raise FileNotFoundError(f"{archive} is absent (--repos)")
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="tar")
        dest = folder / case.repo
    for edit in case.edits:
        path = dest / edit.file
        text = path.read_text(encoding="utf-8")
        if edit.replace not in text:
            raise ValueError(f"{case.name}: edit of {edit.file}: {edit.replace!r} not found")
        path.write_text(text.replace(edit.replace, edit.with_, 1), encoding="utf-8")
    return dest


def python_of(case: Case) -> str | None:
    python = PYTHONS.get(case.python, case.python)
    return python if Path(python).exists() or shutil.which(python) else None


def make_run(case: Case, work: Path, repos_dir: Path, *, resume: bool) -> Path | None:
    """The repo of the case's run (made now, or kept from an earlier one with --resume); None to skip."""
    folder = work / case.name
    done = folder / "done.json"
    if resume and done.is_file():
        return Path(json.loads(done.read_text())["repo"])
    python = python_of(case)
    if python is None:
        print(f"causes: {case.name}: skipped, no interpreter {case.python!r}", file=sys.stderr)
        return None
    try:
        repo = materialise(case, folder, repos_dir)
    except (OSError, ValueError) as exc:
        print(f"causes: {case.name}: skipped, {exc}", file=sys.stderr)
        return None
    argv = [sys.executable, "-m", "tipc", "run", str(repo), "--python", python, "--no-color", *case.switches]
    env = {k: v for k, v in os.environ.items() if k != "FLAGS_enable_pir_api"}
    print(f"causes: {case.name}: tipc run ...", file=sys.stderr, flush=True)
    res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600, check=False)
    (folder / "run.stderr").write_text(res.stderr)
    (folder / "run.stdout").write_text(res.stdout)
    done.write_text(json.dumps({"repo": str(repo), "exit": res.returncode}))
    return repo


# --- explaining a kept run --------------------------------------------------------------------------------


def records_under(repo: Path) -> Iterator[Path]:
    """The train-chain run records of a run folder (not the serving chain's)."""
    base = repo / "test_tipc" / "output" / "tipc"
    for record in sorted(base.rglob("tipc_run.json")):
        if "/logs/" in record.as_posix() or record.parent.name == "logs":
            yield record


def explained(record_path: Path, repo: Path) -> Any:
    """The record with the causes of its failed steps found afresh, reading the logs where the run left
    them (its run folder), the repo's code at `repo` (a kept copy may have moved since it ran)."""
    from tipc.execute.record import load_record
    from tipc.execute.shown import stored_map
    from tipc.judge.causes import explain_record

    record = load_record(record_path)
    box = record.sandbox or {}
    folder = box.get("folder")
    run_folder = repo / folder if isinstance(folder, str) else record_path.parent
    paths = stored_map(repo, run_folder, _binds(box), str(box.get("backend") or "overlay"))

    def log_of(result: Any) -> Path | None:
        return paths.real(result.log) if result.log else None

    def shown(result: Any) -> str:
        return paths.shown(result.log)

    return explain_record(record, log_of, repo=repo, shown_log=shown)


def rows_of(name: str, record: Any, expect: dict[str, tuple[str, ...]]) -> list[Row]:
    out = []
    for result in record.results:
        if result.status.value not in FAILED:
            continue
        out.append(
            Row(
                name,
                result.step_id,
                result.status.value,
                expected_of(expect, result.step_id),
                tuple(c.id for c in result.causes),
            )
        )
    return out


def case_rows(case: Case, repo: Path) -> list[Row]:
    rows: list[Row] = []
    for record_path in records_under(repo):
        rows += rows_of(case.name, explained(record_path, repo), case.expect)
    return rows


def stored_labels(entries: Sequence[Stored], repo: str, variant: str) -> dict[str, tuple[str, ...]]:
    labels: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        if entry.repo == repo and fnmatch.fnmatch(variant, entry.variant):
            labels = {**labels, **entry.expect}
    return labels


def stored_rows(entries: Sequence[Stored], silent_work: Path, snapshots: Path | None = None) -> list[Row]:
    """Rows of the runs the silent benchmark kept: <work>/<repo>/<variant>/<repo dir>/test_tipc/...; with
    `snapshots`, a snapshot of each run with a failed step but prepare.sh is written there."""
    rows: list[Row] = []
    for repo_dir in sorted(p for p in silent_work.iterdir() if p.is_dir()):
        for variant in sorted(p for p in repo_dir.iterdir() if p.is_dir()):
            labels = stored_labels(entries, repo_dir.name, variant.name)
            for repo in sorted(p for p in variant.iterdir() if (p / "test_tipc").is_dir()):
                for record_path in records_under(repo):
                    found = rows_of(f"{repo_dir.name}/{variant.name}", explained(record_path, repo), labels)
                    rows += found
                    if snapshots is not None and any(r.step != "prepare" for r in found):
                        snapshot(record_path, repo, snapshots / f"{repo_dir.name}+{variant.name}")
    return rows


def run_silent(work: Path, repos_dir: Path, repos: Sequence[str] = (), kinds: Sequence[str] = ()) -> Path:
    """The silent-failure benchmark's clean checks and planted variants (bench/silent: its variant building
    and checking, kept with their run folders) in `work`, resumable; returns `work` for `stored_rows`."""
    from bench.silent import model
    from bench.silent.runner import run_repo

    catalogue = model.load_catalogue()
    specs = model.load_repos(kinds=catalogue)
    chosen_kinds = tuple(k for k in catalogue if not kinds or k.id in kinds)
    for spec in specs:
        if repos and spec.name not in repos:
            continue
        if spec.source == "tarball" and not (repos_dir / f"{spec.name}.tar.gz").is_file():
            print(f"causes: silent {spec.name}: skipped, no tarball in {repos_dir}", file=sys.stderr)
            continue
        print(f"causes: silent {spec.name}: clean check and variants ...", file=sys.stderr, flush=True)
        run_repo(spec, chosen_kinds, work, repos_dir, resume=True, keep=True)
    return work


# --- snapshots: the material a test needs to re-explain a run without it ----------------------------------

SNAPSHOT_LOG_BYTES = 8_000  # the end of each log kept: tracebacks sit there


def snapshot(record_path: Path, repo: Path, dest: Path) -> None:
    """The record (without resource samples and the sandbox's file list) and the tail of the logs of a run
    with a failed step (of its failed steps, and of passed ones that print a traceback), in `dest`:
    `record.json` and `logs/<the log's path as the record names it>`."""
    from tipc.execute.record import load_record
    from tipc.execute.shown import stored_map
    from tipc.judge.causes import read_tail

    data = json.loads(record_path.read_text())
    for result in data.get("results", []):
        result.get("resources", {})["samples"] = []
        result["causes"] = []  # found afresh by whoever reads the snapshot
    if isinstance(data.get("sandbox"), dict):
        data["sandbox"]["changes"] = []
    data["environment"] = None
    data["host"] = {}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "record.json").write_text(json.dumps(data, indent=1) + "\n")
    record = load_record(record_path)
    box = record.sandbox or {}
    folder = box.get("folder")
    paths = stored_map(repo, repo / folder if isinstance(folder, str) else record_path.parent, _binds(box))
    for result in record.results:
        if not result.log or result.status.value in ("skipped", "blocked"):
            continue
        text = read_tail(paths.real(result.log), SNAPSHOT_LOG_BYTES)
        # a passed step's log matters only when it hides a failure (a traceback, exit 0)
        if text and (result.status.value in FAILED or "Traceback (most recent call last)" in text):
            target = dest / "logs" / result.log
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)


def snapshot_record(folder: Path, repo: Path) -> Any:
    """A snapshot (see `snapshot`) explained afresh, the repo's code read at `repo`."""
    from tipc.execute.record import load_record
    from tipc.judge.causes import explain_record

    record = load_record(folder / "record.json")

    def log_of(result: Any) -> Path | None:
        path = folder / "logs" / result.log if result.log else None
        return path if path is not None and path.is_file() else None

    return explain_record(record, log_of, repo=repo)


# --- printing --------------------------------------------------------------------------------------------


def counts(rows: Sequence[Row]) -> dict[str, int]:
    return {
        "failed_steps": len(rows),
        "given_a_cause": sum(r.given for r in rows),
        "causes_right": sum(r.right for r in rows),
    }


def render(rows: Sequence[Row]) -> str:
    lines = ["| case | step | status | right cause | cause given | |", "|---|---|---|---|---|---|"]
    for r in rows:
        mark = "right" if r.right else ("WRONG" if r.expected else "UNLABELLED")
        lines.append(
            f"| {r.case} | {r.step} | {r.status} | {' or '.join(r.expected) or '-'} | "
            f"{', '.join(r.got) or '(none)'} | {mark} |"
        )
    c = counts(rows)
    lines += [
        "",
        f"failed steps: {c['failed_steps']} · given a cause: {c['given_a_cause']} · causes right: "
        f"{c['causes_right']} (first cause against {LABELS.relative_to(ROOT)})",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="where the cases' runs are made and kept")
    parser.add_argument("--resume", action="store_true", help="reuse the runs a previous call left in --work")
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    parser.add_argument("--no-cases", action="store_true", help="only the stored runs (--silent-work)")
    parser.add_argument(
        "--silent-work", type=Path, action="append", default=[], help="a kept silent-benchmark work folder"
    )
    parser.add_argument(
        "--silent-run", type=Path, help="build and check the silent benchmark's variants here"
    )
    parser.add_argument(
        "--silent-repo", action="append", default=[], help="with --silent-run: only this repo"
    )
    parser.add_argument(
        "--silent-kind", action="append", default=[], help="with --silent-run: only this kind"
    )
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS, help="folder of the real-repo tarballs")
    parser.add_argument("--json", type=Path, help="write the rows and counts as JSON here")
    parser.add_argument(
        "--snapshot", type=Path, help="write snapshots of the stored runs with a failed step here"
    )
    args = parser.parse_args(argv)
    cases, stored = load_labels()
    unknown = sorted(set(args.case) - {c.name for c in cases})
    if unknown:
        print(f"causes: unknown case(s) {unknown}", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="tipc-causes-"))
    rows: list[Row] = []
    for case in [] if args.no_cases else [c for c in cases if not args.case or c.name in args.case]:
        repo = make_run(case, work, args.repos, resume=args.resume)
        if repo is not None:
            rows += case_rows(case, repo)
    if args.silent_run is not None:
        args.silent_work.append(run_silent(args.silent_run, args.repos, args.silent_repo, args.silent_kind))
    for folder in args.silent_work:
        rows += stored_rows(stored, folder, args.snapshot)
    print(render(rows), end="")
    if args.json:
        args.json.write_text(
            json.dumps({"rows": [r.__dict__ for r in rows], "counts": counts(rows)}, indent=2, default=list)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
