"""Where a path the chain saw is once the run has ended (tipc.core.paths.PathMap), on a run folder."""

from __future__ import annotations

from pathlib import Path

from tipc.core.paths import PathMap


def _map(tmp_path: Path) -> PathMap:
    repo = tmp_path / "repo"
    folder = repo / "test_tipc" / "output" / "tipc" / "m" / "lite"
    (repo / "test_tipc" / "output").mkdir(parents=True)
    (repo / "test_tipc" / "output" / "results_python.log").write_text("Run successfully\n")  # committed
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "results_python.log").write_text("this run's\n")
    return PathMap("overlay", repo, repo, folder, {"logs": "test_tipc/output"}, upper_now=folder / "upper")


def test_a_bound_output_path_is_shown_in_the_run_folder(tmp_path: Path) -> None:
    shown = _map(tmp_path).text("status lines in test_tipc/output/results_python.log")
    assert shown == "status lines in test_tipc/output/tipc/m/lite/logs/results_python.log"


def test_a_file_the_repo_ships_is_shown_where_the_repo_has_it(tmp_path: Path) -> None:
    """CAN_Paddle ships test_tipc/output/results_python.log: the note about it named the run's own fresh
    file in the run folder, which is not the committed one."""
    note = "the repo ships test_tipc/output/results_python.log (10 line(s)): it is not this run's result"
    assert _map(tmp_path).text(note) == note


def test_a_committed_model_the_run_read_is_named_where_the_repo_has_it(tmp_path: Path) -> None:
    """DnCNN_paddle's inference opens the model.pdmodel committed in its output folder: the lineage rule's
    evidence named the run folder's copy instead."""
    paths = _map(tmp_path)
    evidence = "infer read test_tipc/output/results_python.log (committed 2023-11-14T22:13:00+00:00)"
    assert paths.text(evidence) == evidence
