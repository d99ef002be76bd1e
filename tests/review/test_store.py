"""The review state: rows kept by key across runs; an unreadable state is set aside, not trusted."""

from __future__ import annotations

from pathlib import Path

from tipc.review.store import STATE_FILE, Store, job_key


def test_rows_survive_a_new_store(tmp_path: Path) -> None:
    store = Store(tmp_path)
    key = job_key("hash", "0.2.0", ["rulesets", "tipc-basic"])
    assert store.get(key) is None
    store.put(key, {"name": "a", "verdict": "PASS"})
    assert Store(tmp_path).get(key) == {"name": "a", "verdict": "PASS"}


def test_key_follows_content_version_and_options() -> None:
    base = job_key("hash", "0.2.0", ["x"])
    assert base == job_key("hash", "0.2.0", ["x"])
    assert (
        len(
            {
                base,
                job_key("other", "0.2.0", ["x"]),
                job_key("hash", "0.3.0", ["x"]),
                job_key("hash", "0.2.0", ["y"]),
            }
        )
        == 4
    )


def test_unreadable_state_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{not json")
    store = Store(tmp_path)
    assert store.note is not None and "unreadable" in store.note
    assert (tmp_path / "review-state.json.unreadable").exists()
    store.put("k", {"v": 1})
    assert Store(tmp_path).get("k") == {"v": 1}
