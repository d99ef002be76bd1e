"""Interpret a dialect profile over a typed config: the steps `test_train_inference_python.sh` would run.

This follows the scripts' control flow (gpu list -> autocast -> trainer -> train/eval/export/inference loops,
whole_infer branches), reproducing the bash semantics that change commands, and records each such semantic as
a Finding. Pure: no file is read or written here.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass, field

from tipc.config import bash
from tipc.config.bash import OMITTED, ifs_split, set_param, test_eq, test_ne
from tipc.config.dialects import Dialect
from tipc.config.model import Slot, TipcConfig
from tipc.config.reader import mode_slot_value
from tipc.core.findings import Finding, Level
from tipc.core.steps import Mode, Stage, Step

CUDA = "CUDA_VISIBLE_DEVICES"
# The `|` lists of a config multiply (gpu_list x autocast x trainer x use_gpu x threads x batch x precision):
# a 1.5 KB config can ask for tens of thousands of commands. Real configs plan well under 100 per mode.
DEFAULT_MAX_STEPS = 1000
WORK_PER_STEP = 20  # loop bodies allowed per allowed step (most are skipped by the scripts' rules)


class _PlanTooLarge(Exception):
    """Raised inside the loops when the plan passes its cap; `build` turns it into a TIPC270 finding."""


def bash_dirname(path: str) -> str:
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path else "."
    if "/" not in stripped:
        return "."
    head = stripped.rsplit("/", 1)[0].rstrip("/")
    return head or "/"


@dataclass
class _Ctx:
    cfg: TipcConfig
    d: Dialect
    mode: Mode
    root: str  # absolute repo root (the folder the script runs from)
    log_root: str = ""
    steps: list[Step] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    env: dict[str, str | None] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    next_suffix: dict[str, int] = field(default_factory=dict)  # base id -> the next `#n` to try
    max_steps: int = DEFAULT_MAX_STEPS
    work: int = 0  # loop bodies entered: bounds planning even when the iterations add no step
    count: int = 0  # steps planned
    light: bool = False  # lint: findings only, no Step objects (only the inference commands are kept)
    infer_commands: list[str] = field(default_factory=list)
    noted: set[str] = field(default_factory=set)
    seen_commands: set[str] = field(default_factory=set)  # the commands already examined (see `add`)
    last_export_weight: str = ""
    cpu: bool = False  # --device cpu: single-device items run on the CPU, launch steps are not applicable
    cpu_item: str | None = None  # the first single-device gpu_list item (the one run on the CPU)
    not_applicable: str = ""  # given to the steps added while set (see `_device_item`)

    # -- helpers ---------------------------------------------------------------------------------------
    def note(self, code: str, level: Level, slot: Slot | None, message: str, once: str | None = None) -> None:
        key = once or f"{code}:{message}"
        if key in self.noted:
            return
        self.noted.add(key)
        line = slot.line if slot is not None else 0
        col = slot.col if slot is not None else 0
        self.findings.append(Finding(self.cfg.path, line, col, level, code, message))

    def rel(self, path: str | None) -> str | None:
        if path is None:
            return None
        if path.startswith(self.root + "/"):
            path = path[len(self.root) + 1 :]
        while path.startswith("./"):
            path = path[2:]
        return path

    def unique(self, base: str) -> str:
        # Remember where each base's numbering stopped: repeated ids cost O(1) each, not O(repeats).
        candidate = base
        n = self.next_suffix.get(base, 2)
        while candidate in self.ids:
            candidate = f"{base}#{n}"
            n += 1
        self.next_suffix[base] = n
        self.ids.add(candidate)
        return candidate

    def _note_words(self, status_command: str, exact: bool) -> None:
        notes, keys = _command_notes(status_command, exact)
        if not keys <= self.noted:  # commands that differ in a number share their glob words
            for code, message, once in notes:
                self.note(code, Level.WARNING, None, message, once=once)

    def tick(self) -> None:
        """One loop body entered; too many (the product of `|` lists) stops planning (TIPC270)."""
        self.work += 1
        if self.work > self.max_steps * WORK_PER_STEP:
            raise _PlanTooLarge(f"{self.work - 1} loop iterations")

    def add(
        self,
        step_id: str,
        stage: Stage,
        status_command: str,
        *,
        log: str | None,
        status_log: str | None,
        trainer: str | None,
        cwd: str = ".",
        depends_on: tuple[str, ...] = (),
        lines: tuple[int, ...] = (),
        writes: tuple[tuple[str, str], ...] = (),
        writes_unknown: str = "",
    ) -> str:
        argv: tuple[str, ...] = ()
        # A command is examined once: `|` lists repeat the same command in many steps (and make it long).
        seen = status_command in self.seen_commands
        if not self.light:
            argv, exact = bash.command_argv(status_command)
        elif not seen:
            # Lint keeps no argv, only whether the words are well formed (and the inference commands).
            exact = bash.is_shell_words(status_command)
        if not seen:
            self.seen_commands.add(status_command)
            if not exact or _MAY_NOTE.search(status_command):
                self._note_words(status_command, exact)
        if self.count >= self.max_steps:
            raise _PlanTooLarge(f"{self.max_steps} steps")
        self.count += 1
        if self.light:
            if stage is Stage.INFER:
                self.infer_commands.append(status_command)
            return step_id  # lint needs no unique ids: nothing reads the steps' dependencies
        sid = self.unique(step_id)
        env = tuple(sorted((k, v) for k, v in self.env.items() if v is not None))
        unset = tuple(sorted(k for k, v in self.env.items() if v is None))
        self.steps.append(
            Step(
                id=sid,
                stage=stage,
                argv=argv,
                cwd=cwd,
                env=env,
                unset_env=unset,
                log=self.rel(log),
                depends_on=depends_on,
                trainer=trainer,
                status_command=status_command,
                status_log=self.rel(status_log),
                source_lines=tuple(sorted({n for n in lines if n > 0})),
                writes=writes,
                writes_unknown=writes_unknown,
                not_applicable=self.not_applicable,
            )
        )
        return sid

    def apply_env(self, env: tuple[str, str] | None) -> None:
        if env is not None:
            self.env[env[0]] = env[1]

    def unset_cuda(self) -> None:
        self.env[CUDA] = None


# A character a word needs for `_command_notes` to say something about it (besides broken quoting).
_MAY_NOTE = re.compile(r"[*?$]")


@functools.lru_cache(maxsize=4096)
def _command_notes(
    status_command: str, exact: bool
) -> tuple[tuple[tuple[str, str, str | None], ...], frozenset[str]]:
    """(code, message, once-key) of the warnings about one command's words, and the keys `_Ctx.note` files
    them under (the same commands recur in every mode lint plans, so this is cached)."""
    out: list[tuple[str, str, str | None]] = []
    if not exact:
        out.append(
            (
                "TIPC302",
                "command is not valid shell words (unbalanced quotes); split on whitespace: "
                f"{status_command.strip()}",
                None,
            )
        )
    for word in status_command.split():
        if word.startswith((">", "'", '"')) or word == "2>&1":
            continue
        if "*" in word or "?" in word:
            out.append(
                (
                    "TIPC303",
                    f"{word!r} is expanded by bash when the script evals the command (pathname expansion "
                    "at run time); the planned argv keeps it literally",
                    f"glob:{word}",
                )
            )
        elif "$" in word:
            out.append(
                (
                    "TIPC304",
                    f"{word!r} contains `$`: the script's eval expands it from the environment at run time",
                    f"var:{word}",
                )
            )
    return tuple(out), frozenset(once or f"{code}:{message}" for code, message, once in out)


def _writes(slot: Slot, path: str, what: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """(writes, writes_unknown) of a command passing `set_param(slot.key, path)` as its output location."""
    if set_param(slot.key, path).strip() == "":
        why = "key is null" if test_eq(slot.key, "null") or not slot.key else "value is empty or null"
        return (), f"the {what} gets no output-dir argument ({why}): it writes where its script defaults to"
    return ((slot.key, path),), ""


def build(
    cfg: TipcConfig,
    d: Dialect,
    mode: Mode,
    root: str,
    *,
    device: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> tuple[list[Step], list[Finding], str]:
    """`max_steps`: past that many steps (or `WORK_PER_STEP` times as many loop iterations) planning stops
    with a TIPC270 error finding and the steps planned so far.

    `device="cpu"`: the gpu_list items keep their names (output folders, logs); single-device items run
    without CUDA_VISIBLE_DEVICES (as the script runs a `-1` item), multi-GPU launch items are planned but
    marked not applicable. The use_gpu values are rewritten beforehand
    (`tipc.planning.planner.apply_overrides`)."""
    ctx = _Ctx(cfg, d, mode, root, cpu=device == "cpu", max_steps=max_steps)
    _run(ctx, mode)
    return ctx.steps, ctx.findings, ctx.log_root


def lint_build(
    cfg: TipcConfig, d: Dialect, mode: Mode, root: str, *, max_steps: int = DEFAULT_MAX_STEPS
) -> tuple[list[Finding], int, list[str]]:
    """What lint needs of a plan: (findings, number of steps, command of every inference step).

    The same interpretation as `build`, without building Step objects (lint plans four modes per config)."""
    ctx = _Ctx(cfg, d, mode, root, max_steps=max_steps, light=True)
    _run(ctx, mode)
    return ctx.findings, ctx.count, ctx.infer_commands


def _run(ctx: _Ctx, mode: Mode) -> None:
    try:
        _build(ctx, mode)
    except _PlanTooLarge as exc:
        # Located at the longest `|` list: the likeliest place to cut.
        widest = max(ctx.cfg.slots().values(), key=lambda s: s.value.count("|") if s.present else -1)
        ctx.note(
            "TIPC270",
            Level.ERROR,
            widest if widest.present and "|" in widest.value else None,
            f"planning stopped after {exc}: the `|` alternatives of this config multiply into more "
            f"commands than the cap of {ctx.max_steps} steps (raise it with --max-steps or TIPC_MAX_STEPS)",
        )


def _build(ctx: _Ctx, mode: Mode) -> None:
    cfg, d = ctx.cfg, ctx.d
    model_name = cfg.model_name.value
    ctx.log_root = d.log_root.format(model_name=model_name, mode=mode, root=ctx.root)
    klquant_as_whole = mode == Mode.KLQUANT_WHOLE_INFER and d.klquant_branch == "whole_infer"
    whole = mode == Mode.WHOLE_INFER or klquant_as_whole
    if mode == Mode.KLQUANT_WHOLE_INFER and not whole:
        ctx.note(
            "TIPC206",
            Level.WARNING,
            None,
            "this script has no klquant_whole_infer branch: the mode falls through to the training branch",
        )
    if d.engine == "compact":
        _compact(ctx, whole)
    elif whole:
        if d.whole_infer == "clas_klquant":
            _whole_infer_clas(ctx)
        elif d.whole_infer == "det":
            _whole_infer_det(ctx)
        else:
            _whole_infer_t51(ctx)
    else:
        _train_modes(ctx)


# ---------------------------------------------------------------------------------------------------------
# device classification (string length, §6.3)


def _classify(gpu: str) -> tuple[str, str, tuple[str, str] | None]:
    """-> (gpu, ips, env) as the scripts compute them from one gpu_list item."""
    if test_eq(gpu, "-1"):
        return gpu, "", None
    if len(gpu) <= 1:
        return gpu, "", (CUDA, gpu)
    if len(gpu) <= 15:
        first = ifs_split(gpu, ",")
        return gpu, "", (CUDA, first[0] if first else "")
    parts = ifs_split(gpu, ";")
    ips = parts[0] if parts else ""
    gpus = parts[1] if len(parts) > 1 else ""
    return gpus, ips, None


def _device_item(
    ctx: _Ctx, gpu_item: str, gpu: str, ips: str, env: tuple[str, str] | None
) -> tuple[str, str] | None:
    """Under --device cpu: the env of this gpu_list item's steps, and `ctx.not_applicable` set for them.

    The item's name is kept. `len(gpu) > 2` is the scripts' own test for the launch command."""
    ctx.not_applicable = ""
    if not ctx.cpu:
        return env
    if len(gpu) > 2:
        where = f"{bash.word_count_nodes(ips)} nodes x " if ips else ""
        ctx.not_applicable = (
            f"gpu_list item {gpu_item!r} is a distributed launch on {where}GPUs {gpu}; "
            "--device cpu runs on the CPU only"
        )
    elif ctx.cpu_item is None:
        ctx.cpu_item = gpu_item
        env = None  # what the script does for a `-1` item: no CUDA_VISIBLE_DEVICES
    else:
        ctx.not_applicable = (
            f"gpu_list item {gpu_item!r} would repeat the CPU run of item {ctx.cpu_item!r} (--device cpu)"
        )
    if ctx.not_applicable:
        ctx.note("TIPC902", Level.INFO, ctx.cfg.gpu_list, f"planned, not run: {ctx.not_applicable}")
    elif not test_eq(gpu_item, "-1"):
        ctx.note(
            "TIPC900",
            Level.INFO,
            ctx.cfg.gpu_list,
            f"overridden (--device cpu): gpu_list item {gpu_item!r} runs on the CPU (no {CUDA}); "
            f"its folders and logs keep the name gpus_{gpu}",
        )
    return env


def _amp(ctx: _Ctx, autocast: str) -> dict[str, str]:
    d, cfg = ctx.d, ctx.cfg
    out = {"amp": OMITTED, "autocast": OMITTED, "amp_level": OMITTED}
    if d.amp in ("ocr", "template") and test_eq(autocast, "amp"):
        out["amp"] = "Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True"
    if d.emit_autocast:
        out["autocast"] = set_param(cfg.autocast.key, autocast)
    clas_amp = "-o AMP.use_amp=True -o AMP.scale_loss=128 -o AMP.use_dynamic_loss_scaling=True -o AMP.level="
    if d.amp == "clas":
        if autocast == "fp16":
            out["autocast"] = clas_amp + "O2"
        elif autocast == "amp":
            out["autocast"] = clas_amp + "O1"
        else:
            out["autocast"] = "-o AMP.use_amp=False"
    elif d.amp == "det" and (test_eq(autocast, "amp") or test_eq(autocast, "fp16")):
        out["autocast"] = "--amp"
        out["amp_level"] = "amp_level=O1" if autocast == "amp" else "amp_level=O2"
    elif d.amp == "video" and test_eq(autocast, "fp16"):
        out["amp"] = "--amp"
    elif d.amp == "gan" and test_eq(autocast, "fp16"):
        out["amp"] = "--amp --amp_level=O2"
    return out


@dataclass(frozen=True)
class _Dispatch:
    run_train: str
    run_export: str
    quant: bool
    to_static: str
    lines: tuple[int, ...]


def _dispatch(ctx: _Ctx, trainer: str) -> _Dispatch | None:
    cfg, d = ctx.cfg, ctx.d

    def is_(slot: Slot) -> bool:
        return trainer != "" and slot.key != "" and trainer == slot.key

    def pick(train: Slot, export: Slot, quant: bool = False, to_static: str = "") -> _Dispatch:
        return _Dispatch(train.value, export.value, quant, to_static, (train.line, export.line))

    if d.trainer_dispatch == "norm_only":
        return pick(cfg.norm_train, cfg.norm_export)

    if d.trainer_fallback == "skip" and is_(cfg.norm_train):
        return pick(cfg.norm_train, cfg.norm_export)
    if is_(cfg.pact_train):
        return pick(cfg.pact_train, cfg.pact_export, quant=True)
    if is_(cfg.fpgm_train):
        return pick(cfg.fpgm_train, cfg.fpgm_export)
    if is_(cfg.distill_train):
        return pick(cfg.distill_train, cfg.distill_export)
    if d.trainer1_is_to_static and is_(cfg.trainer1):
        run = f"{cfg.norm_train.value}  {cfg.trainer1.value}"
        return _Dispatch(run, cfg.norm_export.value, False, "", (cfg.norm_train.line, cfg.trainer1.line))
    if d.to_static_from_section:
        section = cfg.section("to_static_train_benchmark_params")
        key_slot = section.slots[0] if section and section.slots else None
        if key_slot is not None and is_(key_slot):
            return _Dispatch(
                cfg.norm_train.value, cfg.norm_export.value, False, key_slot.value, (cfg.norm_train.line,)
            )
    elif not d.trainer1_is_to_static and is_(cfg.trainer1):
        return pick(cfg.trainer1, cfg.norm_export if d.trainer1_export == "norm" else cfg.export1)
    if is_(cfg.trainer2):
        return pick(cfg.trainer2, cfg.export2)
    if d.trainer_fallback == "skip":
        ctx.note(
            "TIPC210",
            Level.WARNING,
            cfg.trainer_list,
            f"trainer {trainer!r} matches no trainer slot key; this script skips it",
        )
        return None
    if trainer != cfg.norm_train.key:
        ctx.note(
            "TIPC211",
            Level.INFO,
            cfg.trainer_list,
            f"trainer {trainer!r} matches no special trainer key; the script runs norm_train for it",
        )
    return pick(cfg.norm_train, cfg.norm_export)


# ---------------------------------------------------------------------------------------------------------
# train modes (51-line family, Clas, Det)


def _train_use_gpu(ctx: _Ctx, use_gpu_items: list[str], count: int) -> str:
    """The use_gpu value of the gpu_list item at `count` (Det pairs the two lists item by item)."""
    if ctx.d.train_use_gpu_per_item:
        return use_gpu_items[count] if count < len(use_gpu_items) else ""
    return ctx.cfg.train_use_gpu.value


def _save_log(ctx: _Ctx, trainer: str, gpu: str, autocast: str, ips: str) -> tuple[str, int]:
    """(save_log folder, node count) of one training run, as the script names them."""
    d = ctx.d
    nodes = 1
    save_log = f"{ctx.log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}"
    if len(ips) <= d.ips_limit:
        if d.save_log_nodes_always:
            save_log += "_nodes_1"
    else:
        nodes = bash.word_count_nodes(ips)
        save_log += f"_nodes_{nodes}"
    return save_log + d.save_log_suffix, nodes


def _train_shape(ctx: _Ctx, gpu: str, ips: str) -> str:
    """The training command's shape: one device, one node with several, or several nodes."""
    if len(gpu) <= 2:
        return ctx.d.train_shape_single
    if len(ips) <= ctx.d.ips_limit:
        return ctx.d.train_shape_multi
    return ctx.d.train_shape_nodes


def _eval_weight(
    ctx: _Ctx, weight_slot: Slot, names: dict[str, object], save_log: str, train_model_name: str
) -> str:
    """The eval weight parameter after a training run; notes `rec_model` / `video_weight` in `names`."""
    cfg, d = ctx.cfg, ctx.d
    model_name = cfg.model_name.value
    eval_weight_path = d.eval_weight_path.format(**names)
    rec_model = any(n in model_name for n in d.rec_model_names)
    if rec_model:
        # PaddleClas saves these models under RecModel/ instead of <model_name>/.
        eval_weight_path = f"{save_log}/RecModel/{train_model_name}"
    names["rec_model"] = rec_model
    set_eval_weight = set_param(weight_slot.key, eval_weight_path)
    if d.eval_style == "video":
        real_model_name = model_name.replace("PP-", "pp", 1)
        video_weight = f"{save_log}/{real_model_name}_epoch_00001.pdparams"
        set_eval_weight = set_param(cfg.eval_param1.key, video_weight)
        names["video_weight"] = video_weight
    return set_eval_weight


def _eval_step(
    ctx: _Ctx,
    names: dict[str, object],
    base: str,
    train_id: str,
    env: tuple[str, str] | None,
    set_eval_weight: str,
    set_use_gpu: str,
    weight_slot: Slot,
) -> None:
    """The eval step after a training run (or the note that an empty eval script skips it)."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    python = cfg.python.value
    trainer = str(names["trainer"])
    save_log = str(names["save_log"])
    if test_ne(cfg.eval.value, "null"):
        if d.env_before_eval:
            ctx.apply_env(env)
        eval_log = d.eval_log.format(**names) if d.eval_log else None
        video_extra = ""
        if d.eval_style == "video" and "lite_infer" in mode and cfg.train_param1.key != "null":
            video_extra = f"{cfg.train_param1.key}={cfg.train_param1.value}"
        eval_cmd = d.eval_shape.format(
            extra=video_extra,
            save_log=save_log,
            python=python,
            eval_py=cfg.eval.value,
            weight=set_eval_weight,
            use_gpu=set_use_gpu,
            param1=set_param(cfg.eval_param1.key, cfg.eval_param1.value),
            log=eval_log,
        )
        ctx.add(
            f"eval/{base}",
            Stage.EVAL,
            eval_cmd,
            log=eval_log,
            status_log=eval_log,
            trainer=trainer,
            depends_on=(train_id,),
            lines=(cfg.eval.line, weight_slot.line),
        )
    elif cfg.eval.value == "":
        ctx.note("TIPC215", Level.WARNING, cfg.eval, "eval script is empty: the script skips eval")


def _export_or_note(
    ctx: _Ctx,
    disp: _Dispatch,
    names: dict[str, object],
    train_id: str,
    env: tuple[str, str] | None,
    base: str,
) -> None:
    """Export and inference after a training run, or the note that the trainer exports nothing."""
    trainer = str(names["trainer"])
    if test_ne(disp.run_export, "null"):
        export_id = _export_and_infer(ctx, disp, names, train_id, env, base)
        del export_id
    else:
        if disp.run_export.strip() in ("", "null"):
            ctx.note(
                "TIPC216",
                Level.INFO,
                None,
                f"export script of trainer {trainer!r} is {disp.run_export.strip() or 'empty'}: "
                "no export and no inference run after training",
                once=f"noexport:{trainer}",
            )


def _run_train(ctx: _Ctx, disp: _Dispatch, trainer: str) -> str:
    """The trainer's script as the command runs it (with the dialect's suffix); an empty one is noted."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    if disp.run_train.strip() == "":
        ctx.note(
            "TIPC212",
            Level.ERROR,
            cfg.trainer_list,
            f"trainer {trainer!r} has an empty script value: the script runs `{cfg.python.value}` with "
            "the parameters as its script name",
        )
    run_train = disp.run_train
    if d.train_script_suffix and mode != "benchmark_train" and "whole_train" not in mode:
        run_train += d.train_script_suffix
    return run_train


def _train_sets(ctx: _Ctx, epoch_num: str, batch_value: str) -> tuple[str, str, str, str]:
    """The epoch, batch, param1 and param2 parameters (whole_train drops them in some dialects)."""
    cfg = ctx.cfg
    if ctx.d.whole_train_drops_params and "whole_train" in ctx.mode:
        return "", OMITTED, OMITTED, OMITTED
    return (
        set_param(cfg.epoch.key, epoch_num),
        set_param(cfg.train_batch.key, batch_value),
        set_param(cfg.train_param1.key, cfg.train_param1.value),
        set_param(cfg.train_param2.key, cfg.train_param2.value),
    )


@dataclass
class _TrainLoop:
    """What the training loops carry from one run to the next (the script's shell variables)."""

    epoch_num: str
    batch_value: str
    train_model_name: str
    load_norm_train_model: str = ""


@dataclass(frozen=True)
class _TrainDevice:
    """One gpu_list item as the training loop uses it."""

    gpu: str
    ips: str
    env: tuple[str, str] | None
    use_gpu: str


def _train_loop_inputs(ctx: _Ctx) -> _TrainLoop:
    """The epoch, batch and train_model_name values of this mode (mode-keyed lines picked, defaults set)."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    epoch_num = mode_slot_value(cfg.epoch, mode, d) if "epoch" in d.mode_keyed else cfg.epoch.value
    batch_value = (
        mode_slot_value(cfg.train_batch, mode, d) if "train_batch" in d.mode_keyed else cfg.train_batch.value
    )
    _note_mode_values(ctx, epoch_num, batch_value)
    if not epoch_num and d.epoch_default:
        epoch_num = d.epoch_default
    if d.epoch_one_on_device and cfg.train_use_gpu.value == d.epoch_one_on_device:
        epoch_num = "1"
    train_model_name = (
        mode_slot_value(cfg.train_model_name, mode, d)
        if "train_model_name" in d.mode_keyed
        else cfg.train_model_name.value
    )
    return _TrainLoop(epoch_num, batch_value, train_model_name)


def _train_device(ctx: _Ctx, gpu_item: str, use_gpu: str) -> _TrainDevice:
    """Classify one gpu_list item, apply its environment where the dialect does so at the gpu loop."""
    cfg, d = ctx.cfg, ctx.d
    gpu, ips, env = _classify(gpu_item)
    env = _device_item(ctx, gpu_item, gpu, ips, env)
    if d.amp == "det" and test_eq(gpu_item, "-1"):
        use_gpu = "False"
    if d.env_at_gpu_loop and env is not None and len(gpu_item) <= 1:
        ctx.apply_env(env)
    if len(gpu_item) > 15:
        ctx.note(
            "TIPC220",
            Level.INFO,
            cfg.gpu_list,
            f"gpu_list item {gpu_item!r} is longer than 15 characters: the script treats it as "
            f"multi-node (ips={ips!r}, gpus={gpu!r})",
        )
    return _TrainDevice(gpu, ips, env, use_gpu)


def _train_modes(ctx: _Ctx) -> None:
    cfg, d = ctx.cfg, ctx.d
    loop = _train_loop_inputs(ctx)
    use_gpu_items = ifs_split(cfg.train_use_gpu.value, "|")
    for count, gpu_item in enumerate(ifs_split(cfg.gpu_list.value, "|")):
        ctx.tick()
        dev = _train_device(ctx, gpu_item, _train_use_gpu(ctx, use_gpu_items, count))
        for autocast in ifs_split(cfg.autocast.value, "|") if d.engine != "compact" else [""]:
            ctx.tick()
            amp = _amp(ctx, autocast)
            for trainer in ifs_split(cfg.trainer_list.value, "|"):
                ctx.tick()
                disp = _dispatch(ctx, trainer)
                if disp is None or test_eq(disp.run_train, "null"):
                    continue
                _train_run(ctx, loop, dev, autocast, amp, trainer, disp)
    ctx.not_applicable = ""


def _train_pretrain(ctx: _Ctx, loop: _TrainLoop, trainer: str, nodes: int) -> str:
    """The pretrain parameter; PACT/FPGM trainers load the preceding norm_train run's weights."""
    cfg, d = ctx.cfg, ctx.d
    if (
        d.pretrain_from_norm
        and (trainer == cfg.pact_train.key or trainer == cfg.fpgm_train.key)
        and nodes <= 1
    ):
        ctx.note(
            "TIPC213",
            Level.INFO,
            cfg.pretrain,
            f"trainer {trainer!r} loads the weights of the preceding norm_train run "
            f"({loop.load_norm_train_model.strip() or 'none ran first: parameter empty'})",
        )
        return loop.load_norm_train_model
    return set_param(cfg.pretrain.key, cfg.pretrain.value)


def _train_command(
    ctx: _Ctx,
    loop: _TrainLoop,
    dev: _TrainDevice,
    amp: dict[str, str],
    trainer: str,
    disp: _Dispatch,
    save_log: str,
    nodes: int,
) -> tuple[str, str]:
    """(training command, use_gpu parameter) of one training run."""
    cfg, d = ctx.cfg, ctx.d
    set_epoch, set_batch, set_param1, set_param2 = _train_sets(ctx, loop.epoch_num, loop.batch_value)
    set_use_gpu = set_param(cfg.train_use_gpu.key, dev.use_gpu)
    fields = {
        "python": cfg.python.value,
        "run_train": _run_train(ctx, disp, trainer),
        "use_gpu": set_use_gpu,
        "save_model": set_param(cfg.save_model.key, save_log),
        "epoch": set_epoch,
        "pretrain": _train_pretrain(ctx, loop, trainer, nodes),
        "batch": set_batch,
        "param1": set_param1,
        "param2": set_param2,
        "launcher": d.launcher,
        "gpus": dev.gpu,
        "ips": dev.ips,
        "filename": set_param("filename", cfg.model_name.value),
        "shuffle": OMITTED,
        "enable_ce": OMITTED,
        "to_static": disp.to_static,
        **amp,
    }
    return _train_shape(ctx, dev.gpu, dev.ips).format(**fields), set_use_gpu


def _train_step(
    ctx: _Ctx, cmd: str, names: dict[str, object], disp: _Dispatch, trainer: str, base: str
) -> str:
    """Add the training step (its logs, lines and the folder it writes); returns its id."""
    cfg, d = ctx.cfg, ctx.d
    train_log = d.train_log.format(**names) if d.train_log else None
    status_log = d.train_status_log.format(train_log=train_log, **names) if d.train_status_log else None
    lines = (
        cfg.python.line,
        cfg.epoch.line,
        cfg.train_batch.line,
        cfg.pretrain.line,
        cfg.save_model.line,
        *disp.lines[:1],
    )
    writes, unknown = _writes(cfg.save_model, str(names["save_log"]), "training")
    return ctx.add(
        f"train/{base}",
        Stage.TRAIN,
        cmd,
        log=train_log,
        status_log=status_log,
        trainer=trainer,
        lines=lines,
        writes=writes,
        writes_unknown=unknown,
    )


def _seg_iter_fallback(ctx: _Ctx, loop: _TrainLoop) -> None:
    # The script falls back when `<save_log>/<train_model_name>` is missing after training.
    cfg = ctx.cfg
    loop.train_model_name = f"iter_{loop.epoch_num}/model.pdparams"
    ctx.note(
        "TIPC214",
        Level.INFO,
        cfg.train_model_name,
        f"PaddleSeg uses train_model_name {cfg.train_model_name.value!r} only "
        f"if it exists "
        f"after training; otherwise iter_<iters>/model.pdparams ({loop.train_model_name}); "
        "planned with the fallback",
        once="TIPC214",  # the first training run's note stands for all
    )


def _train_run(
    ctx: _Ctx,
    loop: _TrainLoop,
    dev: _TrainDevice,
    autocast: str,
    amp: dict[str, str],
    trainer: str,
    disp: _Dispatch,
) -> None:
    """One trainer's training run, then its eval, export and inference steps."""
    cfg, d = ctx.cfg, ctx.d
    save_log, nodes = _save_log(ctx, trainer, dev.gpu, autocast, dev.ips)
    cmd, set_use_gpu = _train_command(ctx, loop, dev, amp, trainer, disp, save_log, nodes)
    if d.unset_before_train:
        ctx.unset_cuda()
    names: dict[str, object] = {
        "log_root": ctx.log_root,
        "trainer": trainer,
        "gpu": dev.gpu,
        "autocast": autocast,
        "nodes": nodes,
        "save_log": save_log,
    }
    base = f"{trainer}/gpus_{dev.gpu}/autocast_{autocast}"
    train_id = _train_step(ctx, cmd, names, disp, trainer, base)
    if d.seg_iter_fallback:
        _seg_iter_fallback(ctx, loop)
    names["train_model_name"] = loop.train_model_name
    names["model_name"] = cfg.model_name.value
    weight_slot = cfg.export_weight if d.eval_weight_slot == "export_weight" else cfg.pretrain
    set_eval_weight = _eval_weight(ctx, weight_slot, names, save_log, loop.train_model_name)
    if d.pretrain_from_norm and d.record_norm_weights and trainer == cfg.norm_train.key and nodes <= 1:
        loop.load_norm_train_model = set_eval_weight
    _eval_step(ctx, names, base, train_id, dev.env, set_eval_weight, set_use_gpu, weight_slot)
    _export_or_note(ctx, disp, names, train_id, dev.env, base)
    if d.unset_after_trainer:
        ctx.unset_cuda()


def _export_and_infer(
    ctx: _Ctx,
    disp: _Dispatch,
    names: dict[str, object],
    train_id: str,
    env: tuple[str, str] | None,
    base: str,
) -> str:
    cfg, d = ctx.cfg, ctx.d
    python = cfg.python.value
    save_log = str(names["save_log"])
    model_name = cfg.model_name.value
    weight_path = d.export_weight_path.format(**names)
    if d.eval_style == "video":
        weight_path = str(names["video_weight"])
    set_export_weight = set_param(cfg.export_weight.key, weight_path)
    if names.get("rec_model"):
        # The script assigns the RecModel weights to the eval variable by mistake, so export keeps the weight
        # parameter of the previous export (none on the first one).
        set_export_weight = ctx.last_export_weight
        ctx.note(
            "TIPC217",
            Level.WARNING,
            cfg.export_weight,
            f"for {model_name} PaddleClas sets the eval weights instead of the export weights: export reuses "
            f"the previous export's weight parameter ({set_export_weight.strip() or 'none'})",
        )
    ctx.last_export_weight = set_export_weight
    save_infer_value = save_log
    export_log = d.export_log.format(**names) if d.export_log else None
    fields = {
        "python": python,
        "run_export": disp.run_export,
        "weight": set_export_weight,
        "weight_path": weight_path,
        "save_infer_key": cfg.save_infer.key,
        "save_log": save_log,
        "save_infer": set_param(cfg.save_infer.key, save_infer_value),
        "filename": set_param("filename", model_name),
        "log": export_log,
    }
    export_id = ""
    writes, unknown = _writes(cfg.save_infer, save_infer_value, "export")
    if d.whole_infer == "det" and cfg.export2.key == "export_onnx":
        stem = d.export_log.format(**names)[: -len("_export.log")] if d.export_log else ctx.log_root
        onnx_log = f"{stem}_onnx_export.log"
        onnx_cmd = (
            f"{python} {disp.run_export} {fields['weight']} {fields['filename']} export_onnx=True "
            f"{fields['save_infer']} >{onnx_log} 2>&1"
        )
        ctx.add(
            f"export/{base}/onnx",
            Stage.EXPORT,
            onnx_cmd,
            log=onnx_log,
            status_log=onnx_log,
            trainer=str(names["trainer"]),
            depends_on=(train_id,),
            lines=(cfg.export2.line,),
            writes=writes,
            writes_unknown=unknown,
        )
    export_cmd = d.export_shape.format(**fields)
    export_id = ctx.add(
        f"export/{base}",
        Stage.EXPORT,
        export_cmd,
        log=export_log,
        status_log=export_log,
        trainer=str(names["trainer"]),
        depends_on=(train_id,),
        lines=(cfg.save_infer.line, cfg.export_weight.line, disp.lines[-1]),
        writes=writes,
        writes_unknown=unknown,
    )
    ctx.apply_env(env)
    if d.whole_infer == "det":
        model_dir = f"{save_log}/{model_name}"
    elif (
        d.use_inference_dir
        and cfg.inference_dir.value not in ("null", "##")
        and not (d.inference_dir_single_bracket and cfg.inference_dir.value == "")
    ):
        model_dir = f"{save_log}/{cfg.inference_dir.value}"
    else:
        model_dir = save_log
    image = cfg.slot(d.train_infer_image_slot).value if d.train_infer_image_slot else ""
    _inference(
        ctx,
        model_dir,
        image,
        "True" if disp.quant else "False",
        str(names["gpu"]),
        depends=(export_id,),
        base=base,
        trainer=str(names["trainer"]),
    )
    if not d.unset_after_trainer:
        ctx.unset_cuda()
    return export_id


def _note_mode_values(ctx: _Ctx, epoch_num: str, batch_value: str) -> None:
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    for name, got in (("epoch", epoch_num), ("train_batch", batch_value)):
        if name not in d.mode_keyed:
            continue
        slot = cfg.slot(name)
        if not got and slot.value not in ("", "null"):
            if not d.mode_arg_passed and name == "epoch":
                ctx.note(
                    "TIPC205",
                    Level.INFO,
                    slot,
                    f"this script reads the epoch line without the mode: the value is ignored "
                    f"(epochs={epoch_num or 'default'})",
                )
            elif bash.is_mode_keyed(slot.value):
                ctx.note(
                    "TIPC201",
                    Level.WARNING,
                    slot,
                    f"mode '{mode}' is missing from the mode-keyed value of {slot.key!r}: the parameter is "
                    "omitted and the training script's default is used",
                )
            else:
                ctx.note(
                    "TIPC202",
                    Level.WARNING,
                    slot,
                    f"{slot.key!r} holds a plain value on a mode-keyed line: the script passes nothing "
                    f"(write `{mode}=<value>|...`)",
                )


# ---------------------------------------------------------------------------------------------------------
# inference loops


def _gpu_skip(rule: str, quant: str, precision: str, trt: str) -> bool:
    if rule == "G1":
        return quant == "False" and "int8" in precision
    if rule == "G2":
        return ("fp16" in precision or "int8" in precision) and test_eq(trt, "False")
    if rule == "G3and":
        return trt == "False" and "int8" in precision and test_eq(quant, "True")
    if rule == "G3or":
        return (trt == "False" or "int8" in precision) and test_eq(quant, "True")
    if rule == "Clas":
        return test_eq(precision, "True") and test_eq(trt, "False")
    if rule == "Det":
        if precision != "paddle":
            if quant == "False" and precision == "trt_int8":
                return True
            if quant == "True" and precision != "trt_int8":
                return True
        return False
    raise ValueError(rule)


def _cpu_skip(rule: str, quant: str, precision: str, mkldnn: str) -> bool:
    if rule == "C1":
        return test_eq(mkldnn, "False") and test_eq(precision, "fp16")
    if rule == "C2":
        return test_eq(quant, "True") and test_ne(precision, "int8")
    if rule == "C4":
        return test_eq(quant, "False") and test_ne(precision, "fp32")
    if rule == "C3":
        return False  # checked at the mkldnn level
    raise ValueError(rule)


@dataclass(frozen=True)
class _InferRun:
    """What every inference command of one model folder shares."""

    common: dict[str, str]
    quant: str
    gpu: str
    depends: tuple[str, ...]
    base: str
    trainer: str | None
    lines: tuple[int, ...]


def _infer_common(
    ctx: _Ctx, model_dir: str, image: str, whole: bool, extra: dict[str, str] | None
) -> dict[str, str]:
    """The parameters shared by the CPU and GPU inference commands."""
    cfg, d = ctx.cfg, ctx.d
    model_dir = model_dir + d.model_dir_suffix
    param1_value = cfg.infer_param1.value
    model_dir_value = model_dir
    if d.infer_dir_joins_value:
        model_dir_value = f"{model_dir}/{cfg.infer_model_dir.value}"
        param1_value = f"{model_dir}/{cfg.infer_param1.value}"
    if d.infer_model_dir_from_slot:
        model_dir_value = cfg.infer_model_dir.value
    if whole and d.param1_only_in_train:
        param1_value = ""
    return {
        "python": cfg.python.value,
        "script": cfg.inference.value,
        "model_dir": set_param(cfg.infer_model_dir.key, model_dir_value),
        "image": set_param(cfg.infer_image.key, image),
        "benchmark": (
            set_param(cfg.infer_benchmark.key, cfg.infer_benchmark.value) if d.benchmark_parsed else OMITTED
        ),
        "save_log_param": set_param(cfg.infer_save_log.key, ""),
        # Hand-edited copies (e.g. justld/DMNet_paddle) pass the save-log slot with its written value.
        "save_log_value": set_param(cfg.infer_save_log.key, cfg.infer_save_log.value),
        "param1": set_param(cfg.infer_param1.key, param1_value),
        "param2": set_param(cfg.infer_param2.key, cfg.infer_param2.value),
        "image_value": set_param(cfg.infer_image.key, cfg.infer_image.value),
        **(extra or {}),
    }


def _inference(
    ctx: _Ctx,
    model_dir: str,
    image: str,
    quant: str,
    gpu: str,
    *,
    depends: tuple[str, ...],
    base: str,
    trainer: str | None,
    whole: bool = False,
    extra: dict[str, str] | None = None,
) -> None:
    cfg, d = ctx.cfg, ctx.d
    run = _InferRun(
        common=_infer_common(ctx, model_dir, image, whole, extra),
        quant=quant,
        gpu=gpu,
        depends=depends,
        base=base,
        trainer=trainer,
        lines=(cfg.inference.line, cfg.infer_use_gpu.line, cfg.infer_model_dir.line),
    )
    if test_eq(quant, "True"):
        ctx.note(
            "TIPC230", Level.INFO, None, "quantized model: the script's int8-only skip rules apply", once="q"
        )
    for use_gpu in ifs_split(cfg.infer_use_gpu.value, "|"):
        ctx.tick()
        use_gpu_param = f"{cfg.infer_use_gpu.key}={use_gpu}"
        names = {"log_root": ctx.log_root, "gpu": use_gpu if d.infer_log_gpu_is_use_gpu else gpu}
        if test_eq(use_gpu, "False") or test_eq(use_gpu, "cpu"):
            _infer_cpu(ctx, run, names, use_gpu_param)
        elif test_eq(use_gpu, "True") or test_eq(use_gpu, "gpu"):
            _infer_gpu(ctx, run, names, use_gpu_param)
        else:
            ctx.note(
                "TIPC231",
                Level.WARNING if cfg.inference.value in ("null", "") else Level.ERROR,
                cfg.infer_use_gpu,
                f"inference use_gpu value {use_gpu!r} is none of True/False/gpu/cpu: the script prints "
                "'Does not support hardware other than CPU and GPU' and runs nothing for it",
            )


def _infer_loop(ctx: _Ctx, name: str) -> list[str]:
    # A dialect without the slot (compact: no mkldnn/threads/trt/precision lines) loops once, empty.
    return ifs_split(ctx.cfg.slot(name).value, "|") if name in ctx.d.slots else [""]


def _infer_cpu(ctx: _Ctx, run: _InferRun, names: dict[str, str], use_gpu_param: str) -> None:
    """The CPU inference loops: mkldnn x threads x batch (x precision where the dialect loops it)."""
    cfg, d, quant = ctx.cfg, ctx.d, run.quant
    # The lists the loops walk do not change inside them (the script reads them once).
    threads_list, batches = _infer_loop(ctx, "infer_threads"), ifs_split(cfg.infer_batch.value, "|")
    precisions = _infer_loop(ctx, "infer_precision") if d.cpu_precision_loop else [""]
    for mkldnn in _infer_loop(ctx, "infer_mkldnn"):
        ctx.tick()
        if "C3" in d.cpu_skip and test_eq(mkldnn, "False") and test_eq(quant, "True"):
            continue
        mkldnn_param = (
            f"{cfg.infer_mkldnn.key}={mkldnn}" if d.mkldnn_raw else set_param(cfg.infer_mkldnn.key, mkldnn)
        )
        for threads in threads_list:
            ctx.tick()
            threads_param = set_param(cfg.infer_threads.key, threads)
            for batch in batches:
                ctx.tick()
                batch_param = set_param(cfg.infer_batch.key, batch)
                for precision in precisions:
                    ctx.tick()
                    if d.cpu_skip and any(_cpu_skip(r, quant, precision, mkldnn) for r in d.cpu_skip):
                        continue
                    log = d.cpu_log.format(
                        **names, mkldnn=mkldnn, threads=threads, precision=precision, batch=batch
                    )
                    values = {
                        "use_gpu": use_gpu_param,
                        "mkldnn": mkldnn_param,
                        "threads": threads_param,
                        "batch": batch_param,
                        "precision": set_param(cfg.infer_precision.key, precision),
                    }
                    _infer_emit(ctx, run, d.cpu_shape, log, values)


def _infer_gpu(ctx: _Ctx, run: _InferRun, names: dict[str, str], use_gpu_param: str) -> None:
    """The GPU inference loops: trt x precision x batch."""
    cfg, d = ctx.cfg, ctx.d
    trts = [""] if d.whole_infer == "det" else _infer_loop(ctx, "infer_trt")
    for trt in trts:
        ctx.tick()
        for precision in _infer_loop(ctx, "infer_precision"):
            ctx.tick()
            if any(_gpu_skip(r, run.quant, precision, trt) for r in d.gpu_skip):
                continue
            for batch in ifs_split(cfg.infer_batch.value, "|"):
                ctx.tick()
                log = d.gpu_log.format(**names, trt=trt, precision=precision, batch=batch)
                values = {
                    "use_gpu": use_gpu_param,
                    "trt": set_param(cfg.infer_trt.key, trt),
                    "precision": set_param(cfg.infer_precision.key, precision),
                    "batch": set_param(cfg.infer_batch.key, batch),
                }
                _infer_emit(ctx, run, d.gpu_shape, log, values)


def _infer_emit(ctx: _Ctx, run: _InferRun, shape: str, log: str, values: dict[str, str]) -> None:
    """Add one inference step: the command of `shape`, its log, and the output folder it may write."""
    cfg, d = ctx.cfg, ctx.d
    results_dir = log[: -len(".log")] + "_results"
    if d.param1_results:
        values = {**values, "param1": set_param(cfg.infer_param1.key, results_dir)}
    command = shape.format(**{**run.common, **values, "log": log})
    if ctx.light:  # lint: the command is all it needs
        ctx.add("", Stage.INFER, command, log=log, status_log=log, trainer=run.trainer)
        return
    name = posixpath.basename(log)
    if name.endswith(".log"):
        name = name[:-4]
    # Inference writes only its log, except where a script passes an output folder: PaddleSeg's results
    # dir (param1) and hand-edited copies passing the save-log slot's value (justld/DMNet_paddle).
    writes: tuple[tuple[str, str], ...] = ()
    save_log_param = set_param(cfg.infer_save_log.key, cfg.infer_save_log.value).strip()
    if d.param1_results and "{param1}" in shape:
        writes = ((cfg.infer_param1.key, results_dir),)
    elif "{save_log_value}" in shape and save_log_param:
        writes = ((cfg.infer_save_log.key, cfg.infer_save_log.value),)
    ctx.add(
        f"infer/{run.base}/{name}",
        Stage.INFER,
        command,
        log=log,
        status_log=log,
        trainer=run.trainer,
        cwd=d.infer_cwd,
        depends_on=run.depends,
        lines=run.lines,
        writes=writes,
    )


# ---------------------------------------------------------------------------------------------------------
# whole_infer


def _whole_infer_t51(ctx: _Ctx) -> None:
    cfg, d = ctx.cfg, ctx.d
    python = cfg.python.value
    exports = ifs_split(cfg.infer_export.value, "|")
    quants = ifs_split(cfg.infer_quant.value, "|")
    gpu = d.whole_infer_gpu
    for n, infer_model in enumerate(ifs_split(cfg.infer_model.value, "|")):
        ctx.tick()
        run_export = exports[n] if n < len(exports) else ""
        depends: tuple[str, ...] = ()
        if test_ne(run_export, "null"):
            save_dir = infer_model if d.whole_infer == "ocr" else bash_dirname(infer_model)
            log = (
                d.whole_infer_export_log.format(log_root=ctx.log_root, n=n)
                if d.whole_infer_export_log
                else None
            )
            cmd = (
                f"{python} {run_export} {set_param(cfg.export_weight.key, infer_model)} "
                f"{set_param(cfg.save_infer.key, save_dir)}"
            )
            if log is not None:
                cmd += f" > {log} 2>&1 "
            depends = _whole_infer_export(ctx, cfg, f"export/whole_infer/{n}", cmd, log, log, save_dir)
        else:
            save_dir = infer_model
        quant = quants[n] if n < len(quants) else ""
        if ctx.mode == Mode.KLQUANT_WHOLE_INFER and d.klquant_forces_quant:
            quant = "True"
        this_gpu = gpu
        if d.whole_infer == "gan":
            quant = ""  # PaddleGAN passes no quant flag at all
        elif quant == "":
            # `func_inference ... ${is_quant} "${gpu}"`: the empty unquoted flag vanishes and the gpu id
            # becomes the quant flag.
            ctx.note(
                "TIPC232",
                Level.WARNING,
                cfg.infer_quant,
                f"infer_quant has no item for model {n}: the script shifts its arguments and uses the gpu id "
                "as the quant flag",
            )
            quant, this_gpu = gpu, ""
        _inference(
            ctx,
            save_dir,
            cfg.infer_image.value,
            quant,
            this_gpu,
            depends=depends,
            base=f"whole_infer/{n}",
            trainer=None,
        )


def _whole_infer_clas(ctx: _Ctx) -> None:
    cfg = ctx.cfg
    kl = cfg.export1  # Clas reads its KL-quant command from the export1 slot (line 34)
    if not (test_ne(kl.value, "null") and test_ne(kl.value, "False")):
        ctx.note(
            "TIPC240",
            Level.INFO,
            kl,
            "PaddleClas whole_infer runs only the KL-quant command of line 34, which is null/False: "
            "nothing runs in this mode",
        )
        return
    log = f"{ctx.log_root}/export.log"
    cmd = f"{cfg.python.value} {kl.value} > {log} 2>&1"
    export_id = ctx.add(
        "quant/whole_infer/kl_quant",
        Stage.QUANT,
        cmd,
        log=log,
        status_log=log,
        trainer=None,
        lines=(kl.line,),
        writes_unknown=(
            f"the KL-quant command of line {kl.line} is free-form: where it saves the quantized model is "
            "up to its own arguments (PaddleClas writes under deploy/)"
        ),
    )
    ctx.note(
        "TIPC241",
        Level.INFO,
        kl,
        "the script then symlinks model.pdmodel/.pdiparams to inference.* in "
        f"{cfg.infer_model.value}/quant_post_static_model before inference",
    )
    _inference(
        ctx,
        f"../{cfg.infer_model.value}/quant_post_static_model",
        cfg.infer_image.value,
        "True",
        "0",
        depends=(export_id,),
        base="whole_infer/kl_quant",
        trainer=None,
    )


def _whole_infer_det(ctx: _Ctx) -> None:
    cfg, mode = ctx.cfg, ctx.mode
    python, model_name = cfg.python.value, cfg.model_name.value
    quants = ifs_split(cfg.infer_quant.value, "|")
    count = 0
    exports = {
        "norm": cfg.norm_export,
        "pact": cfg.pact_export,
        "fpgm": cfg.fpgm_export,
        "distill": cfg.distill_export,
        "kl_quant": cfg.kl_quant_export,
    }
    for infer_mode in ifs_split(cfg.infer_model.value, "|"):
        ctx.tick()
        if test_eq(infer_mode, "null"):
            continue
        if mode == Mode.KLQUANT_WHOLE_INFER and infer_mode != "kl_quant":
            continue
        if mode == Mode.WHOLE_INFER and infer_mode == "kl_quant":
            continue
        export = exports.get(infer_mode)
        if export is None:
            ctx.note(
                "TIPC242",
                Level.ERROR,
                cfg.infer_model,
                f"infer_mode {infer_mode!r} is none of norm/pact/fpgm/distill/kl_quant: the script prints "
                "'Undefined infer_mode!' and exits 1",
            )
            return
        cmd = (
            f"{python} {export.value} {set_param(cfg.export_weight.key, cfg.export_weight.value)} "
            f"{set_param('filename', model_name)} {set_param(cfg.save_infer.key, cfg.save_infer.value)} "
        )
        writes, unknown = _writes(cfg.save_infer, cfg.save_infer.value, "export")
        export_id = ctx.add(
            f"export/whole_infer/{infer_mode}",
            Stage.EXPORT,
            cmd,
            log=None,
            status_log=None,
            trainer=None,
            lines=(export.line, cfg.export_weight.line),
            writes=writes,
            writes_unknown=unknown,
        )
        quant = quants[count] if count < len(quants) else ""
        if quant == "":
            quant = "{gpu}"
        _inference(
            ctx,
            f"{cfg.save_infer.value}/{model_name}",
            cfg.infer_image.value,
            quant,
            "0",
            depends=(export_id,),
            base=f"whole_infer/{infer_mode}",
            trainer=None,
        )
        count += 1


# ---------------------------------------------------------------------------------------------------------
# compact (32 lines)


def _compact(ctx: _Ctx, whole: bool) -> None:
    if whole:
        _compact_whole(ctx)
    else:
        _compact_train(ctx)


def _whole_infer_export(
    ctx: _Ctx, cfg: TipcConfig, step_id: str, cmd: str, log: str | None, status_log: str | None, save_dir: str
) -> tuple[str, ...]:
    """The whole_infer export step (what the later inference steps depend on)."""
    writes, unknown = _writes(cfg.save_infer, save_dir, "export")
    step = ctx.add(
        step_id,
        Stage.EXPORT,
        cmd,
        log=log,
        status_log=status_log,
        trainer=None,
        lines=(cfg.infer_model.line, cfg.infer_export.line),
        writes=writes,
        writes_unknown=unknown,
    )
    return (step,)


def _compact_whole(ctx: _Ctx) -> None:
    """whole_infer in the compact script: the optional export of infer_model, then inference."""
    cfg, d = ctx.cfg, ctx.d
    depends: tuple[str, ...] = ()
    if d.whole_infer_exits_before_export and test_ne(cfg.infer_export.value, "null"):
        ctx.note(
            "TIPC260",
            Level.WARNING,
            cfg.infer_export,
            "this script prints the whole_infer export command and exits 0 before running it: "
            "nothing runs in whole_infer",
        )
        return
    if test_ne(cfg.infer_export.value, "null"):
        log = d.whole_infer_export_log.format(log_root=ctx.log_root) if d.whole_infer_export_log else None
        weight = set_param(cfg.export_weight.key, cfg.infer_model.value)
        save = set_param(cfg.save_infer.key, cfg.save_infer.value)
        cmd = f"{cfg.python.value} {cfg.infer_export.value} {weight} {save}"
        if log:
            cmd += f" > {log} 2>&1 "
        depends = _whole_infer_export(ctx, cfg, "export/whole_infer/0", cmd, log, None, cfg.save_infer.value)
    image = cfg.slot(d.whole_infer_image_slot).value if d.whole_infer_image_slot else ""
    _inference(
        ctx,
        cfg.save_infer.value,
        image,
        "False",
        "0",
        depends=depends,
        base="whole_infer/0",
        trainer=None,
        whole=True,
        extra={"save_infer_param": set_param(cfg.save_infer.key, "")},
    )


@dataclass(frozen=True)
class _CompactRun:
    """One compact training run: what its eval and export steps reuse."""

    trainer: str
    gpu: str
    env: tuple[str, str] | None
    names: dict[str, object]
    save_log: str
    exp_dir: str
    data_dir: str
    base: str
    train_id: str


def _compact_device(ctx: _Ctx, gpu_item: str) -> tuple[str, str, tuple[str, str] | None]:
    """(gpus, ips, env) of one gpu_list item as the compact script reads it."""
    gpu, ips, env = _classify(gpu_item)
    if len(gpu_item) > 15 and ctx.d.compact_multinode:
        firsts = ifs_split(gpu, ",")
        env = (CUDA, firsts[0] if firsts else "")
    elif len(gpu_item) > 15:
        gpu, ips, env = gpu_item, "", (CUDA, ifs_split(gpu_item, ",")[0])
    return gpu, ips, _device_item(ctx, gpu_item, gpu, ips, env)


def _compact_train(ctx: _Ctx) -> None:
    """The compact script's train modes: gpu_list x trainer_list, each trained, evaluated and exported."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    epoch_num = mode_slot_value(cfg.epoch, mode, d)
    batch_value = mode_slot_value(cfg.train_batch, mode, d)
    _note_mode_values(ctx, epoch_num, batch_value)
    if cfg.train_use_gpu.present:
        ctx.note(
            "TIPC250",
            Level.INFO,
            cfg.train_use_gpu,
            "the compact script parses the train use_gpu line but never passes it to training",
        )
    for gpu_item in ifs_split(cfg.gpu_list.value, "|"):
        ctx.tick()
        gpu, ips, env = _compact_device(ctx, gpu_item)
        for trainer in ifs_split(cfg.trainer_list.value, "|"):
            ctx.tick()
            if test_eq(cfg.norm_train.value, "null"):
                continue
            run = _compact_train_step(ctx, trainer, gpu, ips, env, epoch_num, batch_value)
            if test_ne(cfg.eval.value, "null"):
                _compact_eval(ctx, run)
            if test_ne(cfg.norm_export.value, "null"):
                _compact_export(ctx, run)
    ctx.not_applicable = ""


def _compact_train_step(
    ctx: _Ctx,
    trainer: str,
    gpu: str,
    ips: str,
    env: tuple[str, str] | None,
    epoch_num: str,
    batch_value: str,
) -> _CompactRun:
    """Add one compact training step."""
    cfg, d, mode = ctx.cfg, ctx.d, ctx.mode
    autocast = "True" if trainer == "amp_train" else "False"
    nodes = bash.word_count_nodes(ips) if len(ips) > d.ips_limit else 1
    names: dict[str, object] = {
        "log_root": ctx.log_root,
        "trainer": trainer,
        "gpu": gpu,
        "autocast": autocast,
        "nodes": nodes,
        "nodes_suffix": f"_nodes_{nodes}" if len(ips) > d.ips_limit else "",
    }
    save_log = d.compact_save_log.format(**names)
    exp_dir = set_param(cfg.save_model.key, mode_slot_value(cfg.save_model, mode, d))
    data_dir = set_param(cfg.data_path.key, mode_slot_value(cfg.data_path, mode, d))
    fields = {
        "python": cfg.python.value,
        "run_train": cfg.norm_train.value,
        "exp_dir": exp_dir,
        "data_dir": data_dir,
        "save_model": set_param(cfg.save_model.key, save_log),
        "epoch": set_param(cfg.epoch.key, epoch_num),
        "pretrain": set_param(cfg.pretrain.key, cfg.pretrain.value),
        "batch": set_param(cfg.train_batch.key, batch_value),
        "launcher": d.launcher,
        "gpus": gpu,
        "ips": ips,
    }
    shape = _train_shape(ctx, gpu, ips)
    base = f"{trainer}/gpus_{gpu}/autocast_{autocast}"
    # fastflow's copy trains into the mode-keyed exp_dir value instead of the save_log dir
    train_dir = mode_slot_value(cfg.save_model, mode, d) if "{exp_dir}" in shape else save_log
    writes, unknown = _writes(cfg.save_model, train_dir, "training")
    train_id = ctx.add(
        f"train/{base}",
        Stage.TRAIN,
        shape.format(**fields),
        log=None,
        status_log=None,
        trainer=trainer,
        lines=(cfg.norm_train.line, cfg.epoch.line, cfg.train_batch.line),
        writes=writes,
        writes_unknown=unknown,
    )
    return _CompactRun(trainer, gpu, env, names, save_log, exp_dir, data_dir, base, train_id)


def _compact_eval(ctx: _Ctx, run: _CompactRun) -> None:
    cfg, d = ctx.cfg, ctx.d
    weight = set_param(cfg.pretrain.key, f"{run.save_log}/{cfg.train_model_name.value}")
    ctx.apply_env(run.env)
    log = d.eval_log.format(**run.names) if d.eval_log else None
    ctx.add(
        f"eval/{run.base}",
        Stage.EVAL,
        d.eval_shape.format(
            python=cfg.python.value,
            eval_py=cfg.eval.value,
            weight=weight,
            log=log,
            exp_dir=run.exp_dir,
            data_dir=run.data_dir,
        ),
        log=log,
        status_log=None,
        trainer=run.trainer,
        depends_on=(run.train_id,),
        lines=(cfg.eval.line,),
    )


def _compact_export(ctx: _Ctx, run: _CompactRun) -> None:
    """The export step of a compact training run, then inference on its output."""
    cfg, d = ctx.cfg, ctx.d
    save_log = run.save_log
    log = d.export_log.format(**run.names) if d.export_log else None
    export_weight = set_param(cfg.export_weight.key, f"{save_log}/{cfg.train_model_name.value}")
    writes, unknown = _writes(cfg.save_infer, save_log, "export")
    export_id = ctx.add(
        f"export/{run.base}",
        Stage.EXPORT,
        d.export_shape.format(
            python=cfg.python.value,
            run_export=cfg.norm_export.value,
            weight=export_weight,
            save_infer=set_param(cfg.save_infer.key, save_log),
            log=log,
            exp_dir=run.exp_dir,
        ),
        log=log,
        status_log=None,
        trainer=run.trainer,
        depends_on=(run.train_id,),
        lines=(cfg.norm_export.line,),
        writes=writes,
        writes_unknown=unknown,
    )
    ctx.apply_env(run.env)
    image = cfg.slot(d.train_infer_image_slot).value if d.train_infer_image_slot else ""
    _inference(
        ctx,
        save_log,
        image,
        "False",
        run.gpu,
        depends=(export_id,),
        base=run.base,
        trainer=run.trainer,
        extra={"save_infer_param": set_param(cfg.save_infer.key, save_log)},
    )
    ctx.unset_cuda()
