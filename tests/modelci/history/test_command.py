"""`tipc history` through the real CLI over a SQLite history (in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipc.cli import main
from tipc.modelci.history import open_history


def _fill(db_path: Path, repo: Path) -> None:
    with open_history(db_path) as h:
        for i, (version, loss) in enumerate([("2.6.2", 0.30), ("3.3.1", 0.29), ("3.3.1", 0.95)]):
            h.append(
                run_id=f"r{i}",
                kind="check",
                repo=str(repo),
                model="m",
                config="c",
                mode="lite",
                machine_class="cpu",
                paddle_version=version,
                paddle_commit=None,
                repo_commit=None,
                started=1.79e9 + i,
                verdict="passed",
                provenance={},
                metrics=[("train.loss.last", loss, "", None), ("stage.train.time_s", 2.0 + i, "s", None)],
            )
        h.store_band(str(repo), "m", "lite", "cpu", {"train.loss.last": (0.3, 0.02)})


def test_terminal_trend_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    db = tmp_path / "h.sqlite3"
    _fill(db, repo)
    assert main(["history", str(repo), "--history", str(db), "--metric", "train.loss.last"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 runs from") and "Paddle 2.6.2, 3.3.1" in out
    assert "train.loss.last: ▁▁█  last 3: 0.3, 0.29, 0.95" in out
    assert "latest OUTSIDE the baseline band 0.3 ± 0.02" in out and "stage.train" not in out
    page = tmp_path / "out" / "trend.html"
    assert main(["history", str(repo), "--history", str(db), "--html", str(page)]) == 0
    text = page.read_text()
    assert text.count("<svg") == 2 and 'data-metric="stage.train.time_s"' in text


def test_unknown_metric_and_missing_repo_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    db = tmp_path / "h.sqlite3"
    _fill(db, repo)
    assert main(["history", str(repo), "--history", str(db), "--metric", "nope"]) == 2
    assert "--metric nope: not stored for this repo" in capsys.readouterr().err
    assert main(["history", str(tmp_path / "absent"), "--history", str(db)]) == 2
    assert main(["history", str(repo), "--history", str(tmp_path)]) == 2
    assert "is a folder, expected a database file" in capsys.readouterr().err
