"""Artefacts the bash scripts call a success but are not.

- export of an untrained model: the export log warns that the weights were not found / randomly initialised;
- a stale or missing inference model: the exported files are absent, or older than the export step's start;
- a step asking for the GPU on a CPU-only Paddle (`gpu_flag_on_cpu_build`): `--use_gpu=True`,
  `--use-gpu True`, `-o Global.use_gpu=True`, `--device gpu` in the argv while the run's Paddle has no CUDA
  (record.host), or any
  step's log showing a fall-back message ("Please use PaddlePaddle with GPU version.", "device set error, use
  default device") whether or not the step passed.

Args of "artefacts": stale_slack_s (default 2: file-system timestamp slack), gpu (default true: include the
GPU-flag check). "gpu_flag_on_cpu_build" takes no args.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.yamlschema import Bool, Field, Map
from tipc.judge.checks._common import (
    StepRun,
    argv_options,
    excerpt,
    no_record,
    norm_key,
    outcome,
    physical_lines,
    repo_relative,
    resolve,
    step_runs,
)
from tipc.judge.checks._model import ModelFiles, locate_model
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import NON_NEGATIVE, registered

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord

# Messages that mean "the weights you asked for were not loaded" (Paddle set_state_dict, common repo loaders).
UNTRAINED_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"weights? (file\b.*\b)?(does not|doesn't|not) exists?",
        r"random(ly)?[ _-]?init",
        r"skip loading for",
        r"(pretrain\w*|weights?|params?|parameters|checkpoint|ckpt|pdparams|model file|state[ _]dict)\b.*"
        r"(not found|not exist|does not exist|cannot be found|can't be found|no such file|missing)",
        r"(not found|does not exist|no such file)\b.*(pretrain\w*|weights?|\.pdparams|checkpoint|ckpt)",
        r"(no|without) (pretrained|trained) (model|weights)",
        r"train(ing)? from scratch",
        r"missing keys?",
    )
)
GPU_FALLBACK_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"please use paddlepaddle with gpu version",
        r"not compiled with cuda",
        r"compiled without cuda",
        r"cpu version (of )?paddle",
        r"gpu (is )?not available",
        r"fall(ing|s)?[ -]?back to cpu",
        r"use cpu instead",
        # the official tutorial's train.py: `paddle.set_device` failed and it went on with the default (CPU)
        r"device set error.*(use|using) (the )?default device",
        r"cuda (is )?not available",
    )
)
_TRUE = {"true", "1", "yes", "y", "t"}


def _first_match(path: Path, patterns: tuple[re.Pattern[str], ...]) -> tuple[int, str, int] | None:
    """(line, text, total matching lines) of the first line matching any pattern."""
    first: tuple[int, str] | None = None
    count = 0
    for no, seg in physical_lines(path):
        if any(p.search(seg) for p in patterns):
            count += 1
            if first is None:
                first = (no, seg)
    return (first[0], first[1], count) if first is not None else None


def _gpu_flag(run: StepRun) -> str | None:
    for key, value in argv_options(run.argv):
        k = norm_key(key)
        v = value.strip().lower()
        if k in ("use_gpu", "usegpu", "use_cuda", "cuda", "gpu") and v in _TRUE:
            return f"{key}={value}"
        if k in ("device", "place", "run_device") and v.split(":")[0] in ("gpu", "cuda"):
            return f"{key}={value}"
    return None


# A standalone script (linted and type-checked with the package), run under the run's python.
_PROBE = Path(__file__).resolve().parents[2] / "execute" / "probes" / "wheelprobe.py"
_probe_cache: dict[str, bool | None] = {}


def _probe_wheel(python: str) -> bool | None:
    """Which Paddle wheel the run's python has (package metadata only: no paddle import, ~50 ms)."""
    if python in _probe_cache:
        return _probe_cache[python]
    import json
    import tempfile

    from tipc.execute import proc
    from tipc.execute.sandbox import for_commands

    answer: bool | None = None
    with tempfile.TemporaryDirectory() as tmp:
        for_commands(Path(tmp))  # the probe's working folder
        lines: list[str] = []
        try:
            res = proc.run([python, str(_PROBE)], cwd=tmp, timeout_s=30, on_line=lines.append)
        except OSError:
            res = None
        if res is not None and res.exit_code == 0 and lines:
            try:
                got = json.loads(lines[-1])
                if got.get("gpu"):
                    answer = True
                elif got.get("cpu"):
                    answer = False
            except (ValueError, AttributeError):
                answer = None
    _probe_cache[python] = answer
    return answer


def _paddle_has_cuda(record: RunRecord) -> tuple[bool | None, str]:
    """Whether the run's Paddle has CUDA, and how we know: record.host first, else the installed wheel."""
    host = getattr(record, "host", {}) or {}
    for key in ("paddle_cuda", "paddle_compiled_with_cuda", "compiled_with_cuda", "paddle_with_cuda"):
        if key in host and isinstance(host[key], bool):
            return bool(host[key]), f"record host.{key}"
    python = str(getattr(record, "python", "") or "")
    if python:
        answer = _probe_wheel(python)
        if answer is not None:
            wheel = "paddlepaddle-gpu" if answer else "paddlepaddle (CPU wheel, no paddlepaddle-gpu)"
            return answer, f"{python} has {wheel} installed"
    return None, "unknown"


_GPU_STAGES = ("train", "eval", "export", "infer", "client", "serve")


def gpu_findings(ctx: CheckContext) -> tuple[list[Evidence], int]:
    """Evidence per step that fell back from the GPU to the CPU, and how many steps asked for the GPU.

    A fall-back message (Paddle's "Please use PaddlePaddle with GPU version.", a repo's "device set error, use
    default device") in the log of any step that ran is evidence whatever its argv says: the official
    tutorial's train.py asks for the GPU by default, with no flag. A GPU flag with no such message is evidence
    when the run's Paddle has no CUDA (its result is a CPU result labelled GPU).
    """
    evidence: list[Evidence] = []
    flagged = 0
    has_cuda: bool | None = None
    how = ""
    probed = False
    for run in (r for stage in _GPU_STAGES for r in step_runs(ctx.run_record, stage)):
        if not run.ran:
            continue
        flag = _gpu_flag(run)
        flagged += flag is not None
        hit = None
        if run.log and resolve(ctx.repo, run.log).is_file():
            hit = _first_match(resolve(ctx.repo, run.log), GPU_FALLBACK_PATTERNS)
        if hit is not None:
            asked = f"asked for the GPU ({flag})" if flag else "asked for the GPU"
            status = "passed" if run.passed else "did not pass"
            evidence.append(
                Evidence(
                    f"{run.step.id} {asked} but Paddle fell back to CPU ({hit[2]} line(s); the step "
                    f"{status}, so its result is a CPU result labelled GPU)",
                    path=run.log,
                    line=hit[0],
                    excerpt=excerpt(hit[1]),
                    numbers=(("fallback_lines", hit[2]),),
                )
            )
            continue
        if flag is None:
            continue
        if not probed:  # only when a GPU flag shows no fall-back message in its log
            has_cuda, how = _paddle_has_cuda(ctx.run_record)
            probed = True
        if has_cuda is False:
            evidence.append(
                Evidence(
                    f"{run.step.id} asked for the GPU ({flag}) but the run's Paddle is CPU-only ({how}); "
                    "its result is a CPU result labelled GPU",
                    path=run.log,
                )
            )
    return evidence, flagged


@registered("gpu_flag_on_cpu_build")
def check_gpu_flag_on_cpu_build(ctx: CheckContext) -> CheckOutcome:
    """A step that asks for the GPU runs on it: no GPU flag on a CPU-only build, no fall-back in a log."""
    if ctx.record is None:
        return no_record()
    if not any(step_runs(ctx.record, stage) for stage in _GPU_STAGES):
        return outcome(Verdict.NA, "no train, eval, export, inference or serving step in the plan")
    if not any(r.ran for stage in _GPU_STAGES for r in step_runs(ctx.record, stage)):
        return outcome(Verdict.SKIP, "no step ran")
    evidence, flagged = gpu_findings(ctx)
    if evidence:
        return outcome(
            Verdict.FAIL,
            f"{len(evidence)} step(s) asked for the GPU and ran on the CPU: {evidence[0].text}",
            *evidence,
        )
    if flagged == 0:
        return outcome(Verdict.PASS, "no step asked for the GPU and no log shows a GPU-to-CPU fall-back")
    return outcome(Verdict.PASS, f"{flagged} GPU step(s) ran with no sign of a CPU fall-back")


def _stale_siblings(repo: Path, model: ModelFiles, before: float) -> list[Evidence]:
    """Older model files beside this run's export: Paddle 3 writes `<stem>.json`, and an infer.py that opens
    `<stem>.pdmodel` then runs a committed or stale program with the fresh weights (sldyns/DnCNN_paddle)."""
    out: list[Evidence] = []
    folder = Path(model.model_dir)
    fresh = {Path(f).resolve() for f in model.files}
    candidates = [
        *folder.glob("*.pdmodel"),
        *(j for j in folder.glob("*.json") if j.with_suffix(".pdiparams").is_file()),
    ]
    for f in sorted(candidates):
        try:
            mtime = f.stat().st_mtime
        except OSError:
            continue
        if f.resolve() in fresh or mtime >= before:
            continue
        rel = repo_relative(repo, f)
        out.append(
            Evidence(
                f"stale model file beside this run's export: {rel} was last written {before - mtime:.0f} s "
                f"before the export started, next to the fresh {Path(model.model_file).name}; a script that "
                f"opens {f.name} runs an old model",
                path=rel,
                numbers=(("mtime", mtime), ("export_started", before)),
            )
        )
    return out


def untrained_exports(ctx: CheckContext, exports: list[StepRun]) -> list[Evidence]:
    """Export logs that are missing, or warn that the trained weights were not loaded."""
    problems: list[Evidence] = []
    for run in exports:
        if not run.ran or not run.log:
            continue
        path = resolve(ctx.repo, run.log)
        if not path.is_file():
            problems.append(Evidence(f"export log of {run.step.id} not found", path=run.log))
            continue
        hit = _first_match(path, UNTRAINED_PATTERNS)
        if hit is not None:
            problems.append(
                Evidence(
                    f"{run.step.id} exported a model whose trained weights were not loaded "
                    f"({hit[2]} warning line(s))",
                    path=run.log,
                    line=hit[0],
                    excerpt=excerpt(hit[1]),
                    numbers=(("warning_lines", hit[2]),),
                )
            )
    return problems


def _stale_model_files(repo: Path, model: ModelFiles, start: float, slack: float) -> list[Evidence]:
    """The located model's files last written before the export started, and stale files beside them."""
    problems: list[Evidence] = []
    for f in model.files:
        mtime = f.stat().st_mtime
        if mtime < start - slack:
            rel = repo_relative(repo, f)
            problems.append(
                Evidence(
                    f"stale model file: {rel} was last written {start - mtime:.0f} s before the "
                    "export step started (the export did not produce it)",
                    path=rel,
                    numbers=(("mtime", mtime), ("export_started", start)),
                )
            )
    problems.extend(_stale_siblings(repo, model, start - slack))
    return problems


def _model_findings(
    ctx: CheckContext,
    exports: list[StepRun],
    infers: list[StepRun],
    slack: float,
    problems: list[Evidence],
    notes: list[Evidence],
) -> dict[str, Any]:
    """Judge the inference model the export wrote (missing or stale), adding to `problems` / `notes`;
    returns the outcome's data (the located model)."""
    ran_exports = [r for r in exports if r.ran]
    if not ran_exports and not infers:
        return {}
    model, cands = locate_model(ctx.run_record, Path(ctx.repo))
    if model is None:
        if any(r.passed for r in ran_exports) or any(r.ran for r in infers):
            problems.append(
                Evidence(
                    "inference model missing: no inference.json/.pdmodel + .pdiparams in "
                    + (", ".join(str(p) for p, _ in cands) or "any directory named by the export/infer steps")
                )
            )
        return {}
    starts = [r.result.started for r in ran_exports if r.result is not None and r.result.started is not None]
    if starts:
        problems.extend(_stale_model_files(ctx.repo, model, min(starts), slack))
        if not any(p.text.startswith("stale") for p in problems):
            notes.append(
                Evidence(
                    f"model files written by this run's export ({model.format})",
                    path=repo_relative(ctx.repo, model.model_file),
                )
            )
    return {"model": model.to_json()}


@registered(
    "artefacts",
    args=Map(
        {
            "stale_slack_s": Field(NON_NEGATIVE, default=2.0),
            "gpu": Field(Bool(), default=True),
        }
    ),
)
def check_artefacts(ctx: CheckContext, *, stale_slack_s: float, gpu: bool) -> CheckOutcome:
    """The export loaded trained weights and inference reads the model this run exported (fresh files)."""
    slack, include_gpu = float(stale_slack_s), gpu
    if ctx.record is None:
        return no_record()

    exports = step_runs(ctx.record, "export")
    infers = step_runs(ctx.record, "infer")
    if not exports and not infers:
        return outcome(Verdict.NA, "no export or inference step in the plan")
    problems = untrained_exports(ctx, exports)
    notes: list[Evidence] = []
    data = _model_findings(ctx, exports, infers, slack, problems, notes)
    if include_gpu:
        gpu_ev, _ = gpu_findings(ctx)
        problems.extend(gpu_ev)

    if problems:
        return CheckOutcome(Verdict.FAIL, problems[0].text, tuple(problems), data)
    return CheckOutcome(Verdict.PASS, "export and inference artefacts are this run's own", tuple(notes), data)
