from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.convergence.seed_data import SEED_MANIFEST, seed_config_text


def pytest_configure(config: pytest.Config) -> None:
    # `pytest_plugins` is only allowed in the top-level conftest; the plugin tests need pytester's fixture.
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture
def seed_config(tmp_path: Path) -> Path:
    path = tmp_path / "demo_config.yml"
    path.write_text(seed_config_text(), encoding="utf-8")
    return path


@pytest.fixture
def seed_storage(tmp_path: Path) -> Path:
    """Seed 003's example manifest and the two checkpoints it names (files the fake app can resume from)."""
    storage = tmp_path / "storage"
    ckpts = storage / "ckpts" / "20-04-11-14-23-13"
    ckpts.mkdir(parents=True)
    (ckpts / "model_0.onnx").write_text("0")
    (ckpts / "model_4:5.onnx").write_text("5")
    (storage / "demo_convergence_harness_manifest.json").write_text(json.dumps(SEED_MANIFEST, indent=4))
    return storage
