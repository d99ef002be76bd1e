"""Across Paddle versions (seed 000): one managed environment per Paddle version, the chain run in each, and a
version x metric table saying which stage broke, which metric moved beyond its baseline margin, and the first
version where it happened.

Environments live under the user cache dir (`$XDG_CACHE_HOME/tipc/envs` or `~/.cache/tipc/envs`), one per
(Paddle version, interpreter, requirements), made with `uv venv` + `uv pip` when uv is on PATH, else
`python -m venv` + pip, and reused while a stamp file says they were completed for the same specification.
The interpreter for a version is the one given (`--python VERSION=PATH`, or one PATH for all), else Python 3.9
for Paddle 2.x (its wheels stop at 3.10/3.11 depending on the release) and this Python for later ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipc.core.errors import UserError

STAMP = "tipc-env.json"
ENV_LAYOUT = 2  # bump when what ensure_env puts into an environment changes: older ones are rebuilt
# Paddle 2.x's library carries its own zlib symbols; loaded first, it breaks Pillow's PNG decoder ("codec
# configuration error when reading image file"). A .pth line makes the environment load Pillow (and its zlib)
# at start-up, before any `import paddle`.
PILLOW_FIRST = "tipc_pillow_first.pth"
PILLOW_FIRST_TEXT = (
    "# tipc: load Pillow before Paddle 2.x, whose bundled zlib otherwise breaks Pillow's PNG decoder\n"
    "import importlib.util, sys; importlib.util.find_spec('PIL') and __import__('PIL.Image')\n"
)
_PADDLE_REQ = re.compile(r"^\s*paddlepaddle(-gpu)?\b", re.IGNORECASE)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tipc" / "envs"


def paddle_major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        raise UserError(f"--paddle {version!r}: expected a version such as 2.6.2 or 3.3.1") from None


def default_python(version: str) -> str:
    """Python 3.9 for Paddle 2.x (pyenv's 3.9 if there is one), else the interpreter running tipc."""
    if paddle_major(version) >= 3:
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))) / "versions"
    found = sorted(pyenv.glob("3.9*/bin/python3.9")) if pyenv.is_dir() else []
    if found:
        return str(found[-1])
    which = shutil.which("python3.9")
    if which is None:
        raise UserError(
            f"--paddle {version}: Paddle 2.x needs Python 3.9 (none found); give one: --python {version}=PATH"
        )
    return which


def pythons_for(versions: Sequence[str], given: Sequence[str]) -> dict[str, str]:
    """`--python PATH` (all versions) or `--python VERSION=PATH` (one), else the default per version."""
    chosen: dict[str, str] = {}
    everyone: str | None = None
    for item in given:
        version, sep, path = item.partition("=")
        if sep:
            if version not in versions:
                raise UserError(f"--python {item}: {version} is not one of the --paddle versions")
            chosen[version] = path
        else:
            everyone = item
    return {v: chosen.get(v) or everyone or default_python(v) for v in versions}


def requirements(repo: Path) -> list[str]:
    """The repo's requirements.txt lines, without Paddle itself (the matrix pins it) or comments."""
    path = repo / "requirements.txt"
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        text = line.split("#", 1)[0].strip()
        if text and not _PADDLE_REQ.match(text) and not text.startswith("-"):
            out.append(text)
    return out


def install_spec(version: str, reqs: Sequence[str]) -> list[str]:
    """What goes into the environment. Paddle 2.x wheels were built against NumPy 1.x, so NumPy is held
    below 2 for them."""
    spec = [f"paddlepaddle=={version}", *reqs]
    if paddle_major(version) < 3:
        spec = [("numpy<2" if r.strip().lower() == "numpy" else r) for r in spec]
        if not any(r.lower().startswith("numpy") for r in spec):
            spec.append("numpy<2")
    return spec


@dataclass(frozen=True)
class Env:
    version: str
    path: Path
    python: Path  # the environment's interpreter
    reused: bool


Runner = Callable[[list[str], Path], tuple[int | None, str]]  # (argv, cwd) -> (exit code, output)


def _default_runner(argv: list[str], cwd: Path) -> tuple[int | None, str]:
    from tipc.execute import proc

    return proc.capture(argv, cwd=cwd, timeout_s=1800)


def ensure_env(
    version: str,
    python: str,
    reqs: Sequence[str],
    *,
    runner: Runner = _default_runner,
    on_line: Callable[[str], None] | None = None,
) -> Env:
    """Create (or reuse) the environment for `version` with `python` and `reqs`; `on_line` hears what it
    does (creating, installing: a minute or more from PyPI)."""
    spec = install_spec(version, reqs)
    code, out = runner([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], Path.cwd())
    if code != 0:
        raise UserError(f"--python {python}: cannot run it: {out.strip()[-200:]}")
    py_version = out.strip().splitlines()[-1]
    key = hashlib.sha1(json.dumps([version, py_version, python, spec, ENV_LAYOUT]).encode()).hexdigest()[:10]
    path = cache_root() / f"paddle-{version}-py{py_version}-{key}"
    env_python = path / "bin" / "python"
    stamp = path / STAMP
    tell = on_line or (lambda text: None)
    if stamp.is_file() and env_python.exists():
        tell(f"reusing {path}")
        return Env(version, path, env_python, True)
    if path.exists():
        shutil.rmtree(path)  # an interrupted earlier attempt
    path.parent.mkdir(parents=True, exist_ok=True)
    uv = shutil.which("uv")
    if uv:
        steps = [
            [uv, "venv", "--python", python, str(path)],
            [uv, "pip", "install", "--python", str(env_python), *spec],
        ]
    else:
        steps = [
            [python, "-m", "venv", str(path)],
            [str(env_python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *spec],
        ]
    for argv, what in zip(steps, (f"creating {path}", f"installing {', '.join(spec)}"), strict=True):
        tell(what)
        code, out = runner(argv, path.parent)
        if code != 0:
            shutil.rmtree(path, ignore_errors=True)
            raise UserError(
                f"Paddle {version}: setting up its environment failed ({' '.join(argv[:3])} ...): "
                f"{out.strip()[-600:]}"
            )
    if paddle_major(version) < 3:
        for site in path.glob("lib/python*/site-packages"):
            (site / PILLOW_FIRST).write_text(PILLOW_FIRST_TEXT, encoding="utf-8")
    stamp.write_text(json.dumps({"paddle": version, "python": py_version, "spec": spec}), encoding="utf-8")
    return Env(version, path, env_python, False)


@dataclass
class Column:
    """One Paddle version's result."""

    version: str
    env: Env | None
    exit_code: int | None
    stages: dict[str, str] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)  # against the baseline, when there is one
    problem: str = ""  # why it did not run at all (environment setup failed)
    error_tail: str = ""  # the end of a failed step's log

    @property
    def broken(self) -> list[str]:
        """What broke in this version, in words: failed stages and metrics beyond their margins."""
        out = [f"setup: {self.problem}"] if self.problem else []
        out += [f"stage {s} {st}" for s, st in self.stages.items() if st not in ("passed", "skipped")]
        out += [f"{m} FAIL" for m, v in self.verdicts.items() if v == "FAIL"]
        return out


def first_broken(columns: Sequence[Column]) -> Column | None:
    return next((c for c in columns if c.broken), None)


def table(columns: Sequence[Column]) -> str:
    """The version x metric table (plain text)."""
    head = ["metric"] + [f"Paddle {c.version}" for c in columns]
    return _aligned(head, [*_stage_rows(columns), *_metric_rows(columns)])


def _stage_rows(columns: Sequence[Column]) -> list[list[str]]:
    """A row per stage, in the order the versions ran them."""
    stages = list(dict.fromkeys(s for c in columns for s in c.stages))
    return [
        [f"stage {s}"] + [c.stages.get(s, "-") if not c.problem else "no env" for c in columns]
        for s in stages
    ]


def _metric_rows(columns: Sequence[Column]) -> list[list[str]]:
    """A row per metric any version measured or judged."""
    names = sorted({n for c in columns for n in c.values} | {n for c in columns for n in c.verdicts})
    return [[n] + [_metric_cell(c, n) for c in columns] for n in names]


def _metric_cell(column: Column, name: str) -> str:
    """The value and, unless it passed, its verdict against the baseline."""
    v = column.values.get(name)
    cell = "missing" if v is None else f"{v:.4g}"
    verdict = column.verdicts.get(name)
    return cell + (f" {verdict}" if verdict and verdict != "PASS" else "")


def _aligned(head: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns, a dashed rule under the head."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def to_json(columns: Sequence[Column]) -> dict[str, Any]:
    first = first_broken(columns)
    return {
        "schema": "tipc.matrix/1",
        "first_broken": first.version if first else None,
        "versions": [
            {
                "paddle": c.version,
                "env": str(c.env.path) if c.env else None,
                "env_reused": c.env.reused if c.env else None,
                "exit_code": c.exit_code,
                "stages": c.stages,
                "metrics": c.values,
                "verdicts": c.verdicts,
                "broken": c.broken,
                "problem": c.problem,
            }
            for c in columns
        ],
    }
