"""The `Context` of one step of a run record: the Paddle version and PIR in force, tipc's switches read
back from the record, what the earlier steps did (status, first cause, writes, an error a passed step hid in
its log, the code it reaches), the steps it consumes, the repo files its entry script reaches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.causes import hide_own_frames
from tipc.judge.causes.logs import _last_exception, _lines, _version_tuple, read_tail
from tipc.judge.causes.model import Context, Earlier
from tipc.judge.causes.repo_code import _read_code

if TYPE_CHECKING:
    from tipc.core.steps import Plan, Step
    from tipc.execute.record import RunRecord, StepResult

_PIR_FLAG = "FLAGS_enable_pir_api"


def context_for(
    record: RunRecord,
    step: Step,
    result: StepResult,
    *,
    repo: Path,
    shown_log: str = "",
    load: tuple[float, int] | None = None,
    log_of: Callable[[StepResult], Path | None] | None = None,
) -> Context:
    """The Context of one step of `record` (a tipc.execute.record.RunRecord), the repo's code read at
    `repo`; `log_of(result)` says where an earlier step's log is readable (default: under `repo`)."""
    plan = record.plan
    env = dict(result.env_delta) if result is not None else {}
    version = (record.environment or {}).get("paddle_version")
    paddle = record.paddle_version or (version if isinstance(version, str) else None)
    return Context(
        paddle=paddle,
        pir=_pir(env, paddle),
        switches=_switches(record, env),
        stage=step.stage.value,
        status=result.status.value if result is not None else "failed",
        step=step.id,
        earlier=_earlier(record, step, repo, log_of),
        depends_on=_consumed(plan, step),
        repo=repo,
        code_files=_code_files(repo, step),
        prepare_text=_read_code(str(repo / "test_tipc" / "prepare.sh")),
        output_dir=plan.output_dir,
        python=record.python or "",
        log=shown_log,
        load=load,
    )


def _pir(env: Mapping[str, str | None], paddle: str | None) -> bool | None:
    value = env.get(_PIR_FLAG)
    if value is not None:
        return value.strip().lower() not in ("0", "false", "off", "")
    if paddle is None:
        return None
    return _version_tuple(paddle)[:1] >= (3,)


def _switches(record: RunRecord, env: Mapping[str, str | None]) -> frozenset[str]:
    from tipc.core.steps import Stage

    plan = record.plan
    on: set[str] = set()
    if plan.overrides.device == "cpu":
        on.add("device-cpu")
    if plan.overrides.python:
        on.add("python")
    if (env.get(_PIR_FLAG) or "").strip().lower() in ("0", "false", "off"):
        on.add("paddle-compat-export")
    if "LD_PRELOAD" in env and "libz" in (env.get("LD_PRELOAD") or ""):
        on.add("paddle-compat-zlib")
    if not any(s.stage is Stage.PREPARE for s in plan.steps):
        on.add("no-prepare")
    sandbox = record.sandbox if isinstance(record.sandbox, dict) else None
    network = sandbox.get("network") if sandbox is not None else _network_now()
    if network:
        on.add("network")
    return frozenset(on)


def _network_now() -> bool:
    from tipc.execute import sandbox

    session = sandbox.current()
    return bool(session is not None and session.network)


def _earlier(
    record: RunRecord, step: Step, repo: Path, log_of: Callable[[StepResult], Path | None] | None = None
) -> tuple[Earlier, ...]:
    out: list[Earlier] = []
    for other in record.plan.steps:
        if other.id == step.id:
            break
        result = record.result(other.id)
        status = result.status.value if result is not None else "absent"
        causes = getattr(result, "causes", ()) if result is not None else ()
        error = ""
        if status == "passed" and result is not None and result.log and other.stage.value != "prepare":
            where = log_of(result) if log_of is not None else repo / result.log
            error = _hidden_error(where) if where is not None else ""
        out.append(
            Earlier(
                id=other.id,
                stage=other.stage.value,
                status=status,
                argv=tuple(result.argv or other.argv) if result is not None else tuple(other.argv),
                reason=result.reason if result is not None else "",
                cause=causes[0].cause if causes else "",
                log=(result.log or "") if result is not None else "",
                writes=tuple(p for _, p in other.writes),
                error=error,
                code_files=_code_files(repo, other) if status != "passed" or error else (),
            )
        )
    return tuple(reversed(out))


def _hidden_error(log: Path) -> str:
    """The exception a step's log ends with (its last traceback), for a step that exited 0 anyway."""
    lines = _lines(hide_own_frames(read_tail(log, 64_000)))
    if not any(line.startswith("Traceback (most recent call last)") for line in lines):
        return ""
    found = _last_exception(lines)
    return f"{found[0]}: {found[1]}".strip(": ") if found else ""


def _consumed(plan: Plan, step: Step) -> tuple[str, ...]:
    by_id = {s.id: s for s in plan.steps}
    out: list[str] = []
    todo = list(step.depends_on)
    while todo:
        sid = todo.pop(0)
        if sid in out:
            continue
        out.append(sid)
        dep = by_id.get(sid)
        if dep is not None:
            todo.extend(dep.depends_on)
    return tuple(out)


def _code_files(repo: Path, step: Step) -> tuple[str, ...]:
    from tipc.config.imports import entry_scripts

    cwd = repo / step.cwd
    try:
        entries = entry_scripts(step.argv, cwd, repo)
        if not entries:
            return ()
        return _scan_files(str(repo), tuple(str(e) for e in entries), str(cwd))
    except (OSError, ValueError, RecursionError):
        return ()


@functools.lru_cache(maxsize=64)
def _scan_files(repo: str, entries: tuple[str, ...], cwd: str) -> tuple[str, ...]:
    from tipc.config.imports import scan

    return scan(Path(repo), [Path(e) for e in entries], [Path(cwd)]).files
