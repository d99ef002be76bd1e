"""`sandbox_violations`: did the submission's code attempt what the sandbox denies?

Every command a sandboxed run starts goes through the jail (tipc.execute.sandbox.jail), whose seccomp filter
denies the calls that could undo the sandbox (mount, umount2, unshare of namespaces, ptrace, keyctl, bpf,
kernel modules, ...) and records each attempt outside the command's own processes. A chain never needs
them: one attempt is a FAIL naming the step and its calls, whether or not the step passed. Read from the run
records (train chain, serving chain) and from this check's own session (the commands the checks started:
predict/infer scripts, engine workers, servers).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import registered


def _sandboxes(ctx: CheckContext) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(where, the sandbox part of a record) of the train chain's record and the other chains'."""
    records = [("train chain", ctx.record)]
    records += [(f"{name} chain", rec) for name, rec in dict(ctx.records or {}).items()]
    for where, record in records:
        sandbox = getattr(record, "sandbox", None)
        if isinstance(sandbox, Mapping):
            yield where, sandbox


def _live() -> list[dict[str, Any]]:
    """Attempts recorded in this process's own sandbox so far (commands the checks started)."""
    from tipc.execute import sandbox

    session = sandbox.current()
    jail = getattr(session, "jail", None)
    return [v.to_json() for v in jail.violations()] if jail is not None else []


@registered("sandbox_violations")
def check_sandbox_violations(ctx: CheckContext) -> CheckOutcome:
    """Did the submission's code attempt system calls the sandbox denies?"""
    found: dict[str, dict[str, Any]] = {}
    jailed = recorded = False
    for where, sandbox in _sandboxes(ctx):
        jail = sandbox.get("jail")
        if isinstance(jail, Mapping):
            jailed = True
            recorded = recorded or bool(jail.get("denials_recorded"))
        for v in sandbox.get("violations") or ():
            if isinstance(v, Mapping):
                found.setdefault(f"{v.get('step')}", {"where": where, **v})
    for v in _live():
        found.setdefault(str(v.get("step")), {"where": "checks", **v})
    if found:
        evidence = tuple(
            Evidence(
                f"{step} ({v['where']}) attempted {', '.join(map(str, v.get('calls', [])))}: "
                f"{v.get('count', '?')} call(s), each denied",
                excerpt="; ".join(map(str, v.get("examples", []))) or None,
            )
            for step, v in found.items()
        )
        names = sorted({c for v in found.values() for c in v.get("calls", [])})
        return CheckOutcome(
            Verdict.FAIL,
            f"the submission attempted system calls the sandbox denies ({', '.join(names)}) in "
            f"{', '.join(found)}: a chain never needs them",
            evidence,
            {"violations": list(found.values())},
        )
    if ctx.record is None:
        return CheckOutcome(Verdict.SKIP, "no run record: nothing ran, nothing could be attempted")
    if not jailed:
        return CheckOutcome(
            Verdict.SKIP,
            "the chain did not run in tipc's jail (--no-sandbox, or a record from an older tipc): "
            "attempts could not be recorded",
        )
    if not recorded:
        return CheckOutcome(
            Verdict.WARN,
            "the jail denied the calls it filters but this kernel cannot report them (no seccomp "
            "listener): attempts are not known",
        )
    return CheckOutcome(Verdict.PASS, "no command of the run attempted a call the sandbox denies")
