"""The history database: every run and check, with its metrics and provenance.

One small layer over two engines: SQLite (the standard library; a file) and PostgreSQL (psycopg 3, imported
only when a `postgresql://` URL is given). Statements are written once with `?` placeholders. The schema is
versioned: `MIGRATIONS` is an append-only list, applied in order inside a lock (SQLite `BEGIN IMMEDIATE`,
PostgreSQL an advisory transaction lock), recorded in `schema_migrations`, so concurrent first users of a new
database never apply a step twice. Writers append in one short transaction each; SQLite runs in WAL mode
with a generous busy timeout, so concurrent writers wait instead of losing rows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.errors import UserError

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord
    from tipc.judge.baseline.metrics import RunMetrics

SQLITE, POSTGRES = "sqlite", "postgresql"
_ADVISORY_KEY = 73119  # any constant: serialises migrations between PostgreSQL clients
BUSY_TIMEOUT_S = 120.0


def _id_column(engine: str) -> str:
    return "INTEGER PRIMARY KEY AUTOINCREMENT" if engine == SQLITE else "BIGSERIAL PRIMARY KEY"


# (version, description, statements for an engine). Never edit a released step: add a new one.
def _migrations(engine: str) -> list[tuple[int, str, list[str]]]:
    return [
        (
            1,
            "runs and metrics",
            [
                f"""CREATE TABLE runs (
                    id {_id_column(engine)},
                    run_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    repo TEXT NOT NULL,
                    model TEXT NOT NULL,
                    config TEXT NOT NULL,
                    mode TEXT NOT NULL,
                    machine_class TEXT NOT NULL,
                    paddle_version TEXT,
                    paddle_commit TEXT,
                    repo_commit TEXT,
                    started DOUBLE PRECISION NOT NULL,
                    stored_at DOUBLE PRECISION NOT NULL,
                    verdict TEXT,
                    provenance TEXT NOT NULL
                )""",
                """CREATE TABLE metrics (
                    run INTEGER NOT NULL REFERENCES runs(id),
                    name TEXT NOT NULL,
                    value DOUBLE PRECISION,
                    unit TEXT NOT NULL,
                    verdict TEXT
                )""",
                "CREATE INDEX runs_key ON runs (repo, model, mode, started)",
                "CREATE INDEX metrics_run ON metrics (run)",
                "CREATE INDEX metrics_name ON metrics (name)",
            ],
        ),
        (
            2,
            "baseline bands shown in the trend page",
            [
                """CREATE TABLE bands (
                    repo TEXT NOT NULL,
                    model TEXT NOT NULL,
                    mode TEXT NOT NULL,
                    machine_class TEXT NOT NULL,
                    name TEXT NOT NULL,
                    mean DOUBLE PRECISION NOT NULL,
                    margin DOUBLE PRECISION NOT NULL,
                    stored_at DOUBLE PRECISION NOT NULL
                )""",
                "CREATE INDEX bands_key ON bands (repo, model, mode, name)",
            ],
        ),
        (
            3,
            "runs and bands keyed by the repo's identity (remote or root commit), not its folder",
            [
                "ALTER TABLE runs ADD COLUMN repo_key TEXT",
                "ALTER TABLE bands ADD COLUMN repo_key TEXT",
                "CREATE INDEX runs_repo_key ON runs (repo_key, model, config, mode, started)",
                "CREATE INDEX bands_repo_key ON bands (repo_key, model, mode, name)",
            ],
        ),
    ]


SCHEMA_VERSION = 3


@dataclass(frozen=True)
class StoredRun:
    id: int
    run_id: str
    kind: str
    model: str
    mode: str
    machine_class: str
    paddle_version: str | None
    started: float
    verdict: str | None
    metrics: dict[str, tuple[float | None, str]]
    config: str = ""
    repo_commit: str | None = None


class History:
    """A connection to one history database. Use `open_history(target)`; close it (or use `with`)."""

    def __init__(self, engine: str, conn: Any, where: str) -> None:
        self.engine = engine
        self.conn = conn
        self.where = where

    # --- plumbing -------------------------------------------------------------------------------------

    def _sql(self, text: str) -> str:
        return text if self.engine == SQLITE else text.replace("?", "%s")

    def _execute(self, cur: Any, text: str, params: Sequence[object] = ()) -> Any:
        cur.execute(self._sql(text), tuple(params))
        return cur

    def _begin(self, cur: Any) -> None:
        if self.engine == SQLITE:
            cur.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock later

    def _commit(self) -> None:
        if self.engine == SQLITE:
            self.conn.execute("COMMIT")
        else:
            self.conn.commit()

    def _rollback(self) -> None:
        try:
            if self.engine == SQLITE:
                self.conn.execute("ROLLBACK")
            else:
                self.conn.rollback()
        except Exception:
            pass

    def migrate(self) -> int:
        """Apply the migrations this database lacks; returns how many were applied."""
        cur = self.conn.cursor()
        applied = 0
        try:
            self._begin(cur)
            if self.engine == POSTGRES:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_ADVISORY_KEY,))
            self._execute(
                cur,
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                "description TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)",
            )
            done = {row[0] for row in self._execute(cur, "SELECT version FROM schema_migrations").fetchall()}
            for version, description, statements in _migrations(self.engine):
                if version in done:
                    continue
                for statement in statements:
                    self._execute(cur, statement)
                self._execute(
                    cur,
                    "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
                    (version, description, time.time()),
                )
                applied += 1
            self._commit()
        except BaseException:
            self._rollback()
            raise
        return applied

    def version(self) -> int:
        cur = self.conn.cursor()
        row = self._execute(cur, "SELECT MAX(version) FROM schema_migrations").fetchone()
        if self.engine == POSTGRES:
            self.conn.commit()
        return int(row[0] or 0)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing --------------------------------------------------------------------------------------

    def append(
        self,
        *,
        run_id: str,
        kind: str,
        repo: str,
        model: str,
        config: str,
        mode: str,
        machine_class: str,
        paddle_version: str | None,
        paddle_commit: str | None,
        repo_commit: str | None,
        started: float,
        verdict: str | None,
        provenance: dict[str, object],
        metrics: Sequence[tuple[str, float | None, str, str | None]],
        repo_key: str | None = None,
    ) -> int:
        """Store one run and its metrics (name, value, unit, verdict) in one transaction; its row id."""
        cur = self.conn.cursor()
        try:
            self._begin(cur)
            row = self._execute(
                cur,
                "INSERT INTO runs (run_id, kind, repo, model, config, mode, machine_class, paddle_version, "
                "paddle_commit, repo_commit, started, stored_at, verdict, provenance, repo_key) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    run_id,
                    kind,
                    repo,
                    model,
                    config,
                    mode,
                    machine_class,
                    paddle_version,
                    paddle_commit,
                    repo_commit,
                    started,
                    time.time(),
                    verdict,
                    json.dumps(provenance, default=str),
                    repo_key,
                ),
            ).fetchone()
            pk = int(row[0])
            if metrics:
                cur.executemany(
                    self._sql("INSERT INTO metrics (run, name, value, unit, verdict) VALUES (?, ?, ?, ?, ?)"),
                    [(pk, name, value, unit, verdict) for name, value, unit, verdict in metrics],
                )
            self._commit()
        except BaseException:
            self._rollback()
            raise
        return pk

    def store_band(
        self,
        repo: str,
        model: str,
        mode: str,
        machine_class: str,
        bands: dict[str, tuple[float, float]],
        repo_key: str | None = None,
    ) -> None:
        cur = self.conn.cursor()
        key = repo_key
        try:
            self._begin(cur)
            now = time.time()
            cur.executemany(
                self._sql(
                    "INSERT INTO bands (repo, model, mode, machine_class, name, mean, margin, stored_at, "
                    "repo_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                [(repo, model, mode, machine_class, n, m, g, now, key) for n, (m, g) in bands.items()],
            )
            self._commit()
        except BaseException:
            self._rollback()
            raise

    def store_run(
        self,
        record: RunRecord,
        run: RunMetrics,
        *,
        kind: str,
        repo: Path,
        verdict: str | None = None,
        verdicts: dict[str, str] | None = None,
    ) -> int:
        """Store a RunRecord and its RunMetrics (tipc.judge.baseline.metrics), keyed by the repo's identity
        (tipc.modelci.identity) so runs of one repo checked out into different folders form one trend."""
        from tipc.judge.baseline import store
        from tipc.modelci.identity import repo_identity

        env = record.environment or {}
        ok = all(s in ("passed", "skipped") for s in run.stages.values())
        return self.append(
            run_id=store.run_id(record),
            kind=kind,
            repo=str(repo),
            repo_key=repo_identity(repo),
            model=record.plan.model_name,
            config=record.plan.config_path,
            mode=record.plan.mode,
            machine_class=store.machine_class(env),
            paddle_version=_text(env.get("paddle_version")) or record.paddle_version,
            paddle_commit=_text(env.get("paddle_commit")),
            repo_commit=record.git_commit,
            started=record.started,
            verdict=verdict or ("passed" if ok else "failed"),
            provenance=store.provenance(record, [store.run_id(record)], run=run) | {"stages": run.stages},
            metrics=[(m.name, m.value, m.unit, (verdicts or {}).get(m.name)) for m in run.metrics.values()],
        )

    # --- reading --------------------------------------------------------------------------------------

    def runs(
        self,
        repo: str | None = None,
        model: str | None = None,
        mode: str | None = None,
        *,
        repo_keys: Sequence[str] = (),
        config: str | None = None,
    ) -> list[StoredRun]:
        """Stored runs, oldest first, with their metrics. `repo_keys` (the repo's identities) also find rows
        stored before identities were kept, by their folder `repo`."""
        where: list[str] = []
        params: list[object] = []
        if repo_keys:
            marks = ", ".join("?" for _ in repo_keys)
            where.append(f"(repo_key IN ({marks}) OR (repo_key IS NULL AND repo = ?))")
            params += [*repo_keys, repo]
        elif repo is not None:
            where.append("repo = ?")
            params.append(repo)
        for column, value in (("model", model), ("mode", mode), ("config", config)):
            if value is not None:
                where.append(f"runs.{column} = ?")
                params.append(value)
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        cur = self.conn.cursor()
        rows = self._execute(
            cur,
            "SELECT id, run_id, kind, model, mode, machine_class, paddle_version, started, verdict, config, "
            "repo_commit FROM runs" + clause + " ORDER BY started, id",
            params,
        ).fetchall()
        found: dict[int, StoredRun] = {}
        for r in rows:
            found[int(r[0])] = StoredRun(
                int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], float(r[7]), r[8], {}, r[9] or "", r[10]
            )
        if found:
            metric_rows = self._execute(
                cur,
                "SELECT m.run, m.name, m.value, m.unit FROM metrics m JOIN runs ON runs.id = m.run" + clause,
                params,
            ).fetchall()
            for run_pk, name, value, unit in metric_rows:
                if int(run_pk) in found:
                    found[int(run_pk)].metrics[name] = (None if value is None else float(value), unit)
        if self.engine == POSTGRES:
            self.conn.commit()
        return list(found.values())

    def bands(
        self, repo: str, model: str | None = None, *, repo_keys: Sequence[str] = ()
    ) -> dict[str, tuple[float, float]]:
        """The latest baseline band (mean, margin) per metric name."""
        cur = self.conn.cursor()
        params: list[object] = [repo]
        clause = "WHERE repo = ?"
        if repo_keys:
            marks = ", ".join("?" for _ in repo_keys)
            clause = f"WHERE (repo_key IN ({marks}) OR (repo_key IS NULL AND repo = ?))"
            params = [*repo_keys, repo]
        if model is not None:
            clause += " AND model = ?"
            params.append(model)
        rows = self._execute(
            cur, f"SELECT name, mean, margin FROM bands {clause} ORDER BY stored_at", params
        ).fetchall()
        if self.engine == POSTGRES:
            self.conn.commit()
        return {name: (float(mean), float(margin)) for name, mean, margin in rows}

    def count_runs(self) -> int:
        cur = self.conn.cursor()
        n = int(self._execute(cur, "SELECT COUNT(*) FROM runs").fetchone()[0])
        if self.engine == POSTGRES:
            self.conn.commit()
        return n


def default_path() -> Path:
    """`$TIPC_HISTORY` if set, else `<user data dir>/tipc/history.sqlite3` (XDG_DATA_HOME, ~/.local/share)."""
    import os

    env = os.environ.get("TIPC_HISTORY")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tipc" / "history.sqlite3"


def open_history(target: str | Path | None = None) -> History:
    """Open (and migrate) the history at `target`: a `postgresql://` URL, a file path, or the default file."""
    text = str(target) if target is not None else ""
    if text.startswith(("postgresql://", "postgres://")):
        try:
            import psycopg
        except ImportError:
            raise UserError(
                "--history: a PostgreSQL URL needs psycopg 3: pip install 'tipc[history]'"
            ) from None
        try:
            pg_conn = psycopg.connect(text, connect_timeout=30)
        except psycopg.Error as exc:
            raise UserError(f"--history: cannot connect to {_redact(text)}: {exc}") from None
        history = History(POSTGRES, pg_conn, _redact(text))
    else:
        import sqlite3

        path = Path(text) if text else default_path()
        if path.exists() and path.is_dir():
            raise UserError(f"--history: {path} is a folder, expected a database file")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:
            raise UserError(f"--history: {path}: not a usable SQLite database: {exc}") from None
        history = History(SQLITE, conn, str(path))
    try:
        history.migrate()
    except Exception as exc:
        history.close()
        raise UserError(f"--history: {history.where}: cannot prepare the database: {exc}") from None
    return history


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def iter_metric_names(runs: Sequence[StoredRun]) -> Iterator[str]:
    seen: dict[str, None] = {}
    for r in runs:
        for name in r.metrics:
            seen.setdefault(name, None)
    yield from seen


def _text(value: object) -> str | None:
    """A string field of a record's environment (None when absent or not a string)."""
    return value if isinstance(value, str) else None
