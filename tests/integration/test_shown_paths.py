"""Issue 24 on the demo: every path a failing `tipc check` prints (terminal, stderr, report.md, report.json)
exists on disk after the check, relative to the repo or absolute; the failed step carries its cause; earlier
reports survive later runs, `reports/latest` points at the newest check's, and the counts agree."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.demo import DemoRun

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MODE = "lite_train_lite_infer"
RUN_FOLDER = Path("test_tipc/output/tipc/lenet_digits/train_infer_python") / MODE
# A path tipc points to: two segments or more, absolute or relative; a file with an extension, a folder of
# tipc's run folder, or an absolute path.
_PATH = re.compile(r"(?<![\w@:/.\\-])(?:\.{1,2}/|/)?(?:[\w.+-]+/)+[\w.+-]*[\w+-]")
_FILE = re.compile(r"\.(?:log|json|jsonl|md|html|xml|txt|py|sh|yaml|yml|pdmodel|pdiparams|pdparams|npz|png)$")
# Lines that quote the repo's own output or name what is absent on purpose (a rule's evidence of a missing
# file): not pointers tipc gives.
# A rule listing the names it looked for (`1 match(es) for a or b`) names patterns, not files.
_QUOTED = re.compile(
    r"^\s*(?:\|| seen:|\s*seen:)|\b(?:missing|no such|not found|does not exist|never)\b|match\(es\) for",
    re.I,
)


def _tipc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "1000"}  # a table cell never folds a path
    env.pop("FLAGS_enable_pir_api", None)
    return subprocess.run(
        [sys.executable, "-m", "tipc", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=1500
    )


def _pointers(text: str) -> Iterator[str]:
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or _QUOTED.search(line):
            continue
        for m in _PATH.finditer(line):
            token = m.group(0).rstrip(".,;:)")
            if (
                token.startswith("/")
                or token.startswith(("test_tipc/", "./test_tipc/"))
                or _FILE.search(token)
            ):
                yield token


def _json_strings(
    data: object,
    skip: frozenset[str] = frozenset(
        {"excerpt", "log_tail", "evidence", "binds", "jail", "lineage", "description", "commands"}
    ),
) -> Iterator[str]:
    """Every string of a report.json but quoted text (log excerpts and tails, the documented commands as the
    docs spell them, globs included), the sandbox's binds and jail (the folders as the chain saw them inside
    the sandbox: the mapping itself), the lineage graph (read apart) and the rules' descriptions (prose that
    may name tipc's own spec files)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key not in skip:
                yield from _json_strings(value, skip)
    elif isinstance(data, list):
        for value in data:
            yield from _json_strings(value, skip)
    elif isinstance(data, str):
        yield data


def _lineage_files(report: dict[str, object]) -> Iterator[str]:
    """The lineage graph's files that it says exist (one the run wrote in its private $HOME is gone)."""
    lineage = report.get("lineage")
    files = lineage.get("files", []) if isinstance(lineage, dict) else []
    for node in files:
        if isinstance(node, dict) and node.get("exists") is not False:
            yield str(node["path"])


def _missing(repo: Path, tokens: Iterator[str], step_ids: frozenset[str] = frozenset()) -> list[str]:
    out = []
    for token in dict.fromkeys(tokens):
        if token in step_ids:  # a step's id (serving/client/default/pipeline_http_client.py) names no file
            continue
        path = Path(token) if token.startswith("/") else repo / token
        if not os.path.lexists(path):
            out.append(token)
    return out


def _step_ids(repo: Path) -> frozenset[str]:
    """Every step id of the runs the check made (the train, serving and documented chains)."""
    ids: set[str] = set()
    for record in (repo / RUN_FOLDER).rglob("tipc_run.json"):
        for step in json.loads(record.read_text())["plan"]["steps"]:
            # a documented command's id is its stage and where the docs give it (doc/README.md:59)
            ids.update((step["id"], step["id"].rsplit(":", 1)[0]))
    return frozenset(ids)


@pytest.fixture(scope="module")
def failing(
    demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A copy of the demo whose infer.py imports a module nobody has, checked from another folder."""
    repo = demo_run.copy(tmp_path_factory.mktemp("shown") / "lenet_digits", keep_output=False)
    infer = repo / "infer.py"
    infer.write_text(
        infer.read_text().replace("import argparse", "import tipc_absent_module\nimport argparse", 1)
    )
    elsewhere = tmp_path_factory.mktemp("cwd")
    done = _tipc("check", str(repo), "--mode", MODE, "--no-color", cwd=elsewhere)
    return repo, done


def test_every_path_a_failing_check_prints_exists(
    failing: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    repo, done = failing
    assert done.returncode == 1, done.stderr[-3000:]
    printed = done.stdout + "\n" + done.stderr
    tokens = list(_pointers(printed))
    # what the terminal names: the failed step's log, the run record, the reports and the logs folder
    assert any("/logs/" in t and t.endswith(".log") for t in tokens), tokens
    assert any(t.endswith("tipc_run.json") for t in tokens)
    steps = _step_ids(repo)
    assert _missing(repo, iter(tokens), steps) == []
    latest = repo / RUN_FOLDER / "reports" / "latest"
    markdown = (latest / "report.md").read_text()
    assert _missing(repo, _pointers(markdown), steps) == []
    report = json.loads((latest / "report.json").read_text())
    assert _missing(repo, (t for s in _json_strings(report) for t in _pointers(s)), steps) == []
    assert _missing(repo, _lineage_files(report)) == []
    # the step's log is where the report says, with the failure in it
    infer = next(s for s in report["run"]["steps"] if s["id"].startswith("infer/"))
    assert "tipc_absent_module" in (repo / infer["log"]).read_text()


def test_the_failed_step_has_its_cause_and_the_counts_agree(
    failing: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    repo, done = failing
    report = json.loads((repo / RUN_FOLDER / "reports" / "latest" / "report.json").read_text())
    infer = next(s for s in report["run"]["steps"] if s["id"].startswith("infer/"))
    assert infer["status"] == "failed"
    assert [c["id"] for c in infer["causes"]] == ["module-not-found"]
    assert "tipc_absent_module" in infer["causes"][0]["cause"]
    assert "sitecustomize" not in (infer.get("log_tail") or "")
    totals = report["run"]["totals"]
    assert totals == "5 steps: prepare.sh passed; the chain's 4 step(s) that apply here: 3 passed, 1 failed"
    assert totals in done.stdout  # the terminal's steps table says the same
    chain = next(r for r in report["rules"] if r["id"] == "basic.tipc.chain_passes")
    assert "1 of 4 step(s) did not pass" in chain["summary"]
    # the header says what this run did: the demo's export writes .pdmodel (its code switches PIR off)
    assert any("export wrote inference .pdmodel" in line for line in report["run"]["did"]), report["run"][
        "did"
    ]
    assert "export wrote inference .pdmodel" in done.stdout
    # infer.py run by the predict/infer check itself gets its cause too
    pair = next(r for r in report["rules"] if r["id"] == "competition.predict_infer.identical")
    assert pair["verdict"] == "FAIL" and [c["id"] for c in pair["causes"]] == ["module-not-found"], pair
    # the readiness report named the missing module before the chain ran
    assert "readiness:" in done.stderr and "tipc_absent_module (infer.py:" in done.stderr
    assert done.stderr.index("readiness:") < done.stderr.index("[1/5]")


def test_reports_survive_later_runs_and_latest_points_at_the_newest(
    failing: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    repo, _ = failing
    reports = repo / RUN_FOLDER / "reports"
    first = sorted(p.name for p in reports.iterdir() if not p.is_symlink())
    assert len(first) >= 1 and os.readlink(reports / "latest") == first[-1]
    ran = _tipc("run", str(repo), "--mode", MODE, "--no-color", "--only", "prepare", cwd=tmp_path)
    assert ran.returncode in (0, 1), ran.stderr[-2000:]
    assert (reports / first[-1] / "report.json").is_file(), "a later run must not delete the check's reports"
    again = _tipc(
        "check", str(repo), "--mode", MODE, "--no-color", "--reuse-run", "--format", "json", cwd=tmp_path
    )
    assert again.returncode == 1, again.stderr[-2000:]
    now = sorted(p.name for p in reports.iterdir() if not p.is_symlink())
    assert len(now) == len(first) + 1 and first[-1] in now
    assert os.readlink(reports / "latest") == now[-1]
    assert f"reports/{now[-1]}" in again.stderr
