"""Seed 004 §4.1.3: predict.py (training engine) and infer.py (Paddle Inference) give the same results.

Runs both scripts itself (via tipc.execute.proc, cwd = the repo, logs under <output_dir>/tipc_predict_infer/)
on the same input(s), reads the results each prints (tipc.judge.checks.predictions: a class and/or a score
per line) and compares what both print: classes exactly, scores within a tolerance scaled to the numbers
(`prob_atol`, `prob_rtol` times the score, the rounding of a script that prints fewer digits).

How the commands are found:
- infer: `infer_args` (args or tipc.yaml agreement.infer_args; `{image}` is substituted) else the plan's first
  inference step's argv as recorded (argv[0] replaced by the model-side python);
- inputs: `images` (args or agreement.images) else the image value of that inference step (an option whose key
  mentions image/img); with explicit images the inference step's image option is rewritten per image. An
  inference step with no image option runs on its own inputs (the options naming files of the repo: an
  `.npy`, noisy and clean image pairs, a list file), and predict.py is given the same options;
- predict: `predict_args` (args or agreement.predict_args; `{image}` substituted) else
  `predict.py --<its spelling of the input option>=<input> <the export step's weights option>`, predict.py
  found at the root, in tools/, deploy/ or deploy/*/ (where real repos keep it): the weights the exported
  model was made from (e.g. `--pretrained=<output>/latest.pdparams`), so both scripts run the same parameters.

N-A, with the reason, when the two cannot be run on the same input (predict.py takes none of the inference
step's input options) or when tipc cannot read a result a script printed (a sentence, another language);
FAIL when a script fails, prints no result at all while the other does, or the results differ.
Args: predict_args, infer_args, images, prob_atol, timeout_s, python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.yamlschema import Field, Map, Str
from tipc.judge.checks._common import (
    StepRun,
    argv_options,
    excerpt,
    no_record,
    norm_key,
    outcome,
    repo_relative,
    run_python,
    settings_of,
    step_runs,
    work_dir_for,
)
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.predictions import Prediction, compare, parse_predictions, unreadable_line
from tipc.judge.checks.registry import (
    ARGV,
    NON_NEGATIVE,
    PATHS,
    POSITIVE,
    Args,
    arg_num,
    arg_str,
    arg_strs,
    registered,
)
from tipc.judge.checks.settings import AgreementSettings

if TYPE_CHECKING:
    import ast

    from tipc.execute.record import RunRecord

_IMAGE_KEY = re.compile(r"image|img", re.IGNORECASE)
_WEIGHTS_KEY = re.compile(r"pretrain|weights?$|checkpoint|resume|model_path|params$", re.IGNORECASE)
# Options naming what a script reads that are not its input: the model, weights, config, where it writes.
_NOT_INPUT_KEY = re.compile(
    r"model|param|weight|pretrain|checkpoint|ckpt|resume|config|cfg|save|output|out_dir|log|result|export|"
    r"device|gpu|thread|batch|precision|benchmark",
    re.IGNORECASE,
)


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


def _image_option(run: StepRun) -> tuple[str, str] | None:
    for key, value in argv_options(run.argv):
        if _IMAGE_KEY.search(key.split(".")[-1]) and value:
            return key, value
    return None


def weights_option(record: RunRecord) -> list[str]:
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

    cfg = Path(str(ctx.run_record.plan.config_path))
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
    """The `--options` a script's argparse declares (read with ast; empty for a parser without options);
    None when it cannot be told (no parser seen, or one that accepts unknown options)."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    found: set[str] = set()
    parser = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "parse_known_args":
            return None  # unknown options are accepted
        if isinstance(node, ast.Call) and _called(node) == "ArgumentParser":
            parser = True
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            found |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return found if found or parser else None


def _called(node: ast.Call) -> str:
    func = node.func
    return str(getattr(func, "attr", None) or getattr(func, "id", ""))


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


@dataclass(frozen=True)
class _PredictInferArgs:
    """The check's arguments, validated, over tipc.yaml `agreement`."""

    prob_atol: float
    prob_rtol: float
    timeout_s: float
    predict_args: tuple[str, ...] | None
    infer_args: tuple[str, ...] | None
    images: list[str]  # explicit images; empty: the inference step's own


def _argv_arg(args: Args, key: str) -> tuple[str, ...] | None:
    """A command-line argument: one string (split as the shell would) or a list of words."""
    import shlex

    value = args.get(key)
    if isinstance(value, str):
        return tuple(shlex.split(value))
    words = arg_strs(args, key)
    return None if words is None else tuple(words)


def _predict_infer_args(args: Args, a: AgreementSettings) -> _PredictInferArgs:
    """The rule's arguments over test_tipc/tipc.yaml `agreement`."""
    images = arg_strs(args, "images") if "images" in args else None
    return _PredictInferArgs(
        prob_atol=arg_num(args, "prob_atol", a.prob_atol),
        prob_rtol=arg_num(args, "prob_rtol", a.prob_rtol),
        timeout_s=arg_num(args, "timeout_s", a.timeout_s),
        predict_args=_argv_arg(args, "predict_args") or a.predict_args,
        infer_args=_argv_arg(args, "infer_args") or a.infer_args,
        images=images if images is not None else list(a.images),
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
    infers = step_runs(ctx.run_record, "infer")
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


def _inference_broken(base: StepRun | None) -> CheckOutcome | None:
    """FAIL where the chain's own inference failed, timed out or was blocked: whatever predict.py would say,
    the two cannot agree (Lieberk's Paddle-Cutpaste: infer.py fails on Paddle >= 2.5, and the rule went N-A
    over predict.py's image option)."""
    from tipc.core.steps import Status

    result = base.result if base is not None else None
    if base is None or result is None or result.status not in (Status.FAILED, Status.TIMEOUT, Status.BLOCKED):
        return None
    if result.status is Status.FAILED and result.exit_code is not None:
        state = f"exited {result.exit_code}"  # the words tipc's cause finder reads the log for
    elif result.status is Status.TIMEOUT:
        state = "timed out"
    else:
        state = f"{result.status.value}{': ' + excerpt(result.reason, 160) if result.reason else ''}"
    return outcome(
        Verdict.FAIL,
        f"the chain's inference {base.step.id} {state}: prediction and inference cannot be shown to agree",
        Evidence(base.step.status_command or " ".join(base.argv), path=base.log),
        **({"logs": [base.log]} if base.log and result.status is not Status.BLOCKED else {}),
    )


@dataclass(frozen=True)
class _ImageSlot:
    """How the input reaches the scripts: the inference step's image option (or one it never passes), or
    the step's own inputs (`own`, each as predict.py spells the option)."""

    option: tuple[str, str] | None  # (key without dashes, value)
    unpassed: tuple[str, str] | None  # an option the config or script names but the step does not pass
    images: list[str]
    predict_key: str | None = None  # predict.py's spelling of the image option (None: as infer.py's)
    own: tuple[tuple[str, str], ...] = ()  # (predict.py's option, value) when the step's own inputs are used


def _accepts(accepted: set[str] | None, key: str) -> str | None:
    """predict.py's spelling of `key` (`img-path` for `img_path`), None when it takes no such option; `key`
    itself when its options cannot be told."""
    if accepted is None:
        return key
    wanted = norm_key(key)
    return next(
        (o.lstrip("-") for o in sorted(accepted) if o.startswith("--") and norm_key(o.lstrip("-")) == wanted),
        None,
    )


def own_inputs(run: StepRun, repo: Path) -> list[tuple[str, str]]:
    """(option, value) of the inference step's options that name a file or folder of the repo and are not
    its model, weights, config or output: what it infers on."""
    cwd = repo / run.step.cwd
    out = []
    for key, value in argv_options(run.argv):
        if not value or _NOT_INPUT_KEY.search(norm_key(key)) or "." in key:
            continue
        if (cwd / value).exists():
            out.append((key.lstrip("-"), value))
    return out


def _own_slot(repo: Path, base: StepRun, script: str) -> _ImageSlot | CheckOutcome:
    """The inference step's own inputs, passed to predict.py under the options it takes; N-A without."""
    inputs = own_inputs(base, repo)
    if not inputs:
        return outcome(
            Verdict.NA,
            "the inference step names no input tipc can give predict.py too (no image option, no option "
            "naming a file of the repo): set agreement.images, or predict_args and infer_args",
            Evidence(" ".join(base.argv), path=base.log),
        )
    accepted = script_options(repo / script)
    own = tuple((k2, v) for k, v in inputs if (k2 := _accepts(accepted, k)) is not None)
    if not own:
        names = ", ".join(f"--{k}" for k, _ in inputs)
        return outcome(
            Verdict.NA,
            f"{script} takes none of the inference step's input options ({names}): the two cannot be run on "
            "the same input; set agreement.predict_args",
            Evidence(f"{script} options: {', '.join(sorted(accepted or ()))}", path=script),
        )
    label = ", ".join(f"{k}={v}" for k, v in own)
    return _ImageSlot(None, None, [label], own=own)


def _image_slot(
    ctx: CheckContext, base: StepRun | None, parsed: _PredictInferArgs, script: str
) -> _ImageSlot | CheckOutcome:
    repo = Path(ctx.repo)
    img_opt = _image_option(base) if base is not None else None
    unpassed: tuple[str, str] | None = None
    if img_opt is None and base is not None and parsed.infer_args is None:
        # The config names an image its script never passes (a compact dialect drops the slot): use it for
        # both scripts, passed explicitly, rather than give up.
        unpassed = config_image(ctx) or script_default_image(repo / base.step.cwd, base.argv)
        img_opt = unpassed
    images = list(parsed.images) or ([img_opt[1]] if img_opt else [])
    if not images:
        if base is not None and parsed.infer_args is None and parsed.predict_args is None:
            return _own_slot(repo, base, script)
        return outcome(
            Verdict.NA,
            "cannot tell which input to give both scripts: set agreement.images",
            *([Evidence("inference step has no image option", path=base.log)] if base else []),
        )
    if parsed.predict_args is not None:
        return _ImageSlot(img_opt, unpassed, images)
    key = img_opt[0] if img_opt else "img_path"
    accepted = script_options(repo / script)
    spelled = _accepts(accepted, key) or _image_like(accepted)
    if spelled is None:
        return outcome(
            Verdict.NA,
            f"{script} takes no image option (no --{key}): it cannot be run on the image infer.py reads; set "
            "agreement.predict_args",
            Evidence(f"{script} options: {', '.join(sorted(accepted or ()))}", path=script),
        )
    return _ImageSlot(img_opt, unpassed, images, predict_key=spelled)


def _image_like(accepted: set[str] | None) -> str | None:
    """predict.py's own image option (`--image`, `--img_file`) when it spells it differently."""
    found = sorted(
        o.lstrip("-")
        for o in accepted or ()
        if o.startswith("--") and _IMAGE_KEY.search(o) and not _NOT_INPUT_KEY.search(norm_key(o.lstrip("-")))
    )
    return found[0] if len(found) == 1 else None


def _predict_weights(
    record: RunRecord, repo: Path, script: str, predict_args: tuple[str, ...] | None
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
        if self.slot.own:
            return [self.python, self.script, *(f"--{k}={v}" for k, v in self.slot.own), *self.weights]
        key = self.slot.predict_key or (self.slot.option[0] if self.slot.option else "img_path")
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

    predict: list[Prediction] = field(default_factory=list)
    infer: list[Prediction] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    log_of: dict[int, str] = field(default_factory=dict)  # id(prediction) -> its log

    def add(self, kind: str, got: list[Prediction], log: str) -> None:
        (self.predict if kind == "predict" else self.infer).extend(got)
        self.log_of.update({id(g): log for g in got})

    def json(self, kind: str) -> list[dict[str, str | int | float | None]]:
        return [g.to_json(self.log_of[id(g)]) for g in (self.predict if kind == "predict" else self.infer)]


@dataclass(frozen=True)
class _Runner:
    """Runs the scripts: predict.py in the repo, infer.py in the inference step's folder, same environment."""

    repo: Path
    work: Path
    cwd: Path
    env: dict[str, str] | None
    timeout_s: float

    def run(self, kind: str, n: int, image: str, argv: list[str], results: _Results) -> Path | CheckOutcome:
        """Run one script on one input; its log, or the FAIL when it cannot run or fails."""
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
        return log


def _unread(kind: str, image: str, log: Path, rel: str, other: str, other_got: bool) -> CheckOutcome:
    """A script printed no result tipc reads: FAIL when it printed none at all while the other did, else
    N-A (its result is in a form tipc cannot read, or neither printed one)."""
    line = unreadable_line(log)
    if line is None and other_got:
        return outcome(
            Verdict.FAIL,
            f"{kind} printed no result for {image} ({other} did)",
            Evidence(f"{kind} printed no class or score, nor any number outside warnings", path=rel),
        )
    if line is None:
        return outcome(
            Verdict.NA,
            f"neither predict nor infer printed a result for {image} (they may write it to files): nothing "
            "to compare; set agreement.predict_args and infer_args to scripts that print one",
            Evidence(f"{kind} printed no result", path=rel),
        )
    return outcome(
        Verdict.NA,
        f"cannot read the result {kind} printed for {image}: no class or score field in "
        f"{excerpt(line, 120)!r}",
        Evidence(f"{kind}'s last line with a number", path=rel, excerpt=excerpt(line)),
    )


def _first_result(label: str, results: _Results, kind: str) -> list[Evidence]:
    got = results.predict if kind == "predict" else results.infer
    if not got:
        return []
    first = got[0]
    return [Evidence(label, path=results.log_of[id(first)], line=first.line, excerpt=excerpt(first.text))]


def _agreement_outcome(
    ctx: CheckContext,
    results: _Results,
    compared: int,
    tolerance: str,
    worst: float,
    notes: list[Evidence],
    data: dict[str, object],
) -> CheckOutcome:
    """PASS (or the eval-level WARN) with the figures; WARN when the outputs are constant across inputs."""
    evidence = [
        *notes,
        Evidence(
            f"{compared} result(s) identical in class; scores within {tolerance}",
            numbers=(("compared", compared), ("max_prob_diff", worst)),
        ),
    ]
    # The spread of the results across the inputs, beside the error: a constant model agrees with itself.
    from tipc.judge.checks.spread import spread_from_values

    rows = [
        [float(i.label) if i.label is not None else 0.0, float(i.score) if i.score is not None else 0.0]
        for i in results.infer
    ]
    sp = spread_from_values("class/score", rows)
    data["spread"] = sp.to_json()
    evidence.append(
        Evidence(f"infer.py {sp.text()}", numbers=(("inputs", sp.inputs), ("max_minus_min", sp.max_range)))
    )
    summary = f"predict.py and infer.py agree on {compared} result(s)"
    if sp.constant and len({i.image for i in results.infer}) > 1:
        # a note, not the verdict: how constant a lite-trained model is varies from run to run
        data["constant_outputs"] = "constant"
        summary += (
            f"; note: the outputs are constant across {sp.inputs} inputs (the same class and score for every "
            "input), so agreement on them proves little"
        )
    from tipc.judge.checks.agreement import with_eval_level

    return with_eval_level(ctx, CheckOutcome(Verdict.PASS, summary, tuple(evidence), data))


def _judge_results(
    ctx: CheckContext, results: _Results, parsed: _PredictInferArgs, images: list[str], notes: list[Evidence]
) -> CheckOutcome:
    found = compare(results.predict, results.infer, parsed.prob_atol, parsed.prob_rtol)
    tolerance = (
        f"{parsed.prob_atol:g} (+ {parsed.prob_rtol:g} x the score, or the rounding of a coarser print)"
    )
    data = {
        "predict": results.json("predict"),
        "infer": results.json("infer"),
        "prob_atol": parsed.prob_atol,
        "prob_rtol": parsed.prob_rtol,
        "compared_fields": list(found.fields),
        "images": images,
        "logs": results.logs,
        "commands": results.commands,
    }
    if found.diffs:
        evidence = [
            *(Evidence(d) for d in found.diffs[:20]),
            *_first_result("first predict.py result", results, "predict"),
            *_first_result("first infer.py result", results, "infer"),
        ]
        return CheckOutcome(
            Verdict.FAIL, f"predict.py and infer.py disagree: {found.diffs[0]}", tuple(evidence), data
        )
    return _agreement_outcome(ctx, results, found.compared, tolerance, found.worst_score_diff, notes, data)


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
    weights, notes = _predict_weights(ctx.run_record, repo, script, parsed.predict_args)
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
        logs: dict[str, Path] = {}
        for kind, argv in (("predict", commands.predict(image)), ("infer", commands.infer(image))):
            ran = runner.run(kind, n, image, argv, results)
            if isinstance(ran, CheckOutcome):
                return ran
            logs[kind] = ran
        got = {kind: parse_predictions(log) for kind, log in logs.items()}
        for kind, other in (("infer", "predict"), ("predict", "infer")):
            if not got[kind]:
                rel = repo_relative(repo, logs[kind])
                unread = _unread(kind, image, logs[kind], rel, other, bool(got[other]))
                return CheckOutcome(unread.verdict, unread.summary, unread.evidence, {"logs": results.logs})
        for kind, log in logs.items():
            results.add(kind, got[kind], repo_relative(repo, log))
    return _judge_results(ctx, results, parsed, slot.images, notes)


@registered(
    "predict_infer_agreement",
    args=Map(
        {
            "predict_args": Field(ARGV),
            "infer_args": Field(ARGV),
            "images": Field(PATHS),
            "prob_atol": Field(NON_NEGATIVE),
            "prob_rtol": Field(NON_NEGATIVE),
            "timeout_s": Field(POSITIVE),
            "python": Field(Str(what="an interpreter")),
        }
    ),
)
def check_predict_infer_agreement(ctx: CheckContext, **args: object) -> CheckOutcome:
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
    python = run_python(ctx, settings, arg_str(args, "python"))
    base = _inference_step(ctx, parsed.infer_args)
    if isinstance(base, CheckOutcome):
        return base
    broken = _inference_broken(base) if parsed.infer_args is None else None
    if broken is not None:
        return broken
    slot = _image_slot(ctx, base, parsed, script)
    if isinstance(slot, CheckOutcome):
        return slot
    return _run_and_compare(ctx, parsed, script, python, base, slot)
