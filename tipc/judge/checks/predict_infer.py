"""Seed 004 §4.1.3: predict.py (training engine) and infer.py (Paddle Inference) give the same results.

Runs both scripts itself (via tipc.execute.proc, cwd = the repo, logs under <output_dir>/tipc_predict_infer/)
on the
same image(s), parses their `class_id` / `prob` (or `score`) lines and compares class ids exactly and
probabilities within `prob_atol`.

How the commands are found:
- infer: `infer_args` (args or tipc.yaml agreement.infer_args; `{image}` is substituted) else the plan's first
  inference step's argv as recorded (argv[0] replaced by the model-side python);
- images: `images` (args or agreement.images) else the image value of that inference step (an option whose key
  mentions image/img); with explicit images the inference step's image option is rewritten per image;
- predict: `predict_args` (args or agreement.predict_args; `{image}` substituted) else
  `predict.py --<same image option>=<image> <the export step's weights option>`, predict.py found at the root,
  in tools/, deploy/ or deploy/*/ (where real repos keep it): the weights the exported
  model was made from (e.g. `--pretrained=<output>/latest.pdparams`), so both scripts run the same parameters.
Args: predict_args, infer_args, images, prob_atol, timeout_s, python.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipc.core.yamlschema import Field, Map, Str
from tipc.judge.checks._common import (
    StepRun,
    argv_options,
    excerpt,
    no_record,
    outcome,
    physical_lines,
    repo_relative,
    run_python,
    settings_of,
    step_runs,
    work_dir_for,
)
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.logparse import parse_fields
from tipc.judge.checks.registry import ARGV, NON_NEGATIVE, PATHS, POSITIVE, registered
from tipc.judge.checks.settings import AgreementSettings

_IMAGE_KEY = re.compile(r"image|img", re.IGNORECASE)
_WEIGHTS_KEY = re.compile(r"pretrain|weights?$|checkpoint|resume|model_path|params$", re.IGNORECASE)
_NAME = re.compile(
    r"(?:image_name|image_file|image_path|img_path|img_name|image|img|file_name|filename|file)"
    r"\s*[:=]\s*['\"]?([^,'\"\s]+)",
    re.IGNORECASE,
)
_CLASS_KEYS = ("class_id", "class_ids", "clas_id", "label", "cls_id", "class")
_PROB_KEYS = ("prob", "probs", "score", "scores", "confidence")


# Where real repos keep their entry scripts: the root, tools/ (the official template), deploy/ and its
# subfolders.
SCRIPT_DIRS = ("", "tools/", "deploy/", "deploy/*/")


def find_script(repo: Path, name: str) -> str | None:
    """Repo-relative path of `name` in the usual entry-script folders (first found; case ignored)."""
    for folder in SCRIPT_DIRS:
        parents = sorted(repo.glob(folder.rstrip("/"))) if folder else [repo]
        for parent in parents:
            if not parent.is_dir():
                continue
            exact = parent / name
            if exact.is_file():
                return exact.relative_to(repo).as_posix()
            other = sorted(p for p in parent.iterdir() if p.is_file() and p.name.lower() == name.lower())
            if other:
                return other[0].relative_to(repo).as_posix()
    return None


def parse_predictions(path: Path) -> list[dict[str, Any]]:
    """One entry per line that carries a class id: {"line", "text", "image", "class_id", "prob"}."""
    out = []
    for no, seg in physical_lines(path):
        fields = {f.key.lower(): f for f in parse_fields(seg)}
        cls = next((fields[k] for k in _CLASS_KEYS if k in fields), None)
        if cls is None:
            continue
        prob = next((fields[k] for k in _PROB_KEYS if k in fields), None)
        m = _NAME.search(seg)
        out.append(
            {
                "line": no,
                "text": seg,
                "image": Path(m.group(1)).name if m else None,
                "class_id": cls.value,
                "prob": prob.value if prob is not None else None,
            }
        )
    return out


def _image_option(run: StepRun) -> tuple[str, str] | None:
    for key, value in argv_options(run.argv):
        if _IMAGE_KEY.search(key.split(".")[-1]) and value:
            return key, value
    return None


def weights_option(record: Any) -> list[str]:
    """The weights option of the export step that made the model (first passed export), as argv tokens."""
    exports = step_runs(record, "export")
    for run in sorted(exports, key=lambda r: not r.passed):
        for key, value in argv_options(run.argv):
            if value and value.lower() != "null" and _WEIGHTS_KEY.search(key.split(".")[-1]):
                return ["-o", f"{key}={value}"] if "." in key else [f"--{key}={value}"]
    return []


def config_image(ctx: CheckContext) -> tuple[str, str] | None:
    """(key without dashes, value) of the config's infer-block image slot, e.g. `--img-path:images/x`."""
    import os

    cfg = Path(str(ctx.record.plan.config_path))
    cfg = cfg if cfg.is_absolute() else Path(ctx.repo) / cfg
    try:
        lines = cfg.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    in_infer = False
    for raw in lines:
        line = raw.strip()
        if line.startswith("==="):
            in_infer = "infer" in line.lower()
            continue
        key, sep, value = line.partition(":")
        value = value.strip()
        if not (in_infer and sep and value) or value.lower() == "null":
            continue
        if _IMAGE_KEY.search(key) and key.startswith("-") and os.path.exists(Path(ctx.repo) / value):
            return key.lstrip("-"), value
    return None


def script_options(path: Path) -> set[str] | None:
    """The `--options` a script's argparse declares (read with ast); None when it cannot be told."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "parse_known_args":
            return None  # unknown options are accepted
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            found |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return found or None


def script_default_image(cwd: Path, argv: tuple[str, ...]) -> tuple[str, str] | None:
    """(option, default) of the inference script's own image argument when it exists: with no image on its
    command line the script reads that file, so predict.py is given the same one. Read statically (ast)."""
    import ast

    script = next((a for a in argv[1:3] if a.endswith(".py")), None)
    if script is None:
        return None
    try:
        tree = ast.parse((cwd / script).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument" and node.args
        ):
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        if not (first.value.startswith("-") and _IMAGE_KEY.search(first.value)):
            continue
        for kw in node.keywords:
            value = kw.value.value if isinstance(kw.value, ast.Constant) else None
            if kw.arg == "default" and isinstance(value, str) and (cwd / value).is_file():
                return first.value.lstrip("-"), value
    return None


def _with_image(argv: list[str], key: str, image: str) -> list[str]:
    out = []
    skip = False
    for i, tok in enumerate(argv):
        if skip:
            skip = False
            continue
        bare = tok.lstrip("-")
        if bare.startswith(key + "="):
            out.append(tok.split("=", 1)[0] + "=" + image)
        elif tok.startswith("-") and bare == key and i + 1 < len(argv):
            out.extend([tok, image])
            skip = True
        else:
            out.append(tok)
    return out


def _fill(template: tuple[str, ...], image: str) -> list[str]:
    return [t.replace("{image}", image) for t in template]


def _compare(
    pred: list[dict[str, Any]], inf: list[dict[str, Any]], prob_atol: float
) -> tuple[list[str], int]:
    """Differences in words (first ones), and how many pairs were compared."""
    diffs: list[str] = []
    if all(p["image"] for p in pred) and all(i["image"] for i in inf):
        inf_by = {i["image"]: i for i in inf}
        pairs = []
        for p in pred:
            if p["image"] not in inf_by:
                diffs.append(f"{p['image']}: predicted by predict.py but missing from infer.py's output")
                continue
            pairs.append((p, inf_by[p["image"]]))
        for name in sorted(set(inf_by) - {p["image"] for p in pred}):
            diffs.append(f"{name}: in infer.py's output but missing from predict.py's")
    else:
        if len(pred) != len(inf):
            diffs.append(f"predict.py printed {len(pred)} result(s), infer.py {len(inf)}")
        pairs = list(zip(pred, inf, strict=False))
    for p, i in pairs:
        label = p["image"] or f"result {pred.index(p) + 1}"
        if p["class_id"] != i["class_id"]:
            diffs.append(
                f"{label}: class_id {int(p['class_id'])} (predict.py) vs {int(i['class_id'])} (infer.py)"
            )
        elif p["prob"] is not None and i["prob"] is not None:
            d = abs(p["prob"] - i["prob"])
            if not (math.isfinite(d) and d <= prob_atol):
                diffs.append(
                    f"{label}: prob {p['prob']:.6g} vs {i['prob']:.6g} (|diff| {d:.3g} > {prob_atol:g})"
                )
        elif (p["prob"] is None) != (i["prob"] is None):
            diffs.append(f"{label}: only one side printed a probability")
    return diffs, len(pairs)


@dataclass(frozen=True)
class _PredictInferArgs:
    """The check's arguments, validated, over tipc.yaml `agreement`."""

    prob_atol: float
    timeout_s: float
    predict_args: tuple[str, ...] | None
    infer_args: tuple[str, ...] | None
    images: list[str]  # explicit images; empty: the inference step's own


def _argv_arg(value: Any) -> tuple[str, ...] | None:
    import shlex

    if value is None:
        return None
    return tuple(shlex.split(value)) if isinstance(value, str) else tuple(value)


def _predict_infer_args(args: dict[str, Any], a: AgreementSettings) -> _PredictInferArgs:
    """The rule's arguments over test_tipc/tipc.yaml `agreement`."""
    images = args.get("images", list(a.images))
    return _PredictInferArgs(
        prob_atol=float(args.get("prob_atol", a.prob_atol)),
        timeout_s=float(args.get("timeout_s", a.timeout_s)),
        predict_args=_argv_arg(args.get("predict_args")) or a.predict_args,
        infer_args=_argv_arg(args.get("infer_args")) or a.infer_args,
        images=[images] if isinstance(images, str) else list(images),
    )


def _predict_script(repo: Path, predict_args: tuple[str, ...] | None) -> str | CheckOutcome:
    """predict.py (or the script predict_args names), repo-relative; or the FAIL saying where it was not."""
    if predict_args and predict_args[0].endswith(".py"):
        script: str | None = predict_args[0] if (repo / predict_args[0]).is_file() else None
        wanted = predict_args[0]
    else:
        script, wanted = find_script(repo, "predict.py"), "predict.py"
    if script is not None:
        return script
    where = wanted if predict_args else ", ".join(f"{d}predict.py" for d in SCRIPT_DIRS)
    return outcome(
        Verdict.FAIL,
        f"{wanted} not found",
        Evidence(
            f"{wanted} not found in {where} (the training-engine prediction script of spec 2.2.1)",
            path=wanted,
        ),
    )


def _inference_step(ctx: CheckContext, infer_args: tuple[str, ...] | None) -> StepRun | CheckOutcome | None:
    """The inference step whose command infer.py runs with (first passed one); None with infer_args."""
    infers = step_runs(ctx.record, "infer")
    base = next((r for r in infers if r.passed), infers[0] if infers else None)
    if infer_args is not None:
        return base
    if base is None:
        return outcome(Verdict.NA, "no inference step in the plan and no agreement.infer_args")
    if base.step.shell:
        return outcome(
            Verdict.FAIL,
            "the inference step is a shell command; set agreement.infer_args to run infer.py directly",
            Evidence(base.step.status_command or " ".join(base.argv), path=base.log),
        )
    return base


@dataclass(frozen=True)
class _ImageSlot:
    """How the image reaches the scripts: the inference step's image option, or one it never passes."""

    option: tuple[str, str] | None  # (key without dashes, value)
    unpassed: tuple[str, str] | None  # an option the config or script names but the step does not pass
    images: list[str]


def _image_slot(
    ctx: CheckContext, base: StepRun | None, parsed: _PredictInferArgs
) -> _ImageSlot | CheckOutcome:
    img_opt = _image_option(base) if base is not None else None
    unpassed: tuple[str, str] | None = None
    if img_opt is None and base is not None and parsed.infer_args is None:
        # The config names an image its script never passes (a compact dialect drops the slot): use it for
        # both scripts, passed explicitly, rather than give up.
        unpassed = config_image(ctx) or script_default_image(Path(ctx.repo) / base.step.cwd, base.argv)
        img_opt = unpassed
    images = list(parsed.images) or ([img_opt[1]] if img_opt else [])
    if not images:
        return outcome(
            Verdict.FAIL,
            "cannot tell which image(s) to predict: set agreement.images",
            *([Evidence("inference step has no image option", path=base.log)] if base else []),
        )
    return _ImageSlot(img_opt, unpassed, images)


def _predict_weights(
    record: Any, repo: Path, script: str, predict_args: tuple[str, ...] | None
) -> tuple[list[str], list[Evidence]]:
    """The export's weights option for predict.py (none with predict_args), and a note when it is left out."""
    if predict_args is not None:
        return [], []
    weights = weights_option(record)
    accepted = script_options(repo / script)
    option = weights[-1].split("=", 1)[0] if len(weights) == 1 else ""
    if option.startswith("--") and accepted is not None and option not in accepted:
        # predict.py has no such option: passing it would only make argparse exit 2
        # (liuxtakeoff/cutpaste_paddle tools/predict.py loads its own --model_dir).
        note = (
            f"{script} takes no {option}: it predicts with the weights it loads itself, which may not "
            "be the ones the export used"
        )
        return [], [Evidence(note)]
    return weights, []


@dataclass(frozen=True)
class _Commands:
    """The predict.py and infer.py command lines for one image."""

    python: str
    script: str
    parsed: _PredictInferArgs
    base: StepRun | None
    slot: _ImageSlot
    weights: list[str]

    def predict(self, image: str) -> list[str]:
        if self.parsed.predict_args is not None:
            return [self.python, *_fill(self.parsed.predict_args, image)]
        key = self.slot.option[0] if self.slot.option else "img_path"
        return [self.python, self.script, f"--{key}={image}", *self.weights]

    def infer(self, image: str) -> list[str]:
        if self.parsed.infer_args is not None:
            return [self.python, *_fill(self.parsed.infer_args, image)]
        assert self.base is not None
        argv = [self.python, *self.base.argv[1:]]
        if self.slot.unpassed is not None:
            return [*argv, f"--{self.slot.unpassed[0]}={image}"]
        if self.parsed.images and self.slot.option is not None:
            return _with_image(argv, self.slot.option[0], image)
        return argv


@dataclass
class _Results:
    """What both scripts printed, with the logs and command lines run so far."""

    predict: list[dict[str, Any]] = field(default_factory=list)
    infer: list[dict[str, Any]] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Runner:
    """Runs the scripts: predict.py in the repo, infer.py in the inference step's folder, same environment."""

    repo: Path
    work: Path
    cwd: Path
    env: dict[str, str] | None
    timeout_s: float

    def run(self, kind: str, n: int, image: str, argv: list[str], results: _Results) -> CheckOutcome | None:
        """Run one script on one image and keep its results; the FAIL when it fails or prints none."""
        from tipc.execute import proc

        log = self.work / f"{kind}_{n}.log"
        rel = repo_relative(self.repo, log)
        results.logs.append(rel)
        try:
            results.commands.append(list(argv))
            res = proc.run(
                argv,
                cwd=self.cwd if kind == "infer" else self.repo,
                env=self.env,
                timeout_s=self.timeout_s,
                log_path=log,
            )
        except OSError as exc:
            return outcome(Verdict.FAIL, f"cannot run {kind}: {exc}", Evidence(" ".join(argv)))
        if res.exit_code != 0:
            why = "timed out" if res.timed_out else f"exited {res.exit_code}"
            return outcome(
                Verdict.FAIL,
                f"{kind} {why} on {image}",
                Evidence(" ".join(argv), path=rel),
                logs=results.logs,
            )
        got = parse_predictions(log)
        if not got:
            return outcome(
                Verdict.FAIL,
                f"{kind} printed no class_id line for {image}",
                Evidence(" ".join(argv), path=rel),
                logs=results.logs,
            )
        for g in got:
            g["log"] = rel
        (results.predict if kind == "predict" else results.infer).extend(got)
        return None


def _first_result(label: str, results: list[dict[str, Any]]) -> list[Evidence]:
    if not results:
        return []
    first = results[0]
    return [Evidence(label, path=first["log"], line=first["line"], excerpt=excerpt(first["text"]))]


def _agreement_outcome(
    ctx: CheckContext,
    results: _Results,
    compared: int,
    prob_atol: float,
    notes: list[Evidence],
    data: dict[str, Any],
) -> CheckOutcome:
    """PASS (or the eval-level WARN) with the figures; WARN when the outputs are constant across images."""
    worst = max(
        (
            abs(p["prob"] - i["prob"])
            for p, i in zip(results.predict, results.infer, strict=False)
            if p["prob"] is not None and i["prob"] is not None
        ),
        default=0.0,
    )
    evidence = [
        *notes,
        Evidence(
            f"{compared} result(s) identical in class_id; probabilities within {prob_atol:g}",
            numbers=(("compared", compared), ("max_prob_diff", worst)),
        ),
    ]
    # The spread of the results across the images, beside the error: a constant model agrees with itself.
    from tipc.judge.checks.spread import spread_from_values

    rows = [[float(p["class_id"]), float(p["prob"]) if p["prob"] is not None else 0.0] for p in results.infer]
    sp = spread_from_values("class_id/prob", rows)
    data["spread"] = sp.to_json()
    evidence.append(
        Evidence(f"infer.py {sp.text()}", numbers=(("inputs", sp.inputs), ("max_minus_min", sp.max_range)))
    )
    if sp.constant and len({i.get("image") for i in results.infer}) > 1:
        return CheckOutcome(
            Verdict.WARN,
            f"predict.py and infer.py agree, but the outputs are constant across {sp.inputs} inputs (the "
            "same "
            f"class_id and probability for every image): agreement on a constant model proves nothing",
            tuple(evidence),
            data,
        )
    from tipc.judge.checks.agreement import with_eval_level

    return with_eval_level(
        ctx,
        CheckOutcome(
            Verdict.PASS,
            f"predict.py and infer.py agree on {compared} image result(s)",
            tuple(evidence),
            data,
        ),
    )


def _judge_results(
    ctx: CheckContext, results: _Results, prob_atol: float, images: list[str], notes: list[Evidence]
) -> CheckOutcome:
    diffs, compared = _compare(results.predict, results.infer, prob_atol)
    data = {
        "predict": [{k: v for k, v in p.items() if k != "text"} for p in results.predict],
        "infer": [{k: v for k, v in i.items() if k != "text"} for i in results.infer],
        "prob_atol": prob_atol,
        "images": images,
        "logs": results.logs,
        "commands": results.commands,
    }
    if diffs:
        evidence = [
            *(Evidence(d) for d in diffs[:20]),
            *_first_result("first predict.py result", results.predict),
            *_first_result("first infer.py result", results.infer),
        ]
        return CheckOutcome(
            Verdict.FAIL, f"predict.py and infer.py disagree: {diffs[0]}", tuple(evidence), data
        )
    return _agreement_outcome(ctx, results, compared, prob_atol, notes, data)


def _run_and_compare(
    ctx: CheckContext,
    parsed: _PredictInferArgs,
    script: str,
    python: str,
    base: StepRun | None,
    slot: _ImageSlot,
) -> CheckOutcome:
    """Run both scripts on every image, then compare what they printed."""
    from tipc.execute import proc

    repo = Path(ctx.repo)
    weights, notes = _predict_weights(ctx.record, repo, script, parsed.predict_args)
    commands = _Commands(python, script, parsed, base, slot, weights)
    runner = _Runner(
        repo=repo,
        work=work_dir_for(ctx, "tipc_predict_infer"),
        cwd=repo / (base.step.cwd if base is not None and parsed.infer_args is None else "."),
        # the inference step's environment (e.g. CUDA_VISIBLE_DEVICES) applies to both scripts
        env=proc.build_env(None, dict(base.step.env), base.step.unset_env) if base is not None else None,
        timeout_s=parsed.timeout_s,
    )
    results = _Results()
    for n, image in enumerate(slot.images):
        p_argv, i_argv = commands.predict(image), commands.infer(image)
        for kind, argv in (("predict", p_argv), ("infer", i_argv)):
            failed = runner.run(kind, n, image, argv, results)
            if failed is not None:
                return failed
    return _judge_results(ctx, results, parsed.prob_atol, slot.images, notes)


@registered(
    "predict_infer_agreement",
    args=Map(
        {
            "predict_args": Field(ARGV),
            "infer_args": Field(ARGV),
            "images": Field(PATHS),
            "prob_atol": Field(NON_NEGATIVE),
            "timeout_s": Field(POSITIVE),
            "python": Field(Str(what="an interpreter")),
        }
    ),
)
def check_predict_infer_agreement(ctx: CheckContext, **args: Any) -> CheckOutcome:
    """predict.py (training engine) and infer.py (Paddle Inference) give the same results."""
    settings = settings_of(ctx)
    if isinstance(settings, CheckOutcome):
        return settings
    parsed = _predict_infer_args(args, settings.agreement)
    if ctx.record is None:
        return no_record()
    script = _predict_script(Path(ctx.repo), parsed.predict_args)
    if isinstance(script, CheckOutcome):
        return script
    python = run_python(ctx, settings, args.get("python"))
    base = _inference_step(ctx, parsed.infer_args)
    if isinstance(base, CheckOutcome):
        return base
    slot = _image_slot(ctx, base, parsed)
    if isinstance(slot, CheckOutcome):
        return slot
    return _run_and_compare(ctx, parsed, script, python, base, slot)
