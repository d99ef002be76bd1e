"""`tipc baseline diff` and bad input through the real CLI (in-process; nothing here runs a chain)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.judge.baseline.test_metrics_store import _baseline
from tipc.cli import main


def _write(tmp_path: Path, name: str, scales: list[float]) -> Path:
    base, _ = _baseline(tmp_path / name, scales)
    path = tmp_path / f"{name}.yaml"
    path.write_text(base.dumps())
    return path


def test_diff_of_two_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old", [1.0, 1.0, 1.0])
    new = _write(tmp_path, "new", [2.0, 2.0, 2.0])
    assert main(["baseline", "diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "~ stage.train.time_s: 2 -> 4 s (+100.0%)" in out
    assert "~ eval.acc: 0.91 -> 0.91  (+0.0%)" in out
    assert main(["baseline", "diff", str(old), str(old)]) == 0
    assert "+100" not in capsys.readouterr().out


def test_diff_against_git_head(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    old = _write(tmp_path, "old", [1.0, 1.0, 1.0])
    repo = tmp_path / "repo"
    repo.mkdir()
    target = repo / "cpu.yaml"
    target.write_text(old.read_text())
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "cpu.yaml"], check=True)
    subprocess.run([*git, "commit", "-qm", "baseline"], check=True)
    target.write_text(_write(tmp_path, "new", [3.0, 3.0, 3.0]).read_text())
    assert main(["baseline", "diff", str(target)]) == 0
    assert "~ stage.train.time_s: 2 -> 6 s (+200.0%)" in capsys.readouterr().out


def test_bad_input_is_exit_2_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "cpu.yaml"
    bad.write_text("schema: tipc.baseline/1\nmetrics:\n  a:\n    op: '~'\n")
    assert main(["baseline", "diff", str(bad), str(bad)]) == 2
    assert f"{bad}:4:5: metrics.a.op: expected one of" in capsys.readouterr().err
    loose = tmp_path / "loose.yaml"
    loose.write_text(_write(tmp_path, "x", [1.0]).read_text())
    assert main(["baseline", "diff", str(loose)]) == 2
    assert "not committed in git" in capsys.readouterr().err
    assert main(["baseline", "record", str(tmp_path), "--repeat", "0"]) == 2
    assert main(["matrix", str(tmp_path)]) == 2  # --paddle is required


def test_record_refuses_to_overwrite_and_update_prints_the_file_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The chain runs are replaced by records built in the test (the demo acceptance test runs real ones)."""
    from tests.judge.baseline.test_metrics_store import _record
    from tipc.commands import baseline as command
    from tipc.judge.baseline.metrics import extract

    repo = tmp_path / "repo"
    (repo / "test_tipc" / "configs" / "m").mkdir(parents=True)
    (repo / "test_tipc" / "configs" / "m" / "train_infer_python.txt").write_text("model_name:m\n")
    scale = [1.0]

    def fake_runs(args: object, where: Path) -> command.ChainRuns:
        records = [_record(repo, started=1.0e9 + i, scale=scale[0]) for i in range(3)]
        return command.ChainRuns(records, [extract(r, repo) for r in records], None)

    monkeypatch.setattr(command, "run_chain_times", fake_runs)
    out_dir = tmp_path / "b"
    assert main(["baseline", "record", str(repo), "--baseline-dir", str(out_dir)]) == 0
    written = out_dir / "m" / "train_infer_python" / "lite_train_lite_infer" / "cpu.yaml"
    assert written.is_file() and "+ stage.train.time_s: new, 2 s" in capsys.readouterr().out
    before = written.read_text()
    assert main(["baseline", "record", str(repo), "--baseline-dir", str(out_dir)]) == 2
    assert "already exists; `tipc baseline update`" in capsys.readouterr().err
    assert written.read_text() == before
    scale[0] = 1.5
    assert main(["baseline", "update", str(repo), "--baseline-dir", str(out_dir)]) == 0
    captured = capsys.readouterr()
    assert "~ stage.train.time_s: 2 -> 3 s (+50.0%)" in captured.out
    assert (
        "--- a/" in captured.out
        and "-    median: 2.0\n" in captured.out
        and "+    median: 3.0\n" in captured.out
    )
    assert "review the diff above and commit it" in captured.err


def test_warm_up_runs_go_first_and_their_numbers_are_discarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--warmup 2 --repeat 3`: five chain runs, only the last three are measured (the runs are faked at the
    process seam; the demo acceptance test runs real ones)."""
    import argparse

    from tipc.commands import baseline as command
    from tipc.execute import proc

    started: list[int] = []
    loaded: list[Path] = []

    def fake_run(argv: list[str], **kwargs: object) -> proc.ProcResult:
        started.append(len(started))
        return proc.ProcResult(exit_code=0, timed_out=False, interrupted=False, started=0.0, ended=0.1, pid=1)

    class Record:
        results = ()

        def __init__(self, path: Path) -> None:
            self.path = path

        def result(self, step_id: str) -> None:
            return None

    paths = [tmp_path / f"run{i}" / "tipc_run.json" for i in range(5)]
    records = [Record(p) for p in paths]
    monkeypatch.setattr(proc, "run", fake_run)
    monkeypatch.setattr(command, "_newest_record", lambda repo, since, mode: paths[len(started) - 1])

    def load_record(path: Path) -> Record:
        loaded.append(path)
        return records[paths.index(path)]

    monkeypatch.setattr("tipc.execute.record.load_record", load_record)
    monkeypatch.setattr("tipc.judge.baseline.metrics.extract", lambda record, repo: record)
    monkeypatch.setattr(command, "_store", lambda args, write: None)
    args = argparse.Namespace(
        repeat=3,
        warmup=2,
        mode="lite_train_lite_infer",
        config=None,
        python=None,
        device=None,
        sets=[],
        history=None,
    )
    chain = command.run_chain_times(args, tmp_path)
    got, runs = chain.records, chain.runs
    assert len(started) == 5
    measured = [id(r) for r in records[2:]]
    assert [id(r) for r in got] == [id(r) for r in runs] == measured
    assert loaded == paths  # warm-ups are read too: did they pass?
    err = capsys.readouterr().err
    assert "warm-up run 1/2 (its numbers are discarded)" in err and "warm-up run 2/2" in err
    assert "baseline run 3/3" in err


def test_warmup_must_be_a_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["baseline", "record", ".", "--warmup", "-1"]) == 2
    assert "expected a whole number >= 0" in capsys.readouterr().err


def test_repeat_without_a_baseline_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    demo = Path(__file__).resolve().parents[3] / "examples" / "lenet_digits"
    assert main(["check", str(demo), "--repeat", "2"]) == 2
    assert "--repeat N judges the median of N runs against a baseline" in capsys.readouterr().err
    assert main(["check", str(demo), "--baseline", "--repeat", "0"]) == 2
    assert main(["run", str(demo), "--seed", "1", "--no-seed"]) == 2
    assert "contradict" in capsys.readouterr().err
