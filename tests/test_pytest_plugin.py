"""The pytest plugin (tipc.pytest_plugin): inert without --tipc, one item per rule with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.demo import DemoRun
from tests.test_api import RULESET

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _only_explicit_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    # Installed, tipc registers the plugin through its pytest11 entry point; these runs load it with -p alone.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_importing_the_plugin_loads_no_tipc_module() -> None:
    code = "import sys, tipc.pytest_plugin; print(sorted(m for m in sys.modules if m.startswith('tipc')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tipc', 'tipc.pytest_plugin']"


def test_without_tipc_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess("-p", "tipc.pytest_plugin", "-q")
    result.assert_outcomes(passed=1)
    assert "tipc" not in "\n".join(result.outlines).replace("tipc.pytest_plugin", "")


def test_a_folder_that_is_not_there_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("-p", "tipc.pytest_plugin", "--tipc", "no/such/repo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--tipc no/such/repo: not a folder" in "\n".join(result.errlines + result.outlines)


@pytest.mark.integration
def test_each_rule_is_a_test_item(pytester: pytest.Pytester, demo_run: DemoRun, tmp_path: Path) -> None:
    repo = demo_run.copy(tmp_path / "lenet_digits")
    ruleset = tmp_path / "api.yaml"
    ruleset.write_text(RULESET)
    args = [
        "-p",
        "tipc.pytest_plugin",
        "--tipc",
        str(repo),
        "--tipc-ruleset",
        str(ruleset),
        "--tipc-reuse-run",
    ]
    collected = pytester.runpytest_inprocess(*args, "--collect-only", "-q")
    assert {"api.has_train", "api.has_setup_cfg"} <= {line.rsplit("::", 1)[-1] for line in collected.outlines}
    result = pytester.runpytest_inprocess(*args, "-q")
    result.assert_outcomes(passed=1, failed=1)
    text = "\n".join(result.outlines)
    assert "api.has_setup_cfg FAILED" in text and "setup.cfg" in text
