"""Where tipc's own parts run: its ONNX and agreement worker and its reference server need packages of their
own (onnxruntime, paddle2onnx, uvicorn, starlette) beside the Paddle the model was exported with. A repo's
interpreter (`--python`) often lacks them: that is no failure of the repo.

`place` picks, in this order:
1. the repo's interpreter as it is, when it has every module the part needs;
2. the repo's interpreter with tipc's own site-packages appended LAST to its sys.path (its own packages win;
   only for the same Python version, compiled packages being built for one), when that supplies the rest;
3. tipc's own interpreter, when it has them all and its Paddle can load the model (a PIR `.json` model needs
   Paddle 3);
and otherwise raises PartsMissing (exit 3) naming what to install into which interpreter. Every move is told
(`drain_notes`): the report says where a part ran.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tipc.core.errors import InfraError

_PROBES = Path(__file__).resolve().parent / "probes"
_TAIL = _PROBES / "tailpath.py"
_FIND = _PROBES / "findmodules.py"
TAIL_ENV = "TIPC_TAIL_PATH"
PIP = {"paddle": "paddlepaddle", "yaml": "PyYAML", "onnx": "onnx", "onnxruntime": "onnxruntime"}

_lock = threading.Lock()
_missing_cache: dict[tuple[str, tuple[str, ...], str], tuple[str, ...]] = {}
_notes: list[str] = []


class PartsMissing(InfraError):
    """No interpreter here can run a part of tipc: what to install where (exit 3, never a rule FAIL)."""


@dataclass(frozen=True)
class Placement:
    python: str
    prefix: tuple[str, ...]  # argv before the module's name: ("-m",) or (tailpath.py,)
    env: dict[str, str] = field(default_factory=dict)  # variables to add (PYTHONPATH, TIPC_TAIL_PATH)
    note: str = ""  # why it is not the repo's interpreter as it is

    def argv(self, module: str, *args: str) -> list[str]:
        if self.prefix == ("-m",):  # never the module from the working folder (a repo's own `tipc/`)
            from tipc.execute.proc import module_argv

            return module_argv(self.python, module, *args)
        return [self.python, *self.prefix, module, *args]


def tipc_root() -> str:
    return str(Path(__file__).resolve().parents[2])  # the folder holding the tipc package


def with_tipc(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with this tipc first on PYTHONPATH (the repo's interpreter may not have tipc installed)."""
    root = tipc_root()
    parts = [root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]]
    return {**env, "PYTHONPATH": os.pathsep.join(parts)}


def own_site_packages() -> list[str]:
    import site

    found = [p for p in (*site.getsitepackages(), site.getusersitepackages()) if os.path.isdir(p)]
    return list(dict.fromkeys(found))


def missing(python: str, modules: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The modules of `modules` that `python` cannot find (with tipc's site-packages last when `env` has
    TIPC_TAIL_PATH), asked from an empty folder; cached for this process."""
    import tempfile

    from tipc.execute import proc

    tail = (env or {}).get(TAIL_ENV, "")
    key = (python, tuple(modules), tail)
    with _lock:
        if key in _missing_cache:
            return _missing_cache[key]
    argv = [python, str(_FIND), *modules]
    run_env = None
    if tail:
        argv = [python, str(_TAIL), "tipc.execute.probes.findmodules", *modules]
        run_env = proc.build_env(None, with_tipc({TAIL_ENV: tail}))
    with tempfile.TemporaryDirectory(prefix="tipc-parts-") as empty:
        try:
            code, out = proc.capture(argv, cwd=Path(empty), env=run_env, timeout_s=120)
        except OSError:
            code, out = 127, ""
    lines = out.strip().splitlines()
    if code == 0:
        found: tuple[str, ...] = ()
    elif code == 1 and lines:
        found = tuple(lines[-1].split())
    else:
        found = tuple(modules)  # the interpreter does not even run: nothing is there
    with _lock:
        _missing_cache[key] = found
    return found


def _version(python: str) -> str | None:
    from tipc.execute import proc

    try:
        code, out = proc.capture(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], cwd=Path.cwd(), timeout_s=60
        )
    except OSError:
        return None
    lines = out.strip().splitlines()
    return lines[-1] if code == 0 and lines else None


_PADDLE_DISTS = ("paddlepaddle_gpu", "paddlepaddle")


def paddle_version_on_path(path: Sequence[str], cwd: Path) -> str | None:
    """Paddle's version from the `.dist-info` folder names on `path` (what importlib.metadata would read),
    without starting a python; None where that is not clear-cut (no such folder, or several in one place)."""
    for dist in _PADDLE_DISTS:
        pattern = re.compile(rf"{dist}-(\d[^-]*)\.dist-info", re.IGNORECASE)
        for entry in path:
            try:
                names = os.listdir(entry or cwd)
            except OSError:
                continue
            found = [m.group(1) for m in map(pattern.fullmatch, names) if m]
            if len(found) == 1:
                return found[0]
            if found:
                return None
    return None


def _needs_paddle3(model_dir: Path | None) -> bool:
    if model_dir is None or not model_dir.is_dir():
        return False
    return any(p.suffix == ".json" for p in model_dir.glob("*.json")) and not any(model_dir.glob("*.pdmodel"))


def _own_paddle_major() -> int | None:
    version = paddle_version_on_path(sys.path, Path.cwd())
    try:
        return int(version.split(".")[0]) if version else None
    except ValueError:
        return None


def place(part: str, python: str, modules: Sequence[str], *, model_dir: Path | None = None) -> Placement:
    """Where `part` (e.g. "the agreement worker") runs: see the module's docstring."""
    python = python or sys.executable
    absent = missing(python, modules)
    if not absent:
        return Placement(python, ("-m",))
    own = sys.executable
    # abspath, not realpath: a venv's python links to its base interpreter but sees other packages
    same_binary = os.path.abspath(shutil.which(python) or python) == os.path.abspath(own)
    ours = "{}.{}".format(*sys.version_info[:2])
    if "paddle" not in absent and not same_binary and _version(python) == ours:
        tail = {TAIL_ENV: os.pathsep.join(own_site_packages())}
        if not missing(python, modules, tail):
            note = (
                f"{part} ran under {python} with tipc's own packages appended last to its path "
                f"({python} lacks {', '.join(absent)})"
            )
            return Placement(python, (str(_TAIL),), tail, note)
    own_absent = missing(own, modules) if not same_binary else absent
    paddle_ok = not (_needs_paddle3(model_dir) and (_own_paddle_major() or 0) < 3)
    if not own_absent and paddle_ok:
        note = (
            f"{part} ran under tipc's interpreter {own}: {python} lacks {', '.join(absent)} "
            f"(install them there to run it under the repo's interpreter)"
        )
        return Placement(own, ("-m",), {}, note)
    pips = " ".join(dict.fromkeys(shlex.quote(PIP.get(m.split(".")[0], m.split(".")[0])) for m in absent))
    also = ""
    if not same_binary:
        also = (
            f"; tipc's own interpreter {own} cannot run it either ("
            + (f"it lacks {', '.join(own_absent)}" if own_absent else "its Paddle cannot load this PIR model")
            + ")"
        )
    raise PartsMissing(
        f"tipc's {part} needs {', '.join(modules)}; {python} lacks {', '.join(absent)}{also}. "
        f"Install them: {shlex.quote(python)} -m pip install {pips}"
    )


def tell(placement: Placement) -> Placement:
    if placement.note:
        with _lock:
            if placement.note not in _notes:
                _notes.append(placement.note)
    return placement


def drain_notes() -> list[str]:
    """Where tipc's parts ran when that was not the repo's interpreter as it is (for the report's notes)."""
    with _lock:
        out, _notes[:] = list(_notes), []
    return out


# What a tipc verb needs when a step runs it (`python -m tipc VERB`): the reference server the most.
VERB_MODULES: dict[str, tuple[str, ...]] = {
    "serve": ("numpy", "paddle", "uvicorn", "starlette", "anyio", "h11"),
}


def for_command(argv: Sequence[str]) -> Placement | None:
    """Where a step's `python -m tipc VERB ...` runs (None: the step does not run tipc). A step's interpreter
    is the run's (`--python`), which may not have tipc or its serving packages."""
    words = list(argv)
    if len(words) < 3 or "-m" not in words[:2]:
        return None
    at = words.index("-m")
    module = words[at + 1] if at + 1 < len(words) else ""
    if module != "tipc" and not module.startswith("tipc."):
        return None
    verb = words[at + 2] if module == "tipc" and at + 2 < len(words) else ""
    modules = VERB_MODULES.get(verb, ("numpy",))
    return place(f"the step's `tipc {verb}`".replace(" `", " `", 1), words[0], modules)


def step_env(env: Mapping[str, str], placed: Placement) -> dict[str, str]:
    """A step's environment with tipc importable (LAST on PYTHONPATH: the repo's own modules win) and the
    placement's variables."""
    root = tipc_root()
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    return {**env, **placed.env, "PYTHONPATH": os.pathsep.join([*parts, root])}
