"""Artefact lineage rules: each stage must consume what the stage before it produced in this run.

One check, `lineage`, with `aspect`:
- `weights`: eval, export and predict steps read weights this run's training wrote (or pretrained weights the
  step's command line names, reported as such, when this run trained none). Reading committed or pre-run
  weights instead, named on the command line or not, is a FAIL that names the file and its commit date (its
  mtime outside git) beside what this run's train wrote.
- `inference_model`: inference steps read the model files this run's export wrote; a committed, stale or
  missing model file (e.g. a committed `model.pdmodel` beside the freshly written `model.json`) is a FAIL.
- `loads_model`: every inference step that passed opened some model or weights file, fresh or not: one that
  exits 0 without loading any model ran nothing, whatever it printed. Kept apart from `inference_model`,
  which judges *which* model was read, so a repo that reads a stale model and one whose inference runs
  nothing get different verdicts.
- `cmdline_paths`: a weights path given on a step's command line (`--pretrained=…`, `--model_dir …`,
  `-o Global.pretrained_model=…`, dashes or underscores) that does not exist, or that a passing step never
  opened, is a FAIL naming the path.
Without recorded file access (an old record, steps that are not Python) the verdict is SKIP with the reason.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.yamlschema import Enum, Field, Map
from tipc.judge.checks._common import argv_options, no_record, outcome
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import registered
from tipc.judge.lineage_graph import FileNode, LineageGraph, describe_origin

if TYPE_CHECKING:
    from tipc.core.steps import Step
    from tipc.execute.record import RunRecord, StepResult

ASPECTS = ("weights", "inference_model", "loads_model", "cmdline_paths")
# Command-line keys whose value names weights or a model to load (compared without dashes/underscores/case,
# after the last "." of `-o Global.key=value`).
WEIGHT_KEYS = frozenset(
    k.replace("_", "")
    for k in (
        "pretrained",
        "pretrained_model",
        "pretrain_weights",
        "model_path",
        "model_dir",
        "resume",
        "resume_from",
        "checkpoint",
        "checkpoints",
        "weights",
        "init_model",
        "model_file",
        "params_file",
        "params_path",
    )
)
_NOT_PATHS = frozenset({"", "null", "none", "true", "false", "0", "1", "yes", "no"})
_PATH_SUFFIXES = (".pdparams", ".pdopt", ".pdmodel", ".pdiparams", ".json", ".pth", ".pt", ".ckpt", ".onnx")
_cache: dict[tuple[int, str], tuple[RunRecord, LineageGraph]] = {}


def _graph(ctx: CheckContext) -> tuple[LineageGraph | None, str | None]:
    """(LineageGraph, None) or (None, why there is none)."""
    from tipc.execute.lineage import dir_for, load
    from tipc.judge.lineage_graph import build_graph

    record = ctx.run_record
    key = (id(record), str(ctx.repo))
    if key in _cache and _cache[key][0] is record:
        return _cache[key][1], None
    folder = dir_for(record.plan, ctx.repo)
    accesses = load(folder)
    if not accesses:
        return None, (
            "no file access was recorded for this run (a record made before tipc recorded lineage, "
            "or no step ran Python 3.8+)"
        )
    graph = build_graph(record, accesses, Path(ctx.repo))
    if not graph.recorded:
        return None, "the recorded file access belongs to no step that ran in this record"
    _cache.clear()
    _cache[key] = (record, graph)
    return graph, None


def _argv(step: Step, result: StepResult | None) -> list[str]:
    argv: list[str] = [str(a) for a in (result.argv if result is not None and result.argv else step.argv)]
    if len(argv) >= 3 and argv[-2] == "-c" and os.path.basename(argv[0]) in ("sh", "bash", "dash"):
        try:
            return shlex.split(argv[-1])
        except ValueError:
            return argv[-1].split()
    return argv


def weight_options(argv: list[str]) -> list[tuple[str, str]]:
    """(option as written, value) for weights-path options whose value looks like a path."""
    out = []
    for key, value in argv_options(argv):
        norm = key.split(".")[-1].lower().replace("-", "").replace("_", "")
        v = value.strip().strip("'\"")
        if norm not in WEIGHT_KEYS or v.lower() in _NOT_PATHS:
            continue
        if "/" in v or v.endswith(_PATH_SUFFIXES) or v in (".", ".."):
            out.append((key, v))
    return out


def _named_paths(ctx: CheckContext, step: Step, result: StepResult | None) -> list[tuple[str, str, str]]:
    """(option, value, absolute real path) of the weights paths on a step's command line."""
    cwd = Path(ctx.repo) / step.cwd
    return [(k, v, os.path.realpath(cwd / v)) for k, v in weight_options(_argv(step, result))]


def _covers(named: str, path: str) -> bool:
    """`path` is the named file, lies under the named folder, or completes the named prefix."""
    return path == named or path.startswith(named.rstrip(os.sep) + os.sep) or path.startswith(named + ".")


def _runs(ctx: CheckContext, stages: tuple[str, ...], predict: bool = False) -> list[Step]:
    out = []
    for step in ctx.run_record.plan.steps:
        stage = getattr(step.stage, "value", step.stage)
        # a training-engine predict.py (PaddleOCR's Paddle Inference scripts are predict_*.py: stage infer)
        is_predict = (
            predict
            and stage not in ("infer", "serve", "client")
            and any("predict" in os.path.basename(a) for a in step.argv[:3])
        )
        if stage in stages or is_predict:
            out.append(step)
    return out


def _fmt(node: FileNode) -> str:
    return f"{node.path} ({describe_origin(node)})"


def _in_output(ctx: CheckContext, node: FileNode) -> bool:
    """A file in the run's output folder is meant to be produced by the run, never named as an input."""
    out = os.path.realpath(str(Path(ctx.repo) / ctx.run_record.plan.output_dir))
    return bool(node.abspath.startswith(out.rstrip(os.sep) + os.sep))


def _names(files: list[FileNode], limit: int = 2) -> str:
    more = f" and {len(files) - limit} more" if len(files) > limit else ""
    return ", ".join(f.path for f in files[:limit]) + more


def _recorded(graph: LineageGraph, steps: Iterable[Step]) -> Iterator[Step]:
    """The steps the lineage graph holds recorded file access for (the others cannot be judged)."""
    for step in steps:
        node = graph.step(step.id)
        if node is not None and node.recorded:
            yield step


def _fail(graph: LineageGraph, summary: str, problems: list[Evidence], notes: list[Evidence]) -> CheckOutcome:
    # Every aspect's outcome carries the graph, so a report can show where each file came from.
    return CheckOutcome(Verdict.FAIL, summary, tuple(problems + notes), {"lineage": graph.to_json()})


def _pass(graph: LineageGraph, summary: str, notes: list[Evidence]) -> CheckOutcome:
    return CheckOutcome(Verdict.PASS, summary, tuple(notes), {"lineage": graph.to_json()})


@dataclass
class _Findings:
    """What judging an aspect's steps found: failures (each naming a file or step) and notes."""

    problems: list[Evidence] = field(default_factory=list)
    notes: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class _WeightReads:
    """The weights a step read, by where they came from."""

    fresh: list[FileNode]  # written by this run (its train, or any fresh weights file)
    stale: list[FileNode]  # committed or pre-run weights nobody named
    pretrained: list[FileNode]  # weights the command line names, or outside the repo


def _train_output(graph: LineageGraph) -> tuple[set[str], list[FileNode]]:
    """(train step ids, the weights files they wrote, weights before optimizer state)."""
    train_ids = {s.id for s in graph.steps if s.stage == "train"}
    train_wrote = sorted(
        (f for f in graph.files if f.kind == "weights" and any(w in train_ids for w in f.written_by)),
        key=lambda f: (not f.path.endswith(".pdparams"), f.path),  # weights before optimizer state
    )
    return train_ids, train_wrote


def _weight_reads(
    ctx: CheckContext, graph: LineageGraph, step: Step, result: StepResult | None, train_ids: set[str]
) -> _WeightReads:
    named = [p for _, _, p in _named_paths(ctx, step, result)]
    reads = _WeightReads([], [], [])
    for edge in graph.reads(step.id):
        f = graph.file(edge.file)
        if f is None or f.origin == "missing" or (not f.exists and not f.written_by):
            continue
        by_train = any(w in train_ids for w in f.written_by)
        if edge.fresh and (by_train or f.kind == "weights"):
            reads.fresh.append(f)
        elif f.kind == "weights" and not edge.fresh:
            named_here = any(_covers(n, f.abspath) for n in named) and not _in_output(ctx, f)
            if named_here or f.origin == "external":
                reads.pretrained.append(f)
            else:
                reads.stale.append(f)
    return reads


def _in_repo(files: list[FileNode]) -> list[FileNode]:
    """The weights files that lie in the repo: committed, or there before the run."""
    return [f for f in files if f.origin in ("committed", "preexisting")]


def _judge_weight_reads(
    step: Step,
    result: StepResult | None,
    reads: _WeightReads,
    train_wrote: list[FileNode],
    found: _Findings,
    bad: dict[str, tuple[FileNode, list[str]]],
) -> None:
    if reads.fresh:
        found.notes.append(Evidence(f"read by {step.id}: written by this run", path=reads.fresh[0].path))
        for f in reads.stale:
            found.notes.append(Evidence(f"also read by {step.id}: {describe_origin(f)}", path=f.path))
    elif reads.stale:
        wrote = f"; this run's train wrote {_names(train_wrote)}" if train_wrote else ""
        for f in reads.stale:
            bad.setdefault(f.path, (f, []))[1].append(step.id)
            found.problems.append(
                Evidence(
                    f"read by {step.id}: {describe_origin(f)}, not written by this run{wrote}",
                    path=f.path,
                    numbers=(("commit_date", f.commit_date),) if f.commit_date else (),
                )
            )
    elif reads.pretrained and train_wrote and _in_repo(reads.pretrained):
        # Weights the command line names, lying in the repo (committed, or there before the run), read where
        # this run trained its own: the step judged weights trained long ago, not this run's.
        for f in _in_repo(reads.pretrained):
            bad.setdefault(f.path, (f, []))[1].append(step.id)
            found.problems.append(
                Evidence(
                    f"read by {step.id}: {f.path} ({describe_origin(f)}), named on its command line, not the "
                    f"weights this run's train wrote ({_names(train_wrote)})",
                    path=f.path,
                    numbers=(("commit_date", f.commit_date),) if f.commit_date else (),
                )
            )
    elif reads.pretrained:
        for f in reads.pretrained:
            found.notes.append(
                Evidence(
                    f"read by {step.id}: pretrained weights the config names ({describe_origin(f)})",
                    path=f.path,
                )
            )
    elif train_wrote and result is not None and getattr(result.status, "value", "") == "passed":
        found.problems.append(
            Evidence(
                f"{step.id} read no weights file, none of what this run's train wrote "
                f"({_names(train_wrote)}): it ran on an untrained model"
            )
        )


def _weights_summary(
    first: str, bad: dict[str, tuple[FileNode, list[str]]], train_wrote: list[FileNode], graph: LineageGraph
) -> str:
    if not bad:
        return first
    summary = "; ".join(
        f"{', '.join(steps)} read {f.path} ({describe_origin(f)}), not weights this run wrote"
        for f, steps in bad.values()
    )
    if train_wrote:
        unread = not any(graph.file(f.path) is not None and _read_after_train(graph, f) for f in train_wrote)
        summary += f" (its train wrote {_names(train_wrote)}" + (
            ", which no later step read)" if unread else ")"
        )
    return summary


def _read_after_train(graph: LineageGraph, f: FileNode) -> bool:
    """Whether a step other than a train step read the file."""
    stages = {s.id: s.stage for s in graph.steps}
    return any(stages.get(r) != "train" for r in f.read_by)


def _weights(ctx: CheckContext, graph: LineageGraph) -> CheckOutcome:
    steps = _runs(ctx, ("eval", "export"), predict=True)
    if not steps:
        return outcome(Verdict.NA, "no eval, export or predict step in the plan")
    train_ids, train_wrote = _train_output(graph)
    found = _Findings()
    bad: dict[str, tuple[FileNode, list[str]]] = {}
    checked = 0
    for step in _recorded(graph, steps):
        checked += 1
        result = ctx.run_record.result(step.id)
        reads = _weight_reads(ctx, graph, step, result, train_ids)
        _judge_weight_reads(step, result, reads, train_wrote, found, bad)
    if not checked:
        return outcome(Verdict.SKIP, "no eval, export or predict step ran with recorded file access")
    if found.problems:
        summary = _weights_summary(found.problems[0].text, bad, train_wrote, graph)
        return _fail(graph, summary, found.problems, found.notes)
    return _pass(graph, f"{checked} step(s) read this run's weights or named pretrained ones", found.notes)


def _judge_model_read(
    ctx: CheckContext,
    step: Step,
    f: FileNode,
    named: list[str],
    exported: list[FileNode],
    found: _Findings,
    bad: dict[str, tuple[FileNode, list[str], str]],
) -> None:
    """Judge a model file an inference step read that this run did not just write."""
    beside = [
        x for x in exported if os.path.dirname(x.abspath) == os.path.dirname(f.abspath) and x.path != f.path
    ]
    beside_text = f" beside {_names(beside, 3)}, which this run's export wrote" if beside else ""
    named_here = any(_covers(n, f.abspath) for n in named) and not _in_output(ctx, f)
    if named_here and not exported and f.exists:
        found.notes.append(
            Evidence(
                f"read by {step.id}: the inference model the config names ({describe_origin(f)})",
                path=f.path,
            )
        )
        return
    bad.setdefault(f.path, (f, [], beside_text))[1].append(step.id)
    text = (
        f"read by {step.id}: {describe_origin(f)}, not a model file this run's export wrote"
        if f.exists
        else f"opened by {step.id}: does not exist"
    )
    found.problems.append(
        Evidence(
            text + beside_text,
            path=f.path,
            numbers=(("commit_date", f.commit_date),) if f.commit_date else (),
        )
    )


def _inference_summary(first: str, bad: dict[str, tuple[FileNode, list[str], str]]) -> str:
    if not bad:
        return first
    return "; ".join(
        f"{', '.join(steps)} read {f.path} ({describe_origin(f)}), not a model file this run exported{beside}"
        if f.exists
        else f"{', '.join(steps)} opened {f.path}, which does not exist{beside}"
        for f, steps, beside in bad.values()
    )


def _judge_inference_step(
    ctx: CheckContext,
    graph: LineageGraph,
    step: Step,
    exported: list[FileNode],
    found: _Findings,
    bad: dict[str, tuple[FileNode, list[str], str]],
) -> None:
    result = ctx.run_record.result(step.id)
    named = [p for _, _, p in _named_paths(ctx, step, result)]
    model_reads = [
        (e, f) for e in graph.reads(step.id) if (f := graph.file(e.file)) is not None and f.kind == "model"
    ]
    good = [f for e, f in model_reads if e.fresh]
    for edge, f in model_reads:
        if not edge.fresh:
            _judge_model_read(ctx, step, f, named, exported, found, bad)
    if good:
        found.notes.insert(0, Evidence(f"read by {step.id}: written by this run's export", path=good[0].path))
    elif not model_reads and exported and result is not None and result.status.value == "passed":
        found.problems.append(
            Evidence(
                f"{step.id} read none of the model files this run's export wrote ({_names(exported, 3)})"
            )
        )


def _inference_model(ctx: CheckContext, graph: LineageGraph) -> CheckOutcome:
    steps = _runs(ctx, ("infer",))
    if not steps:
        return outcome(Verdict.NA, "no inference step in the plan")
    export_ids = {s.id for s in graph.steps if s.stage == "export"}
    exported = [f for f in graph.files if f.kind == "model" and any(w in export_ids for w in f.written_by)]
    found = _Findings()
    bad: dict[str, tuple[FileNode, list[str], str]] = {}
    checked = 0
    for step in _recorded(graph, steps):
        checked += 1
        _judge_inference_step(ctx, graph, step, exported, found, bad)
    if not checked:
        return outcome(Verdict.SKIP, "no inference step ran with recorded file access")
    if found.problems:
        return _fail(graph, _inference_summary(found.problems[0].text, bad), found.problems, found.notes)
    return _pass(
        graph,
        f"{checked} inference step(s) read the model this run exported (or the one the config names)",
        found.notes,
    )


def _loads_model(ctx: CheckContext, graph: LineageGraph) -> CheckOutcome:
    found = _Findings()
    checked = 0
    for step in _recorded(graph, _runs(ctx, ("infer",))):
        result = ctx.run_record.result(step.id)
        if result is None or result.status.value != "passed":
            continue  # a failed step is reported as such
        checked += 1
        read = [f for e in graph.reads(step.id) if (f := graph.file(e.file)) is not None]
        models = [f for f in read if f.kind in ("model", "weights")]
        if models:
            found.notes.append(Evidence(f"{step.id} opened {_names(models, 3)}", path=models[0].path))
            continue
        # the repo's files it did read (temporary files a library wrote and read back say nothing)
        own = [f for f in read if not os.path.isabs(f.path)]
        others = f" (it read {_names(own, 3)})" if own else ""
        found.problems.append(
            Evidence(f"{step.id} passed without opening any model or weights file: it ran no model{others}")
        )
    if not checked:
        return outcome(Verdict.SKIP, "no inference step passed with recorded file access")
    if found.problems:
        return _fail(graph, found.problems[0].text, found.problems, found.notes)
    return _pass(graph, f"{checked} inference step(s) opened a model", found.notes)


def _exists(path: str) -> bool:
    """The path, or a file completing it as a prefix (`output/latest` -> `output/latest.pdparams`)."""
    if os.path.exists(path):
        return True
    parent, stem = os.path.split(path)
    try:
        return any(n.startswith(stem + ".") for n in os.listdir(parent or "."))
    except OSError:
        return False


def _named_path_finding(
    graph: LineageGraph, step_id: str, option: str, path: str, where: str, opened: list[str]
) -> tuple[str | None, Evidence]:
    """("missing" / "unopened" / None when opened, the evidence) for a path given on a step's command line."""
    if any(_covers(path, p) for p in opened):
        return None, Evidence(f"given to {step_id} as {option}: opened", path=where)
    if not _exists(path):
        return "missing", Evidence(
            f"given to {step_id} as {option}: does not exist (never created)", path=where
        )
    read = [graph.file(e.file) for e in graph.reads(step_id)]
    instead = [f.path for f in read if f is not None and f.kind in ("weights", "model")]
    tail = f"; it read {', '.join(instead[:3])} instead" if instead else ""
    return "unopened", Evidence(f"given to {step_id} as {option}: never opened by the step{tail}", path=where)


def _cmdline_paths(ctx: CheckContext, graph: LineageGraph) -> CheckOutcome:
    found = _Findings()
    # "missing" / "unopened" -> option as written -> steps given it
    failing: dict[str, dict[str, list[str]]] = {"missing": {}, "unopened": {}}
    repo = os.path.realpath(str(ctx.repo))
    given = 0
    for step in _recorded(graph, ctx.run_record.plan.steps):
        result = ctx.run_record.result(step.id)
        if result is None or getattr(result.status, "value", "") != "passed":
            continue  # a step that failed is reported as such; what it never got to open says nothing
        opened = [f.abspath for f in graph.files if step.id in f.read_by or step.id in f.written_by]
        for key, value, path in _named_paths(ctx, step, result):
            given += 1
            option = f"{key}={value}" if "." in key else f"--{key}={value}"
            where = os.path.relpath(path, repo) if path.startswith(repo + os.sep) else path
            kind, evidence = _named_path_finding(graph, step.id, option, path, where, opened)
            if kind is None:
                found.notes.append(evidence)
            else:
                failing[kind].setdefault(option, []).append(step.id)
                found.problems.append(evidence)
    if not any(s.recorded for s in graph.steps):
        return outcome(Verdict.SKIP, "no step ran with recorded file access")
    if found.problems:
        parts = [f"{o} (given to {', '.join(ids)}) does not exist" for o, ids in failing["missing"].items()]
        parts += [
            f"{o} (given to {', '.join(ids)}) was never opened" for o, ids in failing["unopened"].items()
        ]
        return _fail(graph, "; ".join(parts), found.problems, found.notes)
    if not given:
        return outcome(
            Verdict.SKIP,
            "no step given a weights or model path on its command line passed with recorded file access",
            lineage=graph.to_json(),
        )
    return _pass(graph, f"all {given} weights/model path(s) given on command lines were opened", found.notes)


def _not_applicable(ctx: CheckContext, aspect: str) -> str | None:
    """Why `aspect` does not apply to the record's plan, or None when it does."""
    if aspect == "weights" and not _runs(ctx, ("eval", "export"), predict=True):
        return "no eval, export or predict step in the plan"
    if aspect in ("inference_model", "loads_model") and not _runs(ctx, ("infer",)):
        return "no inference step in the plan"
    if aspect == "cmdline_paths" and not any(
        weight_options(_argv(s, ctx.run_record.result(s.id))) for s in ctx.run_record.plan.steps
    ):
        return "no step was given a weights or model path on its command line"
    return None


_RANK = {Verdict.FAIL: 0, Verdict.WARN: 1, Verdict.PASS: 2, Verdict.SKIP: 3, Verdict.NA: 4}


@registered("lineage", args=Map({"aspect": Field(Enum(("all", *ASPECTS)), default="all")}))
def check_lineage(ctx: CheckContext, *, aspect: str) -> CheckOutcome:
    """`aspect`: weights, inference_model, loads_model, cmdline_paths, or all (the default: the worst)."""
    if ctx.record is None:
        return no_record()
    if aspect == "all":
        outcomes = [check_lineage(ctx, aspect=a) for a in ASPECTS]
        worst = min(outcomes, key=lambda o: _RANK[o.verdict])
        evidence = tuple(e for o in outcomes if o.verdict is worst.verdict for e in o.evidence)
        data = next((o.data for o in outcomes if o.data), {})
        summary = "; ".join(o.summary for o in outcomes if o.verdict is worst.verdict)
        return CheckOutcome(worst.verdict, summary, evidence, data)
    why_not = _not_applicable(ctx, aspect)
    if why_not is not None:
        return outcome(Verdict.NA, why_not)
    graph, why = _graph(ctx)
    if graph is None:
        return outcome(Verdict.SKIP, why or "no lineage")
    if aspect == "weights":
        return _weights(ctx, graph)
    if aspect == "inference_model":
        return _inference_model(ctx, graph)
    if aspect == "loads_model":
        return _loads_model(ctx, graph)
    return _cmdline_paths(ctx, graph)
