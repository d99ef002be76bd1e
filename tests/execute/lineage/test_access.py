"""step_env / start_step / load / fingerprint / finish_step on real files."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from tests.judge.checks.checks_fixtures import make_record
from tipc.execute.lineage import (
    INJECT_DIR,
    dir_for,
    fingerprint,
    finish_step,
    load,
    parse_lines,
    start_step,
    step_env,
)
from tipc.execute.record import record_location


def test_step_env_puts_the_recorder_first(tmp_path: Path) -> None:
    env = step_env(tmp_path, "infer/x:1", "/a" + os.pathsep + "/b")
    assert env["PYTHONPATH"].split(os.pathsep) == [str(INJECT_DIR), "/a", "/b"]
    assert env["TIPC_LINEAGE_FILE"] == str(tmp_path / "infer_x_1.jsonl")
    assert env["TIPC_LINEAGE_STEP"] == "infer/x:1"
    assert step_env(tmp_path, "s", None)["PYTHONPATH"] == str(INJECT_DIR)
    assert (INJECT_DIR / "sitecustomize.py").is_file()


def test_start_step_removes_what_an_earlier_run_left(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text("old\n")
    (tmp_path / "s.files.json").write_text("{}")
    (tmp_path / "t.jsonl").write_text("other step\n")
    start_step(tmp_path, "s", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


def test_lineage_dir_lies_beside_the_run_record(tmp_path: Path) -> None:
    record = make_record(tmp_path, [])
    assert dir_for(record.plan) == tmp_path / record_location(record.plan).parent / "tipc_lineage"


def test_parse_keeps_the_earliest_access_per_path_and_mode_and_skips_bad_lines(tmp_path: Path) -> None:
    f = str(tmp_path / "w")
    lines = [
        json.dumps({"path": f, "mode": "read", "pid": 2, "time": 5.0, "via": "open", "exists": True}),
        json.dumps({"path": f, "mode": "read", "pid": 3, "time": 4.0, "via": "paddle.load", "exists": True}),
        json.dumps({"path": f, "mode": "write", "pid": 3, "time": 6.0, "via": "open"}),
        '{"path": "cut off by a cra',
        json.dumps({"path": f, "mode": "chmod", "time": 1.0}),
        json.dumps({"kind": "process", "pid": 3, "ppid": 1, "argv": ["a.py"], "cwd": "/", "time": 3.5}),
    ]
    access = parse_lines(lines, "s")
    assert [(a.mode, a.time, a.via) for a in access.accesses] == [
        ("read", 4.0, "paddle.load"),
        ("write", 6.0, "open"),
    ]
    assert access.processes[0].argv == ("a.py",) and access.started == 3.5


def test_fingerprint_hashes_files_within_the_budget(tmp_path: Path) -> None:
    small = tmp_path / "a.pdparams"
    small.write_bytes(b"abc")
    big = tmp_path / "b.pdparams"
    big.write_bytes(b"x" * 10)
    prints = fingerprint([small, big, tmp_path / "gone", tmp_path], budget=5)
    by = {Path(p.path).name: p for p in prints}
    assert by["a.pdparams"].sha256 == hashlib.sha256(b"abc").hexdigest() and by["a.pdparams"].size == 3
    assert by["b.pdparams"].sha256 is None and by["b.pdparams"].size == 10  # over the budget: size + mtime
    assert by["gone"].exists is False
    assert tmp_path.name not in by  # folders are not fingerprinted


def test_finish_step_fingerprints_the_writes_and_load_reads_them_back(tmp_path: Path) -> None:
    w = tmp_path / "w.pdparams"
    w.write_bytes(b"w")
    env = start_step(tmp_path / "lin", "train/a", None)
    Path(env["TIPC_LINEAGE_FILE"]).write_text(
        json.dumps({"path": str(w), "mode": "write", "pid": 1, "time": 1.0, "via": "open"}) + "\n"
    )
    done = finish_step(tmp_path / "lin", "train/a")
    assert done is not None and done.fingerprints[0].sha256 == hashlib.sha256(b"w").hexdigest()
    loaded = load(tmp_path / "lin")
    assert list(loaded) == ["train/a"]  # the step id, not the file name
    assert loaded["train/a"].fingerprint(str(w)) == done.fingerprints[0]
    assert finish_step(tmp_path / "lin", "never/ran") is None
    assert load(tmp_path / "absent") == {}


def test_layer_watch_sees_what_a_step_wrote_whatever_wrote_it(tmp_path: Path) -> None:
    from tipc.execute.lineage import Layer, LayerWatch, load

    upper, view, folder = tmp_path / "upper", tmp_path / "repo", tmp_path / "lineage"
    (upper / "old").mkdir(parents=True)
    (upper / "old" / "kept.txt").write_text("before")
    watch = LayerWatch([Layer(upper, view)], ignore=[view / "tipc_lineage"])
    watch.start()
    # what a native writer leaves: the file is simply there afterwards, no hook saw it
    fd = os.open(upper / "w.pdparams", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"weights")
    os.close(fd)
    (upper / "tipc_lineage").mkdir()
    (upper / "tipc_lineage" / "x.jsonl").write_text("{}")  # tipc's own: never a step's write
    if os.geteuid() == 0:
        os.mknod(upper / "gone.txt", 0o600 | stat.S_IFCHR, 0)
    found = watch.finish(folder, "train/1")
    assert finish_step(folder, "train/1") is not None  # a step only the layers saw is fingerprinted too
    written = {a.path: a for a in found}
    assert os.path.realpath(view / "w.pdparams") in written
    assert written[os.path.realpath(view / "w.pdparams")].via == "layer"
    assert not any("tipc_lineage" in p or "kept.txt" in p for p in written)
    if os.geteuid() == 0:  # an overlay whiteout: a file of the lower layer the step deleted
        assert written[os.path.realpath(view / "gone.txt")].mode == "delete"
    watch.start()
    assert watch.finish(folder, "eval/1") == []  # nothing changed while the next step ran
    access = load(folder)["train/1"]
    assert [a.path for a in access.writes] == [os.path.realpath(view / "w.pdparams")]
    assert access.writes[0].time == found[0].time  # timed at the step's start
