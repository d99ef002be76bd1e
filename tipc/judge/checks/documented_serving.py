"""Seed 004 §4.2.3 "根据文档说明流程，可以成功完成：启动服务，发送服务请求，获取返回结果，返回结果与
章节4.1.3中的模型推理结果完全相同": the service the serving docs start answers the documented client, with the
inference results.

Reads the `documented` chain: its server steps (a command of the docs started in the background) and the
client commands after them. The client's `class_id` / `prob` lines are compared per image with the Paddle
Inference results of the provided model (the `pretrained` chain's inference, else the documented infer.py
commands). N-A where the documented service needs Paddle Serving, which no longer installs (the step says
so), or the docs give no serving commands. Args: chain (default "documented"), reference (default
"pretrained"), prob_atol (default tipc.yaml agreement.prob_atol).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from tipc.core.steps import Status
from tipc.core.yamlschema import Field, Map, Str
from tipc.judge.checks._common import excerpt, outcome, resolve, settings_of
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.documented import error_line, stopped_by_limit
from tipc.judge.checks.registry import NON_NEGATIVE, arg_num, arg_str_or, registered

if TYPE_CHECKING:
    from tipc.core.steps import Step
    from tipc.execute.record import RunRecord, StepResult


def _runs(record: RunRecord, stage: str) -> list[tuple[Step, StepResult | None]]:
    return [(s, record.result(s.id)) for s in record.plan.steps if s.stage.value == stage]


class _Row(TypedDict):
    """One printed result: a prediction (Prediction.to_json) and its line's text."""

    line: int
    image: str | None
    class_id: float | None
    prob: float | None
    log: str
    text: str


def _results(ctx: CheckContext, log: str | None) -> list[_Row]:
    from tipc.judge.checks.predictions import parse_predictions

    if not log:
        return []
    return [
        _Row(line=g.line, image=g.image, class_id=g.label, prob=g.score, log=log, text=g.text)
        for g in parse_predictions(resolve(ctx.repo, log))
    ]


def _reference(ctx: CheckContext, documented: RunRecord, reference: str) -> tuple[list[_Row], str]:
    """The inference results to compare with: the provided model's (pretrained chain), else the documented
    infer.py commands'."""
    for name, record in ((reference, (ctx.records or {}).get(reference)), ("documented", documented)):
        if record is None:
            continue
        found: list[_Row] = []
        for _step, result in _runs(record, "infer"):
            if result is not None and result.status.ok:
                found.extend(_results(ctx, result.log))
        if found:
            return found, f"Paddle Inference of the provided model ({name} chain)"
    return [], ""


@registered(
    "documented_serving",
    args=Map(
        {
            "chain": Field(Str(what="a chain name"), default="documented"),
            "reference": Field(Str(what="a chain name"), default="pretrained"),
            "prob_atol": Field(NON_NEGATIVE),
        }
    ),
)
def check_documented_serving(ctx: CheckContext, **args: object) -> CheckOutcome:

    settings = settings_of(ctx)
    if isinstance(settings, CheckOutcome):
        return settings
    atol = arg_num(args, "prob_atol", settings.agreement.prob_atol)
    record = (ctx.records or {}).get(arg_str_or(args, "chain", "documented"))
    if record is None:
        return outcome(
            Verdict.SKIP, "the documented commands did not run (no record of the documented chain)"
        )
    servers = _runs(record, "serve")
    if not servers:
        return outcome(Verdict.FAIL, "no documented command starts the service (the serving docs give none)")
    step, result = next(((s, r) for s, r in servers if r is not None and r.status.ok), servers[0])
    where = f"{step.id.removeprefix('doc/')}: `{excerpt(step.status_command, 160)}`"
    if result is None or result.status in (Status.SKIPPED, Status.BLOCKED):
        why = result.reason.removeprefix("not applicable: ") if result is not None else "it did not run"
        return outcome(Verdict.NA, f"the documented service did not start here: {why}", Evidence(where))
    if result.status is Status.FAILED and stopped_by_limit(result):
        return outcome(
            Verdict.NA,
            f"the documented service was stopped by a limit of this run: {stopped_by_limit(result)}",
            Evidence(where, path=result.log),
        )
    if not result.status.ok:
        line, number = error_line(ctx.repo, result.log)
        return outcome(
            Verdict.FAIL,
            f"the documented service did not start ({result.reason}){': ' + line if line else ''}",
            Evidence(where, path=result.log, line=number),
        )
    return _clients(ctx, record, step, atol, arg_str_or(args, "reference", "pretrained"))


def _clients(ctx: CheckContext, record: RunRecord, server: Step, atol: float, reference: str) -> CheckOutcome:
    clients = [(s, r) for s, r in _runs(record, "client") if server.id in s.depends_on]
    if not clients:
        return outcome(
            Verdict.FAIL, f"the service started ({server.id}) but no documented command sends it a request"
        )
    served: list[_Row] = []
    for step, result in clients:
        where = f"{step.id.removeprefix('doc/')}: `{excerpt(step.status_command, 160)}`"
        if result is None or not result.status.ok:
            if result is not None and result.started is None:
                continue
            if result is not None and result.status is Status.FAILED and stopped_by_limit(result):
                return outcome(
                    Verdict.NA,
                    f"the documented request was stopped by a limit of this run: {stopped_by_limit(result)}",
                    Evidence(where, path=result.log),
                )
            line, number = error_line(ctx.repo, result.log if result is not None else None)
            return outcome(
                Verdict.FAIL,
                f"the documented request failed: {line or (result.reason if result else 'no result')}",
                Evidence(where, path=result.log if result else None, line=number),
            )
        served.extend(_results(ctx, result.log))
    if not served:
        return outcome(
            Verdict.SKIP,
            "the documented client printed no class_id result tipc can compare",
            *(Evidence(s.status_command, path=r.log) for s, r in clients if r is not None),
        )
    expected, source = _reference(ctx, record, reference)
    if not expected:
        return outcome(
            Verdict.NA, "no Paddle Inference result of the provided model to compare the service with"
        )
    return _compare(served, expected, source, atol)


def _compare(served: list[_Row], expected: list[_Row], source: str, atol: float) -> CheckOutcome:
    by_image = {Path(str(e["image"])).name: e for e in expected if e.get("image")}
    pairs = [
        (s, by_image[Path(str(s["image"])).name])
        for s in served
        if s.get("image") and Path(str(s["image"])).name in by_image
    ]
    if not pairs:
        return outcome(
            Verdict.NA,
            f"the documented client and {source} share no image to compare",
            Evidence(f"served: {', '.join(str(s.get('image')) for s in served[:5])}"),
            Evidence(f"inferred: {', '.join(str(e.get('image')) for e in expected[:5])}"),
        )
    diffs: list[str] = []
    worst = 0.0
    for s, e in pairs:
        name = Path(str(s["image"])).name
        if s["class_id"] != e["class_id"]:
            diffs.append(f"{name}: class_id {_num(s['class_id'])} served vs {_num(e['class_id'])} inferred")
        elif s["prob"] is not None and e["prob"] is not None:
            d = abs(float(s["prob"]) - float(e["prob"]))
            worst = max(worst, d)
            if not (math.isfinite(d) and d <= atol):
                diffs.append(
                    f"{name}: prob {s['prob']:.6g} served vs {e['prob']:.6g} inferred "
                    f"(|diff| {d:.3g} > {atol:g})"
                )
    first = pairs[0]
    evidence = [
        Evidence("served", path=first[0]["log"], line=first[0]["line"], excerpt=excerpt(first[0]["text"])),
        Evidence(source, path=first[1]["log"], line=first[1]["line"], excerpt=excerpt(first[1]["text"])),
    ]
    data = {"compared": len(pairs), "max_prob_diff": worst, "reference": source}
    if diffs:
        return CheckOutcome(
            Verdict.FAIL,
            f"the documented service returns other results than {source}: {diffs[0]}",
            tuple([*(Evidence(d) for d in diffs[:12]), *evidence]),
            data,
        )
    return CheckOutcome(
        Verdict.PASS,
        f"the documented service's answers equal {source} on {len(pairs)} image(s) (class_id equal, max "
        f"prob diff {worst:.3g} <= {atol:g})",
        tuple(evidence),
        data,
    )


def _num(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"
