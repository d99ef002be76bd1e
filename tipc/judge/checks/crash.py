"""A step that passed (exit 0) although its program died of an uncaught exception.

A script that prints the traceback of what killed it and still exits 0 (an `except` that prints and moves
on to `sys.exit(0)`, an excepthook, a launcher that swallows its worker's status) passes by its exit status:
the repo's own script calls it "Run successfully", and the next stage runs on what was never written (an
export of random weights after a train that could not save its own). Read from the step's log: the last
thing it printed is a Python traceback (`Traceback (most recent call last):`, its frames, the exception
line), nothing after but blank lines and logging noise. A traceback printed at shutdown by a finaliser
(`Exception ignored in: ...`) does not count, nor one the program went on after.
"""

from __future__ import annotations

import re

from tipc.core.yamlschema import Enum, Field, Map, Seq
from tipc.judge.checks._common import excerpt, no_record, outcome, physical_lines, resolve, step_runs
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import arg_strs, registered

STAGES = ("train", "eval", "export", "infer", "quant", "other")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\s*$")
_FRAME = re.compile(r"^\s+\S|^\s*\^+\s*$")  # `  File "...", line N, in f`, the code under it, carets
_EXCEPTION = re.compile(
    r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|NotMet)\b(?::.*)?$|^[A-Za-z_][\w.]*: .+$"
)
# What may follow a program's last words: glog lines Paddle prints at exit, warnings, timing summaries.
_NOISE = re.compile(r"^[IWEF]\d{4} |warn|^\s*$|^\[\d{4}-\d\d-\d\d|^I\d{4}", re.IGNORECASE)
_IGNORED = re.compile(r"Exception ignored in|During handling of the above exception|The above exception was")
_TAIL = 200  # lines of a log's end read


def crash_at_end(lines: list[str]) -> tuple[int, str] | None:
    """(line index, exception line) when the log ends in an uncaught traceback, else None."""
    tail = lines[-_TAIL:]
    offset = len(lines) - len(tail)
    end = len(tail)
    while end > 0 and _NOISE.search(tail[end - 1]) and not _EXCEPTION.match(tail[end - 1].strip()):
        end -= 1
    if end == 0:
        return None
    last = tail[end - 1].rstrip()
    if not _EXCEPTION.match(last.strip()) or last.startswith((" ", "\t")):
        return None
    start = end - 2
    while start >= 0 and _FRAME.match(tail[start]):
        start -= 1
    if start < 0 or not _TRACEBACK.match(tail[start].strip()):
        return None
    before = tail[start - 1] if start > 0 else ""
    if _IGNORED.search(before):
        return None
    return offset + end - 1, last.strip()


@registered("exit_after_crash", args=Map({"stages": Field(Seq(Enum(STAGES), min_items=1))}))
def check_exit_after_crash(ctx: CheckContext, **args: object) -> CheckOutcome:
    """No step passed (exit 0) after its program died of an uncaught exception."""
    if ctx.record is None:
        return no_record()
    stages = tuple(arg_strs(args, "stages") or ("train", "eval", "export", "infer"))
    runs = [r for stage in stages for r in step_runs(ctx.record, stage)]
    passed = [r for r in runs if r.passed and r.log]
    if not passed:
        return outcome(Verdict.NA, f"no {'/'.join(stages)} step passed with a log")
    problems: list[Evidence] = []
    for run in passed:
        numbered = list(physical_lines(resolve(ctx.repo, str(run.log))))
        found = crash_at_end([seg for _, seg in numbered])
        if found is not None:
            problems.append(
                Evidence(
                    f"{run.step.id} exited 0, but its log ends in an uncaught exception: "
                    + excerpt(found[1], 160),
                    path=str(run.log),
                    line=numbered[found[0]][0],
                    excerpt=excerpt(found[1]),
                )
            )
    if problems:
        return CheckOutcome(Verdict.FAIL, problems[0].text, tuple(problems), {"steps": len(problems)})
    return outcome(
        Verdict.PASS,
        f"{len(passed)} passed step(s): none ends in an uncaught exception",
        Evidence("logs read"),
    )
