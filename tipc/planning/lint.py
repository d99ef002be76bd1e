"""The whole lint of TIPC configs (what `tipc lint` runs): config.lint's static checks plus the findings of
planning every mode (bash semantics the chain builder sees, steps that run nothing, the step cap).

`lint_paths(paths, dialect=None)` reads each file once, detects its dialect once and plans every mode from
those slots (`tipc.planning.planner.prepare`), without building Step objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tipc.config.lint import ConfigRead, dedupe, lint_inputs, passed_as_parameter, static_lint
from tipc.core.findings import Finding, Level
from tipc.core.steps import MODES, Mode
from tipc.planning.planner import mode_findings, prepare


def lint_file(path: Path, *, dialect: str | None = None, max_steps: int | None = None) -> list[Finding]:
    static = static_lint(path, dialect=dialect)
    if static.read is None:
        return list(static.findings)
    planned, infer_commands = _plan_findings(static.read, max_steps)
    findings = passed_as_parameter(list(static.findings), static.read.cfg, infer_commands)
    findings.extend(planned)
    return dedupe(findings)


def _plan_findings(read: ConfigRead, max_steps: int | None) -> tuple[list[Finding], list[str]]:
    """Findings of planning every mode, and the command of every planned inference step."""
    out: list[Finding] = []
    commands: list[str] = []
    prepared = prepare(read.path, read.parsed, "train_infer_python", read.root, read.dialect, slots=read.cfg)
    out.extend(f for f in prepared.findings if f.code != "TIPC000")
    root_abs = str(read.root)  # find_repo_root's answer is already resolved
    # klquant_whole_infer is linted only for configs meant for it: for the others it replays another layout.
    modes = [m for m in MODES if m is not Mode.KLQUANT_WHOLE_INFER or "kl" in read.path.name.lower()]
    for mode in modes:
        # Only what the findings need: the chain's findings and the inference commands, no Step objects.
        findings, infer_commands = mode_findings(prepared, mode, root_abs=root_abs, max_steps=max_steps)
        commands.extend(infer_commands)
        for f in findings:
            if f.code == "TIPC100":
                f = Finding(f.path, f.line, f.col, Level.INFO, f.code, f.message)
            out.append(f)
    return out, commands


def lint_paths(
    paths: Sequence[Path], *, dialect: str | None = None, strict: bool = False, max_steps: int | None = None
) -> list[Finding]:
    """Lint every config; a directory means every file under DIR/test_tipc/configs/** (or, for a folder
    inside a test_tipc tree, every file under it).

    Raises ConfigError (exit 2) for a path that is not a lintable input: missing, a special file, a folder
    with no configs, or a file that cannot be read at all. A file named directly that is not a .txt config
    (README.md) is a TIPC032 info finding, or with `strict` (what `tipc lint` uses) a ConfigError too.
    `max_steps`: the planner's step cap per mode (None: `tipc.planning.planner.max_steps_default()`; TIPC270
    past it).
    """
    findings: list[Finding] = []
    for path in paths:
        path = Path(path)
        for file in lint_inputs(path, strict):
            findings.extend(lint_file(file, dialect=dialect, max_steps=max_steps))
    return findings
