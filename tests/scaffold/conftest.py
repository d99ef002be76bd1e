"""Fixtures for scaffold tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scaffold.scaffold_fixtures import DEMO_FILES, build_tree


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "repo", DEMO_FILES)
