"""Building the repos the benchmark checks: a clean copy of a repo (the demo, or a tarball of the real repos
unpacked, with the edits repos.yaml says it needs to run here at all), and variants of it, each with one
kind planted. Reusable by other benchmarks that need a repo with a known fault (bench/causes.py: a failed
step and its right cause).

A variant whose plant only changes what `tipc check` itself runs after the chain (kind.reuse_run) is made
from the clean checked copy, run folder included, and checked with `--reuse-run`; it is honest only when no
step of the clean run ran a file the plant changed, which `build_variant` verifies (otherwise the variant
runs its chain afresh).
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.silent.facts import Facts, log_fields
from bench.silent.injectors import INJECTORS, Context, NotApplicable, Planted
from bench.silent.model import Kind, Repo

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "lenet_digits"


def repo_dir_name(spec: Repo) -> str:
    return DEMO.name if spec.source == "demo" else spec.name


def fresh_copy(spec: Repo, repos_dir: Path, parent: Path) -> Path:
    """A pristine copy of the repo in `parent`, with its `prepare` edits applied."""
    parent.mkdir(parents=True, exist_ok=True)
    dest = parent / repo_dir_name(spec)
    if dest.exists():
        shutil.rmtree(dest)
    if spec.source == "demo":
        shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"), symlinks=True)
    else:
        archive = repos_dir / f"{spec.name}.tar.gz"
        if not archive.is_file():
            raise FileNotFoundError(f"{archive} is absent")
        with tarfile.open(archive) as tar:
            tar.extractall(parent, filter="tar")
    for edit in spec.prepare:
        path = dest / edit.file
        text = path.read_text()
        if edit.replace not in text:
            raise ValueError(f"{spec.name}: prepare edit of {edit.file}: {edit.replace!r} not found")
        path.write_text(text.replace(edit.replace, edit.with_))
    return dest


def _stage_passed(stage: str, spec: Repo, facts: Facts) -> str | None:
    steps = facts.stage_steps(stage)
    if not steps:
        return f"no {stage} step in the plan"
    if not facts.passed(stage):
        return f"{stage} does not pass on the clean repo ({steps[0].id}: {steps[0].status})"
    return None


def _train_log(field_name: str, spec: Repo, facts: Facts) -> str | None:
    text = "".join(facts.log_text(s) for s in facts.passed("train"))
    return None if field_name in log_fields(text) else f"the train log prints no {field_name}"


def _trained_weights(_: str, spec: Repo, facts: Facts) -> str | None:
    return (
        None if facts.trained_weights_read() else "no eval or export step read weights this run's train wrote"
    )


def _exported_model(_: str, spec: Repo, facts: Facts) -> str | None:
    return None if facts.exported_programs() else "inference read no model program this run's export wrote"


def _serving_passed(_: str, spec: Repo, facts: Facts) -> str | None:
    rule = facts.rule("competition.serving.equals_inference")
    state = rule.data.get("repo_serving") if rule is not None else None
    return (
        None if state == "passed" else f"the repo's own serving chain did not pass ({state or 'no serving'})"
    )


def _predict_judged(_: str, spec: Repo, facts: Facts) -> str | None:
    rule = facts.rule("competition.predict_infer.identical")
    if rule is not None and rule.verdict == "PASS":
        return None
    why = f"{rule.verdict}: {rule.summary[:120]}" if rule is not None else "not checked"
    return f"predict.py and infer.py are not compared on the clean repo ({why})"


def _loss_judged(_: str, spec: Repo, facts: Facts) -> str | None:
    """The loss rule judged the clean run's curve: a lite run that logs fewer loss points than it needs is
    N-A whatever the plant does to the loss (issue 23: too little data is N-A, never FAIL)."""
    rule = facts.rule("competition.train.loss_converges")
    if rule is not None and rule.verdict != "N-A":
        return None
    why = rule.summary[:120] if rule is not None else "not checked"
    return f"the loss rule cannot judge the clean run's curve ({why})"


def _device_not_forced(_: str, spec: Repo, facts: Facts) -> str | None:
    pairs = zip(spec.switches, spec.switches[1:], strict=False)
    forced = any(a == "--device" and b == "cpu" for a, b in pairs)
    return "checked with --device cpu: tipc rewrites every device slot to the CPU" if forced else None


def _results_log(_: str, spec: Repo, facts: Facts) -> str | None:
    rel = str((facts.record.get("plan") or {}).get("results_log") or "")
    return None if rel and facts.run_file(rel) else "the run writes no status log"


def _weights_flag(_: str, spec: Repo, facts: Facts) -> str | None:
    return None  # the injector says why when no step is given a weights path


# need name -> (its argument, the repo, the clean run's facts) -> why it is not met, or None
NEED_CHECKS: dict[str, Callable[[str, Repo, Facts], str | None]] = {
    "stage_passed": _stage_passed,
    "train_log": _train_log,
    "trained_weights": _trained_weights,
    "exported_model": _exported_model,
    "serving_passed": _serving_passed,
    "predict_judged": _predict_judged,
    "device_not_forced": _device_not_forced,
    "loss_judged": _loss_judged,
    "results_log": _results_log,
    "weights_flag": _weights_flag,
}


def _unmet(need: str, spec: Repo, facts: Facts) -> str | None:
    """Why the clean run does not meet `need` (None when it does)."""
    name, _, arg = need.partition(":")
    check = NEED_CHECKS.get(name)
    return check(arg, spec, facts) if check is not None else f"unknown need {need!r}"


def why_not(kind: Kind, spec: Repo, facts: Facts) -> str | None:
    """Why `kind` cannot be planted into this repo: it is there natively, the clean run lacks what the plant
    needs, or every rule that ought to catch it already FAILs on the clean repo (a planted copy could not
    show a difference). None when it can."""
    if kind.id in spec.native:
        return f"present natively: {spec.native[kind.id]}"
    for need in kind.needs:
        why = _unmet(need, spec, facts)
        if why is not None:
            return why
    if kind.expect:
        already = [r for r in kind.expect if (rule := facts.rule(r)) is not None and rule.failing]
        if len(already) == len(kind.expect):
            first = facts.rule(already[0])
            summary = first.summary[:100] if first is not None else ""
            return f"masked: {', '.join(already)} already fail(s) on the clean repo ({summary})"
    return None


@dataclass(frozen=True)
class Variant:
    """A copy of a repo with one kind planted."""

    kind: str
    repo: Path  # the planted copy
    planted: Planted
    reuse_run: bool  # check it with --reuse-run (the clean run folder was copied along)


def _steps_ran(facts: Facts) -> set[str]:
    """Repo-relative scripts a step of the clean run ran."""
    out = set()
    for step in facts.steps:
        script = facts.script(step)
        if script is not None:
            out.add(script.resolve().relative_to(facts.repo.resolve()).as_posix())
    return out


def build_variant(
    kind: Kind, spec: Repo, facts: Facts, parent: Path, repos_dir: Path, python: str
) -> Variant:
    """The copy of the clean repo `facts.repo` with `kind` planted, in `parent`. Raises NotApplicable."""
    why = why_not(kind, spec, facts)
    if why is not None:
        raise NotApplicable(why)
    injector = INJECTORS.get(kind.injector)
    if injector is None:
        raise NotApplicable(f"no injector {kind.injector!r}")
    reuse = kind.reuse_run
    parent.mkdir(parents=True, exist_ok=True)
    dest = parent / repo_dir_name(spec)
    if dest.exists():
        shutil.rmtree(dest)
    if reuse:
        # the run folder comes along (the kind reuses the clean run), but not the overlay's whiteouts: device
        # files in its work folder that no copy can make
        shutil.copytree(facts.repo, dest, symlinks=True, ignore=_devices)
    else:
        fresh_copy(spec, repos_dir, parent)
    planted = injector(Context(kind.id, facts, dest, python))
    if reuse and set(planted.scripts) & _steps_ran(facts):
        # a step of the chain runs a planted script: the clean run says nothing about the variant
        shutil.rmtree(dest)
        fresh_copy(spec, repos_dir, parent)
        planted = injector(Context(kind.id, facts, dest, python))
        reuse = False
    if reuse:
        folder = dest / facts.run_folder.relative_to(facts.repo)
        shutil.rmtree(folder / "report", ignore_errors=True)
        shutil.rmtree(folder / "reports", ignore_errors=True)  # a check's reports, one folder per check
        if planted.rerun_serving:
            shutil.rmtree(folder / "serving", ignore_errors=True)
    return Variant(kind.id, dest, planted, reuse)


def _devices(folder: str, names: list[str]) -> set[str]:
    """The names in `folder` that are device files (an overlay's whiteouts)."""
    out = set()
    for name in names:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            continue
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            out.add(name)
    return out
