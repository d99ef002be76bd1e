"""The evaluation step evaluated something: what its log prints is a metric over a positive number of samples.

An eval whose data loader yields nothing (an empty list file, a wrong data type) still loads the weights,
prints a metric and exits 0: `evaluated ... on 0 test images, loss: 0.0000 / acc: 0.0000`. Read from the
eval step's own log:
- a count of what was evaluated that is 0 (`on 0 test images`, `samples: 0`, `loaded 0 images`) => FAIL;
- a metric that is not finite (nan, inf: a mean over nothing) => FAIL;
- a loss of exactly 0 beside metrics that are all exactly 0 (no batch was seen) => FAIL;
- finite metrics, and any count printed above 0 => PASS, naming them;
- no metric tipc can read (`PSNR on test data 33.8` is prose, not a field) => N-A; no eval step => N-A; an
  eval step that did not pass is the step rules' to judge => N-A.
Args: step (substring of the eval step id).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from tipc.core.yamlschema import Field, Map
from tipc.judge.checks._common import StepRun, excerpt, no_record, outcome, physical_lines, resolve, step_runs
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.logparse import parse_fields
from tipc.judge.checks.registry import STEP, arg_str, registered

_METRIC = re.compile(
    r"acc|auc|auroc|psnr|ssim|map|miou|iou|f1|precision|recall|top[-_]?\d|loss|error|err|bleu|wer|cer|"
    r"ndcg|hmean|score|dice|mae|rmse|mse",
    re.IGNORECASE,
)
_COUNT_WORDS = r"(?:images?|samples?|examples?|batches|items|pictures|videos|clips|files|records|data)"
_ZERO_COUNT = re.compile(
    rf"(?:\b(?:on|over|loaded|evaluated|found|read|total(?:\s+of)?)\s+0\s+(?:\w+\s+){{0,2}}{_COUNT_WORDS}\b)"
    rf"|(?:\b(?:num_?)?{_COUNT_WORDS}\s*[:=]\s*0(?![.\d]))",
    re.IGNORECASE,
)
_COUNT = re.compile(
    rf"\b(?:on|over|loaded|evaluated|found|read)\s+(\d+)\s+(?:\w+\s+){{0,2}}{_COUNT_WORDS}\b", re.IGNORECASE
)


@dataclass(frozen=True)
class _Metric:
    key: str
    value: float
    line: int
    text: str


def _read(path: Path) -> tuple[list[_Metric], tuple[int, str] | None, list[tuple[int, int, str]]]:
    """(metric fields, the first line saying 0 things were evaluated, (count, line, text) of other counts)."""
    metrics: list[_Metric] = []
    zero: tuple[int, str] | None = None
    counts: list[tuple[int, int, str]] = []
    for no, seg in physical_lines(path):
        if zero is None and _ZERO_COUNT.search(seg):
            zero = (no, seg)
        counts += [(int(m.group(1)), no, seg) for m in _COUNT.finditer(seg)]
        for field in parse_fields(seg):
            if _METRIC.search(field.key) and not field.key.lower().startswith(("eta", "time", "lr")):
                metrics.append(_Metric(field.key, field.value, no, seg))
    return metrics, zero, counts


def _last_values(metrics: list[_Metric]) -> list[_Metric]:
    """The last value printed for each metric key (an eval prints running values, then the final ones)."""
    last: dict[str, _Metric] = {}
    for m in metrics:
        last[m.key.lower()] = m
    return list(last.values())


def _judge(run: StepRun, rel: str, path: Path) -> CheckOutcome:
    metrics, zero, counts = _read(path)
    if zero is not None:
        no, text = zero
        return outcome(
            Verdict.FAIL,
            f"{run.step.id} evaluated nothing: {excerpt(text, 120)!r}",
            Evidence("the eval says it evaluated 0 samples", path=rel, line=no, excerpt=excerpt(text)),
        )
    final = _last_values(metrics)
    if not final:
        return outcome(
            Verdict.NA,
            f"{run.step.id} printed no metric tipc can read (as `key: value`): nothing to judge",
            Evidence("no metric field in the eval log", path=rel),
        )
    bad = [m for m in final if not math.isfinite(m.value)]
    if bad:
        m = bad[0]
        return outcome(
            Verdict.FAIL,
            f"{run.step.id} printed {m.key} {m.value}: a metric of nothing (no sample was evaluated, or it "
            "diverged)",
            Evidence(f"{m.key} is not finite", path=rel, line=m.line, excerpt=excerpt(m.text)),
        )
    losses = [m for m in final if "loss" in m.key.lower()]
    if losses and all(m.value == 0 for m in final):
        m = losses[-1]
        return outcome(
            Verdict.FAIL,
            f"{run.step.id} printed a loss of exactly 0 and every metric 0 ({_shown(final)}): no batch was "
            "evaluated",
            Evidence("every metric exactly 0, the loss too", path=rel, line=m.line, excerpt=excerpt(m.text)),
        )
    counted = f" over {counts[-1][0]} {'sample(s)'}" if counts else ""
    return outcome(
        Verdict.PASS,
        f"{run.step.id} evaluated{counted}: {_shown(final)}",
        Evidence("the eval's final metrics", path=rel, line=final[-1].line, excerpt=excerpt(final[-1].text)),
    )


def _shown(metrics: list[_Metric], limit: int = 4) -> str:
    return ", ".join(f"{m.key} {m.value:.4g}" for m in metrics[:limit])


@registered("eval_output", args=Map({"step": Field(STEP)}))
def check_eval_output(ctx: CheckContext, **args: object) -> CheckOutcome:
    """The evaluation step evaluated something: a finite metric over a positive number of samples."""
    if ctx.record is None:
        return no_record()
    wanted = arg_str(args, "step")
    runs = [r for r in step_runs(ctx.record, "eval") if wanted is None or wanted in r.step.id]
    if not runs:
        return outcome(Verdict.NA, "no eval step in the plan")
    passed = [r for r in runs if r.passed and r.log]
    if not passed:
        return outcome(Verdict.NA, "no eval step passed: the step rules judge what failed")
    judged = [_judge(r, str(r.log), resolve(ctx.repo, str(r.log))) for r in passed]
    order = (Verdict.FAIL, Verdict.PASS, Verdict.NA)
    worst = min(judged, key=lambda o: order.index(o.verdict))
    return CheckOutcome(
        worst.verdict, worst.summary, tuple(e for o in judged for e in o.evidence), worst.data
    )
