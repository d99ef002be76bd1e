"""What the slot fillers share: the flag-role synonyms (`SYNONYMS`, also read by tipc.scaffold.serving),
the modes a filled config keys its values by, the fill's context (`_Ctx`: the scan, the flags read, the
flags passed so far, the doc commands, what one section tells a later one) and small helpers on flags and
paths. No slot is filled here.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from tipc.config.script_flags import Flag, ScriptFlags
from tipc.core.steps import TRAIN_MODES
from tipc.scaffold.dataflow import (
    WeightRef,
    weight_refs,
)
from tipc.scaffold.detect import RepoScan
from tipc.scaffold.evidence import Command, commands_for, mentions
from tipc.scaffold.filled import Filled, Todo

MODE_KEYS = TRAIN_MODES  # the modes a filled config keys its values by


# Synonyms per role, in preference order, normalised (no dashes, lower case, `-` -> `_`).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "use_gpu": ("use_gpu", "device", "use_cuda", "cuda"),
    "epoch": (
        "epochs",
        "epoch",
        "epoch_num",
        "num_epochs",
        "max_epochs",
        "max_epoch",
        "n_epochs",
        "total_epochs",
    ),
    # Training counted in iterations (PaddleSeg's --iters, --max_iters): the epoch slot carries them.
    "iters": (
        "iters",
        "iter",
        "max_iters",
        "max_iter",
        "total_iters",
        "num_iters",
        "n_iters",
        "iterations",
        "num_iterations",
        "max_iterations",
        "train_iters",
        "max_steps",
        "num_steps",
        "total_steps",
        "train_steps",
    ),
    "batch": ("batch_size", "bs", "batch", "train_batch_size", "batch_size_per_card", "batchsize"),
    "save_model": (
        "output_dir",
        "save_dir",
        "save_model_dir",
        "output",
        "out_dir",
        "model_save_dir",
        "checkpoint_dir",
        "ckpt_dir",
        "save_path",
        "output_path",
    ),
    "weights": (
        "pretrained",
        "pretrained_model",
        "pretrain",
        "pretrain_weights",
        "pretrained_weights",
        "weights",
        "model_path",
        "params_path",
        "checkpoint",
        "init_model",
        "resume",
    ),
    "data": ("data_dir", "data_path", "data_root", "dataset_dir", "dataset_root", "data", "dataset", "root"),
    "model_dir": ("model_dir", "inference_model_dir", "infer_model_dir", "model_path", "model_file"),
    "save_inference": (
        "save_inference_dir",
        "output_path",
        "output_dir",
        "save_dir",
        "export_dir",
        "inference_dir",
        "out_dir",
        "output",
        "save_path",
    ),
    "image": (
        "img_path",
        "image_path",
        "image_dir",
        "image_file",
        "img_dir",
        "img_file",
        "img",
        "image",
        "infer_imgs",
        "input",
        "input_file",
    ),
    "mkldnn": ("enable_mkldnn", "use_mkldnn", "mkldnn"),
    "threads": ("cpu_threads", "cpu_num_threads", "num_threads", "threads", "cpu_math_library_num_threads"),
    "trt": ("use_tensorrt", "use_trt", "tensorrt", "trt"),
    "precision": ("precision", "run_mode"),
    "benchmark": ("benchmark", "run_benchmark", "enable_benchmark", "use_benchmark"),
    "save_log": ("save_log_path",),
}


def _where(flag: Flag) -> str:
    return f"{flag.path}:{flag.line}"


def _int_default(flag: Flag) -> int | None:
    return flag.default if isinstance(flag.default, int) and not isinstance(flag.default, bool) else None


def _is_device_flag(flag: Flag) -> bool:
    values = {str(c).lower() for c in flag.choices or ()}
    return "device" in flag.names or bool(values & {"cpu", "gpu"})


def _bool_problem(flag: Flag) -> str | None:
    """Why `--flag=False` would not mean False for this flag, or None when it does."""
    if flag.is_switch:
        return (
            f"{flag.flag} is a switch (action={flag.action}); "
            f"TIPC passes `{flag.flag}=False`, which argparse rejects"
        )
    if flag.type_name == "bool":
        return f"{flag.flag} has type=bool, so argparse reads 'False' as True; use a str2bool converter"
    return None


def _same_path(a: str, b: object) -> bool:
    return isinstance(b, str) and posixpath.normpath(a) == posixpath.normpath(b)


def _rel(path: str) -> str:
    return path if path.startswith(("./", "../", "/")) else "./" + path


@dataclass
class _Ctx:
    """What the slot fillers share: the scan, the flags read, the flags passed so far, the doc commands."""

    scan: RepoScan
    out: Filled
    commands: tuple[Command, ...]
    used: dict[str, set[int]] = field(default_factory=dict)
    eval_switch: str | None = None  # `--test-only` when eval is the training script with a switch
    train_saves: str | None = None  # the file name train's paddle.save joins onto the save folder
    eval_data: tuple[str, str] | None = None  # the (flag, lite folder) eval is given
    export_flag: Flag | None = None
    export_ref: WeightRef | None = None
    mode_flag: Flag | None = None  # the train script's flag that selects evaluation (`--mode`, `--test-only`)
    pinned: str | None = None  # train's default save folder, used by later stages through literal paths
    export_on_default: bool = False  # export reads its weights from its own default (see `pinned`)
    # Arguments a stage's script value carries itself (`--pretrained=./output/best/model.pdparams` when
    # train writes to a constant path no slot can name).
    fixed_args: dict[str, list[str]] = field(default_factory=dict)

    @property
    def s(self) -> dict[str, tuple[str, str]]:
        return self.out.slots

    @property
    def dialect(self) -> str:
        return self.out.dialect

    @property
    def lite_dir(self) -> str | None:
        return self.scan.lite.dir if self.scan.lite else None

    def script(self, role: str) -> str | None:
        return self.out.scripts.get(role)

    def flags(self, role: str) -> ScriptFlags | None:
        return self.out.flags.get(role)

    def find(self, role: str, synonym: str) -> Flag | None:
        script = self.flags(role)
        return script.find(SYNONYMS[synonym]) if script else None

    def by_dest(self, role: str, dest: str) -> Flag | None:
        script = self.flags(role)
        return next((f for f in script.flags if f.dest == dest and f.options), None) if script else None

    def use(self, role: str, flag: Flag | None) -> Flag | None:
        if flag is not None:
            self.used.setdefault(role, set()).add(id(flag))
        return flag

    def refs(self, role: str, verb: str) -> list[WeightRef]:
        script, flags = self.script(role), self.flags(role)
        if script is None or flags is None:
            return []
        return weight_refs(self.scan.root / script, {f.dest for f in flags.flags if f.options}, verb)

    def note(self, text: str) -> None:
        self.out.notes.append(text)

    def todo(self, slot: str | None, message: str, candidates: list[str] | None = None) -> None:
        self.out.todos.append(Todo(slot, message, tuple(candidates or ())))

    def lite_command(self, role: str) -> Command | None:
        """The repo's own command line for `role` that runs on the lite data, if its docs show one."""
        script = self.script(role)
        if script is None or self.lite_dir is None:
            return None
        found = (c for c in commands_for(self.commands, script) if mentions(c, self.lite_dir))
        return next((c for c in found if self._same_mode(role, c)), None)

    def _same_mode(self, role: str, command: Command) -> bool:
        """A command of the shared train/eval script counts for `role` only when it runs that mode."""
        mode = self.mode_flag
        if mode is None or role not in ("train", "eval"):
            return True
        given = [f"{o}={v}" if v is not None else o for o, v in command.options() if o in mode.options]
        return given == [self.eval_switch] if role == "eval" else not given


def _path_candidates(script: ScriptFlags | None) -> list[str]:
    words = ("dir", "path", "output", "save", "log", "model", "ckpt", "checkpoint", "weight")
    if script is None:
        return []
    return [f"{f.flag} ({_where(f)})" for f in script.flags if f.options and any(w in f.dest for w in words)]
