"""Cross-engine agreement of the exported inference model (Paddle Inference vs ONNX Runtime vs ...).

The model work happens in a worker subprocess (`python -m tipc.judge.engines.worker`, protocol in that
module); this
side only finds the model, writes the request, and judges the figures the worker returns.

Args (override test_tipc/tipc.yaml `agreement`): engines (list, >= 2), atol, rtol, cosine_min, inputs
(repo-relative .npy/.npz), seed, timeout_s, plugins (modules registering more engines), engine_options
({engine: {factory keyword arguments}}), model_dir (repo-relative; default: found from the plan's export /
infer steps), python (interpreter with paddle; default: tipc.yaml `python`, then the run's python).
A pair agrees when, for every output (matched by position): shapes match, |a-b| <= atol + rtol*|a| everywhere
(a = the pair's first engine), cosine >= cosine_min and the argmax along the last axis agrees on every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from tipc.core.jsontypes import JSONObject, JSONValue, as_object, objects
from tipc.core.yamlschema import Field, Int, Map, Num, Seq, Str
from tipc.judge.checks._common import (
    no_record,
    outcome,
    repo_relative,
    resolve,
    run_python,
    settings_of,
    step_runs,
    work_dir_for,
)
from tipc.judge.checks._model import ModelFiles, find_model, locate_model
from tipc.judge.checks._worker import run_worker
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import (
    NON_NEGATIVE,
    POSITIVE,
    Args,
    arg_int,
    arg_num,
    arg_str,
    arg_strs,
    registered,
)
from tipc.judge.checks.settings import AgreementSettings


def _number(value: object, default: float) -> float:
    """A figure of the worker's reply (a JSON number), or `default` when it is absent."""
    return float(value) if isinstance(value, int | float) else default


def _scalar(value: object) -> float | int | str | None:
    """A figure for Evidence.numbers: a JSON scalar as it is, anything else as its text."""
    return value if value is None or isinstance(value, float | int | str) else str(value)


class _Cell(TypedDict):
    """The matrix cell of one engine pair (report data): its verdict, worst figures and per-output figures."""

    within: bool
    max_abs: float | None
    max_rel: float | None
    cosine: float | None
    argmax_agree: float | None
    outputs: list[JSONObject]


def _pair_cell(pair: JSONObject) -> _Cell:
    """The matrix cell of one engine pair: its verdict and worst figures over the outputs."""
    outs = objects(pair.get("outputs"))
    return {
        "within": bool(pair.get("within")),
        "max_abs": max((_number(o.get("max_abs"), float("inf")) for o in outs), default=None),
        "max_rel": max((_number(o.get("max_rel"), float("inf")) for o in outs), default=None),
        "cosine": min((_number(o.get("cosine"), 0.0) for o in outs), default=None),
        "argmax_agree": min(
            (_number(o["argmax_agree"], 0.0) for o in outs if o.get("argmax_agree") is not None), default=None
        ),
        "outputs": outs,
    }


def _disagreement(a: str, b: str, outs: list[JSONObject]) -> Evidence:
    """What differs on the pair's worst output (largest max_abs)."""
    worst: JSONObject = max(outs, key=lambda o: _number(o.get("max_abs"), float("inf")), default={})
    why = []
    if not worst.get("shape_match", True):
        why.append(f"shapes {worst.get('shape_ref')} vs {worst.get('shape_other')}")
    elif worst:
        why.append(
            f"max_abs={worst.get('max_abs'):.3g} max_rel={worst.get('max_rel'):.3g} "
            f"cosine={worst.get('cosine'):.8f} argmax_agree={worst.get('argmax_agree')} "
            f"mismatched={worst.get('mismatched')}/{worst.get('size')}"
        )
    return Evidence(
        f"{a} vs {b} disagree on output {worst.get('index')}: {'; '.join(why)}",
        numbers=tuple((k, _scalar(worst.get(k))) for k in ("max_abs", "max_rel", "cosine", "argmax_agree")),
    )


def _pair_evidence(a: str, b: str, cell: _Cell) -> Evidence:
    if not cell["within"]:
        return _disagreement(a, b, cell["outputs"])
    return Evidence(
        f"{a} vs {b} agree: max_abs={cell['max_abs']:.3g} max_rel={cell['max_rel']:.3g} "
        f"cosine={cell['cosine']:.8f}",
        numbers=(
            ("max_abs", cell["max_abs"]),
            ("max_rel", cell["max_rel"]),
            ("cosine", cell["cosine"]),
        ),
    )


def _inputs_evidence(inputs: JSONObject) -> list[Evidence]:
    """Where the worker's inputs came from (random: with the hint to set real ones)."""
    shapes = tuple((k, str(as_object(v)["shape"])) for k, v in as_object(inputs.get("feeds")).items())
    if inputs.get("source") == "random":
        note = (
            f"inputs: {inputs.get('note')} (seed {inputs.get('seed')}); set "
            "agreement.inputs in test_tipc/tipc.yaml to use real data"
        )
        return [Evidence(note, numbers=shapes)]
    if inputs.get("source") == "file":
        path = inputs.get("path")
        return [Evidence("inputs from file", path=path if isinstance(path, str) else None, numbers=shapes)]
    return []


def _judge_response(
    resp: JSONObject,
    engines: list[str],
    unavailable: dict[str, JSONValue],
    failed_engines: dict[str, JSONValue],
) -> tuple[Verdict, str]:
    """The verdict and summary of a worker response, the first matching case winning."""
    pairs = objects(resp.get("pairs"))
    if failed_engines:
        names = ", ".join(sorted(failed_engines))
        reason = next(iter(failed_engines.values()), None)
        because = f": {reason}" if reason else ""
        return Verdict.FAIL, f"engine(s) failed on the exported model: {names}{because}"
    measured = [n for n in engines if n not in unavailable]
    if unavailable and (len(measured) < 2 or not resp.get("ok")):
        names = ", ".join(sorted(unavailable))
        return (
            Verdict.SKIP,
            f"cannot compare engines: {names} not installed for the model-side python "
            "(pip install paddlepaddle paddle2onnx onnx onnxruntime)",
        )
    if not resp.get("ok"):
        return Verdict.FAIL, f"agreement worker failed: {resp.get('error')}"
    if not pairs:
        return Verdict.FAIL, "no engine pair to compare"
    bad = [f"{p['a']}~{p['b']}" for p in pairs if not p.get("within")]
    if bad:
        return Verdict.FAIL, f"engines disagree: {', '.join(bad)}"
    if unavailable:
        return (
            Verdict.WARN,
            f"{', '.join(measured)} agree; not measured: {', '.join(sorted(unavailable))} (not installed)",
        )
    worst_abs = max(_number(o.get("max_abs"), 0.0) for p in pairs for o in objects(p.get("outputs")))
    return Verdict.PASS, f"{len(engines)} engines agree on every output (worst max_abs {worst_abs:.3g})"


def summarise_response(resp: JSONObject, engines: list[str], cosine_min: float) -> CheckOutcome:
    """Turn a worker response into an outcome (pure; unit-tested without the worker)."""
    eng_info = {name: as_object(e) for name, e in as_object(resp.get("engines")).items()}
    matrix: dict[str, dict[str, _Cell | None]] = {a: {b: None for b in engines} for a in engines}
    evidence: list[Evidence] = []
    for pair in objects(resp.get("pairs")):
        a, b = str(pair["a"]), str(pair["b"])
        cell = _pair_cell(pair)
        if a in matrix and b in matrix:
            matrix[a][b] = cell
            matrix[b][a] = cell
        evidence.append(_pair_evidence(a, b, cell))
    unavailable = {n: e.get("error") for n, e in eng_info.items() if e.get("unavailable")}
    # An engine with no error of its own stopped on the worker's error (e.g. inputs it could not build).
    failed_engines = {
        n: e.get("error") or resp.get("error")
        for n, e in eng_info.items()
        if not e.get("ok") and not e.get("unavailable")
    }
    # Unavailable engines first, then failed ones, each group in reverse order (as inserted at the front).
    evidence[:0] = [
        *(Evidence(f"engine {n} unavailable: {err}") for n, err in reversed(unavailable.items())),
        *(Evidence(f"engine {n} failed: {err}") for n, err in reversed(failed_engines.items())),
    ]
    inputs = as_object(resp.get("inputs"))
    evidence.extend(_inputs_evidence(inputs))
    data = {
        "engines": engines,
        "matrix": matrix,
        "engine_details": eng_info,
        "inputs": inputs,
        "model": resp.get("model"),
        "cosine_min": cosine_min,
        "unavailable": sorted(unavailable),
    }
    verdict, summary = _judge_response(resp, engines, unavailable, failed_engines)
    return CheckOutcome(verdict, summary, tuple(evidence), data)


def with_spread(result: CheckOutcome, resp: JSONObject, work: Path) -> CheckOutcome:
    """The agreement outcome with the output spread across the inputs beside the error.

    Engines that agree on a constant output (a dead or untrained model gives the same answer for every input)
    prove little, and the summary says so plainly; the verdict stays the engines' agreement. How constant a
    lite-trained model's outputs are varies from run to run (the official tutorial: max-min 0, 0.0107, 0.115
    on three runs), so a verdict that turned on it would differ between two reviews of the same submission;
    a model that learned nothing is the convergence and eval rules' to judge.
    """
    from tipc.judge.checks.spread import output_spreads

    eng_info = {name: as_object(e) for name, e in as_object(resp.get("engines")).items()}
    ref = next(
        (n for n, e in eng_info.items() if e.get("ok") and (work / f"outputs_{n}.npz").is_file()), None
    )
    if ref is None:
        return result
    names = [str(o.get("name")) for o in objects(eng_info[ref].get("outputs"))]
    spreads = output_spreads(work / f"outputs_{ref}.npz", names)
    if not spreads:
        return result
    evidence = [
        Evidence(
            f"{ref} {sp.text()}",
            numbers=(("inputs", sp.inputs), ("max_minus_min", sp.max_range), ("std", sp.mean_std)),
        )
        for sp in spreads
    ]
    data = {**result.data, "spread": {"engine": ref, "outputs": [sp.to_json() for sp in spreads]}}
    constant = [sp for sp in spreads if sp.constant]
    near = [sp for sp in spreads if sp.near_constant]
    summary = result.summary
    if constant or near:
        sp = (constant or near)[0]
        kind = "constant" if constant else "nearly constant"
        data["constant_outputs"] = kind
        summary = (
            f"{result.summary}; note: the outputs are {kind} across {sp.inputs} inputs (output {sp.name}: "
            f"max-min {sp.max_range:.3g}, largest |value| {sp.scale:.3g}), so agreement on them proves little"
        )
    elif result.verdict is Verdict.PASS:
        worst = max(spreads, key=lambda sp: sp.max_range)
        summary = (
            f"{result.summary}; output spread across {worst.inputs} inputs: max-min {worst.max_range:.3g}"
        )
    return CheckOutcome(result.verdict, summary, (*result.evidence, *evidence), data)


def with_eval_level(ctx: CheckContext, result: CheckOutcome) -> CheckOutcome:
    """A PASS on a model whose eval accuracy is 0 says so (a note: the verdict stays the agreement's, which a
    lite model's eval level, 0 in one run and 0.06 in the next, must not flip)."""
    from tipc.judge.checks.degenerate import chance_level_eval

    if result.verdict is not Verdict.PASS:
        return result
    ev = chance_level_eval(ctx)
    if ev is None:
        return result
    return CheckOutcome(
        result.verdict,
        f"{result.summary}; note: {ev.text}",
        (ev, *result.evidence),
        {**result.data, "eval_level": ev.text},
    )


@dataclass(frozen=True)
class _AgreementArgs:
    """The check's arguments, validated, over tipc.yaml `agreement`."""

    engines: list[str]
    atol: float
    rtol: float
    cosine_min: float
    timeout_s: float
    seed: int
    inputs: str | None
    plugins: list[str]
    engine_options: dict[str, dict[str, object]]
    model_dir: str | None

    @property
    def tolerances(self) -> dict[str, float]:
        return {"atol": self.atol, "rtol": self.rtol, "cosine_min": self.cosine_min}


def _engine_options(args: Args, default: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """`engine_options` (engine -> its factory's keyword arguments), else tipc.yaml's."""
    value = args.get("engine_options")
    if value is None:
        return dict(default)
    if isinstance(value, dict) and all(isinstance(o, dict) for o in value.values()):
        return {str(k): {str(n): v for n, v in o.items()} for k, o in value.items() if isinstance(o, dict)}
    raise TypeError(f"check argument 'engine_options': expected a mapping of mappings, got {value!r}")


def _agreement_args(args: Args, a: AgreementSettings) -> _AgreementArgs:
    """The rule's arguments over test_tipc/tipc.yaml `agreement`."""
    return _AgreementArgs(
        arg_strs(args, "engines") or list(a.engines),
        arg_num(args, "atol", a.tolerances.atol),
        arg_num(args, "rtol", a.tolerances.rtol),
        arg_num(args, "cosine_min", a.tolerances.cosine_min),
        arg_num(args, "timeout_s", a.timeout_s),
        arg_int(args, "seed", a.seed),
        arg_str(args, "inputs") if "inputs" in args else a.inputs,
        (arg_strs(args, "plugins") or []) if "plugins" in args else list(a.plugins),
        _engine_options(args, a.engine_options),
        arg_str(args, "model_dir"),
    )


_EXPECTED_MODEL = "expected inference.json or inference.pdmodel + inference.pdiparams"


def _model_to_check(ctx: CheckContext, model_arg: str | None) -> ModelFiles | CheckOutcome:
    """The model given as model_dir, else the one the plan's export step wrote; or why there is none."""
    if model_arg is not None:
        model = find_model(resolve(ctx.repo, model_arg))
        if model is None:
            return outcome(
                Verdict.FAIL, f"no inference model in {model_arg}", Evidence(_EXPECTED_MODEL, path=model_arg)
            )
        return model
    exports = step_runs(ctx.run_record, "export")
    if not exports and not step_runs(ctx.run_record, "infer"):
        return outcome(Verdict.NA, "no export or inference step in the plan")
    if exports and not any(r.passed for r in exports):
        return outcome(
            Verdict.SKIP, "the export step did not pass", data={"steps": [r.step.id for r in exports]}
        )
    model, cands = locate_model(ctx.run_record, Path(ctx.repo))
    if model is None:
        return outcome(
            Verdict.FAIL,
            "exported inference model not found",
            *(Evidence(f"looked in {p} ({why})") for p, why in cands),
            Evidence(_EXPECTED_MODEL),
        )
    return model


def _inputs_path(ctx: CheckContext, inputs: str | None) -> str | CheckOutcome | None:
    """The absolute path of the agreement inputs file (None: the worker makes a seeded batch)."""
    if inputs is None:
        return None
    ip = resolve(ctx.repo, inputs)
    if not ip.is_file():
        return outcome(
            Verdict.FAIL, f"agreement inputs file not found: {inputs}", Evidence("missing", path=inputs)
        )
    return str(ip.resolve())


def _judge_worker_run(
    ctx: CheckContext,
    parsed: _AgreementArgs,
    request: dict[str, object],
    work: Path,
    python: str,
    model: ModelFiles,
) -> CheckOutcome:
    """Run the worker on the request and judge its answer (naming the engine that crashed it, if one did)."""
    run = run_worker(python, request, work, parsed.timeout_s)
    rel_log = repo_relative(ctx.repo, run.log)
    if run.response is None:
        if run.exit_code is not None and len(parsed.engines) > 1:
            crashed = _crashing_engine(ctx, request, list(parsed.engines), work, parsed.timeout_s, python)
            if crashed is not None:
                return crashed
        return outcome(
            Verdict.FAIL, f"agreement worker failed: {run.error}", Evidence("worker log", path=rel_log)
        )
    inputs = run.response.get("inputs")
    if parsed.inputs is not None and isinstance(inputs, dict):
        inputs["path"] = parsed.inputs  # as the user wrote it (repo-relative)
    summary = summarise_response(run.response, list(parsed.engines), parsed.cosine_min)
    result = with_eval_level(ctx, with_spread(summary, run.response, work))
    result.data.update({"tolerances": parsed.tolerances, "worker_log": rel_log})
    model_file = repo_relative(ctx.repo, model.model_file)
    return CheckOutcome(
        result.verdict,
        result.summary,
        (*result.evidence, Evidence(f"model {model.format}: {model_file}", path=model_file)),
        result.data,
    )


@registered(
    "agreement",
    args=Map(
        {
            "engines": Field(Seq(Str(), min_items=2, what="a list of at least two engine names")),
            "atol": Field(NON_NEGATIVE),
            "rtol": Field(NON_NEGATIVE),
            "cosine_min": Field(Num(minimum=0, maximum=1, exclusive_minimum=True)),
            "timeout_s": Field(POSITIVE),
            "seed": Field(Int()),
            "inputs": Field(Str(what="a path")),
            "plugins": Field(Seq(Str(), what="a list of module names")),
            "engine_options": Field(
                Map(values=Map(closed=False), what="a mapping of engine names to mappings")
            ),
            "model_dir": Field(Str(what="a path")),
            "python": Field(Str(what="an interpreter")),
        }
    ),
)
def check_agreement(ctx: CheckContext, **args: object) -> CheckOutcome:
    """The exported model's outputs agree across inference engines (Paddle Inference, ONNX Runtime)."""
    settings = settings_of(ctx)
    if isinstance(settings, CheckOutcome):
        return settings
    parsed = _agreement_args(args, settings.agreement)
    if ctx.record is None:
        return no_record()
    model = _model_to_check(ctx, parsed.model_dir)
    if isinstance(model, CheckOutcome):
        return model
    inputs_path = _inputs_path(ctx, parsed.inputs)
    if isinstance(inputs_path, CheckOutcome):
        return inputs_path

    work = work_dir_for(ctx, "tipc_agreement")
    python = run_python(ctx, settings, arg_str(args, "python"))
    request: dict[str, object] = {
        "op": "agreement",
        "model_dir": str(model.model_dir),
        "work_dir": str(work.resolve()),
        "engines": list(parsed.engines),
        "plugins": list(parsed.plugins),
        "engine_options": parsed.engine_options,
        "inputs": inputs_path,
        "seed": parsed.seed,
        "tolerances": parsed.tolerances,
    }
    return _judge_worker_run(ctx, parsed, request, work, python, model)


def _crashing_engine(
    ctx: CheckContext,
    request: dict[str, object],
    engines: list[str],
    work: Path,
    timeout_s: float,
    python: str,
) -> CheckOutcome | None:
    """The worker died without answering (a native abort or segfault in some engine's library): run each
    engine alone to name the one that kills it. Costs a worker start per engine, only after a crash."""
    for name in engines:
        alone = work / f"alone_{name}"
        run = run_worker(
            python, {**request, "engines": [name], "work_dir": str(alone.resolve())}, alone, timeout_s
        )
        if run.response is None and run.exit_code is not None:
            rel_log = repo_relative(ctx.repo, run.log)
            tail = _log_tail(run.log)
            return outcome(
                Verdict.FAIL,
                f"engine {name} crashed the worker (exit {run.exit_code}) on the exported model",
                Evidence(
                    f"engine {name} failed: the process died while it ran the model",
                    path=rel_log,
                    excerpt=tail,
                ),
                engines=engines,
                crashed_engine=name,
                exit_code=run.exit_code,
            )
    return None


def _log_tail(path: Path, lines: int = 8) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    kept = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(kept[-lines:]) or None
