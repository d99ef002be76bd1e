"""Injectors: each plants one silent-failure kind into a copy of a repo, from the facts of the repo's clean
run (bench/silent/facts.py): the scripts the steps ran, the weights eval read, the model inference opened,
the config lines that feed them. None knows a repo by name; one that cannot plant its kind on a repo raises
NotApplicable saying why.

An injector gets the clean repo's facts and the copy (`dest`, the same tree as `facts.repo`) and returns
what it changed. The copy is planted in place; the clean repo is never touched. The kind's `needs` are
judged before (bench/silent/variants.py), so an injector trusts them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bench.silent import preludes
from bench.silent.edit import (
    EditError,
    age,
    config_lines,
    depth,
    insert_code,
    norm_key,
    replace_in_config,
    set_config_value,
)
from bench.silent.facts import WEIGHT_KEYS, Facts, Step, relocate, script_label, weight_options

COMMITTED_DIR = "committed"  # where planted "committed" files go in the copy


class NotApplicable(Exception):
    """The kind cannot be planted into this repo; the message says why."""


@dataclass(frozen=True)
class Planted:
    """What an injector changed in the copy."""

    kind: str
    changes: tuple[str, ...]  # one line per change, for the report
    scripts: tuple[str, ...] = ()  # repo-relative scripts a prelude went into
    probe_key: str = ""  # the prelude's counter that says it acted ("" for plants without a prelude)
    rerun_serving: bool = False  # a reused run must run the serving chain again


@dataclass(frozen=True)
class Context:
    """What an injector works with: the clean run's facts, the copy to plant into, the repo's interpreter."""

    kind: str
    facts: Facts
    dest: Path
    python: str

    def in_dest(self, path: Path) -> Path:
        """The same file in the copy."""
        return self.dest / path.resolve().relative_to(self.facts.repo.resolve())


# --- helpers --------------------------------------------------------------------------------------------


def _scripts(ctx: Context, stages: tuple[str, ...], exclusive: bool = False) -> list[Path]:
    """The entry scripts the passing steps of `stages` ran (in the clean repo). `exclusive`: a script that a
    step of another stage runs too (eval as `train.py --test-only`) cannot take a plant meant for one."""
    facts = ctx.facts
    chosen: list[Path] = []
    for stage in stages:
        for step in facts.passed(stage):
            script = facts.script(step)
            if script is None:
                raise NotApplicable(
                    f"{step.id} runs no Python script of the repo ({' '.join(step.argv[:3])} ...)"
                )
            if script not in chosen:
                chosen.append(script)
    if not chosen:
        raise NotApplicable(f"no {'/'.join(stages)} step passed on the clean repo")
    if exclusive:
        others = {
            facts.script(s)
            for s in facts.steps
            if s.stage not in stages and s.stage in ("train", "eval", "export", "infer")
        }
        shared = [s for s in chosen if s in others]
        if shared:
            label = script_label(facts.repo, shared[0])
            raise NotApplicable(f"{label} also runs another stage: a plant there would change that stage too")
    return chosen


def _plant_prelude(
    ctx: Context,
    scripts: list[Path],
    template: str,
    where: str = "main",
    needs_filter: bool = False,
    values: dict[str, object] | None = None,
) -> tuple[list[str], list[str]]:
    """Insert the prelude into each script of the copy; (changes, script labels)."""
    changes, labels = [], []
    for script in scripts:
        label = script_label(ctx.facts.repo, script)
        code = preludes.render(
            template,
            ctx.kind,
            label,
            depth(ctx.facts.repo, script),
            needs_filter=needs_filter,
            **(values or {}),
        )
        try:
            insert_code(ctx.in_dest(script), code, where)
        except EditError as exc:
            raise NotApplicable(str(exc)) from exc
        place = "at its top" if where == "top" else "before its main block"
        changes.append(f"{label}: prelude {template_name(template)} {place}")
        labels.append(label.as_posix())
    return changes, labels


def template_name(template: str) -> str:
    for name, value in vars(preludes).items():
        if value is template and name.isupper():
            return name.lower()
    return "code"


def _copy_committed(ctx: Context, src: Path, rel: str) -> str:
    dest = ctx.dest / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)
    age(dest)
    return rel


def _perturbed_weights(ctx: Context, src: Path, rel: str) -> str:
    """A committed weights file unlike this run's: the run's weights scaled by 0.9 (an older training),
    written by the repo's own interpreter, so it is in the format its paddle.load reads."""
    dest = ctx.dest / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    code = (
        "import sys, paddle\n"
        "state = paddle.load(sys.argv[1])\n"
        "def older(v):\n"
        "    return v * 0.9 if hasattr(v, 'dtype') and 'float' in str(v.dtype) else v\n"
        "out = {k: older(v) for k, v in state.items()}\n"
        "paddle.save(out, sys.argv[2])\n"
    )
    done = subprocess.run(
        [ctx.python, "-c", code, str(src), str(dest)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0 or not dest.is_file():
        raise NotApplicable(
            f"could not write perturbed weights from {src.name}: {done.stderr.strip()[-300:]}"
        )
    age(dest)
    return rel


# --- injectors ------------------------------------------------------------------------------------------


def load_committed_weights(ctx: Context) -> Planted:
    facts = ctx.facts
    trained = facts.trained_weights_read()
    if not trained:
        raise NotApplicable("no eval or export step read weights this run's train wrote")
    params = [f for f in trained if f.path.endswith(".pdparams")] or trained
    src = facts.run_file(params[0].path)
    if src is None:
        raise NotApplicable(f"{params[0].path} is not in the clean run's folder")
    rel = _perturbed_weights(ctx, src, f"{COMMITTED_DIR}/{PurePosixPath(params[0].path).name}")
    changes, labels = _plant_prelude(
        ctx,
        _scripts(ctx, ("eval", "export")),
        preludes.LOAD_COMMITTED_WEIGHTS,
        values={"trained": sorted(f.path for f in trained), "committed": rel},
    )
    return Planted(
        ctx.kind,
        (
            f"{rel}: committed weights (this run's {params[0].path} x 0.9, mtime 2022-04-10)",
            *changes,
            f"eval and export load {rel} whenever they load {', '.join(f.path for f in trained)}",
        ),
        tuple(labels),
        "redirected",
    )


def _phantom_name(name: str) -> str:
    stem, dot, suffix = name.partition(".")
    return f"{stem}_final.{suffix}" if dot else f"{name}_final"


def _lines_naming(facts: Facts, name: str) -> list[int]:
    """Config lines that hold `name` and feed eval or export, not train (the train step's own lines and
    its trainer command are left alone, so train still writes where it did)."""
    train_lines = {n for s in facts.stage_steps("train") for n in s.source_lines}
    lines = config_lines(facts.config)
    trainer_keys = {ln.value for ln in lines if ln.key == "trainer"}
    return [
        ln.number
        for ln in lines
        if name in ln.value and ln.number not in train_lines and ln.key not in trainer_keys
    ]


def point_weights_flag_nowhere(ctx: Context) -> Planted:
    facts = ctx.facts
    found: list[tuple[Step, str]] = []
    for step in (*facts.passed("eval"), *facts.passed("export")):
        found += [(step, value) for _, value in weight_options(step.argv)]
    if not found:
        raise NotApplicable("no passing eval or export step is given a weights path on its command line")
    name = PurePosixPath(found[0][1]).name
    numbers = _lines_naming(facts, name)
    if not numbers:
        raise NotApplicable(f"no config line of eval or export alone holds {name}")
    phantom = _phantom_name(name)
    config = ctx.in_dest(facts.config)
    changes = []
    for number in numbers:
        old, new = replace_in_config(config, number, name, phantom)
        changes.append(f"{facts.config.name}:{number}: {old!r} -> {new!r}")
    more, labels = _plant_prelude(
        ctx,
        _scripts(ctx, ("eval", "export")),
        preludes.SWAP_ARGV,
        where="top",
        values={"phantom": phantom, "real": name},
    )
    changes += more
    changes.append(f"eval and export are given .../{phantom}, which no step writes; they read .../{name}")
    return Planted(ctx.kind, tuple(changes), tuple(labels), "swapped")


def open_stale_model(ctx: Context) -> Planted:
    facts = ctx.facts
    programs = facts.exported_programs()
    if not programs:
        raise NotApplicable("inference read no model program (.pdmodel/.json) this run's export wrote")
    program = PurePosixPath(programs[0].path)
    src = facts.run_file(program.as_posix())
    if src is None:
        raise NotApplicable(f"{program} is not in the clean run's folder")
    rel = _copy_committed(ctx, src, f"{COMMITTED_DIR}/{program.parent.name}/{program.name}")
    changes, labels = _plant_prelude(
        ctx,
        _scripts(ctx, ("infer",)),
        preludes.OPEN_STALE_MODEL,
        values={"fresh": [f.path for f in programs], "stale": rel, "params": program.stem + ".pdiparams"},
    )
    return Planted(
        ctx.kind,
        (
            f"{rel}: a committed copy of the model program (mtime 2022-04-10)",
            *changes,
            f"inference opens {rel} with the parameters this run exported",
        ),
        tuple(labels),
        "redirected",
    )


_GPU_VALUES = {"device": "gpu", "run_device": "gpu", "place": "gpu", "use_gpu": "True", "use_cuda": "True"}


def ask_for_the_gpu(ctx: Context) -> Planted:
    """The config's device slots ask for the GPU (gpu_list 0, --device gpu, use_gpu True); the scripts do
    what they do on a CPU-only Paddle."""
    facts = ctx.facts
    config = ctx.in_dest(facts.config)
    changes = []
    for ln in config_lines(facts.config):
        key = norm_key(ln.key)
        values = ln.value.split("|")
        new_value = None
        if ln.key == "gpu_list" and values and all(v.strip() in ("-1", "") for v in values):
            new_value = "0"
        elif key in _GPU_VALUES and all(v.strip().lower() in ("cpu", "false", "0") for v in values):
            new_value = _GPU_VALUES[key]
        if new_value is not None:
            old, new = set_config_value(config, ln.number, new_value)
            changes.append(f"{facts.config.name}:{ln.number}: {old!r} -> {new!r}")
    if not changes:
        raise NotApplicable("the config has no device slot that asks for the CPU")
    return Planted(ctx.kind, tuple(changes))


def _train_prelude(ctx: Context, template: str, probe: str, what: str, **values: object) -> Planted:
    scripts = _scripts(ctx, ("train",))
    changes, labels = _plant_prelude(ctx, scripts, template, needs_filter=True, values=values)
    return Planted(ctx.kind, (*changes, what), tuple(labels), probe)


def print_batch_time_as_ips(ctx: Context) -> Planted:
    return _train_prelude(
        ctx,
        preludes.PRINT_BATCH_TIME_AS_IPS,
        "rewritten",
        "every iteration line prints avg_ips = avg_batch_cost",
    )


def drop_reader_cost(ctx: Context) -> Planted:
    return _train_prelude(
        ctx,
        preludes.DROP_FIELD,
        "rewritten",
        "iteration lines lose their avg_reader_cost",
        field="avg_reader_cost",
    )


def loss_to_progress_bar(ctx: Context) -> Planted:
    return _train_prelude(
        ctx,
        preludes.LOSS_TO_PROGRESS_BAR,
        "rewritten",
        "each line with a loss becomes a '\\r' progress bar whose description holds the loss, nothing else",
    )


def ascend_the_loss(ctx: Context) -> Planted:
    changes, labels = _plant_prelude(ctx, _scripts(ctx, ("train",)), preludes.ASCEND_THE_LOSS)
    return Planted(ctx.kind, (*changes, "every backward() differentiates -loss"), tuple(labels), "backward")


def empty_eval_loader(ctx: Context) -> Planted:
    changes, labels = _plant_prelude(ctx, _scripts(ctx, ("eval",), exclusive=True), preludes.EMPTY_LOADER)
    return Planted(
        ctx.kind, (*changes, "every paddle.io.DataLoader in eval yields no batch"), tuple(labels), "loaders"
    )


def exit_before_main(ctx: Context) -> Planted:
    changes, labels = _plant_prelude(
        ctx, _scripts(ctx, ("infer",), exclusive=True), preludes.EXIT_BEFORE_MAIN
    )
    return Planted(
        ctx.kind, (*changes, "the inference script exits 0 before its main runs"), tuple(labels), "exited"
    )


def fail_train_quietly(ctx: Context) -> Planted:
    if not ctx.facts.weights_written_by_train():
        raise NotApplicable("this run's train wrote no weights file")
    changes, labels = _plant_prelude(ctx, _scripts(ctx, ("train",)), preludes.FAIL_QUIETLY)
    return Planted(
        ctx.kind,
        (
            *changes,
            "paddle.save raises 'No space left on device'; the traceback is printed and train exits 0",
        ),
        tuple(labels),
        "saves_refused",
    )


def shift_predict_input(ctx: Context) -> Planted:
    from bench.silent.edit import entry_script

    rule = ctx.facts.rule("competition.predict_infer.identical")
    commands = (rule.data.get("commands") if rule is not None else None) or []
    script = entry_script(ctx.facts.repo, ".", tuple(commands[0])) if commands else None
    if script is None:
        raise NotApplicable("the clean check ran no predict script (competition.predict_infer.identical)")
    changes, labels = _plant_prelude(ctx, [script], preludes.SHIFT_INPUT)
    return Planted(
        ctx.kind, (*changes, "predict's model sees its input x as 0.9 * x + 0.05"), tuple(labels), "shifted"
    )


def serve_unloaded_weights(ctx: Context) -> Planted:
    """The serving config's conversion is pointed at weights that do not exist: the served model is random."""
    import json

    facts = ctx.facts
    records = sorted(facts.run_folder.glob("serving/**/tipc_run.json")) + sorted(
        facts.run_folder.glob("logs/**/tipc_run.json")
    )
    for path in records:
        record = json.loads(path.read_text())
        plan = record.get("plan") or {}
        if plan.get("chain") != "serving":
            continue
        config = relocate(str(plan.get("config_path") or ""), plan.get("repo"), facts.repo)
        for step in plan.get("steps") or []:
            for _, value in weight_options(tuple(step.get("argv") or ())):
                for ln in config_lines(config):
                    if ln.value == value and norm_key(ln.key) in WEIGHT_KEYS:
                        folder = value.rsplit("/", 1)[0] if "/" in value else "."
                        missing = next(
                            (
                                f"{folder}/{n}"
                                for n in (
                                    "best_model.pdparams",
                                    "model_final.pdparams",
                                    "final_weights.pdparams",
                                )
                                if not (facts.repo / step.get("cwd", ".") / folder / n).exists()
                            ),
                            None,
                        )
                        if missing is None:
                            continue
                        old, new = set_config_value(ctx.in_dest(config), ln.number, missing)
                        return Planted(
                            ctx.kind,
                            (
                                f"{config.name}:{ln.number}: {old!r} -> {new!r}",
                                f"the serving conversion loads {missing}, which does not exist",
                            ),
                            rerun_serving=True,
                        )
    raise NotApplicable("no serving chain step is given weights from a config line of its own")


def plant_success_log(ctx: Context) -> Planted:
    facts = ctx.facts
    rel = str((facts.record.get("plan") or {}).get("results_log") or "")
    if not rel:
        raise NotApplicable("the run writes no status log")
    own = facts.run_file(rel)
    if own is None:
        raise NotApplicable(f"the clean run wrote no {rel}")
    lines = own.read_text(errors="replace").splitlines()
    claimed = [ln.replace("Run failed", "Run successfully") for ln in lines if ln.strip()]
    if not any("Run successfully" in ln for ln in claimed):
        raise NotApplicable(f"{rel} holds no status line to claim success with")
    dest = ctx.dest / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("\n".join(claimed) + "\n")
    age(dest)
    return Planted(ctx.kind, (f"{rel}: committed, {len(claimed)} line(s) saying 'Run successfully'",))


INJECTORS: dict[str, Callable[[Context], Planted]] = {
    "load_committed_weights": load_committed_weights,
    "point_weights_flag_nowhere": point_weights_flag_nowhere,
    "open_stale_model": open_stale_model,
    "ask_for_the_gpu": ask_for_the_gpu,
    "print_batch_time_as_ips": print_batch_time_as_ips,
    "drop_reader_cost": drop_reader_cost,
    "loss_to_progress_bar": loss_to_progress_bar,
    "ascend_the_loss": ascend_the_loss,
    "empty_eval_loader": empty_eval_loader,
    "exit_before_main": exit_before_main,
    "fail_train_quietly": fail_train_quietly,
    "shift_predict_input": shift_predict_input,
    "serve_unloaded_weights": serve_unloaded_weights,
    "plant_success_log": plant_success_log,
}
