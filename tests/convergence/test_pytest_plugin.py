from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from tests.convergence.seed_data import PYTHON

MODULE = "tipc.convergence.pytest_plugin"


def _plugin_args() -> list[str]:
    # Once tipc is installed with its pytest11 entry point the plugin loads by itself.
    installed = any(ep.value == MODULE for ep in importlib.metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", MODULE]


def _args(config: Path, storage: Path, *extra: str) -> list[str]:
    return [
        *_plugin_args(),
        "--converge-config",
        str(config),
        "--converge-storage",
        str(storage),
        "--converge-python",
        PYTHON,
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def test_one_item_per_segment(pytester: pytest.Pytester, seed_config: Path, seed_storage: Path) -> None:
    res = pytester.runpytest(*_args(seed_config, seed_storage, "-v"))
    res.assert_outcomes(passed=2)
    res.stdout.fnmatch_lines(["*demo_config.yml::demo::segment_0 PASSED*", "*::demo::segment_4 PASSED*"])


def test_failing_segment_shows_step_metric_values_operator_margin(
    pytester: pytest.Pytester, seed_config: Path, seed_storage: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LOSS_SCALE", "1.5")
    res = pytester.runpytest(*_args(seed_config, seed_storage, "-k", "segment_4"))
    res.assert_outcomes(failed=1, deselected=1)
    res.stdout.fnmatch_lines(
        [
            "*segment @ step 4 (ckpts/20-04-11-14-23-13/model_4:5.onnx) FAILED*",
            "step 5 loss[MLM]: actual 8.76, expected 5.84, operator '<=' margin 0.2 -> allowed <= 7.008",
        ]
    )


def test_bad_config_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path, seed_storage: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("demo:\n  directory: .\n")
    res = pytester.runpytest(*_args(bad, seed_storage))
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([f"*{bad}:1:1: demo: missing required key 'executable'*"])


def test_inactive_without_its_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    res = pytester.runpytest(*_plugin_args(), "-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)


def test_import_is_cheap() -> None:
    code = (
        f"import sys, {MODULE}; "
        "print(sorted(m for m in sys.modules if m.startswith('tipc.convergence.') or m == 'yaml'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"['{MODULE}']"


def test_missing_manifest_is_a_collection_error(
    pytester: pytest.Pytester, seed_config: Path, tmp_path: Path
) -> None:
    res = pytester.runpytest(*_args(seed_config, tmp_path / "none"))
    assert res.ret == pytest.ExitCode.INTERRUPTED
    res.stdout.fnmatch_lines(["*demo_convergence_harness_manifest.json: no manifest here: gather first*"])
    assert "Traceback" not in res.stdout.str()
