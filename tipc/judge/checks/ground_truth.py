"""Compare inference logs with test_tipc/results/* ground truth, the way TIPC's compare_results.py does.

compare_results semantics kept: GT files `python_<model>_results_{fp32,fp16,int8}.txt`, one
`<image path>\\t<result>` line per input keyed by the path's basename; the precision bucket comes from the GT
file name and from the log file name (`..._precision_fp16_...`); logs without a precision in their name are
skipped; for each key the FIRST log line containing it (as a whole basename) is used, and the text after the
key is the prediction; |pred - gt| <= atol + rtol*|gt| element-wise (defaults 1e-3 / 1e-3). Where
compare_results would crash (a key missing from a log, no fp32 file) this check reports a located FAIL.

Results are parsed as JSON; if that fails, as `name: value` fields (e.g. `class_id: 3, prob: 0.98`), else as
the list of numbers in the text. Named results are compared by name; otherwise the numbers in order.

Applies only in `modes` (default whole_infer, klquant_whole_infer): ground truth is made from the repo's
pretrained model, while other modes infer with weights trained during the run (N-A there, with the reason).

Args (override tipc.yaml `ground_truth`): atol, rtol, modes (mode names, or "all"), gt_glob (repo-relative
glob; default test_tipc/results/python_*.txt, narrowed to files naming the plan's model when any do).
A GT file whose stem equals an inference log's stem (`python_infer_cpu_..._precision_fp32_batchsize_1.txt`
for that log) is used for that log; other logs use the GT file of their precision bucket.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from tipc.core.yamlschema import Field, Map, OneOf, Seq, Str
from tipc.judge.checks._common import (
    StepRun,
    excerpt,
    no_record,
    outcome,
    physical_lines,
    read_lines,
    repo_relative,
    resolve,
    settings_of,
    step_runs,
)
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.logparse import parse_fields
from tipc.judge.checks.registry import NON_NEGATIVE, Args, arg_num, arg_strs, registered
from tipc.judge.checks.settings import GroundTruthSettings

PRECISIONS = ("fp32", "fp16", "int8")
DEFAULT_GT_GLOB = "test_tipc/results/python_*.txt"
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")

Result = dict[str, list[float]] | list[float]


def _flatten(value: object) -> list[float]:
    if isinstance(value, bool):
        return [float(value)]
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v)]
    if isinstance(value, str):
        return [float(m) for m in _NUMBER.findall(value)]
    return []


def parse_result(text: str) -> Result:
    text = text.strip().lstrip(",:;\t ").strip()
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        value = None
    if isinstance(value, dict):
        return {str(k): _flatten(v) for k, v in value.items()}
    if isinstance(value, list | int | float):
        return _flatten(value)
    fields = parse_fields(text)
    if fields:
        named: dict[str, list[float]] = {}
        for f in fields:
            named[f.key] = [f.value]
        # lists printed after a key (`scores: [0.1, 0.2]`) keep all their numbers
        for f in fields:
            tail = f.raw[len(f.key) :].lstrip(" :=")
            if tail.startswith(("[", "(")):
                named[f.key] = _flatten(tail)
        return named
    return _flatten(text)


def precision_of(name: str) -> str | None:
    for p in PRECISIONS:
        if p in name:
            return p
    return None


def compare_results(gt: Result, pred: Result, atol: float, rtol: float) -> tuple[bool, str, float]:
    """(ok, what differs, worst |diff|) with allclose semantics; names matched when both sides are named."""
    pairs: list[tuple[str, list[float], list[float]]] = []
    if isinstance(gt, dict) and isinstance(pred, dict):
        for k, gv in gt.items():
            if k not in pred:
                return False, f"field {k!r} missing from the prediction", math.inf
            pairs.append((k, gv, pred[k]))
    else:
        gv = [x for v in gt.values() for x in v] if isinstance(gt, dict) else gt
        pv = [x for v in pred.values() for x in v] if isinstance(pred, dict) else pred
        pairs.append(("values", gv, pv))
    worst = 0.0
    for name, g, p in pairs:
        if len(g) != len(p):
            return False, f"{name}: {len(p)} value(s) predicted, {len(g)} in the ground truth", math.inf
        for i, (a, b) in enumerate(zip(g, p, strict=True)):
            diff = abs(a - b)
            if not math.isfinite(b) or diff > atol + rtol * abs(a):
                return (
                    False,
                    f"{name}[{i}]: predicted {b:.6g}, ground truth {a:.6g} (|diff| {diff:.3g})",
                    diff,
                )
            worst = max(worst, diff)
    return True, "", worst


def load_gt(path: Path) -> tuple[dict[str, tuple[Result, int]], list[str]]:
    """key (basename) -> (result, line); plus problems in words."""
    out: dict[str, tuple[Result, int]] = {}
    problems: list[str] = []
    for no, line in enumerate(read_lines(path) or [], start=1):
        if not line.strip():
            continue
        if "\t" in line:
            key, res = line.split("\t", 1)
        else:
            parts = line.split(None, 1)
            key, res = parts[0], parts[1] if len(parts) > 1 else ""
        key = Path(key.strip()).name
        parsed = parse_result(res)
        if not parsed:
            problems.append(f"{no}: no result after the key")
            continue
        out.setdefault(key, (parsed, no))
    return out, problems


@dataclass(frozen=True)
class _GtArgs:
    """The check's arguments, validated, over tipc.yaml `ground_truth`."""

    atol: float
    rtol: float
    gt_glob: str
    modes: list[str] | tuple[str, ...]


def _ground_truth_args(args: Args, gts: GroundTruthSettings) -> _GtArgs:
    """The rule's arguments over test_tipc/tipc.yaml `ground_truth`."""
    modes = arg_strs(args, "modes") if "modes" in args else None
    return _GtArgs(
        arg_num(args, "atol", gts.atol),
        arg_num(args, "rtol", gts.rtol),
        str(args["gt_glob"]),
        modes if modes is not None else list(gts.modes),
    )


def _gt_files(ctx: CheckContext, gt_glob: str, narrow: bool) -> list[Path]:
    """The ground-truth files; narrowed to those naming the plan's model when any do (and `narrow`)."""
    gt_files = sorted(p for p in Path(ctx.repo).glob(gt_glob) if p.is_file())
    if ctx.record is not None and narrow:
        model = ctx.record.plan.model_name
        named = [p for p in gt_files if model and model in p.name]
        gt_files = named or gt_files
    return gt_files


class _GroundTruthFiles:
    """The ground-truth files by precision and by stem, each parsed once; its unparsable lines as evidence."""

    def __init__(self, repo: Path, files: list[Path]) -> None:
        self.repo = repo
        self.by_prec: dict[str, Path] = {}
        for f in files:
            p = precision_of(f.name)
            if p is not None:
                self.by_prec.setdefault(p, f)
        self.by_stem = {f.stem: f for f in files}
        self.loaded: dict[Path, dict[str, tuple[Result, int]]] = {}
        self.evidence: list[Evidence] = []

    def entries(self, f: Path) -> dict[str, tuple[Result, int]]:
        if f not in self.loaded:
            self.loaded[f], probs = load_gt(f)
            for prob in probs:
                ln = int(prob.split(":", 1)[0])
                self.evidence.append(
                    Evidence(
                        f"unparsable ground-truth line: {prob}", path=repo_relative(self.repo, f), line=ln
                    )
                )
        return self.loaded[f]

    def for_log(self, log_rel: str) -> tuple[Path, list[str]] | Evidence | None:
        """The ground-truth file and keys to compare an inference log with; Evidence of why it cannot be
        compared (a FAIL); None when the log has no precision with a ground-truth file (skipped)."""
        gt_path = self.by_stem.get(Path(log_rel).stem)
        if gt_path is not None:
            return gt_path, list(self.entries(gt_path))
        prec = precision_of(Path(log_rel).name)
        if prec is None or prec not in self.by_prec:
            return None
        if "fp32" not in self.by_prec:
            return Evidence(
                f"no fp32 ground-truth file (compare_results takes its keys from it) for {log_rel}",
                path=repo_relative(self.repo, self.by_prec[prec]),
            )
        gt_path = self.by_prec[prec]
        # compare_results: keys from the fp32 file; ones absent from this precision's file are skipped
        return gt_path, [k for k in self.entries(self.by_prec["fp32"]) if k in self.entries(gt_path)]


@dataclass
class _Tally:
    """What the comparison found so far, over all inference logs."""

    atol: float
    rtol: float
    compared: int = 0
    failures: list[Evidence] = field(default_factory=list)
    rows: list[dict[str, object]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def compare_key(
        self, key: str, gt: tuple[Result, int], lines: list[tuple[int, str]], log_rel: str, gt_file: str
    ) -> None:
        """Compare the first log line naming `key` with its ground truth."""
        gt_res, gt_line = gt
        # whole-basename match: `0.png` must not match `10.png` (compare_results' substring search would)
        key_rx = re.compile(r"(?<![\w.-])" + re.escape(key) + r"(?![\w.-])")
        hit = next(((no, seg, m) for no, seg in lines if (m := key_rx.search(seg))), None)
        self.compared += 1
        if hit is None:
            self.failures.append(
                Evidence(f"{key}: no prediction in the log (ground truth {gt_file}:{gt_line})", path=log_rel)
            )
            self.rows.append({"log": log_rel, "key": key, "ok": False, "why": "missing"})
            return
        no, seg, m = hit
        ok, why, worst = compare_results(gt_res, parse_result(seg[m.end() :]), self.atol, self.rtol)
        abs_diff = None if math.isinf(worst) else worst
        prec = precision_of(Path(log_rel).name)
        self.rows.append(
            {
                "log": log_rel,
                "line": no,
                "key": key,
                "precision": prec,
                "ok": ok,
                "why": why,
                "max_abs": abs_diff,
            }
        )
        if not ok:
            self.failures.append(
                Evidence(
                    f"{key} differs from {gt_file}:{gt_line}: {why}",
                    path=log_rel,
                    line=no,
                    excerpt=excerpt(seg),
                    numbers=(("atol", self.atol), ("rtol", self.rtol), ("abs_diff", abs_diff)),
                )
            )

    def compare_log(self, run: StepRun, files: _GroundTruthFiles) -> None:
        """Compare one inference log with its ground-truth file, key by key."""
        log_rel = str(run.log)
        found = files.for_log(log_rel)
        if found is None:
            self.skipped.append(log_rel)
            return
        if isinstance(found, Evidence):
            self.failures.append(found)
            return
        gt_path, keys = found
        gt = files.entries(gt_path)
        gt_file = repo_relative(files.repo, gt_path)
        if not keys:
            self.failures.append(Evidence("ground-truth file has no entries", path=gt_file))
            return
        path = resolve(files.repo, log_rel)
        if not path.is_file():
            self.failures.append(Evidence(f"inference log of {run.step.id} not found", path=log_rel))
            return
        lines = list(physical_lines(path))
        for key in keys:
            self.compare_key(key, gt[key], lines, log_rel, gt_file)


def _ground_truth_outcome(tally: _Tally, files: _GroundTruthFiles) -> CheckOutcome:
    data = {
        "rows": tally.rows,
        "atol": tally.atol,
        "rtol": tally.rtol,
        "skipped_logs": tally.skipped,
        "ground_truth": sorted(repo_relative(files.repo, f) for f in files.loaded),
    }
    if tally.failures:
        return CheckOutcome(
            Verdict.FAIL, tally.failures[0].text, tuple(files.evidence + tally.failures), data
        )
    if tally.compared == 0:
        return CheckOutcome(
            Verdict.WARN,
            "no inference log with a matching precision (fp32/fp16/int8 in its name) to compare",
            tuple(files.evidence),
            data,
        )
    within = f"atol {tally.atol:g} / rtol {tally.rtol:g}"
    return CheckOutcome(
        Verdict.PASS,
        f"{tally.compared} prediction(s) match the ground truth within {within}",
        tuple(files.evidence),
        data,
    )


@registered(
    "ground_truth",
    args=Map(
        {
            "atol": Field(NON_NEGATIVE),
            "rtol": Field(NON_NEGATIVE),
            "gt_glob": Field(Str(what="a glob"), default=DEFAULT_GT_GLOB),
            "modes": Field(
                OneOf((Str(), Seq(Str(), min_items=1)), what="a mode name, 'all', or a list of mode names")
            ),
        }
    ),
)
def check_ground_truth(ctx: CheckContext, **args: object) -> CheckOutcome:
    """Inference reproduces the ground truth the repo records in test_tipc/results/."""
    settings = settings_of(ctx)
    if isinstance(settings, CheckOutcome):
        return settings
    parsed = _ground_truth_args(args, settings.ground_truth)
    gt_files = _gt_files(ctx, parsed.gt_glob, narrow=parsed.gt_glob == DEFAULT_GT_GLOB)
    if not gt_files:
        return outcome(Verdict.NA, f"no ground-truth files ({parsed.gt_glob})")
    if ctx.record is None:
        return no_record()
    mode = ctx.record.plan.mode
    if "all" not in parsed.modes and mode not in parsed.modes:
        return outcome(
            Verdict.NA,
            f"ground truth is compared in {', '.join(parsed.modes)} only: in {mode} inference uses weights "
            "trained during the run, not the pretrained model the ground truth was made from",
        )
    files = _GroundTruthFiles(Path(ctx.repo), gt_files)
    infers = [r for r in step_runs(ctx.record, "infer") if r.ran and r.log]
    if not infers:
        return outcome(Verdict.SKIP, "no inference step ran")
    tally = _Tally(parsed.atol, parsed.rtol)
    for run in infers:
        tally.compare_log(run, files)
    return _ground_truth_outcome(tally, files)
