"""Seed 004 §4.1.3 "基于预训练模型的预测与基于导出的inference模型的推理结果完全一致": predict.py with the
provided weights and infer.py with the model exported from them agree, on the test images the repo ships.

Reads the `pretrained` chain (`tipc check` runs the config's whole_infer mode: the infer_model weights
exported, then inferred on the config's images) and runs the predict/infer comparison of
tipc.judge.checks.predict_infer on that record: predict.py gets the weights the export loaded. The
lite-trained comparison (`predict_infer_agreement` on the basic chain) stays a check of its own. N-A where the
config names no provided weights, or they are not in the repo (a download the offline sandbox cannot make).
Args: chain (default "pretrained") and those of predict_infer_agreement.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.yamlschema import Field, Map, Str
from tipc.judge.checks._common import argv_options, created_paths, outcome, step_runs
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.documented import error_line
from tipc.judge.checks.predict_infer import check_predict_infer_agreement
from tipc.judge.checks.registry import arg_str_or, registered

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord


def provided_weights(
    record: RunRecord, repo: Path, others: tuple[RunRecord | None, ...] = ()
) -> tuple[str, bool] | None:
    """(the weights the export step loads, whether the repo provides them), None when it names none. A file
    one of the check's runs created (`others`: the basic chain's record) is that run's output, not provided,
    however it is seen now: cutpaste_paddle's infer_model slot names the weights its training writes."""
    import posixpath

    from tipc.judge.checks.predict_infer import weights_option

    for run in step_runs(record, "export"):
        words = weights_option(record)
        if not words:
            return None
        value = words[-1].split("=", 1)[1]
        rel = posixpath.normpath(posixpath.join(run.step.cwd or ".", value))
        made = any(rel in created_paths(r) for r in (record, *others) if r is not None)
        return value, (repo / run.step.cwd / value).exists() and not made
    return None


@registered(
    "pretrained_predict_infer",
    args=Map(
        {
            **check_predict_infer_agreement.args.fields,
            "chain": Field(Str(what="a chain name"), default="pretrained"),
        }
    ),
)
def check_pretrained_predict_infer(ctx: CheckContext, **args: object) -> CheckOutcome:
    """predict == infer on the weights the repo provides (the pretrained chain's export)."""
    chain = arg_str_or(args, "chain", "pretrained")
    args.pop("chain", None)
    record = (ctx.records or {}).get(chain)
    if record is None:
        return outcome(
            Verdict.SKIP, "the provided model was not exported (no record of the pretrained chain)"
        )
    exports, infers = step_runs(record, "export"), step_runs(record, "infer")
    if not exports or not infers:
        return outcome(
            Verdict.NA,
            "the config names no provided weights to export and infer (its whole_infer mode plans no export "
            "and inference: the infer_model slot)",
        )
    weights = provided_weights(record, Path(ctx.repo), (ctx.record,))
    export = next((r for r in exports if r.passed), exports[0])
    if weights is not None and not weights[1] and export.passed:
        return outcome(
            Verdict.NA,
            f"the provided weights {weights[0]} are not in the repo: the file the export read is what this "
            "check's own training wrote (the repo's docs or prepare.sh download the provided ones; the "
            "sandbox has no network, --network allows it)",
            Evidence(" ".join(export.argv), path=export.log),
        )
    if not export.passed:
        if weights is not None and not weights[1]:
            return outcome(
                Verdict.NA,
                f"the provided weights {weights[0]} are not in the repo (test_tipc/prepare.sh or the docs "
                "download them; the sandbox has no network, --network allows it)",
                Evidence(" ".join(export.argv), path=export.log),
            )
        line, number = error_line(ctx.repo, export.log)
        reason = export.result.reason if export.result is not None else "it did not run"
        return outcome(
            Verdict.FAIL,
            f"exporting the provided weights failed: {line or reason}",
            Evidence(" ".join(export.argv), path=export.log, line=number),
        )
    inner = check_predict_infer_agreement(replace(ctx, record=record), **args)
    named = f"the provided weights {weights[0]}" if weights is not None else "the provided model"
    images = _images(record)
    where = f" on {images}" if images else ""
    return replace(inner, summary=f"with {named}{where}: {inner.summary}")


def _images(record: RunRecord) -> str:
    for run in step_runs(record, "infer"):
        for key, value in argv_options(run.argv):
            if "img" in key.lower() or "image" in key.lower():
                return value
    return ""
