"""Run history for model CI: the database layer (`db`), the terminal trend (`trend`) and the HTML page
(`html`). Importing this package imports neither sqlite3's driver work nor psycopg until a database opens."""

from __future__ import annotations

from tipc.modelci.history.db import History, default_path, open_history

__all__ = ["History", "default_path", "open_history"]
