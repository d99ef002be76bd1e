"""Across Paddle versions (seed 000): one managed environment per Paddle version, the chain run in each, and a
version x metric table saying which stage broke, which metric moved beyond its baseline margin, and the first
version where it happened.

Environments live under `$TIPC_ENV_CACHE`, else the user cache dir (`$XDG_CACHE_HOME/tipc/envs` or
`~/.cache/tipc/envs`), one per
(Paddle version, interpreter, requirements), made with `uv venv` + `uv pip` when uv is on PATH, else
`python -m venv` + pip, and reused while a stamp file says they were completed for the same specification.
The interpreter for a version is the one given (`--python VERSION=PATH`, or one PATH for all), else Python 3.9
for Paddle 2.x (its wheels stop at 3.10/3.11 depending on the release) and this Python for later ones.

A version pip cannot install is "not installable" with pip's one-line reason, never a broken version. A
version is broken only when a stage failed or an effect metric (loss, accuracy) regressed against the
baseline: timings and resources that left their band are shown with the load they were taken under, but a
loaded machine alone never names a version broken. `bisect` finds the first broken release between two.
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
from tipc.core.fs import atomic_write_text

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
    own = os.environ.get("TIPC_ENV_CACHE")
    if own:
        return Path(own)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tipc" / "envs"


class NotInstallable(UserError):
    """pip (or uv) cannot install this Paddle version for this interpreter."""

    def __init__(self, version: str, reason: str) -> None:
        super().__init__(f"Paddle {version} is not installable: {reason}")
        self.version = version
        self.reason = reason


_REASON = re.compile(
    r"^\s*(?:ERROR:\s*(?:Could not find a version|No matching distribution|Ignored the following)"
    r"|.*Because there is no version|.*no matching distribution|.*requires-python|ERROR: Package)",
    re.IGNORECASE,
)


def pip_reason(output: str) -> str:
    """pip's (or uv's) one line saying why an install failed: its first `ERROR: Could not find a version
    ...` line or uv's `Because there is no version ...`, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    found = next((line for line in lines if _REASON.match(line)), None)
    text = found or (lines[-1] if lines else "no output")
    return text.lstrip("╰─▶ ").strip()[:400]


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
    doing = (f"creating {path}", f"installing {', '.join(spec)}")
    for index, (argv, what) in enumerate(zip(steps, doing, strict=True)):
        tell(what)
        code, out = runner(argv, path.parent)
        if code != 0:
            shutil.rmtree(path, ignore_errors=True)
            if index == len(steps) - 1:  # the install itself
                raise NotInstallable(version, pip_reason(out))
            raise UserError(
                f"Paddle {version}: setting up its environment failed ({' '.join(argv[:3])} ...): "
                f"{out.strip()[-600:]}"
            )
    if paddle_major(version) < 3:
        for site in path.glob("lib/python*/site-packages"):
            (site / PILLOW_FIRST).write_text(PILLOW_FIRST_TEXT, encoding="utf-8")
    # the stamp says the environment is whole: a half-written one must not pass for it
    atomic_write_text(stamp, json.dumps({"paddle": version, "python": py_version, "spec": spec}))
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
    not_installable: str = ""  # pip's one-line reason when the version cannot be installed
    kinds: dict[str, str] = field(default_factory=dict)  # metric -> effect | performance | resource
    load: str = ""  # the load its timings were taken under, against the baseline's
    repo_commit: str | None = None

    @property
    def broken(self) -> list[str]:
        """What broke in this version, in words: a setup failure, failed stages, effect metrics beyond their
        margins (a version that cannot be installed is not broken, nor one whose timings alone moved)."""
        out = [f"setup: {self.problem}"] if self.problem else []
        out += [f"stage {s} {st}" for s, st in self.stages.items() if st not in ("passed", "skipped")]
        out += [f"{m} FAIL" for m, v in self.verdicts.items() if v == "FAIL" and self._counts(m)]
        return out

    def _counts(self, metric: str) -> bool:
        """A FAIL row that breaks a version: a missing stage (`stage.eval`) or an effect metric."""
        return (metric.startswith("stage.") and metric.count(".") == 1) or self.kinds.get(metric) == "effect"

    @property
    def moved(self) -> list[str]:
        """Timings and resources that left their band: shown with the load, never a broken version."""
        return [
            f"{m} {v}"
            for m, v in self.verdicts.items()
            if v in ("FAIL", "INCONCLUSIVE") and self.kinds.get(m) in ("performance", "resource")
        ]


def first_broken(columns: Sequence[Column]) -> Column | None:
    return next((c for c in columns if c.broken), None)


# ---- releases between two versions, and the first broken one among them


def version_key(version: str) -> tuple[int, ...] | None:
    """The numeric release of a final version (3.3.1 -> (3, 3, 1)); None for a pre-release or dev build."""
    if not re.fullmatch(r"\d+(\.\d+)*(\.post\d+)?", version.strip()):
        return None
    return tuple(int(p) for p in version.split(".post")[0].split("."))


def releases_between(available: Sequence[str], low: str, high: str) -> list[str]:
    """The final releases from `low` to `high` (both included, in either order), oldest first."""
    lo, hi = version_key(low), version_key(high)
    if lo is None or hi is None:
        raise UserError(f"--bisect {low} {high}: expected two final versions such as 2.6.2 3.3.1")
    lo, hi = min(lo, hi), max(lo, hi)
    keyed = {k: v for v in available if (k := version_key(v)) is not None and lo <= k <= hi}
    return [keyed[k] for k in sorted(keyed)]


def available_versions(python: str, *, runner: Runner | None = None) -> list[str]:
    """The paddlepaddle versions pip can see for `python` (`pip index versions`)."""
    run = runner or _default_runner
    code, out = run([python, "-m", "pip", "index", "versions", "paddlepaddle"], Path.cwd())
    found = re.search(r"Available versions:\s*(.+)", out)
    if code != 0 or found is None:
        raise UserError(f"cannot list the paddlepaddle releases with {python}: {pip_reason(out)}")
    return [v.strip() for v in found.group(1).split(",") if v.strip()]


def bisect(versions: Sequence[str], probe: Callable[[str], Column]) -> tuple[Column | None, list[Column]]:
    """The first broken version among `versions` (oldest first), probing as few as a binary search needs;
    a version that cannot be installed is dropped from the search. Returns it (None when the newest is
    not broken, or the oldest already is: then there is nothing to bisect) and every column probed."""
    candidates = list(versions)
    probed: dict[str, Column] = {}

    def look(version: str) -> Column:
        if version not in probed:
            probed[version] = probe(version)
        return probed[version]

    while candidates and look(candidates[0]).not_installable:
        candidates.pop(0)
    while candidates and look(candidates[-1]).not_installable:
        candidates.pop()
    if len(candidates) < 2 or not look(candidates[-1]).broken:
        return None, list(probed.values())
    if look(candidates[0]).broken:
        return probed[candidates[0]], list(probed.values())
    good, bad = 0, len(candidates) - 1  # candidates[good] works, candidates[bad] is broken
    while bad - good > 1:
        mid = (good + bad) // 2
        column = look(candidates[mid])
        if column.not_installable:
            candidates.pop(mid)
            bad -= 1
            continue
        if column.broken:
            bad = mid
        else:
            good = mid
    return probed[candidates[bad]], list(probed.values())


def table(columns: Sequence[Column]) -> str:
    """The version x metric table (plain text)."""
    head = ["metric"] + [f"Paddle {c.version}" for c in columns]
    env_row = ["environment"] + [_env_cell(c) for c in columns]
    return _aligned(head, [env_row, *_stage_rows(columns), *_metric_rows(columns)])


def _env_cell(column: Column) -> str:
    if column.not_installable:
        return "not installable"
    if column.env is None:
        return "setup failed"
    return "reused" if column.env.reused else "created"


def _stage_rows(columns: Sequence[Column]) -> list[list[str]]:
    """A row per stage, in the order the versions ran them."""
    stages = list(dict.fromkeys(s for c in columns for s in c.stages))
    return [[f"stage {s}"] + [_stage_cell(c, s) for c in columns] for s in stages]


def _stage_cell(column: Column, stage: str) -> str:
    if column.not_installable:
        return "not installable"
    return "no env" if column.problem else column.stages.get(stage, "-")


def _metric_rows(columns: Sequence[Column]) -> list[list[str]]:
    """A row per metric any version measured or judged."""
    names = sorted({n for c in columns for n in c.values} | {n for c in columns for n in c.verdicts})
    return [[n] + [_metric_cell(c, n) for c in columns] for n in names]


def _metric_cell(column: Column, name: str) -> str:
    """The value and, unless it passed, its verdict against the baseline."""
    if column.not_installable or column.problem:
        return "-"  # nothing ran
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
                "not_installable": c.not_installable or None,
                "repo_commit": c.repo_commit,
                "load": c.load,
                "moved": c.moved,
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
