"""The review state: one JSON file in the review folder, a row per finished submission, written after each.

A row is keyed by the submission's content hash, tipc's version and what the check was asked (rulesets, mode,
interpreter, check options): an interrupted review run again finds its finished rows and checks only the
rest, and a re-review skips what is unchanged (unless --force). Stopped and unstarted checks are never
stored, so they run next time. An unreadable state file is set aside, not trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tipc.core.fs import atomic_write_text

SCHEMA = "tipc.review-state/1"
STATE_FILE = "review-state.json"


def job_key(content_hash: str, tipc_version: str, options: Sequence[str]) -> str:
    text = "\0".join((content_hash, tipc_version, *options))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class Store:
    def __init__(self, folder: Path) -> None:
        self.path = folder / STATE_FILE
        self.note: str | None = None
        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, Any]] = {}
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError("not a review state")
            rows = data.get("rows")
            if not isinstance(rows, dict):
                raise ValueError("no rows")
            self._rows = {str(k): v for k, v in rows.items() if isinstance(v, dict)}
        except (OSError, ValueError) as exc:
            aside = self.path.with_suffix(".json.unreadable")
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            self.note = (
                f"{self.path}: unreadable review state ({exc}); set aside as {aside.name}, starting afresh"
            )
            self._rows = {}

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._rows.get(key)
            return dict(row) if row is not None else None

    def put(self, key: str, row: Mapping[str, Any]) -> None:
        with self._lock:
            self._rows[key] = dict(row)
            self._write()

    def _write(self) -> None:
        # atomic: a review killed mid-write keeps the previous state whole
        state = {"schema": SCHEMA, "rows": self._rows}
        atomic_write_text(self.path, json.dumps(state, indent=1, sort_keys=True))
