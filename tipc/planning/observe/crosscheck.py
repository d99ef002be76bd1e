"""The profile plan against the observed plan (`cross_check`): a TIPC040 finding per missing, extra or
differing step, output folder or log, the commands aligned as the corpus normalises status lines.
"""

from __future__ import annotations

import difflib
import os
import shlex
from collections import Counter

from tipc.core.findings import Finding, Level
from tipc.core.steps import Plan, Step
from tipc.planning.corpus import status_text, tokens
from tipc.planning.observe.builder import _strip_dot

# ---------------------------------------------------------------------------------------------------------
# cross-check


def _commands(plan: Plan) -> list[list[str]]:
    """Each step's command as the corpus README normalises a status line (tipc.planning.corpus)."""
    from tipc.planning.planner import status_line

    return [tokens(status_text(status_line(plan, step), plan.model_name), plan.repo) for step in plan.steps]


def _norm_path(path: str | None, repo: str) -> str:
    if not path:
        return "(console)"
    return os.path.normpath(_strip_dot(path[len(repo) + 1 :] if path.startswith(repo + "/") else path))


def cross_check(profile: Plan, observed: Plan) -> list[Finding]:
    """A TIPC040 finding per difference between the profile plan and the observed plan.

    Steps are aligned on their normalised commands (missing or extra steps, then differing words); the output
    folder and each aligned step's log are compared as repo-relative paths.
    """
    where = profile.config_path
    findings: list[Finding] = []

    def note(step: Step | None, message: str) -> None:
        line = step.source_lines[0] if step is not None and step.source_lines else 0
        findings.append(Finding(where, line, 0, Level.WARNING, "TIPC040", message))

    mine = _commands(profile)
    theirs = _commands(observed)
    if _norm_path(profile.output_dir, profile.repo) != _norm_path(observed.output_dir, observed.repo):
        note(
            None,
            f"output folder: the profile plans {profile.output_dir}, the script writes {observed.output_dir}",
        )
    matcher = difflib.SequenceMatcher(
        a=[tuple(c) for c in mine], b=[tuple(c) for c in theirs], autojunk=False
    )
    pairs: list[tuple[int, int]] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            pairs.extend(zip(range(a0, a1), range(b0, b1), strict=True))
            continue
        common = min(a1 - a0, b1 - b0) if op == "replace" else 0
        for k in range(common):
            i, j = a0 + k, b0 + k
            pairs.append((i, j))
            gone = Counter(mine[i]) - Counter(theirs[j])
            new = Counter(theirs[j]) - Counter(mine[i])
            step = profile.steps[i]
            note(
                step,
                f"step {j + 1} ({observed.steps[j].stage.value}): the profile plans "
                f"{' '.join(gone.elements()) or '(nothing more)'}, the script runs "
                f"{' '.join(new.elements()) or '(nothing more)'} [{shlex.join(theirs[j])}]",
            )
        for i in range(a0 + common, a1):
            note(
                profile.steps[i],
                f"missing: the profile plans {profile.steps[i].stage.value} step `{shlex.join(mine[i])}`, "
                "which the script does not run",
            )
        for j in range(b0 + common, b1):
            note(
                None,
                f"extra: the script runs {observed.steps[j].stage.value} step `{shlex.join(theirs[j])}`, "
                "which the profile does not plan",
            )
    for i, j in sorted(pairs):
        a, b = profile.steps[i], observed.steps[j]
        if a.stage is not b.stage:
            note(
                a,
                f"step {j + 1}: the profile calls it {a.stage.value}, the observed command is "
                f"{b.stage.value} (by the config line naming its script)",
            )
        log_a = _norm_path(a.log, profile.repo)
        log_b = _norm_path(b.log, observed.repo)
        if log_a != log_b:
            note(
                a, f"step {j + 1} ({b.stage.value}) log: the profile plans {log_a}, the script writes {log_b}"
            )
    return findings
