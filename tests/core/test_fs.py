from __future__ import annotations

from pathlib import Path

import pytest

from tipc.core.fs import atomic_write_text


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "report.json"
    assert atomic_write_text(target, "one") == target
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "\udcff", encoding="utf-8")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]
