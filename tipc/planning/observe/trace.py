"""The trace an observation reads back, as values: the stand-ins' calls (`parse_calls` -> `_Call`), the
status lines the script appended or echoed (`status_lines`, `_status_echoes` -> `_Status`) and `Ran`, all
the script did. Everything here was written by the script and may be forged: a line that does not parse is
left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# ---------------------------------------------------------------------------------------------------------
# observe


@dataclass(frozen=True)
class _Call:
    name: str  # argv[0] as the stand-in was invoked
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str]
    stdout: str | None
    stderr: str | None
    via: str = "stand-in"  # or "site": a real interpreter stopped by our sitecustomize


def parse_calls(text: str) -> list[_Call]:
    """The calls of a record file's text (one JSON object a line; a line that is not one is left out)."""
    calls: list[_Call] = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
            calls.append(
                _Call(
                    str(data["name"]),
                    tuple(str(a) for a in data["argv"]),
                    str(data["cwd"]),
                    {str(k): str(v) for k, v in data["env"].items()},
                    data.get("stdout") if isinstance(data.get("stdout"), str) else None,
                    data.get("stderr") if isinstance(data.get("stderr"), str) else None,
                    str(data.get("via", "stand-in")),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a call cut short by the timeout, or a line the script forged badly
    return calls


@dataclass(frozen=True)
class _Status:
    command: str
    log: str | None
    format: str
    results_log: Path | None  # None: read from bash's output


def status_lines(text: str, results_log: Path) -> list[_Status]:
    """The status lines a script appended to `results_log` (`text`: what it appended)."""
    from tipc.core.results import parse_status_line

    out: list[_Status] = []
    for line in text.splitlines():
        parsed = parse_status_line(line)
        if parsed is not None:
            out.append(_Status(parsed.command, parsed.log_path, parsed.format, results_log))
    return out


def _status_echoes(output: list[str]) -> list[_Status]:
    from tipc.core.results import parse_status_line

    out: list[_Status] = []
    for line in output:
        parsed = parse_status_line(line)
        if parsed is not None:
            out.append(_Status(parsed.command, parsed.log_path, parsed.format, None))
    return out


@dataclass(frozen=True)
class Ran:
    """What the script did, as read back from the sandbox it ran in."""

    calls: list[_Call]  # the stand-ins' records, in order
    statuses: list[_Status]  # status lines appended to results logs, in the order the logs were written
    output: list[str]  # bash's own stdout+stderr lines
    exit_code: int | None  # None: bash could not start, or was stopped at the timeout
    timed_out: bool
    root: Path  # where the repo was as the script saw it
    tools: Path  # the stand-ins' folder as the script saw it
    start_env: dict[str, str]  # the environment bash started with
    timeout_s: float
    duration_s: float  # the whole observation
    script_s: float  # bash alone
    denied: tuple[str, ...] = ()  # system calls the sandbox denied the script
