"""Seed 004 §4.1.3 "按照文档操作步骤": the commands the docs give run (rule `docs.commands_run`).

Reads the record of the `documented` chain (tipc.planning.documented: the shell code blocks of README.md,
test_tipc/docs/*.md and deploy/**/README*.md, run in the sandbox by `tipc check`). Each command that ran and
failed is a FAIL with its place in the docs, the command and its error; a command still running at the
time budget (a full-recipe training, an evaluation over a full test set on a CPU) ran (it is stopped, not
failed); a command that could not run here (a set-up command offline, a
download its input needs, a tool outside the acceptance's chain, a weight download at run time offline) is
N-A with its reason. Args: chain (the record's name, default "documented").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from tipc.core.yamlschema import Field, Map, Str
from tipc.judge.checks._common import excerpt, outcome, read_lines, resolve
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import arg_str_or, registered

if TYPE_CHECKING:
    from tipc.core.causes import Cause
    from tipc.execute.record import RunRecord, StepResult
    from tipc.planning.documented.model import DocCommand, Documented

_ERROR_LINE = re.compile(
    r"(^\w*(Error|Exception|Interrupt)\b.*|: error: .*|^error: .*|^fatal: .*|No such file or directory|"
    r"can't open file .*|command not found)",
    re.IGNORECASE,
)
_OFFLINE_CAUSES = frozenset({"weights-download-failed", "pip-install-failed"})
# limits of this run (--disk-limit, --memory-limit), not faults of the command: a full-recipe training that
# writes a checkpoint per epoch fills a 1 GiB disk limit as surely as it outlasts a time budget
_LIMIT_CAUSES = frozenset({"disk-limit", "resource-limit"})
MAX_LISTED = 12
# "The path (models/model-bottle.pdparams) to load model not exists", "No such file or directory: 'w.pt'"
_MISSING = re.compile(r"not exists?|does not exist|no such file|not found|cannot (?:find|open)", re.I)


@dataclass(frozen=True)
class Item:
    """One documented command and what became of it."""

    step_id: str
    location: str  # doc:line
    text: str  # the command as written
    state: str  # passed | failed | budget | na | skip
    detail: str  # the error, or why it did not run
    log: str | None = None
    line: int | None = None  # the error's line in the log

    WHAT: ClassVar[dict[str, str]] = {
        "passed": "ran",
        "failed": "failed",
        "budget": "ran until a limit of this run",
        "na": "could not run here",
        "skip": "was not checked",
    }

    def evidence(self) -> Evidence:
        what = {"na": "not run", "skip": "not checked"}.get(self.state, self.WHAT[self.state])
        text = f"{self.location}: `{excerpt(self.text, 160)}` {what}"
        if self.detail:
            text += f": {self.detail}"
        return Evidence(text, path=self.log, line=self.line)


def error_line(repo: Path | str, log: str | None) -> tuple[str, int | None]:
    """The line of a failed command's log that says why (a Python exception, argparse's `error:`), else its
    last line."""
    if not log:
        return "", None
    lines = read_lines(resolve(repo, log)) or []
    found: tuple[str, int | None] = ("", None)
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text and _ERROR_LINE.search(text):
            found = (text, number)
    if found[0]:
        return excerpt(found[0], 240), found[1]
    tail = next(((ln.strip(), n) for n, ln in reversed(list(enumerate(lines, start=1))) if ln.strip()), None)
    return (excerpt(tail[0], 240), tail[1]) if tail else ("", None)


def stopped_by_limit(result: StepResult) -> str | None:
    """Why `result` was stopped by a limit of this run (its time budget, the disk or memory limit), not by
    an error of its own; None when it was not."""
    from tipc.core.steps import Status

    if result.status is Status.TIMEOUT:
        return str(result.reason)
    if result.status is Status.FAILED:
        hit = next((c for c in getattr(result, "causes", ()) or () if c.id in _LIMIT_CAUSES), None)
        if hit is not None:
            return f"{hit.cause} ({hit.remedy})" if hit.remedy else str(hit.cause)
    return None


def documented_of(ctx: CheckContext, record: RunRecord) -> Documented:
    """The documented commands the record's plan was made from (planned again from the repo: pure)."""
    from tipc.planning.documented.plan import plan_documented

    plan = record.plan
    config = Path(plan.config_path) if plan.config_path else None
    return plan_documented(
        Path(ctx.repo), model_name=plan.model_name, config=config, overrides=plan.overrides, sandboxed=True
    )


def items_of(ctx: CheckContext, record: RunRecord) -> tuple[list[Item], Documented]:
    """An Item per step of the documented record, in doc order; and the Documented value."""
    from tipc.core.steps import Status

    documented = documented_of(ctx, record)
    items: list[Item] = []
    for step in record.plan.steps:
        result = record.result(step.id)
        command = documented.command(step.id)
        location = command.location if command is not None else step.id.removeprefix("doc/")
        text = command.text if command is not None else step.status_command
        if result is None:
            items.append(Item(step.id, location, text, "skip", "no result in the record"))
            continue
        status = result.status
        causes = tuple(getattr(result, "causes", ()) or ())
        limit = stopped_by_limit(result)
        if status is Status.PASSED:
            items.append(Item(step.id, location, text, "passed", "", result.log))
        elif limit is not None:
            # a full-recipe training, or an evaluation over a full test set on a CPU, is still running
            # at the budget (or has filled the disk limit): it ran as far as it got, shown wrong by nothing
            items.append(Item(step.id, location, text, "budget", limit, result.log))
        elif status is Status.FAILED:
            offline = next((c for c in causes if c.id in _OFFLINE_CAUSES), None)
            if offline is not None and not _network(record):
                items.append(Item(step.id, location, text, "na", f"{offline.cause} (no network)", result.log))
                continue
            line, number = error_line(ctx.repo, result.log)
            unmade = _weights_never_made(ctx.repo, line, command, items, documented)
            follows = ("na", unmade) if unmade else _follows(causes, items)
            if follows is not None:
                items.append(Item(step.id, location, text, follows[0], follows[1], result.log, number))
                continue
            detail = line or result.reason
            if causes:
                detail = f"{detail} [{causes[0].cause}]" if detail else causes[0].cause
            items.append(Item(step.id, location, text, "failed", detail, result.log, number))
        elif status is Status.INTERRUPTED:
            items.append(Item(step.id, location, text, "skip", result.reason))
        else:  # SKIPPED (not applicable, a missing module, an input step skipped) or BLOCKED
            items.append(Item(step.id, location, text, "na", _reason(result.reason)))
    return items, documented


def _weights_never_made(
    repo: Path | str, error: str, command: DocCommand | None, earlier: list[Item], documented: Documented
) -> str:
    """Why a command that failed on missing weights could not run here ("" when it failed otherwise): the
    weights are not in the repo and no documented training ran to its end before it. The docs then make
    them outside their shell code blocks (a training in inline code, a download link), which tipc cannot
    follow: Paddle-Cutpaste's `python deploy/export_model.py` reads the models/ its README trains in inline
    code or downloads by hand. After a documented training that ran, missing weights are the docs' fault."""
    if not error or not _MISSING.search(error):
        return ""
    from tipc.judge.lineage_graph import WEIGHT_SUFFIXES

    found = [w.strip("'\"`()[],:;") for w in error.split()]
    path = next((w for w in found if w.endswith(WEIGHT_SUFFIXES)), "")
    if not path:
        return ""
    cwd = getattr(command, "cwd", ".") or "."
    if any((Path(repo) / base / path).exists() for base in (".", cwd)):
        return ""
    trainings = [i for i in earlier if _purpose(documented, i.step_id) == "train"]
    if any(i.state == "passed" for i in trainings):
        return ""
    why = (
        "the documented training that makes them was stopped at a limit of this run"
        if any(i.state == "budget" for i in trainings)
        else "no documented command that ran here makes them (the docs train or download them outside "
        "their shell code blocks)"
    )
    return f"needs the weights {path}, which the repo does not ship; {why}"


def _follows(causes: tuple[Cause, ...], earlier: list[Item]) -> tuple[str, str] | None:
    """(state, why) for a command whose failure follows from an earlier one that could not run here or was
    stopped at a limit (its cause names that step upstream: the file it lacks is what that step makes)."""
    upstream = next((c.upstream for c in causes if getattr(c, "upstream", None)), None)
    before = next((i for i in earlier if i.step_id == upstream), None)
    if before is None or before.state not in ("na", "budget"):
        return None
    return before.state, f"its input comes from {before.location}, which {Item.WHAT[before.state]}"


def _purpose(documented: Documented, step_id: str) -> str:
    command = documented.command(step_id)
    return str(getattr(command, "purpose", "")) if command is not None else ""


def _network(record: RunRecord) -> bool:
    sandbox = getattr(record, "sandbox", None)
    return bool(sandbox.get("network")) if isinstance(sandbox, dict) else False


def _reason(reason: str) -> str:
    return reason.removeprefix("not applicable: ")


@registered("documented_commands", args=Map({"chain": Field(Str(what="a chain name"), default="documented")}))
def check_documented_commands(ctx: CheckContext, **args: object) -> CheckOutcome:
    """The README's documented commands ran, each to its end, without an error."""
    record = (ctx.records or {}).get(arg_str_or(args, "chain", "documented"))
    if record is None:
        return outcome(
            Verdict.SKIP, "the documented commands did not run (no record of the documented chain)"
        )
    items, documented = items_of(ctx, record)
    if not documented.docs:
        return outcome(Verdict.FAIL, "the repo has no README.md to follow", Evidence("expected README.md"))
    data = {
        "docs": list(documented.docs),
        "commands": [c.to_json() for c in documented.commands],
        "substitutions": [s.text() + f" [{s.step_id}]" for s in documented.substitutions],
        "notes": list(documented.notes),
        "steps": [{"id": i.step_id, "state": i.state, "detail": i.detail} for i in items],
    }
    return _verdict(items, documented, data)


def _verdict(items: list[Item], documented: Documented, data: dict[str, object]) -> CheckOutcome:
    counts = {s: sum(1 for i in items if i.state == s) for s in ("passed", "failed", "budget", "na")}
    tally = (
        f"{counts['passed']} ran, {counts['failed']} failed, "
        f"{counts['budget']} stopped at a limit of this run, {counts['na']} not run here"
    )
    subs = [Evidence(f"substitution: {s.text()}") for s in documented.substitutions]
    failed = [i for i in items if i.state == "failed"]
    if failed:
        first = failed[0]
        return CheckOutcome(
            Verdict.FAIL,
            f"{first.location}: `{excerpt(first.text, 120)}` failed: {first.detail} ({tally})",
            tuple([*(i.evidence() for i in failed[:MAX_LISTED]), *subs]),
            data,
        )
    ran = [i for i in items if i.state in ("passed", "budget")]
    listed = [*ran, *(i for i in items if i.state == "na")]
    if not items:
        return CheckOutcome(
            Verdict.FAIL,
            f"the docs ({', '.join(documented.docs[:3])}) give no command in a shell code block",
            (Evidence("documented commands are read from ``` code blocks (bash, shell or no language)"),),
            data,
        )
    if not ran:
        return CheckOutcome(
            Verdict.NA,
            f"no documented command could run here ({tally}): {items[0].location} {items[0].detail}",
            tuple(i.evidence() for i in listed[:MAX_LISTED]),
            data,
        )
    return CheckOutcome(
        Verdict.PASS,
        f"the documented commands ran ({tally})",
        tuple([*(i.evidence() for i in listed[:MAX_LISTED]), *subs]),
        data,
    )
