"""A plan moved to another output folder: its logs, results log and the paths its commands name under the old
one. `tipc check` runs a second mode of the same config (whole_infer, the provided weights) beside the first;
where the dialect logs every mode to one folder (the template's `test_tipc/output`), the second would
overwrite the first one's logs, which the rules read afterwards.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tipc.core.steps import Plan, Step


def _mover(old: str, new: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.\-/])(\./)?" + re.escape(old) + r"(?=/|$|[\s\"'])")


def relocate_output(plan: Plan, new_dir: str) -> Plan:
    """`plan` writing under `new_dir` (repo-relative) where it wrote under its output folder."""
    old = plan.output_dir.strip("/")
    new = new_dir.strip("/")
    if not old or old == new:
        return plan
    pattern = _mover(old, new)

    def move(text: str) -> str:
        return pattern.sub(lambda m: (m.group(1) or "") + new, text)

    def move_opt(text: str | None) -> str | None:
        return move(text) if text is not None else None

    steps: list[Step] = []
    for step in plan.steps:
        steps.append(
            replace(
                step,
                argv=tuple(move(word) for word in step.argv),
                log=move_opt(step.log),
                status_log=move_opt(step.status_log),
                status_command=move(step.status_command),
                writes=tuple((key, move(path)) for key, path in step.writes),
            )
        )
    return replace(plan, steps=tuple(steps), output_dir=new, results_log=move(plan.results_log))
