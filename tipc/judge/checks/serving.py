"""Check: the exported model, served over HTTP, answers like Paddle Inference, under concurrent load.

Register in tipc.judge.checks.CHECKS (lead):  "serving": tipc.judge.checks.serving.serving

What it does: start `tipc serve` on the exported model (a child in its own process group, on a free loopback
port), poll its readiness under a deadline, send the agreement inputs through both protocols (Open Inference
v2 and Paddle Serving pipeline), compare with Paddle Inference (a separate worker process) on the same batch
(max abs/rel error, cosine), then run a bounded load loop (latency p50/p99, throughput, errors). A server that
dies at any point makes the check FAIL with its log tail as evidence. The server is always stopped. For the
report's engine x engine matrix it also compares each protocol with the other engines whose outputs the
agreement check saved on this model and batch, and the two protocols with each other (data["cross"]): figures,
not the verdict.

Arguments (all optional): model_dir, inputs (.npy), requests (200), concurrency (4), load_s (2: the load
loop's time budget, so a slow model gets fewer requests; 0 = none, `tipc check --load`), ready_deadline_s
(120), atol / rtol / cosine_min (else the repo's agreement tolerances, else 1e-5 / 1e-4 / 0.99999). An
unknown or ill-typed argument is a FAIL naming it; a run whose plans have no export or inference step (and no
`serving.model_dir` in tipc.yaml) is N-A: there is no exported model to serve.

The model is looked for in the train chain's record first (`ctx.record`), then in the other chains' records
(`ctx.records`, e.g. the serving chain's conversion step).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from tipc.core.jsontypes import as_list, as_object
from tipc.core.yamlschema import Field, Map, Str
from tipc.execute import proc
from tipc.judge.checks._common import run_python, settings_of, work_dir_for
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import COUNT, NON_NEGATIVE, Args, arg_int, arg_num, arg_str, registered
from tipc.judge.checks.settings import Settings

if TYPE_CHECKING:
    import numpy as np

    from tipc.execute.record import RunRecord
    from tipc.execute.serving.client import Reply
    from tipc.execute.serving.launcher import Launched
    from tipc.execute.serving.load import LoadResult
    from tipc.judge.engines.compare import Figures

_MODEL_DIR_KEYS = ("save_inference", "inference_dir", "model_dir", "output_path")
_SERVICE_NAME = "tipc_check"
DEFAULT_LOAD_S = 2.0  # the default load loop is a smoke test of concurrency; `--load` runs the full one
_MODEL_STAGES = ("export", "infer")


def _has_model(folder: Path) -> bool:
    return (folder / "inference.pdiparams").is_file() and (
        (folder / "inference.json").is_file() or (folder / "inference.pdmodel").is_file()
    )


def _records(ctx: CheckContext) -> list[RunRecord]:
    """The serving chain's record first (the model it converted is the one the repo serves), then the train
    chain's, then every other chain's (CheckContext.records), each once."""
    records = dict(ctx.records)
    out: list[RunRecord] = []
    for record in (records.get("serving"), ctx.record, *records.values()):
        if record is not None and all(record is not r for r in out):
            out.append(record)
    return out


def _candidates_from_plan(record: RunRecord) -> list[tuple[str, str]]:
    """(step id, path) of each model-folder-looking `key=value`: export steps first, then inference."""
    if record is None:
        return []
    found: list[tuple[str, str]] = []
    steps = list(record.plan.steps)
    steps.sort(key=lambda s: 0 if s.stage.value == "export" else 1 if s.stage.value == "infer" else 2)
    for step in steps:
        tokens = [t for a in step.argv for t in (shlex.split(a) if step.shell else [a])]
        for i, token in enumerate(tokens):
            key, sep, value = token.partition("=")
            if not sep and i + 1 < len(tokens) and token.startswith("-"):
                key, value = token, tokens[i + 1]
            norm = key.lower().replace("-", "_")
            if value and any(k in norm for k in _MODEL_DIR_KEYS):
                found.append((step.id, value))
    return found


def find_model_dir(ctx: CheckContext, explicit: str | None = None) -> tuple[Path | None, str]:
    """(model folder or None, how it was found / why not)."""
    repo = Path(ctx.repo).resolve()  # children run elsewhere: every path handed to them is absolute
    if explicit:
        path = (repo / explicit).resolve()
        return (
            (path, "given as model_dir")
            if _has_model(path)
            else (None, f"{explicit}: no exported model there")
        )
    settings = settings_of(ctx)
    configured = None if isinstance(settings, CheckOutcome) else settings.serving.model_dir
    if configured is not None and _has_model(repo / configured):
        return (repo / configured).resolve(), "from tipc.yaml serving.model_dir"
    not_passed: list[str] = []
    for record in _records(ctx):
        for step_id, value in _candidates_from_plan(record):
            result = record.result(step_id)
            if result is not None and result.status.value != "passed":
                # A folder an earlier run left would be stale: never serve it in place of this run's export.
                not_passed.append(f"{step_id} {result.status.value}")
                continue
            step_cwd = repo / record.plan.step(step_id).cwd
            for base in (step_cwd, repo):
                path = (base / value).resolve()
                if _has_model(path):
                    return path, f"from step {step_id}"
    why = "no exported inference model found (inference.json|.pdmodel + inference.pdiparams)"
    if not_passed:
        why += "; steps that would have written one did not pass: " + ", ".join(dict.fromkeys(not_passed))
    return None, why


def _serving_record(ctx: CheckContext) -> RunRecord | None:
    """The repo's serving chain's run record (None when it was not run)."""
    record = ctx.records.get("serving")
    if record is None and ctx.record is not None and getattr(ctx.record.plan, "chain", None) == "serving":
        record = ctx.record
    return record


def _untrained_conversion(ctx: CheckContext) -> list[Evidence]:
    """The serving chain's conversion steps whose log says the weights they were given were not loaded (a
    path that does not exist, exported at random init): what the repo serves is then an untrained model."""
    from tipc.judge.checks._common import step_runs
    from tipc.judge.checks.artefacts import untrained_exports

    record = _serving_record(ctx)
    if record is None:
        return []
    return [e for e in untrained_exports(ctx, step_runs(record, "export")) if e.line is not None]


def repo_serving_state(ctx: CheckContext) -> tuple[str, str, tuple[Evidence, ...]]:
    """Whether the repo's own serving chain ran and passed: ("passed" | "failed" | "not_run", why, evidence).

    The serving chain's record is `ctx.records["serving"]` (or the main record when it is that chain). Its
    server and client steps are the repo's own deployment; a check that serves the export with tipc's server
    verifies tipc, not the repo, so it may only stand for the repo when those steps passed.
    """
    record = _serving_record(ctx)
    if record is None:
        return "not_run", "the repo's serving chain was not run (no serving run record)", ()
    steps = list(record.plan.steps)
    serving_steps = [s for s in steps if s.stage.value in ("serve", "client")]
    if not serving_steps:
        return "not_run", "the repo's serving config plans no server or client step", ()
    bad: list[Evidence] = []
    not_run = 0
    for step in steps:
        result = record.result(step.id)
        status = result.status.value if result is not None else "not run"
        if status == "passed":
            continue
        if status in ("skipped", "not run", "blocked"):
            not_run += 1
        reason = f" ({result.reason})" if result is not None and result.reason else ""
        log = result.log if result is not None and result.log else None
        bad.append(Evidence(f"repo serving step {step.id}: {status}{reason}", path=log))
    if not bad:
        return "passed", f"the repo's serving chain passed ({len(steps)} step(s))", ()
    what = "did not run" if not_run == len(bad) else "did not pass"
    return (
        "not_run" if what == "did not run" else "failed",
        f"the repo's own serving steps {what}: {bad[0].text}",
        tuple(bad),
    )


@registered(
    "serving",
    args=Map(
        {
            "requests": Field(COUNT),
            "concurrency": Field(COUNT),
            "ready_deadline_s": Field(NON_NEGATIVE),
            "atol": Field(NON_NEGATIVE),
            "rtol": Field(NON_NEGATIVE),
            "cosine_min": Field(NON_NEGATIVE),
            "load_s": Field(NON_NEGATIVE),
            "model_dir": Field(Str(what="a path")),
            "inputs": Field(Str(what="a path")),
        }
    ),
)
def serving(ctx: CheckContext, **args: object) -> CheckOutcome:
    """Serving equals inference, for the repo's own serving: never a PASS when its serving steps did not run.

    When the repo's serving chain passed, tipc serves the same exported model and compares it with Paddle
    Inference (the figures below). When it did not run (no record, skipped steps): N-A with the reason; when
    it failed: FAIL. tipc's own reference server result, if it could be computed, is then reported apart as
    "tipc reference server (not the repo's)" and never decides the verdict.
    """
    untrained = _untrained_conversion(ctx)
    if untrained:
        return CheckOutcome(
            Verdict.FAIL,
            "the repo's serving chain serves a model converted without its trained weights: "
            + untrained[0].text,
            tuple(untrained),
            {"repo_serving": "untrained"},
        )
    result = _serve_and_compare(ctx, **args)
    if ctx.record is None and not ctx.records:
        return result
    if result.verdict in (Verdict.NA, Verdict.SKIP):
        return result  # nothing was served: the reason stands as it is
    state, why, evidence = repo_serving_state(ctx)
    if state == "passed":
        return CheckOutcome(
            result.verdict,
            result.summary,
            (*result.evidence, Evidence(why)),
            {**result.data, "repo_serving": state},
        )
    reference = Evidence(
        f"tipc reference server (not the repo's): {result.verdict.value}: {result.summary}",
        numbers=tuple(e for ev in result.evidence for e in ev.numbers),
    )
    data = {
        "repo_serving": state,
        "tipc_reference_server": {"verdict": result.verdict.value, "summary": result.summary, **result.data},
    }
    verdict = Verdict.FAIL if state == "failed" else Verdict.NA
    return CheckOutcome(
        verdict,
        f"{why}; the repo's serving result is not verified (tipc's own server is reported apart)",
        (Evidence(why), *evidence, reference),
        data,
    )


def full_load(checks: Mapping[str, Callable[..., CheckOutcome]]) -> dict[str, Callable[..., CheckOutcome]]:
    """The check registry with the serving check's load loop unbounded in time (`tipc check --load`): all
    `requests` are sent, however long they take. A rule's own `load_s` still wins."""
    out = dict(checks)
    inner = out.get("serving")
    if inner is not None:
        out["serving"] = lambda ctx, **args: inner(ctx, **{"load_s": 0, **args})
    return out


def _reference(engine: Mapping[str, object], npz: Path) -> dict[str, np.ndarray]:
    """A worker's saved outputs by output name (out0, out1, .. in the engine's output order)."""
    import numpy as np

    saved = np.load(npz)
    return {
        str(as_object(o).get("name")): saved[f"out{i}"] for i, o in enumerate(as_list(engine.get("outputs")))
    }


class _Served(TypedDict):
    """One served output's figures against a reference, with the agreement check's verdict on them."""

    max_abs: float
    max_rel: float
    cosine: float
    within: bool


@dataclass(frozen=True)
class _ServingPlan:
    """What the check serves and how hard it pushes it: the validated arguments over tipc.yaml."""

    settings: Settings
    repo: Path
    model_dir: Path
    how: str
    out: Path
    tolerances: dict[str, float]
    requests: int
    concurrency: int
    deadline_s: float
    load_s: float


def _nothing_to_serve(records: list[RunRecord], args: Args, settings: Settings) -> bool:
    """Run records whose plans have no export or inference step, and no model folder given."""
    return bool(
        records
        and not args.get("model_dir")
        and settings.serving.model_dir is None
        and not any(s.stage.value in _MODEL_STAGES for r in records for s in r.plan.steps)
    )


def _serving_plan(ctx: CheckContext, args: Args) -> _ServingPlan | CheckOutcome:
    """The model to serve and the check's figures; or the outcome saying why nothing is served."""
    settings = settings_of(ctx)
    if isinstance(settings, CheckOutcome):
        return settings
    if _nothing_to_serve(_records(ctx), args, settings):
        return CheckOutcome(
            Verdict.NA, "no export or inference step in the plan: there is no exported model to serve"
        )
    repo = Path(ctx.repo).resolve()  # children run elsewhere: every path handed to them is absolute
    model_dir, how = find_model_dir(ctx, arg_str(args, "model_dir"))
    if model_dir is None:
        return CheckOutcome(Verdict.SKIP, f"serving not checked: {how}", (Evidence(how),))
    from tipc.execute.sandbox import for_commands

    out = for_commands(work_dir_for(ctx, "serving_check").absolute())  # children run elsewhere: absolute
    return _ServingPlan(
        settings=settings,
        repo=repo,
        model_dir=model_dir,
        how=how,
        out=out,
        # Arguments (validated above) over the repo's agreement tolerances.
        tolerances={
            key: arg_num(args, key, float(getattr(settings.agreement.tolerances, key)))
            for key in ("atol", "rtol", "cosine_min")
        },
        requests=arg_int(args, "requests", 200),
        concurrency=arg_int(args, "concurrency", 4),
        deadline_s=arg_num(args, "ready_deadline_s", 120.0),
        load_s=arg_num(args, "load_s", DEFAULT_LOAD_S),
    )


@dataclass(frozen=True)
class _Session:
    """A started server: its process, log and the outcome data every stage adds to."""

    server: proc.Background
    log: Path
    data: dict[str, object]

    def died(self, stage: str) -> CheckOutcome | None:
        """The FAIL with the server log's tail when the server has exited, else None."""
        from tipc.execute.serving.launcher import log_tail

        code = self.server.poll()
        if code is None:
            return None
        return CheckOutcome(
            Verdict.FAIL,
            f"the server died {stage} (exit code {code})",
            (Evidence("server log tail", path=str(self.log), excerpt=log_tail(self.log)),),
            self.data,
        )


@dataclass(frozen=True)
class _Batch:
    """The batch both sides answer: the model's input spec, the array, the .npy the worker reads."""

    spec: Mapping[str, object]
    array: np.ndarray
    path: Path
    source: str


_FLOAT_TYPES = {"FP32": "float32", "FP64": "float64", "FP16": "float16"}


def _input_batch(session: _Session, plan: _ServingPlan, base_url: str, args: Args) -> _Batch | CheckOutcome:
    """The repo's agreement batch, or a seeded random batch shaped like the model's (single) input."""
    import numpy as np

    from tipc.execute.serving.client import Client

    inputs_rel = arg_str(args, "inputs") or plan.settings.agreement.inputs
    with Client(base_url) as client:
        meta = client.get(f"/v2/models/{_SERVICE_NAME}")
    if not meta.ok or len(meta.body.get("inputs", [])) != 1:
        return CheckOutcome(
            Verdict.FAIL if not meta.ok else Verdict.SKIP,
            f"model metadata: HTTP {meta.status}; the serving check handles single-input models",
            (Evidence(str(meta.body)[:500]),),
            session.data,
        )
    spec = meta.body["inputs"][0]
    if isinstance(inputs_rel, str) and (plan.repo / inputs_rel).is_file():
        batch_path = plan.repo / inputs_rel
        source = f"agreement inputs {inputs_rel}"
    else:
        shape = [4 if d < 0 else d for d in spec["shape"]]
        if spec["datatype"] not in _FLOAT_TYPES:
            return CheckOutcome(
                Verdict.SKIP, "no agreement inputs in tipc.yaml and the input is not float", (), session.data
            )
        rng = np.random.default_rng(0)
        batch_path = plan.out / "random_inputs.npy"
        np.save(batch_path, rng.standard_normal(shape).astype(np.float32))
        source = f"seeded random batch {shape} (no agreement.inputs in tipc.yaml)"
    loaded = np.load(batch_path)
    if not isinstance(loaded, np.ndarray):  # an .npz: its first array, as the agreement check reads it
        loaded = loaded[loaded.files[0]]
    if batch_path.suffix != ".npy":  # the worker reads one .npy: hand it exactly the batch served
        batch_path = plan.out / "agreement_inputs.npy"
        np.save(batch_path, loaded)
    session.data["inputs"] = source
    return _Batch(spec, loaded, batch_path, source)


def _paddle_reference(
    session: _Session, plan: _ServingPlan, python: str, batch: _Batch
) -> dict[str, np.ndarray] | CheckOutcome:
    """Paddle Inference's outputs on the batch, by output name: the engines worker (the agreement check's), in
    its own process, so the reference shares no code with the server's predictors."""
    from tipc.execute.serving.launcher import log_tail
    from tipc.judge.checks._worker import earlier_outputs, run_worker

    # The agreement check's worker may have run Paddle Inference on this very model and batch already.
    reused = earlier_outputs(python, str(plan.model_dir), str(batch.path), "paddle_inference")
    if reused is not None:
        engine, saved_path = reused
        session.data["reference"] = f"Paddle Inference outputs reused from {saved_path.parent.name}"
        return _reference(engine, saved_path)
    work = plan.out / "paddle_inference"
    request = {
        "op": "agreement",
        "model_dir": str(plan.model_dir),
        "work_dir": str(work),
        "engines": ["paddle_inference"],
        "inputs": str(batch.path),
    }
    ref = run_worker(python, request, work, 300)
    response = ref.response or {}
    engine = as_object(as_object(response.get("engines")).get("paddle_inference"))
    if not engine.get("ok"):
        why = ref.error or engine.get("error") or response.get("error") or "no outputs"
        return CheckOutcome(
            Verdict.FAIL,
            f"Paddle Inference could not run the exported model (reference for serving): {why}",
            (Evidence("worker log", path=str(ref.log), excerpt=log_tail(ref.log)),),
            session.data,
        )
    return _reference(engine, work / "outputs_paddle_inference.npz")


def _served_outputs(v2: Reply, pipe: Reply, failures: list[Evidence]) -> dict[str, dict[str, np.ndarray]]:
    """The outputs each protocol answered, by protocol and output name; a failed request adds to failures."""
    import json

    import numpy as np

    served: dict[str, dict[str, np.ndarray]] = {}
    if v2.ok:
        served["v2"] = {o["name"]: np.asarray(o["data"]).reshape(o["shape"]) for o in v2.body["outputs"]}
    else:
        failures.append(Evidence(f"v2 infer: HTTP {v2.status}", excerpt=str(v2.body)[:500]))
    if pipe.ok and pipe.body.get("err_no") == 0:
        served["pipeline"] = {
            k: np.asarray(json.loads(v)) for k, v in zip(pipe.body["key"], pipe.body["value"], strict=False)
        }
    else:
        failures.append(Evidence(f"pipeline predict: HTTP {pipe.status}", excerpt=str(pipe.body)[:500]))
    return served


def _figures(fig: Figures, cosine_min: float) -> _Served:
    """The figures a report shows of one output pair, with the agreement check's verdict on it."""
    import numpy as np

    from tipc.judge.engines.compare import within

    return {
        "max_abs": float(fig.get("max_abs", np.inf)),
        "max_rel": float(fig.get("max_rel", np.inf)),
        "cosine": float(fig.get("cosine", -1.0)),
        "within": within(fig, cosine_min),
    }


def _cross_figures(
    served: dict[str, dict[str, np.ndarray]],
    reference: dict[str, np.ndarray],
    engines: dict[str, list[np.ndarray]],
    tolerances: dict[str, float],
) -> dict[str, object]:
    """Figures for the report's full engine x engine matrix beyond the verdict's Paddle Inference comparison:
    each protocol against every other engine's outputs (matched by output position, as the agreement check
    matches them) and the protocols against each other. They inform; the verdict stays Paddle Inference's."""
    import numpy as np

    from tipc.judge.engines.compare import compare_arrays

    def pair(a: dict[str, np.ndarray], b: list[np.ndarray] | dict[str, np.ndarray]) -> dict[str, _Served]:
        out: dict[str, _Served] = {}
        for i, name in enumerate(reference):
            other = b.get(name) if isinstance(b, dict) else (b[i] if i < len(b) else None)
            if name in a and other is not None:
                fig = compare_arrays(
                    np.asarray(a[name]), np.asarray(other), tolerances["atol"], tolerances["rtol"]
                )
                out[name] = _figures(fig, tolerances["cosine_min"])
        return out

    protos = list(served)
    return {
        "engines": {
            engine: {proto: pair(served[proto], arrays) for proto in protos}
            for engine, arrays in engines.items()
        },
        "protocols": {
            a: {b: pair(served[a], served[b]) for b in protos[i + 1 :]} for i, a in enumerate(protos)
        },
    }


def _other_engines(
    session: _Session, plan: _ServingPlan, python: str, batch: _Batch
) -> tuple[dict[str, list[np.ndarray]], dict[str, str]]:
    """The outputs (in output order) of every other engine the agreement check ran on this very model and
    batch, reused from its worker (nothing runs again); and why an engine it names has none."""
    from tipc.judge.checks._worker import earlier_outputs

    found: dict[str, list[np.ndarray]] = {}
    missing: dict[str, str] = {}
    for engine in plan.settings.agreement.engines:
        if engine == "paddle_inference":
            continue
        reused = earlier_outputs(python, str(plan.model_dir), str(batch.path), engine)
        if reused is None:
            missing[engine] = "the agreement check left no outputs of it on this model and batch"
            continue
        found[engine] = list(_reference(reused[0], reused[1]).values())
    return found, missing


def _served_metrics(
    served: dict[str, dict[str, np.ndarray]],
    reference: dict[str, np.ndarray],
    tolerances: dict[str, float],
    failures: list[Evidence],
) -> dict[str, dict[str, _Served]]:
    """Each protocol's figures against Paddle Inference, by output; a missing or differing output adds to
    failures."""
    import numpy as np

    from tipc.judge.engines.compare import compare_arrays

    metrics: dict[str, dict[str, _Served]] = {}
    for proto, outputs in served.items():
        metrics[proto] = {}
        for out_name, ref in reference.items():
            if out_name not in outputs:
                failures.append(Evidence(f"{proto}: output {out_name!r} missing from the reply"))
                continue
            # The agreement check's figures and verdict: |served - ref| <= atol + rtol*|ref|, cosine.
            fig = compare_arrays(ref, np.asarray(outputs[out_name]), tolerances["atol"], tolerances["rtol"])
            m = _figures(fig, tolerances["cosine_min"])
            metrics[proto][out_name] = m
            if not m["within"]:
                failures.append(
                    Evidence(
                        f"{proto} output {out_name!r} differs from Paddle Inference beyond tolerance",
                        numbers=(
                            ("max_abs", m["max_abs"]),
                            ("max_rel", m["max_rel"]),
                            ("cosine", m["cosine"]),
                        ),
                    )
                )
    return metrics


def _serving_outcome(
    session: _Session,
    load: LoadResult,
    metrics: dict[str, dict[str, _Served]],
    failures: list[Evidence],
    source: str,
) -> CheckOutcome:
    """FAIL on the first failure, else PASS; the load figures and the worst error as evidence either way."""
    if load.errors:
        failures.append(
            Evidence(
                f"{load.errors} of {load.requests} requests failed under load",
                excerpt="\n".join(load.first_errors),
            )
        )
    p50, p99 = load.percentile_ms(50), load.percentile_ms(99)
    figures = (
        f"{load.requests} requests x {load.concurrency} clients: p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
        f"{load.throughput_rps:.1f} req/s, {load.errors} errors"
        if p50 is not None and p99 is not None
        else f"{load.errors} errors, no successful request"
    )
    worst = max((m["max_abs"] for per in metrics.values() for m in per.values()), default=float("nan"))
    load_numbers: tuple[tuple[str, float | int | str | None], ...] = (
        ("clients", load.concurrency),
        ("requests", load.requests),
        ("p50_ms", None if p50 is None else round(p50, 3)),
        ("p99_ms", None if p99 is None else round(p99, 3)),
        ("throughput_rps", round(load.throughput_rps, 1)),
        ("errors", load.errors),
    )
    # Load figures first: a PASS shows one evidence line on the terminal, and these are the ones to see.
    evidence = (
        Evidence(f"load: {figures}", path=str(session.log), numbers=load_numbers),
        Evidence(
            f"served vs Paddle Inference on {source}: worst max abs error {worst:.3g}",
            numbers=(("max_abs", worst),),
        ),
    )
    if failures:
        return CheckOutcome(Verdict.FAIL, failures[0].text, (*failures, *evidence), session.data)
    return CheckOutcome(
        Verdict.PASS,
        f"served outputs match Paddle Inference (v2 + pipeline, max abs {worst:.3g}); {figures}",
        evidence,
        session.data,
    )


def _check_served(
    session: _Session, plan: _ServingPlan, launched: Launched, python: str, args: Args
) -> CheckOutcome:
    """With the server started: agreement through both protocols, then the bounded load loop."""
    import numpy as np

    from tipc.execute.serving.client import Client, tensor_value
    from tipc.execute.serving.launcher import log_tail
    from tipc.execute.serving.load import run_load

    if not launched.ready or launched.url is None:
        died = session.died("before it was ready")
        if died is not None:
            return died
        return CheckOutcome(
            Verdict.FAIL,
            f"the server was not ready: {launched.problem}",
            (Evidence("server log tail", path=str(session.log), excerpt=log_tail(session.log)),),
            session.data,
        )
    base_url = launched.url
    # 2. Inputs; 3. the Paddle Inference reference.
    batch = _input_batch(session, plan, base_url, args)
    if isinstance(batch, CheckOutcome):
        return batch
    reference = _paddle_reference(session, plan, python, batch)
    if isinstance(reference, CheckOutcome):
        return reference

    # 4. Agreement through both protocols.
    name = str(batch.spec["name"])
    dtype = _FLOAT_TYPES.get(str(batch.spec["datatype"]), str(batch.array.dtype))
    feeds = {name: batch.array.astype(np.dtype(dtype))}
    failures: list[Evidence] = []
    with Client(base_url, timeout_s=60) as client:
        v2 = client.infer_v2(_SERVICE_NAME, feeds)
        pipe = client.predict_pipeline(_SERVICE_NAME, [name], [tensor_value(feeds[name])])
    died = session.died("while answering the agreement requests")
    if died is not None:
        return died
    served = _served_outputs(v2, pipe, failures)
    metrics = _served_metrics(served, reference, plan.tolerances, failures)
    session.data["agreement"] = metrics
    session.data["tolerances"] = plan.tolerances
    engines, missing = _other_engines(session, plan, python, batch)
    cross = _cross_figures(served, reference, engines, plan.tolerances)
    session.data["cross"] = {**cross, "not_compared": missing}

    # 5. Bounded load: batch-1 requests cycling over the rows of the batch.
    samples = [{name: feeds[name][i : i + 1]} for i in range(feeds[name].shape[0])]
    load = run_load(
        base_url,
        _SERVICE_NAME,
        samples,
        requests=plan.requests,
        concurrency=plan.concurrency,
        time_budget_s=plan.load_s or None,
    )
    session.data["load"] = load.to_json()
    died = session.died(f"during the load loop ({load.ok}/{load.requests} requests answered)")
    if died is not None:
        return died
    return _serving_outcome(session, load, metrics, failures, batch.source)


def _serve_and_compare(ctx: CheckContext, **args: object) -> CheckOutcome:
    try:
        import numpy  # noqa: F401  (the helpers import it where they use it)
    except ImportError:
        return CheckOutcome(Verdict.SKIP, "numpy is not installed; the serving check needs the model extras")
    from tipc.execute.serving.launcher import launch
    from tipc.judge.checks._worker import tipc_pythonpath

    plan = _serving_plan(ctx, args)
    if isinstance(plan, CheckOutcome):
        return plan
    env = tipc_pythonpath(proc.base_env())
    # 1. The server, on a port it picks itself (no race for a pre-chosen free port).
    server_log = plan.out / "server.log"
    python = run_python(ctx, plan.settings)  # tipc.yaml `python:`, else the run's interpreter, else ours
    launched = launch(
        plan.model_dir,
        log=server_log,
        name=_SERVICE_NAME,
        extra=("--workers", "2"),
        python=python,
        env=env,
        deadline_s=plan.deadline_s,
    )
    data: dict[str, object] = {
        "model_dir": str(plan.model_dir),
        "found": plan.how,
        "url": launched.url,
        "startup_s": round(launched.waited_s, 3),
    }
    session = _Session(launched.background, server_log, data)
    try:
        return _check_served(session, plan, launched, python, args)
    finally:
        data["server_exit_code"] = session.server.stop()
