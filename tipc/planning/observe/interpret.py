"""What the script ran, as a plan: `interpret(prepared, ran) -> Observation`, with the findings on how the
observation went (denied system calls TIPC045, a timeout TIPC043, no python command run TIPC042 and why);
`observation_json` is what `tipc plan --observe --format json` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from tipc.config.detect import SCRIPT
from tipc.core.findings import Finding, Level
from tipc.core.steps import Mode, Plan
from tipc.planning.observe.builder import _Builder
from tipc.planning.observe.identity import tipc_wrapper
from tipc.planning.observe.prepare import Prepared
from tipc.planning.observe.trace import Ran, _status_echoes


@dataclass(frozen=True)
class Observation:
    steps: Plan  # the commands the script ran, as Steps (no steps when it ran none)
    script_output: str  # bash's own stdout+stderr
    why_nothing: str | None  # why the script ran no python command; None when it ran some
    findings: tuple[Finding, ...] = ()
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0  # wall time of the whole observation (copy, bash, read-back)
    script_s: float = 0.0  # wall time of bash alone
    ignored: tuple[str, ...] = field(default=())  # interpreter calls that are not steps (helpers, probes)

    @property
    def complete(self) -> bool:
        """True when the script ran to its end (not stopped at the timeout, not failed to start)."""
        return not self.timed_out and self.exit_code is not None


def _why_nothing(output: str, exit_code: int | None, timed_out: bool, mode: Mode, python: str) -> str:
    if timed_out:
        return "the script did not finish before the timeout and had run no python command by then"
    if exit_code is None:
        return "bash could not be started"
    causes: list[str] = []
    for line in output.splitlines():
        text = line.strip()
        if (
            any(
                cue in text
                for cue in (
                    "No such file or directory",
                    "command not found",
                    "syntax error",
                    "unbound variable",
                    "Permission denied",
                    "unexpected end of file",
                    "bad substitution",
                )
            )
            and text not in causes
        ):
            causes.append(text)
    if causes:
        shown = "; ".join(causes[:3])
        return f"the script runs no {python} command in mode {mode} (exit {exit_code}): {shown}"
    tail = " | ".join(line.strip() for line in output.strip().splitlines()[-3:])
    said = f"; its last output: {tail}" if tail else ", printing nothing"
    return f"the script ran to its end (exit {exit_code}) without calling {python} in mode {mode}{said}"


def interpret(prepared: Prepared, ran: Ran) -> Observation:
    """The plan of what the script ran, with findings on how the observation went."""
    statuses = ran.statuses or _status_echoes(ran.output)  # a script that only echoes its status lines
    text = "\n".join(ran.output)
    built = _Builder(
        config=prepared.config,
        mode=prepared.mode,
        repo=prepared.repo,
        root=ran.root,
        tools=ran.tools,
        cfg=prepared.new_cfg,
        parsed=prepared.parsed,
        start_env=ran.start_env,
        abs_python=prepared.abs_python,
        overrides=prepared.overrides,
    ).build(ran.calls, statuses)
    findings = list(prepared.notes)
    steps_plan, ignored = built
    why: str | None = None
    where = str(prepared.config)
    script_arg = prepared.script_arg
    if ran.denied:
        findings.append(
            Finding(
                where,
                0,
                0,
                Level.ERROR,
                "TIPC045",
                f"observing {script_arg}: the script attempted system calls the sandbox denies "
                f"({', '.join(ran.denied)}); a test script never needs them",
            )
        )
    if ran.timed_out:
        findings.append(
            Finding(
                where,
                0,
                0,
                Level.WARNING,
                "TIPC043",
                f"observing {script_arg}: the script was stopped after {ran.timeout_s:g} s (a `read`, a loop "
                f"or a command that waits); {len(steps_plan.steps)} command(s) recorded before that",
            )
        )
    elif ran.exit_code is None:
        findings.append(
            Finding(where, 0, 0, Level.WARNING, "TIPC043", f"observing {script_arg}: {text.strip()[-500:]}")
        )
    if not steps_plan.steps:
        why = _why_nothing(text, ran.exit_code, ran.timed_out, prepared.mode, prepared.python_word)
        declared = tipc_wrapper(prepared.repo) if not prepared.script_given else None
        if declared is not None:
            why = (
                f"{SCRIPT} is tipc's own wrapper (`# tipc-dialect: {declared}`): it hands the run to "
                f"`tipc run --dialect {declared}`, so its commands are the {declared} profile plan "
                "(`tipc plan`)"
            )
        findings.append(Finding(where, 0, 0, Level.WARNING, "TIPC042", why))
    steps_plan = replace(steps_plan, findings=steps_plan.findings + tuple(findings))
    return Observation(
        steps=steps_plan,
        script_output=text,
        why_nothing=why,
        findings=tuple(findings),
        exit_code=ran.exit_code,
        timed_out=ran.timed_out,
        duration_s=ran.duration_s,
        script_s=ran.script_s,
        ignored=ignored,
    )


def observation_json(obs: Observation) -> dict[str, Any]:
    """What `tipc plan --observe --format json` prints."""
    return {
        **obs.steps.to_json(),
        "observed": True,
        "why_nothing": obs.why_nothing,
        "exit_code": obs.exit_code,
        "timed_out": obs.timed_out,
        "duration_s": round(obs.duration_s, 3),
        "ignored_calls": list(obs.ignored),
    }
