"""Fill the config slots from what `detect` and `script_flags` found; list what could not be inferred.

Defaults are CPU-friendly (gpu_list -1, inference on CPU, 1 thread, fp32). Whatever cannot be inferred
becomes a `Todo`; those go to the terminal, the generated README and docs, never into the positional config.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from tipc.config.script_flags import Flag, ScriptFlags, read_flags
from tipc.core.steps import TRAIN_MODES
from tipc.scaffold.dataflow import (
    WeightRef,
    literal_paths_under,
    literal_save_paths,
    model_dir_refs,
    weight_refs,
)
from tipc.scaffold.detect import LiteData, RepoScan, images_under, saved_checkpoint_names, train_samples
from tipc.scaffold.evidence import Command, commands_for, mentions, read_commands
from tipc.scaffold.filled import Filled, Todo
from tipc.scaffold.render import check_model_name
from tipc.scaffold.slots import slots_of

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


def fill(scan: RepoScan, model: str, dialect: str) -> Filled:
    """Fill every slot of `dialect` from the repo's evidence; what cannot be inferred becomes a Todo."""
    out = Filled(dialect=dialect, model=model, scripts=dict(scan.scripts))
    ctx = _Ctx(scan, out, read_commands(scan.root))
    _read_scripts(ctx)
    if scan.lite is None:
        scan.lite = _lite_from_docs(ctx)
    out.lite = scan.lite
    _fill_fixed(ctx)
    _fill_train_script(ctx)
    _fill_train_device(ctx)
    _fill_epoch(ctx)
    _fill_batch(ctx)
    _fill_save_model(ctx)
    _fill_weights(ctx)
    _fill_data(ctx)
    _fill_eval(ctx)
    _compact_device_args(ctx)
    _fill_export(ctx)
    _fill_inference(ctx)
    _fill_image(ctx)
    _fill_whole_infer(ctx)
    _append_doc_args(ctx)
    _required_todos(ctx)
    _finish(ctx)
    return out


def _read_scripts(c: _Ctx) -> None:
    root = c.scan.root
    for role, rel in c.scan.scripts.items():
        c.out.flags[role] = read_flags(root / rel, root)
        c.note(f"{role} script: {rel} ({len(c.out.flags[role].flags)} argparse flags read statically)")
        if c.out.flags[role].error:
            c.todo(None, f"{rel}: {c.out.flags[role].error}")
    if "eval" not in c.out.scripts:
        _eval_from_train_docs(c)
    if "eval" not in c.out.scripts:
        _eval_from_docs(c)


def _eval_from_docs(c: _Ctx) -> None:
    """No eval script by name: the script the docs run with trained weights on the lite data
    (`python predict.py --model_ckpt x.pdparams --data_path ./SIDD_patches/val_mini/` computes PSNR on it)."""
    lite, root = c.scan.lite, c.scan.root
    if lite is None or lite.dir is None:
        return
    taken = {c.script(role) for role in ("train", "export", "infer")}
    for command in c.commands:
        script = command.script
        if script in taken or not script.endswith(".py") or not (root / script).is_file():
            continue
        weights = any(value and value.endswith(".pdparams") for _, value in command.options())
        if not weights or not mentions(command, lite.dir):
            continue
        c.out.scripts["eval"] = script
        c.out.flags["eval"] = read_flags(root / script, root)
        c.note(
            f"eval: {script}, which the repo runs with trained weights on the lite data ({command.where}) "
            f"({len(c.out.flags['eval'].flags)} argparse flags read statically)"
        )
        return


def _eval_from_train_docs(c: _Ctx) -> None:
    """No eval script: the docs may evaluate with the training script and a switch (`--test-only`) or a
    mode value (`--mode eval`)."""
    train_script, train = c.script("train"), c.flags("train")
    if train_script is None or train is None:
        return
    by_option = {o: f for f in train.flags for o in f.options}
    for command in commands_for(c.commands, train_script):
        for opt, value in command.options():
            flag = by_option.get(opt)
            if flag is None:
                continue
            if flag.is_switch and value is None and set(flag.names) & _EVAL_SWITCHES:
                hit = opt
            elif not flag.is_switch and value in _EVAL_SWITCHES and flag.default != value:
                hit = f"{opt}={value}"
            else:
                continue
            c.out.scripts["eval"] = train_script
            c.out.flags["eval"] = train
            c.eval_switch, c.mode_flag = hit, flag
            c.note(f"eval: {train_script} {hit}, as the repo evaluates ({command.where})")
            return


def _doc_data_folders(c: _Ctx) -> list[tuple[str, str, str, int]]:
    """(folder, option, where, file count) for every repo folder the docs pass to a script's data flag."""
    root = c.scan.root.resolve()
    found: dict[str, tuple[str, str, str, int]] = {}
    for role in ("train", "eval", "infer", "predict"):
        script, flags = c.script(role), c.flags(role)
        if script is None or flags is None:
            continue
        data_options = {o for f in flags.flags if set(f.names) & set(SYNONYMS["data"]) for o in f.options}
        for command in commands_for(c.commands, script):
            for opt, value in command.options():
                folder = (root / value).resolve() if opt in data_options and value else None
                if folder is None or not folder.is_dir() or root not in folder.parents:
                    continue
                rel = folder.relative_to(root).as_posix()
                if rel.split("/")[0] != "test_tipc" and rel not in found:
                    count = sum(1 for p in folder.rglob("*") if p.is_file())
                    found[rel] = (rel, opt, command.where, count)
    return list(found.values())


# A folder with more files than this is a data set, not the few samples a lite run needs.
LITE_MAX_FILES = 64


def _lite_from_docs(c: _Ctx) -> LiteData | None:
    """No folder or archive named like lite data: a small folder of the repo the docs pass to a data flag
    (`python main.py --data_dir sample_data`), the sample data a repo ships for trying it out."""
    root = c.scan.root.resolve()
    folders = _doc_data_folders(c)
    for rel, opt, where, count in folders:
        if count <= LITE_MAX_FILES:
            c.note(f"lite data: {rel}/ ({count} files), which the repo passes to {opt} ({where})")
            files = [p.relative_to(root).as_posix() for p in (root / rel).rglob("*") if p.is_file()]
            return LiteData(
                rel,
                None,
                images=images_under(root / rel, root),
                train_samples=train_samples(files),
                files=tuple(sorted(files)),
                origin=f"{rel}/ (passed to {opt} at {where})",
            )
    slot = "train_param1" if c.dialect == "template" else "data_path"
    seen = [f"{rel}/ ({count} files, {opt} at {where})" for rel, opt, where, count in folders]
    c.todo(
        slot,
        "no lite data found (lite_data/ or lite_data.tar, 8-16 samples per split); add it and set the data "
        "flag here",
        seen,
    )
    return None


_EVAL_SWITCHES = frozenset({"test_only", "eval_only", "eval", "evaluate", "test", "validate", "val_only"})


def _fill_fixed(c: _Ctx) -> None:
    s = c.s
    s["model_name"] = ("model_name", c.out.model)
    s["python"] = ("python", "python")
    s["gpu_list"] = ("gpu_list", "-1")
    s["autocast"] = ("null", "null")
    s["trainer"] = ("trainer", "norm_train")
    for name in (
        "pact_train",
        "fpgm_train",
        "distill_train",
        "quant_export",
        "fpgm_export",
        "distill_export",
    ):
        s[name] = (name, "null")
    s["trainer_key1"] = s["trainer_key2"] = ("null", "null")
    s["export1"] = ("export1", "null")
    s["export2"] = ("export2", "null")
    s["inference_dir"] = ("inference_dir", "null")
    s["infer_quant"] = ("infer_quant", "False")
    s["infer_param1"] = ("null", "null")


def _fill_train_script(c: _Ctx) -> None:
    train_script, train = c.script("train"), c.flags("train")
    if train_script is None or train is None:
        c.todo("norm_train", "no training script found (looked for train.py, tools/train.py, ...)")
        c.s["norm_train"] = ("norm_train", "null")
        return
    subs = [f.subcommand for f in train.flags if f.subcommand]
    sub = "train" if "train" in subs else (subs[0] if subs else None)
    c.s["norm_train"] = ("norm_train", train_script + (f" {sub}" if sub else ""))


def _fill_train_device(c: _Ctx) -> None:
    """use_gpu: eval receives the same parameter, so prefer a flag both scripts accept."""
    flag = c.use("train", c.find("train", "use_gpu"))
    if flag is None:
        c.s["train_use_gpu"] = ("null", "null")
        c.note("train use_gpu: the training script has no device flag; it runs on its default device")
        return
    if _bool_problem(flag) and not _is_device_flag(flag):
        c.s["train_use_gpu"] = ("null", "null")
        c.note(f"train use_gpu: {flag.flag} is not passed ({_bool_problem(flag)}); default device used")
        return
    evals, eval_script = c.flags("eval"), c.script("eval")
    if evals is not None and eval_script and evals is not c.flags("train"):
        same = next((f for f in evals.flags if flag.flag in f.options), None)
        if same is None:
            c.todo("train_use_gpu", f"{eval_script} has no {flag.flag}, but eval receives it too")
        c.use("eval", same)
    c.s["train_use_gpu"] = (flag.flag, "cpu" if _is_device_flag(flag) else "False")
    c.note(f"train use_gpu: {flag.flag} from {_where(flag)}")


def _doc_value(c: _Ctx, role: str, flag: Flag) -> tuple[int, str] | None:
    """The integer the repo's lite command line passes to `flag`, with where it was seen."""
    command = c.lite_command(role)
    if command is None:
        return None
    for opt, value in command.options():
        if opt in flag.options and value is not None and value.isdigit() and int(value) > 0:
            return int(value), command.where
    return None


def _mode_keyed(c: _Ctx, flag: Flag, cap: int, fallback: int, doc_cap: int | None = None) -> tuple[str, str]:
    """The mode-keyed value: the repo's own lite value (up to `doc_cap`), else the default up to `cap`."""
    default = _int_default(flag)
    seen = _doc_value(c, "train", flag)
    lite = min(seen[0], doc_cap or cap) if seen else (min(default, cap) if default else fallback)
    whole = f"|whole_train_whole_infer={default}" if default else ""
    origin = f"; lite value from {seen[1]}" if seen else ""
    return f"lite_train_lite_infer={lite}|lite_train_whole_infer={lite}{whole}", origin


# A lite run: a few epochs, or as many iterations as a handful of batches takes.
LITE_EPOCHS = 5
LITE_ITERS = 10


def _fill_epoch(c: _Ctx) -> None:
    flag = c.use("train", c.find("train", "epoch"))
    cap, unit = LITE_EPOCHS, "epochs"
    if flag is None:
        flag = c.use("train", c.find("train", "iters"))
        cap, unit = LITE_ITERS, "iterations"
    if flag is None:
        c.s["epoch"] = ("null", "null")
        if c.flags("train") is not None:
            c.todo(
                "epoch",
                "no epochs or iterations flag found in the training script; lite runs use its default length",
            )
        return
    value, origin = _mode_keyed(c, flag, cap, 2 if unit == "epochs" else cap)
    c.s["epoch"] = (flag.flag, value)
    c.note(f"epoch: {flag.flag} ({unit}) from {_where(flag)} (script default {flag.default}){origin}")


def _fill_batch(c: _Ctx) -> None:
    flag = c.use("train", c.find("train", "batch"))
    if flag is None:
        c.s["train_batch"] = ("null", "null")
        return
    # Lite data holds a handful of samples: a batch of a quarter of them keeps every epoch a few steps long.
    samples = c.scan.lite.train_samples if c.scan.lite else None
    cap = max(1, min(LITE_BATCH, samples // 4)) if samples else LITE_BATCH
    value, origin = _mode_keyed(c, flag, cap, cap, LITE_BATCH)
    if samples and not origin:
        origin = f"; lite batch sized to {samples} lite training samples"
    c.s["train_batch"] = (flag.flag, value)
    c.note(f"train batch: {flag.flag} from {_where(flag)} (script default {flag.default}){origin}")


LITE_BATCH = 16


def _path_candidates(script: ScriptFlags | None) -> list[str]:
    words = ("dir", "path", "output", "save", "log", "model", "ckpt", "checkpoint", "weight")
    if script is None:
        return []
    return [f"{f.flag} ({_where(f)})" for f in script.flags if f.options and any(w in f.dest for w in words)]


def _fill_save_model(c: _Ctx) -> None:
    """Where train writes its weights: the argument its `paddle.save` targets are built from."""
    ref = next((r for r in c.refs("train", "save") if r.style == "dir"), None)
    flag = c.by_dest("train", ref.dest) if ref else None
    train_script = c.script("train") or ""
    if flag is not None and ref is not None:
        what = ref.name or "its .pdparams file"
        c.note(
            f"save model dir: {flag.flag} ({_where(flag)}): train writes {what} under it "
            f"(paddle.save at {ref.where(train_script)})"
        )
    else:
        flag = c.find("train", "save_model")
        if flag is not None:
            c.note(
                f"save model dir: {flag.flag} from {_where(flag)} (by its name; no paddle.save target read)"
            )
    c.use("train", flag)
    if flag is None:
        c.s["save_model"] = ("null", "null")
        train = c.flags("train")
        dests = {f.dest for f in train.flags if f.options} if train else set()
        if train is not None and not literal_save_paths(c.scan.root / train_script, dests):
            c.todo(
                "save_model",
                "no output-dir flag found: eval and export cannot find the trained weights",
                _path_candidates(c.flags("train")),
            )
        return
    c.s["save_model"] = (flag.flag, "./output/")
    c.train_saves = ref.name if ref else None
    c.pinned = _pinned_save_folder(c, flag)


def _pinned_save_folder(c: _Ctx, flag: Flag) -> str | None:
    """Where later stages use train's *default* save folder by a literal path: that folder, with its evidence.

    Then moving train's output elsewhere breaks the chain (eval writes `logs/<kind>/...` whatever it is
    given), so train, eval and export keep their defaults, which already meet in that folder.
    """
    default = flag.default if isinstance(flag.default, str) else None
    if not default:
        return None
    seen = []
    for role in ("eval", "export", "infer"):
        script = c.script(role)
        if script is None or (role == "eval" and c.flags("eval") is c.flags("train")):
            continue
        seen += [f"{script}:{line}" for line in literal_paths_under(c.scan.root / script, default)]
    if not seen:
        return None
    c.s["save_model"] = ("null", "null")
    c.note(
        f"save model dir: {flag.flag} keeps its default {default!r}: later stages use that folder by a "
        f"literal path ({', '.join(seen[:4])}), so train, eval and export are left on their defaults"
    )
    return default


def _load_flag(c: _Ctx, role: str) -> tuple[Flag | None, WeightRef | None]:
    """The flag `role` reads the trained weights from, by its `paddle.load` target."""
    for ref in c.refs(role, "load"):
        flag = c.by_dest(role, ref.dest)
        if flag is not None and not flag.is_switch:
            return flag, ref
    return None, None


def _fill_weights(c: _Ctx) -> None:
    """pretrain (eval's weights key), export_weight and train_model_name, from the load targets."""
    if c.pinned is not None:
        _weights_on_defaults(c, c.pinned)
        return
    if c.s["save_model"][0] == "null" and c.flags("train") is not None:
        # The scripts would hand eval and export `<save_log>/<train_model_name>`, a folder train never
        # wrote to (its save folder is not passed): give them where train does write, or nothing.
        _weights_without_save_folder(c)
        return
    eval_flag, eval_ref = _load_flag(c, "eval")
    export_flag, export_ref = _load_flag(c, "export")
    styles = {r.style for r in (eval_ref, export_ref) if r is not None}
    if eval_flag is not None and eval_ref is not None:
        c.use("eval", eval_flag)
        c.s["pretrain"] = (eval_flag.flag, "null")
        where = eval_ref.where(c.script("eval") or "")
        c.note(f"pretrain: {eval_flag.flag}: eval loads its weights from it ({where})")
    else:
        _pretrain_by_name(c)
    c.export_flag, c.export_ref = export_flag, export_ref
    if "dir" in styles:
        _train_model_name_dir(c, styles)
    else:
        _train_model_name_file(c)


def _weights_on_defaults(c: _Ctx, folder: str) -> None:
    """Eval and export read from their own defaults; say so, or list the ones that do not meet `folder`."""
    c.s["pretrain"] = ("null", "null")
    c.s["train_model_name"] = ("train_model_name", c.train_saves or "")
    for role in ("eval", "export"):
        flag = _load_flag(c, role)[0]
        if flag is None or c.flags(role) is c.flags("train"):
            continue
        c.use(role, flag)
        if _same_path(folder, flag.default):
            c.note(
                f"{role} weights: {flag.flag} defaults to {flag.default!r}, where train writes "
                f"({_where(flag)})"
            )
        else:
            slot = "pretrain" if role == "eval" else "export_weight"
            c.todo(
                slot,
                f"{flag.flag} defaults to {flag.default!r}, not train's {folder!r}: set {flag.flag}={folder}",
            )
    c.export_flag, c.export_ref = None, None
    c.export_on_default = True


def _weights_flag(c: _Ctx, role: str) -> Flag | None:
    """The flag `role` reads its weights from: its `paddle.load` target, else a weights flag by name."""
    flag = _load_flag(c, role)[0]
    if flag is None and c.flags(role) is not None:
        found = c.find(role, "weights")
        flag = found if found is not None and not found.is_switch else None
    return flag


def _weights_without_save_folder(c: _Ctx) -> None:
    """Train gets no save-folder argument: eval and export read the constant path train saves to."""
    c.s["pretrain"] = ("null", "null")
    c.export_flag, c.export_ref = None, None
    c.export_on_default = True
    train_script = c.script("train") or ""
    train = c.flags("train")
    dests = {f.dest for f in train.flags if f.options} if train else set()
    literal = literal_save_paths(c.scan.root / train_script, dests)
    if not literal:
        names = saved_checkpoint_names(c.scan.root / train_script)
        c.s["train_model_name"] = ("train_model_name", names[0] if names else "")
        c.todo(
            "pretrain",
            f"could not tell where {train_script} writes its weights (no output-dir flag, no constant path "
            "in its paddle.save calls): eval and export are given no weights; set the save-dir key on line "
            f"{'7' if c.dialect == 'compact' else '8'} and train_model_name",
        )
        return
    path, line = literal[0]
    c.s["train_model_name"] = ("train_model_name", posixpath.basename(path))
    c.note(
        f"weights: {train_script} saves {path} whatever it is given ({train_script}:{line}); "
        "eval and export read that file"
    )
    for role in ("eval", "export"):
        flag = _weights_flag(c, role)
        script = c.script(role)
        if flag is None or script is None or c.flags(role) is c.flags("train"):
            if script is not None and c.flags(role) is not c.flags("train"):
                slot = "pretrain" if role == "eval" else "export_weight"
                c.todo(slot, f"{script}: no weights flag found to pass {path} to")
            continue
        c.use(role, flag)
        if _same_path(path, flag.default):
            c.note(f"{role} weights: {flag.flag} defaults to {flag.default!r}, where train writes")
        else:
            c.fixed_args.setdefault(role, []).append(f"{flag.flag}={_rel(path)}")
            c.note(f"{role} weights: {flag.flag}={_rel(path)} ({_where(flag)})")


def _train_model_name_dir(c: _Ctx, styles: set[str]) -> None:
    """Eval/export join the file name onto a folder themselves: pass them train's folder, no file name."""
    c.s["train_model_name"] = ("train_model_name", "")
    c.note("train_model_name: left empty: eval/export are given train's save folder and find the file in it")
    if len(styles) > 1:
        c.todo(
            "train_model_name",
            "eval and export read the weights differently (one a folder, one a file); set the file name "
            "under the save folder and the matching keys on lines 10 and 29",
        )


def _train_model_name_file(c: _Ctx) -> None:
    saved = c.train_saves
    train_script = c.script("train")
    names = (
        (saved,) if saved else (saved_checkpoint_names(c.scan.root / train_script) if train_script else ())
    )
    if names:
        c.s["train_model_name"] = ("train_model_name", names[0])
        c.note(f"train_model_name: {names[0]} (saved by {train_script})")
        return
    c.s["train_model_name"] = ("train_model_name", "latest.pdparams")
    if c.flags("train") is not None:
        c.todo(
            "train_model_name",
            "could not tell which .pdparams file training saves; set the file name under the output dir",
        )


def _pretrain_by_name(c: _Ctx) -> None:
    """No load target read: a weights flag by name, shared by train and eval where possible."""
    train, evals = c.flags("train"), c.flags("eval")

    def preference(f: Flag) -> int:
        return min(SYNONYMS["weights"].index(n) for n in f.names if n in SYNONYMS["weights"])

    # A switch (`--no-pretrained`) takes no path: it cannot carry the weights.
    train_weights = sorted(
        (
            f
            for f in (train.flags if train else ())
            if set(f.names) & set(SYNONYMS["weights"]) and not f.is_switch
        ),
        key=preference,
    )
    eval_by_option = {o: f for f in (evals.flags if evals else ()) for o in f.options}
    shared = [f for f in train_weights if f.flag in eval_by_option]
    flag = c.use("train", shared[0] if shared else (train_weights[0] if train_weights else None))
    eval_weight = c.find("eval", "weights")
    if flag is not None:
        c.s["pretrain"] = (flag.flag, "null")
        c.note(f"pretrain: {flag.flag} from {_where(flag)}; eval gets the trained weights through it")
        if flag.flag in eval_by_option:
            c.use("eval", eval_by_option[flag.flag])
        elif evals is not None:
            c.todo(
                "pretrain",
                f"eval receives the weights as {flag.flag}=..., which {evals.path} does not define",
            )
    elif eval_weight is not None:
        c.use("eval", eval_weight)
        c.s["pretrain"] = (eval_weight.flag, "null")
        c.note(f"pretrain: {eval_weight.flag} from {_where(eval_weight)} (eval's weights flag)")
    else:
        c.s["pretrain"] = ("null", "null")
        if evals is not None:
            c.todo(
                "pretrain",
                "no weights flag found: eval cannot receive the trained weights",
                _path_candidates(evals),
            )


# Split names in folder and flag names: `train_mini` is the training split, `--val_dir` the validation one.
_SPLITS: dict[str, frozenset[str]] = {
    "train": frozenset({"train", "training", "trainset"}),
    "val": frozenset({"val", "valid", "validation", "eval", "dev", "valset"}),
    "test": frozenset({"test", "testing", "testset"}),
}
# A flag naming data the script reads (`--val_dir`, `--dataset_root`); not a model, output or log path.
_DATA_NAME = re.compile(r"data|dataset|train|val|eval|test|image|img")
_PATH_END = re.compile(r"(?:^|_)(?:dir|path|root|folder)$")
_NOT_DATA = re.compile(r"model|output|save|log|weight|pretrain|checkpoint|ckpt|infer|export|result")


def _split_of(name: str) -> str | None:
    tokens = {t for t in re.split(r"[^a-z]+", name.lower()) if t}
    return next((split for split, words in _SPLITS.items() if tokens & words), None)


def _lite_splits(c: _Ctx) -> dict[str, str]:
    """split -> repo-relative folder of the lite data's split folders (`SIDD_patches/train_mini`)."""
    lite = c.scan.lite
    if lite is None or lite.dir is None:
        return {}
    prefix = lite.dir.rstrip("/") + "/"
    out: dict[str, str] = {}
    for f in lite.files:
        rest = f[len(prefix) :] if f.startswith(prefix) else ""
        if "/" not in rest:
            continue
        child = rest.split("/", 1)[0]
        split = _split_of(child)
        if split is not None:
            out.setdefault(split, prefix + child)
    return out


def _is_data_flag(flag: Flag) -> bool:
    name = flag.dest.lower()
    return bool(_DATA_NAME.search(name) and _PATH_END.search(name) and not _NOT_DATA.search(name))


def _lite_value(c: _Ctx, flag: Flag) -> str | None:
    """What `flag` is given on the lite data: the lite split folder standing for the folder its default
    names (`SIDD_patches/train/` -> `SIDD_patches/train_mini`) or its name names (`--val_dir`), else the lite
    data folder itself (a data root the script splits)."""
    lite_dir = c.lite_dir
    if lite_dir is None:
        return None
    splits = _lite_splits(c)
    default = flag.default if isinstance(flag.default, str) and flag.default.strip() else None
    if default is not None:
        base = posixpath.basename(posixpath.normpath(default))
        split = _split_of(base) if not posixpath.splitext(base)[1] else None
        if split in splits:
            return splits[str(split)]
    split = _split_of(flag.dest)
    if split in splits and split != "train":
        return splits[str(split)]
    return lite_dir


def _data_arg(c: _Ctx, role: str) -> tuple[str, str] | None:
    """The lite data for `role`'s data flag, unless the script's default already points there."""
    flag = c.find(role, "data")
    value = _lite_value(c, flag) if flag is not None else None
    if flag is None or value is None:
        return None  # a required data flag nobody passes is reported with the other required flags
    c.use(role, flag)
    if _same_path(value, flag.default):
        c.note(f"{role} data: {flag.flag} already defaults to {flag.default}")
        return None
    c.note(f"{role} data: {flag.flag}={_rel(value)} ({_where(flag)}; lite data {_lite_origin(c)})")
    return (flag.flag, _rel(value))


def _more_data_args(c: _Ctx, role: str) -> list[str]:
    """The other data flags of `role`'s script pointed into the lite data (`--val_dir` by `--data_dir`)."""
    script = c.flags(role)
    if script is None or c.lite_dir is None:
        return []
    main = c.find(role, "data")
    out: list[str] = []
    for flag in script.flags:
        if flag is main or not flag.options or flag.is_switch or not _is_data_flag(flag):
            continue
        if id(flag) in c.used.get(role, set()):
            continue
        value = _lite_value(c, flag)
        if value is None or (value == c.lite_dir and _split_of(flag.dest) not in (None, "train")):
            continue  # a validation flag with no validation split in the lite data: leave its default
        unset = not isinstance(flag.default, str) or not flag.default.strip()
        if unset and not flag.required:
            continue  # an optional path left unset (`--test_dir None`) stays unset
        c.use(role, flag)
        if _same_path(value, flag.default):
            continue
        out.append(f"{flag.flag}={_rel(value)}")
        c.note(f"{role} data: {flag.flag}={_rel(value)} ({_where(flag)}; lite data {_lite_origin(c)})")
    return out


def _lite_origin(c: _Ctx) -> str:
    lite = c.scan.lite
    if lite is None:
        return ""
    return (
        f"extracted from {lite.archive}"
        if lite.archive and not (c.scan.root / (lite.dir or "")).is_dir()
        else f"{lite.dir}/"
    )


def _fill_data(c: _Ctx) -> None:
    train_data = _data_arg(c, "train")
    eval_data = _data_arg(c, "eval") if c.flags("eval") is not c.flags("train") else train_data
    c.eval_data = eval_data
    more = _more_data_args(c, "train")
    if more and c.s["norm_train"][1] != "null":
        c.s["norm_train"] = ("norm_train", " ".join([c.s["norm_train"][1], *more]))
    if c.flags("eval") is not c.flags("train"):
        c.fixed_args.setdefault("eval", []).extend(_more_data_args(c, "eval"))
    if c.dialect == "template":
        c.s["train_param1"] = train_data or ("null", "null")
        c.s["eval_param1"] = eval_data or ("null", "null")
        return
    c.s["data_path"] = train_data or ("null", "null")
    if train_data and c.s["norm_train"][1] != "null":
        c.s["norm_train"] = ("norm_train", f"{c.s['norm_train'][1]} {train_data[0]}={train_data[1]}")


def _fill_eval(c: _Ctx) -> None:
    eval_script = c.script("eval")
    if eval_script is None:
        c.s["eval"] = ("eval", "null")
        c.note("eval: no eval script found; the eval stage is skipped (eval:null)")
        return
    value = eval_script
    switch = c.eval_switch
    if switch:
        value += f" {switch}"
    eval_data = c.eval_data
    if c.dialect == "compact" and eval_data:
        value += f" {eval_data[0]}={eval_data[1]}"
    for arg in c.fixed_args.get("eval", []):
        value += f" {arg}"
    c.s["eval"] = ("eval", value)


def _compact_device_args(c: _Ctx) -> None:
    """The compact script never passes line 5 to train or eval: the device flag goes into their values."""
    key, value = c.s["train_use_gpu"]
    if c.dialect != "compact" or key == "null":
        return
    for role, slot in (("train", "norm_train"), ("eval", "eval")):
        script = c.flags(role)
        current = c.s[slot][1]
        if current == "null" or script is None or not any(key in f.options for f in script.flags):
            continue
        c.s[slot] = (slot, f"{current} {key}={value.split('|')[0]}")
        c.note(f"{slot}: {key}={value.split('|')[0]} (the compact layout passes no device slot to {role})")


def choose_dialect(scan: RepoScan) -> tuple[str, str]:
    """The layout whose slots the repo's scripts accept, and why.

    The 51-line template passes its MKLDNN slot as a raw `key=value`: for an inference script without such a
    flag that would be a token it rejects, so the 32-line compact layout (no MKLDNN slot) is used.
    """
    infer = scan.scripts.get("infer")
    if infer is None:
        return "template", "no inference script found"
    flags = read_flags(scan.root / infer, scan.root)
    if flags.find(SYNONYMS["mkldnn"]) is None and not flags.error:
        return "compact", f"{infer} has no MKLDNN flag, which the 51-line layout always passes"
    return "template", f"{infer} takes an MKLDNN flag"


def _fill_export(c: _Ctx) -> None:
    export_script, export = c.script("export"), c.flags("export")
    infer_dir = f"./test_tipc/output/{c.out.model}/whole_infer/inference/"
    if export_script is None or export is None:
        c.s["norm_export"] = ("norm_export", "null")
        c.s["save_inference"] = ("null", "null")
        c.s["export_weight"] = ("null", "null")
        c.todo(
            "norm_export",
            "no export script found (export_model.py, tools/export_model.py): "
            "without export, train modes run no inference",
        )
        return
    c.s["norm_export"] = ("norm_export", " ".join([export_script, *c.fixed_args.get("export", [])]))
    flag = c.use("export", c.find("export", "save_inference"))
    if flag is None:
        c.s["save_inference"] = ("null", "null")
        c.todo(
            "save_inference",
            f"{export_script}: no output-dir flag found for the exported model",
            _path_candidates(export),
        )
    else:
        c.s["save_inference"] = (flag.flag, infer_dir if c.dialect == "compact" else "./output/")
        c.note(f"export save dir: {flag.flag} from {_where(flag)}")
    _fill_export_weight(c, export_script)


def _fill_export_weight(c: _Ctx, export_script: str) -> None:
    if c.export_on_default:
        c.s["export_weight"] = ("null", "null")
        return
    flag, ref = c.export_flag, c.export_ref
    if flag is not None and ref is not None:
        c.note(f"export weights: {flag.flag}: export loads its weights from it ({ref.where(export_script)})")
    else:
        flag = c.find("export", "weights")
        if flag is not None:
            c.note(f"export weights: {flag.flag} from {_where(flag)} (by its name)")
    c.use("export", flag)
    if flag is None:
        c.s["export_weight"] = ("null", "null")
        c.todo(
            "export_weight",
            f"{export_script}: no weights flag found (e.g. --pretrained)",
            _path_candidates(c.flags("export")),
        )
    else:
        c.s["export_weight"] = (flag.flag, "")


def _fill_inference(c: _Ctx) -> None:
    infer_script, infer = c.script("infer"), c.flags("infer")
    if infer_script is None or infer is None:
        c.s["inference"] = ("inference", "null")
        c.todo("inference", "no Paddle Inference script found (infer.py, deploy/python/infer.py, ...)")
    else:
        c.s["inference"] = ("inference", infer_script)
    _bool_slot(c, "infer_use_gpu", "use_gpu", "False", raw=True)
    if c.dialect == "template":
        _bool_slot(c, "mkldnn", "mkldnn", "False", raw=True)
        _bool_slot(c, "tensorrt", "trt", "False", raw=False)
        _fill_choice(c, "cpu_threads", "threads", "1")
        _fill_choice(c, "precision", "precision", "fp32")
        flag = c.use("infer", c.find("infer", "save_log"))
        c.s["save_log"] = (flag.flag, "null") if flag else ("null", "null")
    _bool_slot(c, "benchmark", "benchmark", "False", raw=False)
    flag = c.use("infer", c.find("infer", "batch"))
    c.s["infer_batch"] = (flag.flag, "1") if flag else ("null", "null")
    _fill_model_dir(c)


def _bool_slot(c: _Ctx, slot: str, role: str, value: str, *, raw: bool) -> None:
    flag = c.use("infer", c.find("infer", role))
    if flag is None:
        c.s[slot] = ("null", "null")
        if raw and c.flags("infer") is not None:
            _raw_without_flag(c, slot, role, value)
        return
    problem = _bool_problem(flag) if not _is_device_flag(flag) else None
    if problem and not raw:
        c.s[slot] = ("null", "null")
        c.note(f"{slot}: {flag.flag} left out ({problem})")
        return
    if problem:
        c.todo(slot, problem)
    c.s[slot] = (flag.flag, "cpu" if _is_device_flag(flag) else value)
    c.note(f"{slot}: {flag.flag} from {_where(flag)}")


def _raw_without_flag(c: _Ctx, slot: str, role: str, value: str) -> None:
    """A slot the script always passes as `key=value`, for a flag the inference script lacks: `null=null`
    would be an argument the script rejects (`tipc init` without --dialect picks the compact layout then)."""
    c.todo(
        slot,
        f"{c.script('infer')} has no {SYNONYMS[role][0]} flag; this slot is always passed as "
        f"`key={value}`, so add --{SYNONYMS[role][0]} (or scaffold with --dialect compact, which has no "
        "such slot)",
    )


def _fill_choice(c: _Ctx, slot: str, role: str, value: str) -> None:
    flag = c.use("infer", c.find("infer", role))
    if flag is None:
        c.s[slot] = ("null", "null")
        return
    choices = [str(x) for x in flag.choices or ()]
    if choices and value not in choices:
        # e.g. PaddleDetection's --run_mode (paddle|trt_fp32|...) stands in for precision.
        value = "paddle" if "paddle" in choices else choices[0]
        c.note(f"{slot}: {flag.flag} takes {'|'.join(choices)}; using {value}")
    c.s[slot] = (flag.flag, value)
    c.note(f"{slot}: {flag.flag} from {_where(flag)}")


def _model_dir_flag(c: _Ctx) -> Flag | None:
    """The flag the inference script joins `inference.pdmodel` onto, else a model-dir flag by name."""
    script, flags = c.script("infer"), c.flags("infer")
    if script is None or flags is None:
        return None
    for ref in model_dir_refs(c.scan.root / script, {f.dest for f in flags.flags if f.options}):
        flag = c.by_dest("infer", ref.dest)
        if flag is not None and not flag.is_switch:
            c.note(
                f"model dir: {flag.flag}: the inference script opens the model under it ({script}:{ref.line})"
            )
            return flag
    flag = c.find("infer", "model_dir")
    if flag is not None and _file_style(flag):
        return None
    if flag is not None:
        c.note(f"model dir: {flag.flag} from {_where(flag)}")
    return flag


_MODEL_FILE_NAMES = frozenset({"model_file", "model_filename", "prog_file", "program_file", "pdmodel"})
_PARAMS_FILE_NAMES = frozenset({"params_file", "params_filename", "param_file", "pdiparams"})


def _file_style(flag: Flag) -> bool:
    return bool(set(flag.names) & _MODEL_FILE_NAMES)


def _fill_model_dir(c: _Ctx) -> None:
    flag = c.use("infer", _model_dir_flag(c))
    infer = c.flags("infer")
    file_names = _MODEL_FILE_NAMES | _PARAMS_FILE_NAMES
    files = [f for f in infer.flags if set(f.names) & file_names] if infer is not None else []
    if flag is None and files:
        c.s["model_dir"] = ("null", "null")
        for f in files:
            c.use("infer", f)
        c.todo(
            "model_dir",
            f"{c.script('infer')} takes the exported model as files ({', '.join(f.flag for f in files)}), "
            "while the config's model-dir slot hands it the export folder: give the script a folder "
            "flag (e.g. --model_dir that it joins model.pdmodel/model.pdiparams onto); until then "
            "inference cannot run",
        )
        return
    if flag is None:
        c.s["model_dir"] = ("null", "null")
        if c.flags("infer") is not None:
            c.todo(
                "model_dir",
                f"{c.script('infer')}: no model-dir flag found (--model_dir); inference cannot "
                "be pointed at the exported model",
                _path_candidates(c.flags("infer")),
            )
        return
    infer_dir = f"./test_tipc/output/{c.out.model}/whole_infer/inference/"
    c.s["model_dir"] = (flag.flag, infer_dir if c.dialect == "compact" else "")


def _fill_image(c: _Ctx) -> None:
    """The script's own default when it lies in the lite data, else a lite image, else its default."""
    flag = c.use("infer", c.find("infer", "image"))
    value = "null"
    if flag is not None:
        value = _image_value(c, flag)
        c.s["image"] = (flag.flag, value)
    else:
        c.s["image"] = ("null", "null")
        if c.flags("infer") is not None:
            c.note("image: the inference script has no image flag; it uses its own input")
    if c.dialect == "template":
        c.s["train_infer_img_dir"] = ("train_infer_img_dir", value)


def _image_value(c: _Ctx, flag: Flag) -> str:
    root, lite, lite_dir = c.scan.root, c.scan.lite, c.lite_dir
    wants_dir = "dir" in flag.flag or flag.flag.endswith("imgs")
    images = lite.images if lite else ()
    default = flag.default if isinstance(flag.default, str) and flag.default.strip() else None
    in_lite = lite_dir is not None and default is not None and (root / default).exists()
    if in_lite and posixpath.normpath(str(default)).startswith(posixpath.normpath(str(lite_dir)) + "/"):
        c.note(f"image: {flag.flag}={_rel(str(default))} (the script's default, inside the lite data)")
        return _rel(str(default))
    arrays = lite.input_arrays if lite else ()
    if arrays and not re.search(r"im(?:age|g)", flag.dest.lower()):
        # `--input_file` beside a saved input array (`test_tipc/data/example.npy`): the preprocessed input.
        c.note(f"image: {flag.flag}={_rel(arrays[0])} (an input array of the lite data)")
        return _rel(arrays[0])
    if images:
        value = _rel(posixpath.dirname(images[0]) + "/") if wants_dir else _rel(images[0])
        c.note(f"image: {flag.flag}={value} (from the lite data)")
        return value
    if default is not None and (root / default).exists():
        c.note(f"image: {flag.flag}={_rel(default)} (the script's default, present in the repo)")
        return _rel(default)
    if flag.default is not None or not flag.required:
        c.todo(
            "image",
            f"no image found under the lite data; inference uses {flag.flag}'s default ({flag.default!r})",
        )
    else:
        c.todo("image", f"no image found for {flag.flag}; put a few under the lite data")
    return "null"


def _fill_whole_infer(c: _Ctx) -> None:
    """whole_infer: pretrained weights exported with the export script."""
    key = "infer_model" if c.dialect == "template" else "train_model"
    weights, export_script = c.scan.weights, c.script("export")
    if weights and export_script:
        c.s["infer_model"] = (key, _rel(weights[0]))
        c.s["infer_export"] = ("infer_export", export_script)
        c.note(f"whole_infer weights: {weights[0]}")
        return
    c.s["infer_model"] = (key, "null")
    c.s["infer_export"] = ("infer_export", "null")
    c.todo(
        "infer_model",
        "no pretrained *.pdparams found (pretrained/, weights/, ...): whole_infer has "
        "nothing to run until you set infer_model and infer_export",
        _weight_candidates(c),
    )


def _weight_candidates(c: _Ctx) -> list[str]:
    """.pdparams files elsewhere in the repo, and those the docs name (often a download)."""
    root = c.scan.root
    found = [
        p.relative_to(root).as_posix()
        for p in sorted(root.rglob("*.pdparams"))
        if p.is_file() and p.relative_to(root).parts[0] not in ("test_tipc", "output")
    ][:4]
    named: dict[str, str] = {}
    for command in c.commands:
        for _, value in command.options():
            if value and value.endswith(".pdparams"):
                named.setdefault(posixpath.normpath(value), command.where)
    found += [f"{value} ({where})" for value, where in named.items()]
    return found[:6]


def _append_doc_args(c: _Ctx) -> None:
    """Arguments the repo's own lite command lines pass that no slot covers (`--type lite`)."""
    for role, slot in (("train", "norm_train"), ("eval", "eval"), ("infer", "inference")):
        command, script = c.lite_command(role), c.flags(role)
        key, value = c.s.get(slot, (slot, "null"))
        if command is None or script is None or value == "null":
            continue
        extra = _extra_args(c, role, command, script)
        if extra:
            c.s[slot] = (key, f"{value} {' '.join(extra)}")
            c.note(f"{slot}: {' '.join(extra)} as the repo runs it on the lite data ({command.where})")


def _extra_args(c: _Ctx, role: str, command: Command, script: ScriptFlags) -> list[str]:
    by_option = {o: f for f in script.flags for o in f.options}
    # Train and eval share keys (device, weights): a key any slot passes is theirs already. Inference has
    # its own slots, all recorded in `used`.
    covered = {c.s[name][0] for name in c.s if c.s[name][0] != "null"} if role != "infer" else set()
    extra: list[str] = []
    for opt, value in command.options():
        flag = by_option.get(opt)
        if flag is None or flag is c.mode_flag or id(flag) in c.used.get(role, set()):
            continue
        if _WRITES_ONLY.search(flag.dest.lower()):
            continue  # where to save results or pictures: not what the chain checks, and outside its folder
        if flag.flag in covered or opt in covered:
            continue
        if value is None:
            if flag.is_switch:
                extra.append(opt)
            continue
        if flag.is_switch or not value or any(ch.isspace() or ch in ":=" for ch in value):
            continue
        c.use(role, flag)
        extra.append(f"{opt}={value}")
    return extra


# Flags that only say what to write where (`--save_path results/`, `--save_images`, `--vis_dir`).
_WRITES_ONLY = re.compile(r"^(?:save|output|out|result|vis|visual)(?:_|$)|_(?:save|output|vis)$")


def _required_todos(c: _Ctx) -> None:
    """Anything a script requires that no slot passes."""
    for role, script in c.out.flags.items():
        if role == "predict":
            continue
        for flag in script.flags:
            if flag.required and id(flag) not in c.used.get(role, set()):
                what = f"positional argument {flag.dest}" if flag.positional else f"required flag {flag.flag}"
                c.todo(
                    None,
                    f"{script.path}: {what} ({_where(flag)}) is not passed by any slot; "
                    "add it to the script's value in the config",
                )


def _finish(c: _Ctx) -> None:
    known = slots_of(c.dialect)
    out = c.out
    out.slots = {k: v for k, v in out.slots.items() if k in known}
    # Detected paths end up in a positional line that bash splits on ':' and re-splits on spaces.
    path_slots = {"image", "train_infer_img_dir", "infer_model", "train_param1", "eval_param1", "data_path"}
    for name, (key, value) in out.slots.items():
        spaced = name in path_slots and any(ch.isspace() for ch in value)
        if ":" in key + value or spaced:
            c.todo(name, f"{key}:{value!r} holds ':' or white space, which the TIPC scripts split apart")
            out.slots[name] = (key if ":" not in key else "null", "null")
    # Config order first, repo-wide items last.
    out.todos.sort(key=lambda t: known.get(t.slot, 10_000) if t.slot else 10_000)
    missing = set(known) - set(out.slots)
    if missing:  # a bug in this module, not a user problem
        raise AssertionError(f"unfilled slots: {sorted(missing)}")


def apply_sets(filled: Filled, sets: list[tuple[str, str]]) -> list[str]:
    """Apply `--set slot=value` / `--set slot.key=KEY`; returns error messages for unknown slots."""
    known = slots_of(filled.dialect)
    errors: list[str] = []
    set_names: set[str] = set()
    for name, value in sets:
        slot, _, part = name.partition(".")
        if slot not in known or part not in ("", "key", "value"):
            errors.append(
                f"unknown slot {name!r}; slots: {', '.join(known)} (use SLOT=VALUE or SLOT.key=KEY)"
            )
            continue
        if ":" in value:
            # common_func.sh splits every line on each ':' and keeps only the first value field.
            errors.append(f"--set {name}={value}: a ':' would be cut off by the TIPC scripts' parser")
            continue
        if slot == "model_name" and part != "key":
            check_model_name(value)  # it names test_tipc/output/<model_name>/
        key, old = filled.slots[slot]
        filled.slots[slot] = (value, old) if part == "key" else (key, value)
        set_names.add(slot)
        filled.todos = [t for t in filled.todos if t.slot != slot]
    # A new gpu_list keeps the train use_gpu values aligned with it, item by item (§2.1 line 5).
    if "gpu_list" in set_names and "train_use_gpu" not in set_names:
        key, old = filled.slots["train_use_gpu"]
        if key != "null":
            device_style = old in ("cpu", "gpu")
            items = filled.slots["gpu_list"][1].split("|")
            values = [("cpu" if i == "-1" else "gpu") if device_style else str(i != "-1") for i in items]
            filled.slots["train_use_gpu"] = (key, "|".join(values))
    return errors


def repo_relative(root: Path, path: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()
