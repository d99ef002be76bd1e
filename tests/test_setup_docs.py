"""The set-up docs say what the scripts and the published workflow do (issue 28): what `scripts/test.sh`
installs system-wide, that the demo needs `serve`, and a GitHub workflow that installs tipc the way it can be
installed, may publish its JUnit check run, and exports the format published repos load on Paddle 3."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _workflow() -> dict[str, object]:
    text = (ROOT / "docs" / "github-actions.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", text, re.S)
    assert block is not None
    loaded = yaml.safe_load(block.group(1))
    assert isinstance(loaded, dict)
    return loaded


def test_readme_names_what_the_test_script_installs_system_wide() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    deps = (ROOT / "scripts" / "system_deps.sh").read_text(encoding="utf-8")
    assert "scripts/system_deps.sh" in (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    for package in re.findall(r"want\+=\(([^)]*)\)", deps):
        for name in package.split():
            assert f"`{name}`" in readme, name
    assert "apt-get" in readme and "serve" in readme
    assert "/usr/sbin/tipc" in readme and "python -m tipc" in readme


def test_workflow_installs_from_git_publishes_junit_and_exports_for_paddle_3() -> None:
    flow = _workflow()
    assert flow["permissions"] == {"contents": "read", "checks": "write"}
    env = flow["env"]
    assert isinstance(env, dict) and str(env["TIPC_GIT"]).startswith("git+https://")
    runs = [
        str(step.get("run", ""))
        for job in flow["jobs"].values()  # type: ignore[attr-defined]
        for step in job["steps"]
    ]
    installs = [r for r in runs if r.startswith("pip install")]
    assert installs and all("@ $TIPC_GIT" in r for r in installs)
    check = next(r for r in runs if " check " in r)
    assert "python -m tipc check" in check and "--paddle-compat export" in check
