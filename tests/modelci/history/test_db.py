"""The history database layer on SQLite and on a real PostgreSQL: migrations, appends, reads, and 200
concurrent appends from 4 processes losing none."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from tipc.core.errors import UserError
from tipc.modelci.history import db as history_db
from tipc.modelci.history import open_history

WRITERS, PER_WRITER = 4, 50


def _append(target: str, writer: int, n: int) -> None:
    with open_history(target) as h:
        for i in range(n):
            h.append(
                run_id=f"w{writer}-{i}",
                kind="check",
                repo="/r",
                model="m",
                config="c.txt",
                mode="lite",
                machine_class="cpu",
                paddle_version=("2.6.2" if i % 2 else "3.3.1"),
                paddle_commit=None,
                repo_commit=None,
                started=1000.0 + writer * 1000 + i,
                verdict="passed",
                provenance={"writer": writer},
                metrics=[("train.loss.last", 0.1 * i, "", "PASS"), ("stage.train.time_s", 2.0, "s", None)],
            )


def _concurrent(target: str) -> None:
    ctx = multiprocessing.get_context("spawn")  # fresh interpreters: no connection is shared across a fork
    procs = [ctx.Process(target=_append, args=(target, w, PER_WRITER)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=240)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    with open_history(target) as h:
        runs = h.runs(repo="/r")
        assert h.count_runs() == WRITERS * PER_WRITER
    assert len({r.run_id for r in runs}) == WRITERS * PER_WRITER
    assert all(len(r.metrics) == 2 for r in runs)
    assert [r.started for r in runs] == sorted(r.started for r in runs)


def _roundtrip(target: str) -> None:
    with open_history(target) as h:
        assert h.version() == history_db.SCHEMA_VERSION
        pk = h.append(
            run_id="a",
            kind="check",
            repo="/r",
            model="m",
            config="c",
            mode="lite",
            machine_class="cpu",
            paddle_version="3.3.1",
            paddle_commit="abc",
            repo_commit=None,
            started=5.0,
            verdict="passed",
            provenance={"k": "v"},
            metrics=[("eval.acc", 0.91, "", "PASS"), ("x", None, "", None)],
        )
        assert pk > 0
        h.store_band("/r", "m", "lite", "cpu", {"eval.acc": (0.9, 0.05)})
        runs = h.runs(repo="/r", model="m", mode="lite")
        assert [(r.run_id, r.paddle_version, r.metrics["eval.acc"]) for r in runs] == [
            ("a", "3.3.1", (0.91, ""))
        ]
        assert runs[0].metrics["x"] == (None, "")
        assert h.runs(repo="/other") == []
        assert h.bands("/r") == {"eval.acc": (0.9, 0.05)}
    with open_history(target) as h:  # reopening applies nothing new and keeps the rows
        assert h.migrate() == 0 and h.count_runs() == 1


def test_sqlite_roundtrip_and_migrations(tmp_path: Path) -> None:
    target = str(tmp_path / "sub" / "h.sqlite3")
    _roundtrip(target)


def test_sqlite_200_concurrent_appends_from_4_processes(tmp_path: Path) -> None:
    _concurrent(str(tmp_path / "h.sqlite3"))


@pytest.mark.integration
def test_postgresql_roundtrip_and_concurrent_appends(postgres_url: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS tipc_a")
        conn.execute("DROP DATABASE IF EXISTS tipc_b")
        conn.execute("CREATE DATABASE tipc_a")
        conn.execute("CREATE DATABASE tipc_b")
    base = postgres_url.rsplit("/", 1)[0]
    _roundtrip(f"{base}/tipc_a")
    _concurrent(f"{base}/tipc_b")


def test_bad_targets_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a folder"):
        open_history(tmp_path)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(UserError, match=r"junk\.sqlite3"):
        open_history(junk)
    with pytest.raises(UserError, match=r"cannot connect to postgresql://u:\*\*\*@127.0.0.1:1/x"):
        open_history("postgresql://u:secret@127.0.0.1:1/x")


def test_the_default_file_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIPC_HISTORY", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert history_db.default_path() == tmp_path / "tipc" / "history.sqlite3"
    monkeypatch.setenv("TIPC_HISTORY", str(tmp_path / "x.db"))
    assert history_db.default_path() == tmp_path / "x.db"
