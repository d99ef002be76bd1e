"""A real PostgreSQL server for the history tests: Debian's server binaries, a throwaway cluster in a temp
folder, trust auth on 127.0.0.1 and a free port; stopped at the end of the session. As root (initdb refuses
root) the cluster is run as `nobody`. Skipped with the reason only where no server can start."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("TIPC_PG_BIN", "/usr/lib/postgresql/15/bin"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'tipc[history]')")
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"no PostgreSQL server binaries in {PG_BIN} (scripts/system_deps.sh installs them)")
    root = Path(tempfile.mkdtemp(prefix="tipc-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: initdb refuses root")
        prefix = ["runuser", "-u", "nobody", "--"]
        os.chmod(root, 0o777)
    data = root / "data"
    port = _free_port()
    env = dict(os.environ, LC_ALL="C", LANG="C")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, *argv], capture_output=True, text=True, env=env, timeout=120, check=False
        )

    made = run(str(PG_BIN / "initdb"), "-D", str(data), "-U", "tipc", "--auth=trust", "-E", "UTF8")
    if made.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"initdb failed: {made.stderr.strip()[-300:]}")
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=50 -c fsync=off"
    started = run(
        str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"
    )
    if started.returncode != 0:
        log = (root / "log").read_text(errors="replace")[-500:] if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"PostgreSQL did not start: {started.stderr.strip()[-300:]} {log}")
    try:
        yield f"postgresql://tipc@127.0.0.1:{port}/postgres"
    finally:
        run(str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)
