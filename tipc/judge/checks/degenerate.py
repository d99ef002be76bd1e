"""A chance-level evaluation: the model the engines agree on has learnt nothing.

Reads the eval steps' logs for accuracy-like metrics (`acc`, `acc1`, `Acc@1`, `top1`, `top-1`, `accuracy`):
when every one it finds is 0, agreement between engines (or between predict.py and infer.py) on that model
proves little, so those checks WARN instead of PASS and say why.
"""

from __future__ import annotations

import re

from tipc.judge.checks._common import excerpt, physical_lines, resolve, step_runs
from tipc.judge.checks.base import CheckContext, Evidence

_ACCURACY = re.compile(
    r"(?<![A-Za-z0-9_])(?P<key>acc(?:uracy)?(?:@1|1)?|top-?1(?:_acc)?|top1_err)"
    r"(?![A-Za-z0-9_@])\s*[:=]?\s*(?P<val>[-+]?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)


def chance_level_eval(ctx: CheckContext) -> Evidence | None:
    """Evidence when every accuracy the eval steps logged is 0 (the last value of each log), else None."""
    if ctx.record is None:
        return None
    found: list[tuple[str, int, str, float]] = []
    for run in step_runs(ctx.record, "eval"):
        if not run.ran or not run.log:
            continue
        path = resolve(ctx.repo, run.log)
        if not path.is_file():
            continue
        last: tuple[str, int, str, float] | None = None
        for no, seg in physical_lines(path):
            for m in _ACCURACY.finditer(seg):
                if m.group("key").lower() == "top1_err":
                    continue
                last = (str(run.log), no, seg, float(m.group("val")))
        if last is not None:
            found.append(last)
    if not found or any(v != 0 for *_, v in found):
        return None
    log, line, text, _ = found[-1]
    return Evidence(
        f"the eval accuracy is 0 in {len(found)} eval log(s): the model predicts nothing right, so agreement "
        "on it proves little",
        path=log,
        line=line,
        excerpt=excerpt(text),
    )
