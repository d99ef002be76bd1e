"""The model-side worker runs under the repo's interpreter (`--python`), which may be older than tipc's own:
it and every tipc module it can import must import there (Python 3.7 and later; README: "Interpreters").

The worker's closure is found statically (every `tipc.*` import in the worker, the built-in engines and the
modules they import, inside functions too), then imported by a child under each interpreter. Third-party
packages the interpreter lacks (numpy, paddle, onnxruntime...) are stood in for by empty modules: what is
tested is tipc's own code (syntax, and annotations or type expressions evaluated at import), not the
repo's packages. An interpreter that is not on this machine is a skip naming what was looked for.
"""

from __future__ import annotations

import ast
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tipc
from tipc.judge.engines import BUILTIN_ENGINES

ROOT = Path(tipc.__file__).resolve().parent.parent
MINIMUM = (3, 7)  # the oldest interpreter --python is documented to accept (README)
ROOTS = (
    "tipc.judge.engines.worker",
    "tipc.judge.engines.base",
    "tipc.judge.engines.compare",
    *(target.split(":")[0] for target in BUILTIN_ENGINES.values()),
)


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None) if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Every node, except what `if TYPE_CHECKING:` guards (type checkers only read it) and a module
    `__getattr__`'s body."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if _type_checking(node):
            todo.extend(getattr(node, "orelse", []))
            continue
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            continue  # a package's lazy attributes (tipc.lint -> tipc.api) load only when asked for
        todo.extend(ast.iter_child_nodes(node))
    return out


def _imports(name: str, path: Path) -> set[str]:
    """The tipc modules `path` imports anywhere (functions included), and the packages above them."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # `from pkg import module`
    out: set[str] = set()
    for module in found:
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            candidate = ".".join(parts[:i])
            if parts[0] == "tipc" and _module_file(candidate) is not None:
                out.add(candidate)
    return out


def worker_closure() -> list[str]:
    todo, seen = list(ROOTS), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(name)
        assert path is not None, name
        todo.extend(_imports(name, path) - seen)
    return sorted(seen)


# The third-party packages the model side uses; the child stands in for those its interpreter lacks.
THIRD_PARTY = ("numpy", "paddle", "paddle2onnx", "onnx", "onnxruntime")

# Run by the child interpreter: stand-ins for missing third-party packages, then import each module.
_CHILD = r"""
import importlib, importlib.abc, importlib.machinery, importlib.util, json, sys, traceback, types

class _Anything(types.ModuleType):
    __path__ = []
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})

class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in STAND_INS:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            try:
                spec = finder.find_spec(fullname, path, target)
            except Exception:
                spec = None
            if spec is not None:
                return None  # the real package is there: use it
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
    def create_module(self, spec):
        return _Anything(spec.name)
    def exec_module(self, module):
        pass

STAND_INS = set(json.loads(sys.argv[2]))
sys.meta_path.append(_StandIns())
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException:
        failed[name] = traceback.format_exc(limit=3)[-800:]
print(json.dumps({"version": list(sys.version_info[:3]), "failed": failed}))
"""


def _runs(python: str, env: dict[str, str] | None = None) -> bool:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[0])"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def find_interpreter(version: str) -> tuple[str, dict[str, str]] | None:
    """An interpreter of `version` (e.g. "3.9"): $TIPC_PYTHON<39>, `python3.9` on PATH, or pyenv's."""
    env = dict(os.environ)
    given = os.environ.get(f"TIPC_PYTHON{version.replace('.', '')}")
    candidates = [given] if given else []
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(on_path)
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(f"{pyenv_root}/versions/{version}.*/bin/python{version}"), reverse=True)
    for python in candidates:
        # a pyenv shim runs only with a version chosen: choose the newest installed one of this series
        installed = sorted(glob.glob(f"{pyenv_root}/versions/{version}.*"), reverse=True)
        if installed:
            env["PYENV_VERSION"] = os.path.basename(installed[0])
        if _runs(python, env):
            return python, env
    return None


def _import_all(python: str, env: dict[str, str]) -> dict[str, object]:
    env = dict(env)
    env["PYTHONPATH"] = str(ROOT)
    env.pop("PYTHONHOME", None)
    done = subprocess.run(
        [python, "-B", "-c", _CHILD, json.dumps(worker_closure()), json.dumps(THIRD_PARTY)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(ROOT),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_closure_holds_the_worker_and_its_engines_but_not_the_checks() -> None:
    closure = worker_closure()
    assert "tipc.judge.engines.worker" in closure
    assert "tipc.judge.engines.paddle_inference" in closure
    assert "tipc.judge.model_files" in closure
    # the checks package imports the whole judge layer; the worker must not need it
    assert not [m for m in closure if m.startswith("tipc.judge.checks")], closure


@pytest.mark.parametrize("version", ["3.7", "3.8", "3.9"])
def test_the_worker_imports_under_an_older_interpreter(version: str) -> None:
    found = find_interpreter(version)
    if found is None:
        pytest.skip(
            f"no Python {version} here (looked for $TIPC_PYTHON{version.replace('.', '')}, python{version} "
            "on PATH and pyenv's versions)"
        )
    python, env = found
    result = _import_all(python, env)
    assert result["version"][:2] == [int(x) for x in version.split(".")]  # type: ignore[index]
    assert result["failed"] == {}, result["failed"]


def test_the_worker_imports_under_the_real_repos_interpreter() -> None:
    python = ROOT / ".venv-repos" / "bin" / "python"
    if not python.is_file():
        pytest.skip(".venv-repos is not made (scripts/repos_env.sh makes it)")
    result = _import_all(str(python), dict(os.environ))
    assert result["failed"] == {}, result["failed"]


def test_the_minimum_is_the_one_the_readme_states() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Python {MINIMUM[0]}.{MINIMUM[1]}" in text
    assert sys.version_info >= (3, 10)  # tipc itself
