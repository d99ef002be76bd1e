"""The demo's own bash script against tipc, on scratch copies of examples/lenet_digits (Paddle on CPU).

1. The commands `bash test_tipc/test_train_inference_python.sh CONFIG MODE` logs in results_python.log equal
   tipc's plan, normalised exactly like the corpus comparison (tipc.planning.corpus.compare): the corpus
   guarantee, on a script we can run.
2. The status-line bytes tipc's runner writes equal the script's. The one legitimate difference: in
   whole_infer the script exports into ./pretrained (the folder holding infer_model, as the template does)
   while `tipc run` redirects that write under test_tipc/output (tipc.planning.planner.isolate, finding
   TIPC910), so the
   export and inference lines name the redirected folder instead.
3. `tipc run --mode whole_infer` leaves every file outside test_tipc/output byte-identical.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.trees import tree_hashes
from tipc.execute import proc
from tipc.execute.record import record_location
from tipc.planning.corpus import compare, status_text
from tipc.planning.planner import ISOLATED_DIR, plan

pytestmark = pytest.mark.integration

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
CONFIG = "test_tipc/configs/lenet_digits/train_infer_python.txt"
OUTPUT = Path("test_tipc") / "output"
STATUS_LOG = OUTPUT / "results_python.log"
MODES = ("lite_train_lite_infer", "whole_infer")
TIMEOUT_S = 600


def _env() -> dict[str, str]:
    # the demo config says `python:python`: the venv's interpreter must come first on PATH
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return proc.build_env(None, {"PATH": path}, ("FLAGS_enable_pir_api",))


def _copy(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    dest = tmp_path_factory.mktemp(name) / "lenet_digits"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__", "inference.*"))
    return dest


def _status_lines(repo: Path) -> list[str]:
    if not (repo / STATUS_LOG).is_file():
        return []
    return (repo / STATUS_LOG).read_text(encoding="utf-8").splitlines()


def _run(repo: Path, argv: list[str]) -> list[str]:
    out: list[str] = []
    result = proc.run(argv, cwd=repo, env=_env(), timeout_s=TIMEOUT_S, on_line=out.append)
    assert result.exit_code == 0, f"{' '.join(argv)} exited {result.exit_code}:\n" + "\n".join(out[-40:])
    return out


@pytest.fixture(scope="module")
def bash_lines(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """{mode: the status lines the demo's own script appended} (one scratch copy, modes in order)."""
    repo = _copy(tmp_path_factory, "bash")
    lines: dict[str, list[str]] = {}
    for mode in MODES:
        before = len(_status_lines(repo))
        _run(repo, ["bash", "test_tipc/test_train_inference_python.sh", CONFIG, mode])
        lines[mode] = _status_lines(repo)[before:]
    return repo, lines


@pytest.fixture(scope="module")
def tipc_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """`tipc run` in another scratch copy: whole_infer first (tree hashed around it), then lite_train."""
    repo = _copy(tmp_path_factory, "tipc")
    runs: dict[str, object] = {"repo": repo}
    for mode in ("whole_infer", "lite_train_lite_infer"):
        before_tree = tree_hashes(repo)
        before = len(_status_lines(repo))
        # in place (--no-sandbox): this module checks the dialect byte for byte and the in-place redirection
        in_place = ["--no-sandbox", "--no-prepare"]
        _run(repo, [sys.executable, "-m", "tipc", "run", str(repo), "--mode", mode, *in_place])
        runs[mode] = _status_lines(repo)[before:]
        record = repo / record_location(plan(repo / CONFIG, mode, repo=repo))
        runs[f"{mode}:record"] = json.loads(record.read_text(encoding="utf-8"))
        runs[f"{mode}:untouched"] = tree_hashes(repo) == before_tree
    return runs


def test_each_mode_keeps_its_own_record(tipc_runs: dict[str, object]) -> None:
    # The template logs every mode to the shared test_tipc/output: the lite_train run must not overwrite the
    # whole_infer record that ran before it (`tipc check --reuse-run` / `--resume` read it back).
    repo = tipc_runs["repo"]
    assert isinstance(repo, Path)
    for mode in MODES:
        path = repo / record_location(plan(repo / CONFIG, mode, repo=repo))
        on_disk = json.loads(path.read_text(encoding="utf-8"))
        assert on_disk["plan"]["mode"] == mode
        assert on_disk == tipc_runs[f"{mode}:record"]


@pytest.mark.parametrize("mode", MODES)
def test_bash_script_commands_match_the_plan(
    bash_lines: tuple[Path, dict[str, list[str]]], mode: str
) -> None:
    repo, by_mode = bash_lines
    lines = by_mode[mode]
    the_plan = plan(repo / CONFIG, mode, repo=repo)
    assert the_plan.dialect == "template"  # detected from the script itself
    assert lines, "the script logged no status line"
    assert all("Run successfully" in line for line in lines), lines
    expected = [status_text(line, the_plan.model_name) for line in lines]
    result = compare(the_plan, expected)
    assert result.ok, result.detail
    assert len(expected) == len(the_plan.steps)


def test_status_lines_are_byte_identical_in_lite_train(
    bash_lines: tuple[Path, dict[str, list[str]]], tipc_runs: dict[str, object]
) -> None:
    _, lines = bash_lines
    assert tipc_runs["lite_train_lite_infer"] == lines["lite_train_lite_infer"]


def test_status_lines_in_whole_infer_differ_only_by_the_redirected_export(
    bash_lines: tuple[Path, dict[str, list[str]]], tipc_runs: dict[str, object]
) -> None:
    _, lines = bash_lines
    ours = tipc_runs["whole_infer"]
    assert isinstance(ours, list)
    isolated = f"./{OUTPUT.as_posix()}/{ISOLATED_DIR}/pretrained"
    assert ours != lines["whole_infer"]
    assert [line.replace(isolated, "./pretrained") for line in ours] == lines["whole_infer"]
    # the run record says why: one TIPC910 finding naming the script's target and tipc's
    record = tipc_runs["whole_infer:record"]
    assert isinstance(record, dict)
    notes = [f["message"] for f in record["plan"]["findings"] if f["code"] == "TIPC910"]
    assert len(notes) == 1 and "--save_inference_dir=./pretrained" in notes[0] and isolated in notes[0]
    assert record["plan"]["isolated"] is True


def test_tipc_run_whole_infer_passes_and_leaves_the_repo_untouched(
    bash_lines: tuple[Path, dict[str, list[str]]], tipc_runs: dict[str, object]
) -> None:
    record = tipc_runs["whole_infer:record"]
    assert isinstance(record, dict)
    assert [r["status"] for r in record["results"]] == ["passed", "passed"]
    assert tipc_runs["whole_infer:untouched"] is True
    assert tipc_runs["lite_train_lite_infer:untouched"] is True
    repo = tipc_runs["repo"]
    assert isinstance(repo, Path)
    model = repo / OUTPUT / ISOLATED_DIR / "pretrained"
    assert (model / "inference.pdiparams").is_file()
    # the bash script, by contrast, did write into the repo: that is what isolation prevents
    bash_repo, _ = bash_lines
    assert (bash_repo / "pretrained" / "inference.pdiparams").is_file()
    assert not (repo / "pretrained" / "inference.pdiparams").exists()
