"""Tests leave no Paddle environments behind: the matrix's cache is a session temp folder (removed at the
session's end by tests/conftest.py), never ~/.cache/tipc/envs nor a cache the host names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import guards
from tipc.modelci import matrix


def test_the_env_cache_is_a_session_temp_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = matrix.cache_root().resolve()
    assert Path(os.environ["TIPC_ENV_CACHE"]).resolve() == root
    assert root.is_relative_to(tmp_path_factory.getbasetemp().resolve())
    assert not root.is_relative_to(guards.REAL_HOME)
