"""Seed 004 §4.1.3 "基于提供的模型，评估指标可以达到文档中所述精度": the documented evaluation of the provided
model reaches the accuracy the README states (rule `eval.documented_accuracy`).

The claim is read from the README (tables and sentences, tipc.judge.checks.claims); the measurement from the
log of the documented evaluation command that the `documented` chain ran (an eval command of the docs whose
weights are not the documented training's output: the provided model). Both numbers are in the outcome.
Where the evaluation data is not in the repo, the documented evaluation ran on the lite data instead (a
substitution): that is a smoke run, reported as one, and the rule is N-A. Args: chain (default
"documented"), atol (overrides the metric family's tolerance).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.yamlschema import Field, Map, Str
from tipc.judge.checks._common import excerpt, outcome, read_lines, resolve, weights_made_here
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.documented import documented_of, error_line, stopped_by_limit
from tipc.judge.checks.registry import NON_NEGATIVE, arg_num, arg_str_or, registered

if TYPE_CHECKING:
    from tipc.core.steps import Step
    from tipc.execute.record import RunRecord, StepResult
    from tipc.judge.checks.claims import Claim, Metric
    from tipc.planning.documented.model import Documented


@dataclass(frozen=True)
class _Eval:
    step: Step
    result: StepResult | None
    location: str
    text: str
    trained: str  # the documented training step whose output it evaluates ("" when none)
    substituted: tuple[str, ...]  # the substitutions of its command, in words


def _evals(ctx: CheckContext, record: RunRecord, documented: Documented) -> list[_Eval]:
    from tipc.core.steps import Stage

    stages = {s.id: s.stage for s in record.plan.steps}
    out = []
    for step in record.plan.steps:
        if step.stage is not Stage.EVAL:
            continue
        command = documented.command(step.id)
        trained = next((d for d in step.depends_on if stages.get(d) is Stage.TRAIN), "")
        out.append(
            _Eval(
                step,
                record.result(step.id),
                command.location if command is not None else step.id,
                command.text if command is not None else step.status_command,
                trained,
                tuple(s.text() for s in documented.substitutions_of(step.id)),
            )
        )
    # the provided model first (not the documented training's output), then those that ran
    return sorted(out, key=lambda e: (bool(e.trained), not _passed(e)))


def _passed(e: _Eval) -> bool:
    from tipc.core.steps import Status

    return e.result is not None and e.result.status is Status.PASSED


def _readme(ctx: CheckContext, documented: Documented) -> tuple[str, str] | None:
    from tipc.planning.documented.reading import read_doc

    docs = [d for d in documented.docs if "/" not in d]
    if not docs:
        return None
    text = read_doc(Path(ctx.repo) / docs[0], Path(ctx.repo))
    return (docs[0], text) if text is not None else None


def _fmt(value: float, ratio: bool) -> str:
    return f"{value:.4f}" if ratio else f"{value:g}"


@registered(
    "documented_accuracy",
    args=Map({"chain": Field(Str(what="a chain name"), default="documented"), "atol": Field(NON_NEGATIVE)}),
)
def check_documented_accuracy(ctx: CheckContext, **args: object) -> CheckOutcome:
    """The accuracy the README states, against what the documented eval printed."""
    atol = arg_num(args, "atol", 0.0) if args.get("atol") is not None else None
    record = (ctx.records or {}).get(arg_str_or(args, "chain", "documented"))
    if record is None:
        return outcome(
            Verdict.SKIP, "the documented commands did not run (no record of the documented chain)"
        )
    documented = documented_of(ctx, record)
    readme = _readme(ctx, documented)
    if readme is None:
        return outcome(
            Verdict.FAIL, "the repo has no README.md stating its accuracy", Evidence("expected README.md")
        )
    return _judge(ctx, documented, record, readme, atol)


def _judge(
    ctx: CheckContext, documented: Documented, record: RunRecord, readme: tuple[str, str], atol: float | None
) -> CheckOutcome:
    from tipc.judge.checks import claims as claims_mod

    doc, text = readme
    found = claims_mod.claims(text)
    claim_evidence = [
        Evidence(
            f"claimed: {c.family or 'metric'} {c.value:g}", path=doc, line=c.line, excerpt=excerpt(c.text)
        )
        for c in sorted(found, key=lambda c: -c.score)[:3]
    ]
    evals = _evals(ctx, record, documented)
    inline = _inline_eval(text) if not evals else None
    if inline is not None:  # Lieberk's Paddle-Cutpaste: `python eval.py --data_dir lite_data ...` in a list
        return outcome(
            Verdict.NA,
            f"the docs give the evaluation only in inline code ({doc}:{inline[0]}: "
            f"`{excerpt(inline[1], 120)}`), and tipc runs the commands of code blocks: the accuracy is not "
            "reproduced here",
            *claim_evidence,
        )
    if not evals:
        return outcome(
            Verdict.FAIL,
            f"the docs give no evaluation command in a code block, so the accuracy {doc} states cannot be "
            "reproduced",
            *claim_evidence,
        )
    if not found:
        return outcome(
            Verdict.FAIL,
            f"{doc} states no accuracy for the provided model (a table or sentence naming the metric and its "
            "value, e.g. `| top-1 acc | 0.7099 |`)",
            Evidence(f"documented evaluation: {evals[0].location}: `{excerpt(evals[0].text, 160)}`"),
        )
    chosen = evals[0]
    where = f"{chosen.location}: `{excerpt(chosen.text, 160)}`"
    result = _not_run(ctx, chosen, where, claim_evidence)
    if isinstance(result, CheckOutcome):
        return result
    made = weights_made_here(ctx, record, chosen.step.id)
    if made:  # cutpaste_paddle's documented eval reads logs/bottle/final.pdparams, which the lite chain wrote
        return outcome(
            Verdict.NA,
            f"the documented evaluation ({chosen.location}) read {made}, weights this check's own training "
            "wrote, not the provided model (the repo does not ship it: its docs or prepare.sh download it)",
            Evidence(where, path=result.log),
            *claim_evidence,
        )
    lines = (read_lines(resolve(ctx.repo, result.log)) if result.log else None) or []
    got = claims_mod.measured(lines)
    if not got:
        return outcome(
            Verdict.SKIP,
            f"the documented evaluation ({chosen.location}) printed no metric tipc can read",
            Evidence(where, path=result.log),
            *claim_evidence,
        )
    return _compare(found, got, chosen, result.log, where, doc, atol)


_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_EVAL_COMMAND = re.compile(
    r"^python[\d.]*\s.*(?:(?<![A-Za-z_])(?:eval|val|evaluate)\.py"
    r"|--test[-_]only|--eval[-_]only|--mode[= ]eval)"
)


def _inline_eval(text: str) -> tuple[int, str] | None:
    """(line, command) of the first evaluation command the README gives in inline code outside code blocks."""
    from tipc.judge.checks.claims import prose_lines

    for number, line in prose_lines(text):
        for m in _INLINE.finditer(line):
            command = m.group(1).strip()
            if _EVAL_COMMAND.search(command):
                return number, command
    return None


def _not_run(
    ctx: CheckContext, chosen: _Eval, where: str, claim_evidence: list[Evidence]
) -> CheckOutcome | StepResult:
    """The outcome when the chosen evaluation did not give a measurement of the provided model; else its
    result (it passed)."""
    from tipc.core.steps import Status

    result = chosen.result
    if chosen.trained:
        return outcome(
            Verdict.NA,
            f"the documented evaluation ({chosen.location}) evaluates the documented training's output "
            f"({chosen.trained}), not the provided model, and the docs evaluate no provided weights",
            Evidence(where),
            *claim_evidence,
        )
    if result is None or result.status in (Status.SKIPPED, Status.BLOCKED, Status.INTERRUPTED):
        why = result.reason.removeprefix("not applicable: ") if result is not None else "it did not run"
        return outcome(
            Verdict.NA,
            f"the documented evaluation of the provided model did not run here: {why}",
            Evidence(where),
            *claim_evidence,
        )
    limit = stopped_by_limit(result)
    if limit is not None:  # slow here (a full test set on a CPU), or over the disk limit: not shown wrong
        timed_out = result.status is Status.TIMEOUT
        within = "its time budget" if timed_out else "this run's limits"
        more = "give it more with --docs-step-timeout" if timed_out else "raise the limit it hit"
        return outcome(
            Verdict.NA,
            f"the documented evaluation of the provided model ({chosen.location}) did not finish within "
            f"{within} here ({limit}); {more}",
            Evidence(where, path=result.log),
            *claim_evidence,
        )
    if result.status is not Status.PASSED:
        line, number = error_line(ctx.repo, result.log)
        return outcome(
            Verdict.FAIL,
            f"the documented evaluation of the provided model failed ({chosen.location}): "
            f"{line or result.reason}",
            Evidence(where, path=result.log, line=number),
            *claim_evidence,
        )
    return result


def _compare(
    found: list[Claim],
    got: dict[str, Metric],
    chosen: _Eval,
    log: str | None,
    where: str,
    doc: str,
    atol: float | None,
) -> CheckOutcome:
    from tipc.judge.checks import claims as claims_mod

    metrics = claims_mod.load()
    rows: list[dict[str, Any]] = []  # claims.compare figures, read back below
    evidence: list[Evidence] = []
    for family_id, metric in got.items():
        family = metrics.family(family_id)
        claim = claims_mod.best_claim(found, family_id, only_family=len(got) == 1)
        if family is None or claim is None:
            continue
        cmp = claims_mod.compare(claim, metric, family, atol)
        rows.append(
            {
                "family": family_id,
                "label": family.label,
                "ratio": family.ratio,
                **cmp,
                "claim_line": claim.line,
            }
        )
        evidence.append(
            Evidence(
                f"{doc} claims {family.label} {_fmt(cmp['claimed'], family.ratio)}"
                + (f" ({cmp['note']})" if cmp["note"] else ""),
                path=doc,
                line=claim.line,
                excerpt=excerpt(claim.text),
                numbers=(("claimed", cmp["claimed"]),),
            )
        )
        evidence.append(
            Evidence(
                f"the documented evaluation gives {family.label} {_fmt(metric.value, family.ratio)}",
                path=log,
                line=metric.line,
                excerpt=excerpt(metric.text),
                numbers=(("measured", metric.value), ("diff", round(cmp["diff"], 6)), ("atol", cmp["atol"])),
            )
        )
    measured_text = ", ".join(f"{k} {m.value:g}" for k, m in got.items())
    data = {
        "comparisons": rows,
        "measured": {k: m.value for k, m in got.items()},
        "evaluation": chosen.location,
    }
    if chosen.substituted:
        return CheckOutcome(
            Verdict.NA,
            "the evaluation data is not in the repo: the documented evaluation ran on the lite data "
            "instead, a "
            f"smoke run ({measured_text}), not compared with the claimed accuracy",
            tuple(
                [
                    Evidence(where, path=log),
                    *(Evidence(f"substitution: {s}") for s in chosen.substituted),
                    *evidence,
                ]
            ),
            data,
        )
    if not rows:
        claimed = ", ".join(f"{c.family or 'metric'} {c.value:g}" for c in found[:3])
        return CheckOutcome(
            Verdict.FAIL,
            f"{doc} claims {claimed} but the documented evaluation ({chosen.location}) prints "
            f"{measured_text}: "
            "no metric in common",
            (Evidence(where, path=log),),
            data,
        )
    short = [r for r in rows if not r["reaches"]]
    if short:
        r = short[0]
        return CheckOutcome(
            Verdict.FAIL,
            f"{doc} claims {r['label']} {_fmt(r['claimed'], r['ratio'])}; the provided model gives "
            f"{_fmt(r['measured'], r['ratio'])} "
            f"(documented evaluation {chosen.location}), {abs(r['diff']):.4g} "
            f"{'below' if r['diff'] < 0 else 'above'} the claim, tolerance {r['atol']:g}",
            tuple(evidence),
            data,
        )
    parts = "; ".join(
        f"{r['label']} {_fmt(r['measured'], r['ratio'])} vs claimed {_fmt(r['claimed'], r['ratio'])}"
        for r in rows
    )
    return CheckOutcome(
        Verdict.PASS,
        f"the provided model reaches the accuracy {doc} states: {parts} "
        f"(documented evaluation {chosen.location})",
        tuple(evidence),
        data,
    )
