"""docs/architecture.md and the import-linter contracts of .importlinter say the same thing, and the contracts
catch what they are meant to (an upward import inside a function, a cycle inside a layer)."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
CONTRACTS = ROOT / ".importlinter"


def _contracts() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(CONTRACTS, encoding="utf-8")
    return parser


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _contract_layers() -> list[tuple[frozenset[str], bool]]:
    """(modules, independent) per layer, lowest first."""
    layers = []
    for line in reversed(_lines(_contracts()["importlinter:contract:layers"]["layers"])):
        independent = "|" in line
        layers.append((frozenset(m.strip() for m in re.split(r"[|:]", line)), independent))
    return layers


def _doc_layers() -> list[tuple[frozenset[str], bool]]:
    """(modules, 'not each other') per row of the layer table, in the page's order (lowest first)."""
    text = DOC.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `tipc/")]
    out = []
    for row in rows:
        first, _what, may_import = (cell.strip() for cell in row.strip("|").split("|"))
        names = re.findall(r"`tipc/([^`]+)`", first)
        modules = frozenset(name.removesuffix(".py").rstrip("/") for name in names)
        out.append((modules, "not each other" in may_import))
    return out


def _doc_imports(heading: str) -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `(tipc[\w.]* -> tipc[\w.]*)`", section, re.M))


def _ignored(contract: str) -> set[str]:
    return set(_lines(_contracts()[f"importlinter:contract:{contract}"]["ignore_imports"]))


def test_the_layer_table_is_the_layers_contract() -> None:
    assert _doc_layers() == _contract_layers()


def test_the_upward_imports_listed_are_the_ones_the_contracts_ignore() -> None:
    upward = _doc_imports("Known upward imports (being removed)")
    cycles = _doc_imports("Known cycles inside a layer (being removed)")
    assert upward == _ignored("layers")
    assert upward | cycles >= _ignored("acyclic")
    assert cycles == _ignored("acyclic") - _ignored("layers")


def _lint_imports(package_root: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if tool is None:
        pytest.skip("import-linter is not installed (the test extra installs it)")
    return subprocess.run(
        [tool, "--config", str(package_root / ".importlinter"), "--no-cache"],
        cwd=package_root,
        env={"PYTHONPATH": str(package_root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "tipc", root / "tipc", ignore=shutil.ignore_patterns("__pycache__", "_data"))
    shutil.copy(CONTRACTS, root / ".importlinter")
    return root


def test_the_contracts_hold(copy: Path) -> None:
    result = _lint_imports(copy)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_upward_import_inside_a_function_breaks_the_layers(copy: Path) -> None:
    module = copy / "tipc" / "core" / "fs.py"
    original = module.read_text(encoding="utf-8")
    try:
        module.write_text(original + "\n\ndef _late() -> None:\n    from tipc.judge import causes\n")
        result = _lint_imports(copy)
    finally:
        module.write_text(original, encoding="utf-8")
    assert result.returncode == 1
    assert "tipc.core is not allowed to import tipc.judge" in result.stdout
    assert "tipc.core.fs -> tipc.judge.causes" in result.stdout


def test_a_cycle_inside_a_layer_breaks_the_acyclic_contract(copy: Path) -> None:
    module = copy / "tipc" / "config" / "bash.py"
    original = module.read_text(encoding="utf-8")
    try:
        module.write_text(original + "\n\ndef _late() -> None:\n    from tipc.config import lint\n")
        result = _lint_imports(copy)
    finally:
        module.write_text(original, encoding="utf-8")
    assert result.returncode == 1
    assert "No cycles are allowed in tipc.config" in result.stdout
