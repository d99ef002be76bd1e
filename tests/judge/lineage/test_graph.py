"""build_graph on hand-made records and access logs: file origins, fresh and stale reads, JSON."""

from __future__ import annotations

from pathlib import Path

from tests.judge.lineage.lineage_fixtures import OUT, W, chain, committed_file, write_access
from tipc.execute.lineage import dir_for, load
from tipc.judge.lineage_graph import build_graph, describe_origin, file_kind


def test_file_kinds() -> None:
    assert file_kind("/r/latest.pdparams", set(), set()) == "weights"
    assert file_kind("/r/net.bin", {"paddle.load"}, set()) == "weights"
    assert file_kind("/r/inference.pdmodel", set(), set()) == "model"
    assert file_kind("/r/inference.json", set(), {"/r/inference.pdiparams"}) == "model"
    assert file_kind("/r/inference.json", {"paddle.inference.Config"}, set()) == "model"
    assert file_kind("/r/config.json", {"open"}, set()) == "other"


def test_graph_of_a_clean_chain(tmp_path: Path) -> None:
    record = chain(tmp_path)
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W, "lite_data/0.png"])
    write_access(
        record,
        "export",
        reads=[W],
        writes=[f"{OUT}/export/inference.json", f"{OUT}/export/inference.pdiparams"],
    )
    write_access(record, "infer", reads=[f"{OUT}/export/inference.json", f"{OUT}/export/inference.pdiparams"])
    committed_file(tmp_path, "lite_data/0.png")
    graph = build_graph(record, load(dir_for(record.plan)), tmp_path, use_git=False)
    assert [s.id for s in graph.steps if s.recorded] == ["train", "eval", "export", "infer"]
    w = graph.file(W)
    assert w is not None and w.origin == "run" and w.written_by == ("train",) and w.kind == "weights"
    assert set(w.read_by) == {"eval", "export"} and w.sha256 is not None
    assert all(e.fresh for e in graph.reads("eval") if e.file == W)
    data = graph.file("lite_data/0.png")
    assert data is not None and data.origin == "preexisting" and data.kind == "other"
    assert all(e.fresh for e in graph.reads("infer"))
    js = graph.to_json()
    assert {f["path"] for f in js["files"]} >= {W, f"{OUT}/export/inference.json"}
    assert {(e["step"], e["kind"]) for e in js["edges"] if e["file"] == W} == {
        ("train", "wrote"),
        ("eval", "read"),
        ("export", "read"),
    }


def test_committed_preexisting_external_and_missing_files(tmp_path: Path) -> None:
    record = chain(tmp_path)
    committed_file(tmp_path, "logs/net.pdparams")
    committed_file(tmp_path, "in_git.pdparams")
    outside = tmp_path.parent / f"{tmp_path.name}-cache" / "resnet.pdparams"
    outside.parent.mkdir(exist_ok=True)
    outside.write_bytes(b"r")
    write_access(record, "train", writes=[W])
    write_access(
        record, "eval", reads=["logs/net.pdparams", "in_git.pdparams", str(outside), "gone.pdparams"]
    )
    graph = build_graph(
        record,
        load(dir_for(record.plan)),
        tmp_path,
        committed={str((tmp_path / "in_git.pdparams").resolve())},
    )
    origins = {f.path: f.origin for f in graph.files}
    assert origins["logs/net.pdparams"] == "preexisting"
    assert origins["in_git.pdparams"] == "committed"
    assert origins[str(outside.resolve())] == "external"
    assert origins["gone.pdparams"] == "missing"
    assert not any(e.fresh for e in graph.reads("eval"))
    net = graph.file("logs/net.pdparams")
    assert net is not None and describe_origin(net).startswith("there before the run, last modified ")


def test_a_read_before_the_write_in_plan_order_is_not_fresh(tmp_path: Path) -> None:
    record = chain(tmp_path)
    write_access(record, "eval", reads=[W])  # eval read W ...
    write_access(record, "export", writes=[W])  # ... which only a later step wrote
    graph = build_graph(record, load(dir_for(record.plan)), tmp_path, use_git=False)
    assert [e.fresh for e in graph.reads("eval")] == [False]


def test_access_logs_of_steps_that_did_not_run_are_left_out(tmp_path: Path) -> None:
    from tipc.core.steps import Status

    record = chain(tmp_path, infer_status=Status.BLOCKED)
    record = type(record)(
        plan=record.plan,
        results=tuple(
            r if r.step_id != "infer" else type(r)("infer", Status.BLOCKED) for r in record.results
        ),
        started=record.started,
    )
    write_access(record, "infer", reads=[W])  # left over from an earlier run
    graph = build_graph(record, load(dir_for(record.plan)), tmp_path, use_git=False)
    assert not graph.recorded and graph.file(W) is None


def test_a_sandbox_list_of_changed_files_replaces_the_mtime_guess(tmp_path: Path) -> None:
    record = chain(tmp_path)
    (tmp_path / "cpp_written.pdparams").write_bytes(b"new")  # fresh mtime, no recorded writer
    write_access(record, "eval", reads=["cpp_written.pdparams"])
    accesses = load(dir_for(record.plan))
    guessed = build_graph(record, accesses, tmp_path, use_git=False).file("cpp_written.pdparams")
    assert guessed is not None and guessed.origin == "run"
    told = build_graph(record, accesses, tmp_path, use_git=False, changed=set()).file("cpp_written.pdparams")
    assert told is not None and told.origin == "preexisting"
