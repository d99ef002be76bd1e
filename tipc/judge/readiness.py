"""Before the chain runs: is the chosen interpreter ready for the repo's code?

One report, instead of one missing package per run:
- every module the steps' entry scripts import (statically, through the repo's own packages:
  tipc.config.imports) that the interpreter cannot find, in one list with the pip line that installs them;
- imports of the repo's own packages that are not in the repo (a folder the last commit deleted);
- the Paddle API level the code needs against the interpreter's Paddle: APIs a version removed (data:
  specs/causes/modules.yaml) and the `paddle.X.Y` names the code uses that this Paddle lacks, with the
  Paddle version to use.

The interpreter is asked from an empty folder (tipc/execute/probes/findmodules.py, paddleapis.py): nothing of
the repo is imported or run.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.config.imports import ImportScan, Use, entry_scripts, scan
from tipc.core.fs import atomic_write_text

if TYPE_CHECKING:
    from tipc.core.steps import Plan

MODULES_SCHEMA = "tipc.modules/1"
_PROBES = Path(__file__).resolve().parents[1] / "execute" / "probes"
# Modules tipc itself gives every step (the AutoLog stand-in, tipc.execute.compat): never "missing".
PROVIDED = frozenset({"auto_log"})
MAX_API_NAMES = 400  # paddle.X.Y names asked about in one probe
API_DEPTH = 3  # paddle.a.b: deeper chains are attributes of classes, not the API level


@dataclass(frozen=True)
class RemovedApi:
    api: str
    removed: str  # the first Paddle version without it
    use: str  # what to run such code with


@dataclass(frozen=True)
class ApiProblem:
    api: str
    use: Use
    advice: str  # the Paddle version to use


@dataclass(frozen=True)
class Readiness:
    python: str
    entries: tuple[str, ...]
    missing: tuple[tuple[str, str, Use], ...] = ()  # (module, pip distribution, first import)
    missing_local: tuple[tuple[str, Use], ...] = ()
    paddle: str | None = None
    paddle_error: str = ""
    api_problems: tuple[ApiProblem, ...] = ()
    probe_error: str = ""  # the interpreter could not be asked

    @property
    def ready(self) -> bool:
        return not (self.missing or self.missing_local or self.api_problems or self.probe_error)

    def lines(self) -> list[str]:
        """The report, one finding a line (first line: what was checked)."""
        names = ", ".join(self.entries[:4]) + (
            f" and {len(self.entries) - 4} more" if len(self.entries) > 4 else ""
        )
        if not self.entries:
            return []
        out = []
        if self.probe_error:
            return [
                f"readiness: {self.python} could not be asked about the modules {names} import "
                f"({self.probe_error})"
            ]
        if self.missing:
            listed = ", ".join(f"{m} ({u})" for m, _, u in self.missing)
            pips = " ".join(dict.fromkeys(shlex.quote(p) for _, p, _ in self.missing))
            out.append(
                f"readiness: {self.python} lacks {len(self.missing)} module(s) that {names} import: {listed}"
            )
            out.append(f"readiness: to install them: {shlex.quote(self.python)} -m pip install {pips}")
        for module, use in self.missing_local:
            out.append(
                f"readiness: {use} imports `{module}`, a package of the repo that is not in it (deleted or "
                "never committed): every step that imports it fails"
            )
        for problem in self.api_problems:
            out.append(f"readiness: {problem.use} uses `{problem.api}`: {problem.advice}")
        if not out:
            paddle = f"; Paddle {self.paddle} has the Paddle APIs they use" if self.paddle else ""
            out.append(f"readiness: {self.python} can import every module {names} import{paddle}")
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "python": self.python,
            "entries": list(self.entries),
            "missing": [{"module": m, "pip": p, "at": str(u)} for m, p, u in self.missing],
            "missing_local": [{"module": m, "at": str(u)} for m, u in self.missing_local],
            "paddle": self.paddle,
            "api_problems": [{"api": a.api, "at": str(a.use), "advice": a.advice} for a in self.api_problems],
            "probe_error": self.probe_error,
        }


# --- data ------------------------------------------------------------------------------------------------


def modules_path() -> Path:
    from tipc.core.resources import data_dir

    return data_dir("specs") / "causes" / "modules.yaml"


@functools.lru_cache(maxsize=1)
def _data() -> tuple[dict[str, str], tuple[RemovedApi, ...]]:
    from tipc.core.yamlschema import Document, Enum, Field, Map, Seq, Str

    path = modules_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}, ()
    api = Map(
        {
            "api": Field(Str(pattern=r"paddle(\.\w+)+"), True),
            "removed": Field(Str(scalar=True), True),
            "use": Field(Str(), True),
        }
    )
    schema = Map(
        {
            "schema": Field(Enum((MODULES_SCHEMA,)), identifies=True),
            "pip": Field(Map(values=Str(), keys=Str(pattern=r"[A-Za-z_][\w.]*")), default={}),
            "paddle_apis": Field(Seq(api), default=[]),
        }
    )
    data = Document(text, str(path)).conform(schema)
    removed = tuple(RemovedApi(a["api"], str(a["removed"]), a["use"]) for a in data["paddle_apis"])
    return dict(data["pip"]), removed


def pip_names() -> Mapping[str, str]:
    return _data()[0]


def removed_apis() -> tuple[RemovedApi, ...]:
    return _data()[1]


# --- the report --------------------------------------------------------------------------------------------


def entries_of(plan: Plan, repo: Path) -> list[Path]:
    """The entry scripts of every step that runs the repo's Python code (not prepare.sh, not skipped)."""
    out: dict[Path, None] = {}
    for step in plan.steps:
        if step.stage.value == "prepare" or getattr(step, "not_applicable", False):
            continue
        for path in entry_scripts(step.argv, repo / step.cwd, repo):
            out.setdefault(path.resolve(), None)
    return list(out)


def scan_plan(plan: Plan, repo: Path) -> ImportScan:
    cwds = sorted({(repo / s.cwd).resolve() for s in plan.steps})
    return scan(repo, entries_of(plan, repo), cwds)


def check(plan: Plan, python: str, repo: Path | None = None, *, timeout_s: float = 180.0) -> Readiness:
    """The readiness report of `python` for the repo of `plan`."""
    root = (repo or Path(plan.repo)).resolve()
    found = scan_plan(plan, root)
    if not found.entries:
        return Readiness(python, ())
    wanted = sorted(m for m in found.external if m not in PROVIDED)
    try:
        absent = missing_modules(python, wanted, timeout_s=timeout_s)
    except OSError as exc:
        return Readiness(python, found.entries, probe_error=str(exc))
    # the pip names are data read only to name what is missing (most runs miss nothing)
    pips = pip_names() if absent else {}
    missing = tuple((m, pips.get(m, m), found.external[m]) for m in absent)
    local = tuple(sorted(found.missing_local.items()))
    paddle, paddle_error, problems = _api_level(python, found, "paddle" not in absent, timeout_s)
    return Readiness(python, found.entries, missing, local, paddle, paddle_error, problems)


def missing_modules(python: str, names: Sequence[str], *, timeout_s: float = 180.0) -> list[str]:
    """The top-level modules of `names` that `python` cannot find (asked from an empty folder)."""
    from tipc.execute import proc

    tops = [n for n in dict.fromkeys(n.split(".")[0] for n in names) if n.isidentifier()]
    if not tops:
        return []
    with tempfile.TemporaryDirectory(prefix="tipc-ready-") as empty:
        code, out = proc.capture(
            [python, str(_PROBES / "findmodules.py"), *tops], cwd=Path(empty), timeout_s=timeout_s
        )
    if code not in (0, 1):
        raise OSError(f"exit {code}: {_last_line(out)}")
    lines = out.strip().splitlines()
    return lines[-1].split() if code == 1 and lines else []


def _api_level(
    python: str, found: ImportScan, has_paddle: bool, timeout_s: float
) -> tuple[str | None, str, tuple[ApiProblem, ...]]:
    """(Paddle version, why it could not be read, the APIs the code uses that this Paddle lacks)."""
    chains = sorted({_cut(c) for c in found.paddle_apis})
    if not has_paddle or not chains:
        return None, "" if has_paddle else "paddle is not importable", ()
    version, missing, error = paddle_apis(python, chains[:MAX_API_NAMES], timeout_s=timeout_s)
    if version is None:
        return None, error, ()
    uses = {_cut(c): u for c, u in sorted(found.paddle_apis.items(), key=lambda kv: (kv[1].path, kv[1].line))}
    problems: list[ApiProblem] = []
    reported: set[str] = set()
    for name in missing:
        if any(name.startswith(r + ".") for r in reported):
            continue  # paddle.fluid.layers after paddle.fluid: one finding
        reported.add(name)
        problems.append(ApiProblem(name, uses.get(name, Use("?", 0)), _advice(name, version)))
    return version, "", tuple(problems)


def _cut(chain: str) -> str:
    return ".".join(chain.split(".")[:API_DEPTH])


def _advice(name: str, version: str) -> str:
    for removed in sorted(removed_apis(), key=lambda r: -len(r.api)):
        if name == removed.api or name.startswith(removed.api + "."):
            return (
                f"removed in Paddle {removed.removed}, and this interpreter has Paddle {version}: run with "
                f"{removed.use} (pass that interpreter with --python)"
            )
    return (
        f"not in Paddle {version} (written for another Paddle version): run with the Paddle the repo was "
        "written for (--python), or port the call"
    )


def _cache_file(python: str, names: Sequence[str]) -> Path | None:
    """Where the answer for this interpreter (and its installed Paddle) and these names is kept: importing
    paddle costs seconds, and a repo is checked again and again with the same interpreter."""
    import hashlib
    import os
    import shutil

    found = shutil.which(python) or python
    try:
        stamp = os.stat(found).st_mtime_ns
    except OSError:
        return None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    key = hashlib.sha256(
        json.dumps([os.path.abspath(found), stamp, _paddle_stamp(found), list(names)]).encode()
    )
    return Path(base) / "tipc" / "readiness" / f"{key.hexdigest()[:32]}.json"


def _paddle_stamp(python: str) -> list[str]:
    """The paddle dist-info folders beside the interpreter's site-packages (a reinstall changes them)."""
    root = Path(python).resolve().parent.parent
    return sorted(str(p) for p in root.glob("lib/python*/site-packages/paddlepaddle*.dist-info"))


def paddle_apis(
    python: str, names: Sequence[str], *, timeout_s: float = 180.0
) -> tuple[str | None, list[str], str]:
    """(Paddle's version, the names it lacks, an error) as `python` sees it, from an empty folder; kept in
    the user's cache per interpreter, installed Paddle and names."""
    cache = _cache_file(python, names)
    if cache is not None and cache.is_file():
        try:
            kept = json.loads(cache.read_text(encoding="utf-8"))
            return str(kept["version"]), [str(n) for n in kept["missing"]], ""
        except (OSError, ValueError, KeyError, TypeError):
            pass
    answer = _ask_paddle(python, names, timeout_s)
    if cache is not None and answer[0] is not None:
        with contextlib.suppress(OSError):
            atomic_write_text(cache, json.dumps({"version": answer[0], "missing": answer[1]}))
    return answer


def _ask_paddle(python: str, names: Sequence[str], timeout_s: float) -> tuple[str | None, list[str], str]:
    from tipc.execute import proc

    with tempfile.TemporaryDirectory(prefix="tipc-ready-") as empty:
        code, out = proc.capture(
            [python, str(_PROBES / "paddleapis.py"), *names], cwd=Path(empty), timeout_s=timeout_s
        )
    for line in reversed(out.splitlines()):
        if line.startswith("TIPC-PADDLE-APIS "):
            try:
                data = json.loads(line[len("TIPC-PADDLE-APIS ") :])
            except ValueError:
                break
            version = data.get("version")
            return (
                str(version) if version else None,
                [str(n) for n in data.get("missing") or ()],
                str(data.get("error") or ""),
            )
    return None, [], f"the probe printed no answer (exit {code}): {_last_line(out)}"


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "no output"


__all__ = [
    "ApiProblem",
    "Readiness",
    "RemovedApi",
    "check",
    "missing_modules",
    "modules_path",
    "paddle_apis",
    "pip_names",
    "removed_apis",
    "scan_plan",
]
