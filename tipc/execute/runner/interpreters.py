"""Interpreter substitution: which python a step's command names, whether it runs here, and what runs in
its place (`--python`, else sys.executable for one that cannot run); the argv and status command after
substitution. `missing_interpreters` says up front what `python_substitutions` decides at run time.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from tipc.core.steps import Plan, Step
from tipc.execute import proc
from tipc.execute.runner.options import RunOptions

_PYTHON_NAME = re.compile(r"^python[0-9.]*$")


def _command_string(step: Step) -> str | None:
    """The shell command text of a shell step (argv = [sh, -c, cmd])."""
    if step.shell and len(step.argv) >= 3 and step.argv[-2] == "-c":
        return step.argv[-1]
    return None


def _interpreter_of(step: Step) -> str | None:
    cmd = _command_string(step)
    if cmd is not None:
        words = cmd.split(None, 1)
        first = words[0] if words else ""
    else:
        first = step.argv[0] if step.argv else ""
    return first if _PYTHON_NAME.match(os.path.basename(first)) else None


def _unusable(interpreter: str) -> str | None:
    """Why `interpreter` cannot run here, or None if it runs (a pyenv shim can be on PATH and still fail)."""
    found = shutil.which(interpreter)
    if found is None:
        return "is not on PATH"
    if sys.executable and os.path.realpath(found) == os.path.realpath(sys.executable):
        return None  # the very binary running tipc now: it runs, no need to start it to find out
    code, out = proc.capture([interpreter, "-c", "pass"], cwd=Path.cwd(), timeout_s=60)
    if code == 0:
        return None
    first = next((ln.strip() for ln in out.splitlines() if ln.strip()), "")
    return f"is on PATH but does not run (exit {code}{': ' + first if first else ''})"


def python_substitutions(plan: Plan, options: RunOptions) -> tuple[dict[str, str], list[str]]:
    """{interpreter as written in the config: interpreter to run} and a notice per substitution.

    `--python` replaces every python interpreter; otherwise only one that cannot run here is replaced, by
    sys.executable, because `python3.7` in a config usually means "the python of that CI image".
    """
    mapping: dict[str, str] = {}
    notes: list[str] = []
    checked: set[str] = set()
    for step in plan.steps:
        written = _interpreter_of(step)
        if written is None or written in checked:
            continue
        checked.add(written)
        if options.python is not None:
            if options.python != written:
                mapping[written] = options.python
                notes.append(f"running '{options.python}' in place of the config's '{written}' (--python)")
            continue
        why = _unusable(written)
        if why is not None:
            mapping[written] = sys.executable
            notes.append(
                f"'{written}' (the config's python) {why}; running {sys.executable} instead "
                "(choose another with --python)"
            )
    return mapping, notes


def missing_interpreters(plan: Plan, python: str | None) -> list[str]:
    """One line per interpreter the plan's commands name that cannot run here, saying what `tipc run` runs
    in its place (as `python_substitutions` decides at run time), or that those steps cannot run."""
    counts: dict[str, int] = {}
    for step in plan.steps:
        written = _interpreter_of(step)
        if written is not None and not step.not_applicable:
            counts[written] = counts.get(written, 0) + 1
    lines: list[str] = []
    for written, n in counts.items():
        why = _unusable(written)
        if why is None:
            continue
        instead = python or sys.executable
        if _unusable(instead) is not None:
            lines.append(
                f"'{written}' (the interpreter of {n} step(s)) {why}: those steps cannot run here; "
                "name one that runs with --python"
            )
            continue
        lines.append(
            f"'{written}' (the interpreter of {n} step(s)) {why}; tipc run runs {instead} in its place "
            "(choose another with --python)"
        )
    return lines


def _substituted(step: Step, mapping: Mapping[str, str]) -> tuple[tuple[str, ...], str]:
    """(argv to run, status command to print) after interpreter substitution."""
    status = step.status_command or shlex.join(step.argv)
    written = _interpreter_of(step)
    if written is None or written not in mapping:
        return step.argv, status
    new = mapping[written]
    if status.startswith(written + " ") or status == written:
        status = new + status[len(written) :]
    cmd = _command_string(step)
    if cmd is not None:
        stripped = cmd.lstrip()
        new_cmd = shlex.quote(new) + stripped[len(written) :]
        return (*step.argv[:-1], new_cmd), status
    return (new, *step.argv[1:]), status
