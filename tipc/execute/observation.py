"""Observing a repo's own script: its effectful half (the pure half is the tipc.planning.observe package).

    observe(config, mode, *, repo, overrides=None, script=None, timeout_s=60) -> Observation
    plan_for_run(config, mode, *, repo, overrides, dialect) -> Plan   (what `tipc run` / `tipc check` execute)

The script is a submission's code: it runs only inside the sandbox, never on the host. `observe` starts a
helper (`_helper`, tipc's own code, in a fork of this process: tipc.execute.proc.run_forked) that builds the
sandbox's layer A around the repo with its layers in a throw-away folder (a copy-on-write view at the repo's
own path, masked homes, a fresh /tmp and HOME, no network) and runs `bash SCRIPT CONFIG MODE` through the
jail, like every step of a run: no capabilities, no_new_privs, the seccomp filter whose denied calls are
recorded, an allowlisted environment. The helper's only output is a JSON file; what the script wrote (the
stand-ins' record, results logs) is read back here as untrusted data: no link followed, sizes bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tipc.core.steps import Mode, Overrides, Plan
    from tipc.planning.observe.interpret import Observation
    from tipc.planning.observe.prepare import Prepared
    from tipc.planning.observe.trace import Ran, _Status

# The parent's side imports the planning half when it is called: the helper (this module run in its own
# process, below) needs only the sandbox, and every observation pays its start-up.

__all__ = ["Observation", "observe", "plan_for_run"]


def __getattr__(name: str) -> Any:
    if name == "Observation":
        from tipc.planning.observe.interpret import Observation

        return Observation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


TOOLS = "/tmp/.tipc-tools"  # the stand-ins, as the script sees them (in the sandbox's /tmp)
OUTSIDE = "/tmp/.tipc-outside"  # a config or script from outside the repo, placed for the script
RECORD = "/tmp/.tipc-calls.jsonl"
MAX_READ = 16 << 20  # what is read back of one file the script wrote
MAX_OUTPUT_LINES = 20000
_GRACE_S = 60.0  # the helper's own setup and tear-down, beyond the script's timeout


def observe(
    config: Path,
    mode: Mode,
    *,
    repo: Path,
    overrides: Overrides | None = None,
    script: Path | None = None,
    timeout_s: float = 60,
    dialect: str | None = None,
) -> Observation:
    """Run the repo's own script in the sandbox with recording stand-ins; read back what it ran."""
    from tipc.core.steps import Overrides
    from tipc.planning.observe.interpret import interpret
    from tipc.planning.observe.prepare import prepare

    started = time.monotonic()
    prepared = prepare(
        Path(config),
        mode,
        repo=Path(repo),
        tools=TOOLS,
        outside=OUTSIDE,
        overrides=overrides if overrides is not None else Overrides(),
        script=script,
        dialect=dialect,
    )
    scratch = Path(tempfile.mkdtemp(prefix="tipc-observe-")).resolve()
    try:
        ran = _run(prepared, scratch, timeout_s, started)
    finally:
        _remove(scratch)
    return interpret(prepared, ran)


def plan_for_run(
    config: Path,
    mode: Mode,
    *,
    repo: Path,
    overrides: Overrides | None = None,
    dialect: str | None = None,
    timeout_s: float = 60,
) -> Plan:
    """The plan `tipc run` / `tipc check` should execute (tipc.planning.observe.choose.plan_from says
    which)."""
    from tipc.core.steps import MODES, Overrides
    from tipc.planning.observe.choose import plan_from
    from tipc.planning.observe.identity import wants_observation
    from tipc.planning.planner import plan

    if overrides is None:
        overrides = Overrides()
    config = Path(config)
    profile = plan(config, mode, repo=repo, overrides=overrides, dialect=dialect)
    obs = None
    if mode in MODES and wants_observation(profile, mode, Path(repo)):
        obs = observe(
            config, mode, repo=Path(repo), overrides=overrides, timeout_s=timeout_s, dialect=profile.dialect
        )
    return plan_from(profile, obs, repo=Path(repo), overrides=overrides)


# ---------------------------------------------------------------------------------------------------------
# the parent's side


def _run(prepared: Prepared, scratch: Path, timeout_s: float, started: float) -> Ran:
    from tipc.execute import proc
    from tipc.planning.observe.trace import Ran, parse_calls

    tmp = scratch / "tmp"
    _place(prepared, tmp)
    spec = {
        "repo": str(prepared.repo),
        "script_arg": prepared.script_arg,
        "config_arg": prepared.config_arg,
        "config_rel": prepared.config_rel,
        "config_text": prepared.config_text if prepared.config_rel is not None else None,
        "mode": prepared.mode,
        "timeout_s": timeout_s,
        "keep": [str(p) for p in _keep()],
        "path": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    (scratch / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    helper: list[str] = []
    try:
        # A fork of this process rather than a new interpreter: tipc's imports are paid once (issue 27's
        # fixed cost); it builds its own sandbox, outside the jail of any run this process is part of.
        res = proc.run_forked(
            lambda: _helper(scratch),
            timeout_s=timeout_s + _GRACE_S,
            on_line=lambda line: helper.append(line) if len(helper) < 200 else None,
        )
        code: int | None = res.exit_code
    except OSError as exc:
        helper.append(f"the observation could not start: {exc}")
        code = None
    result = _read_json(scratch / "result.json")
    if result is None:
        why = "\n".join(helper[-20:]) or f"exit {code}"
        return Ran(
            [],
            [],
            [f"the sandbox for the observation could not be set up: {why}"],
            None,
            False,
            prepared.repo,
            Path(TOOLS),
            {},
            timeout_s,
            time.monotonic() - started,
            0.0,
        )
    calls = parse_calls(_read_text(tmp / RECORD.removeprefix("/tmp/")))
    written = scratch / ("view" if result.get("backend") == "copy" else "upper")
    return Ran(
        calls=calls,
        statuses=_statuses(prepared.repo, written),
        output=[str(x) for x in result.get("output", [])][:MAX_OUTPUT_LINES],
        exit_code=result.get("exit_code"),
        timed_out=bool(result.get("timed_out")),
        root=prepared.repo,
        tools=Path(TOOLS),
        start_env={str(k): str(v) for k, v in dict(result.get("start_env", {})).items()},
        timeout_s=timeout_s,
        duration_s=time.monotonic() - started,
        script_s=float(result.get("script_s", 0.0)),
        denied=tuple(str(c) for c in result.get("denied", [])),
    )


def _place(prepared: Prepared, tmp: Path) -> None:
    """The stand-ins and what comes from outside the repo, in the folder that is the script's /tmp."""
    from tipc.execute.sandbox.native import record_program
    from tipc.planning.observe.standins import NATIVE_RECORDER, stand_ins

    tools = tmp / TOOLS.removeprefix("/tmp/")
    tools.mkdir(parents=True, exist_ok=True)
    native = record_program()
    if native is not None:  # a copy in the stand-ins' folder: nothing else of the host need be reachable
        shutil.copyfile(native, tools / NATIVE_RECORDER)
        (tools / NATIVE_RECORDER).chmod(0o755)
    files = stand_ins(TOOLS, RECORD, prepared.names, sys.executable, native=native is not None)
    for rel, (text, mode) in files.items():
        path = tools / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(mode)
    outside = tmp / OUTSIDE.removeprefix("/tmp/")
    if prepared.config_rel is None and prepared.config_text is not None:
        outside.mkdir(parents=True, exist_ok=True)
        (outside / Path(prepared.config_arg).name).write_text(prepared.config_text, encoding="utf-8")
    if prepared.script_outside is not None:
        outside.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(prepared.script_outside, outside / Path(prepared.script_arg).name)


def _keep() -> tuple[Path, ...]:
    """The interpreters' folders the stand-ins and the script's absolute interpreters need."""
    from tipc.execute.sandbox import python_prefixes

    return python_prefixes(sys.executable)


def _size_before(root: Path, rel: str) -> int:
    """The size of the repo's own results log at `rel` (only what the script appends is read): a regular
    file reached through real folders, not links; 0 where there is none. Asked only for the logs the script
    wrote, rather than walking the whole repo (its data included) beforehand: the repo is the sandbox's
    read-only lower layer, so it is the same before and after the script."""
    path = root
    parts = rel.split("/")
    try:
        for part in parts[:-1]:
            path = path / part
            if not stat.S_ISDIR(path.lstat().st_mode):
                return 0
        info = (path / parts[-1]).lstat()
    except (OSError, ValueError):
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _statuses(repo: Path, upper: Path) -> list[_Status]:
    """The status lines appended to results logs, from the upper layer (what the script wrote)."""
    from tipc.planning.observe.trace import status_lines

    found: list[tuple[int, Path, str]] = []
    if not upper.is_dir():
        return []
    for path in upper.rglob("results*.log"):
        with contextlib.suppress(OSError):
            info = path.lstat()
            if stat.S_ISREG(info.st_mode):
                found.append((info.st_mtime_ns, path, path.relative_to(upper).as_posix()))
    out: list[_Status] = []
    for _, path, rel in sorted(found):
        text = _read_text(path, skip=_size_before(repo, rel))
        out.extend(status_lines(text, repo / rel))
    return out


def _read_text(path: Path, *, skip: int = 0) -> str:
    """At most MAX_READ bytes of `path` after `skip`, never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        os.lseek(fd, skip, os.SEEK_SET)
        chunks, left = [], MAX_READ
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_read_text(path) or "null")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _remove(scratch: Path) -> None:
    """The throw-away folder, whatever the script left there (the overlay's work folder has mode 000)."""

    def unlock(_func: Any, path: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            if not os.path.islink(path):
                os.chmod(path, 0o700)
                shutil.rmtree(path, ignore_errors=True)

    shutil.rmtree(scratch, onerror=unlock)


# ---------------------------------------------------------------------------------------------------------
# the helper: its own process, layer A and the jail around the script


def _helper(scratch: Path) -> int:
    from tipc.execute import proc, sandbox
    from tipc.execute.sandbox import SandboxOptions

    spec = json.loads((scratch / "spec.json").read_text(encoding="utf-8"))
    # Opened before the sandbox covers /tmp (where `scratch` usually is) with the script's own /tmp.
    out = os.open(scratch / "result.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    repo = Path(spec["repo"])
    # Its /tmp is the scratch folder's tmp/, where the stand-ins were placed.
    options = SandboxOptions(backend="auto", network=False, own_process=True, tmpfs=False)
    session = sandbox.enter_scratch(repo, scratch, options, keep=[Path(p) for p in spec["keep"]])
    view = session.view
    if spec["config_rel"] is not None and spec["config_text"] is not None:
        target = view / spec["config_rel"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(spec["config_text"], encoding="utf-8")
    jail = session.jail
    home = jail.spec.home if jail is not None else "/tmp"
    start_env = {
        "PATH": f"{TOOLS}{os.pathsep}{spec['path']}",
        "HOME": home,
        "TMPDIR": jail.spec.tmpdir if jail is not None else "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "USER": "tipc",
        "LOGNAME": "tipc",
        "PYTHONPATH": f"{TOOLS}/site",
    }
    output: list[str] = []
    result: dict[str, Any] = {
        "start_env": start_env,
        "weaknesses": session.weaknesses,
        "backend": session.backend,
    }
    started = time.monotonic()
    try:
        res = proc.run(
            ["bash", spec["script_arg"], spec["config_arg"], spec["mode"]],
            cwd=view,
            env=start_env,
            timeout_s=float(spec["timeout_s"]),
            on_line=lambda line: output.append(line) if len(output) < MAX_OUTPUT_LINES else None,
            label="observe",
        )
        result.update(exit_code=res.exit_code, timed_out=res.timed_out, denied=list(res.denied))
    except OSError as exc:
        output.append(f"bash could not start: {exc}")
        result.update(exit_code=None, timed_out=False, denied=[])
    result.update(output=output, script_s=time.monotonic() - started)
    with os.fdopen(out, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    return 0

