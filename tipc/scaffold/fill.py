"""Fill the config slots from what `detect` and `infer_flags` found; list what could not be inferred.

Defaults are CPU-friendly (gpu_list -1, inference on CPU, 1 thread, fp32). Whatever cannot be inferred
becomes a `Todo`; those go to the terminal, the generated README and docs, never into the positional config.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.scaffold.detect import RepoScan, saved_checkpoint_names
from tipc.scaffold.infer_flags import Flag, ScriptFlags, read_flags
from tipc.scaffold.render import check_model_name
from tipc.scaffold.slots import slots_of

if TYPE_CHECKING:
    from tipc.scaffold.serving import ServingFilled

MODE_KEYS = ("lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer")

# Synonyms per role, in preference order, normalised (no dashes, lower case, `-` -> `_`).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "use_gpu": ("use_gpu", "device", "use_cuda"),
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
    "benchmark": ("benchmark", "run_benchmark"),
    "save_log": ("save_log_path",),
}


@dataclass(frozen=True)
class Todo:
    slot: str | None
    message: str

    def format(self, line: int | None = None) -> str:
        where = f"{self.slot} (line {line})" if self.slot and line else (self.slot or "repo")
        return f"{where}: {self.message}"


@dataclass
class Filled:
    dialect: str
    model: str
    slots: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (key, value)
    todos: list[Todo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was inferred, and from where
    scripts: dict[str, str] = field(default_factory=dict)
    flags: dict[str, ScriptFlags] = field(default_factory=dict)
    serving: ServingFilled | None = None  # the serving chain, when the repo ships a serving deployment

    def line(self, name: str) -> str:
        key, value = self.slots[name]
        return f"{key}:{value}"

    def todo(self, slot: str | None, message: str) -> None:
        self.todos.append(Todo(slot, message))


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


def fill(scan: RepoScan, model: str, dialect: str) -> Filled:
    out = Filled(dialect=dialect, model=model, scripts=dict(scan.scripts))
    root = scan.root
    for role, rel in scan.scripts.items():
        out.flags[role] = read_flags(root / rel, root)
        out.notes.append(
            f"{role} script: {rel} ({len(out.flags[role].flags)} argparse flags read statically)"
        )
        if out.flags[role].error:
            out.todo(None, f"{rel}: {out.flags[role].error}")
    train = out.flags.get("train")
    evals = out.flags.get("eval")
    export = out.flags.get("export")
    infer = out.flags.get("infer")
    empty = ScriptFlags("", (), False)

    def find(script: ScriptFlags | None, role: str) -> Flag | None:
        return (script or empty).find(SYNONYMS[role])

    s = out.slots
    s["model_name"] = ("model_name", model)
    s["python"] = ("python", "python")
    s["gpu_list"] = ("gpu_list", "-1")
    s["autocast"] = ("null", "null")
    s["trainer"] = ("trainer", "norm_train")
    for name in ("pact_train", "fpgm_train", "distill_train"):
        s[name] = (name, "null")
    s["trainer_key1"] = s["trainer_key2"] = ("null", "null")
    for name in ("quant_export", "fpgm_export", "distill_export"):
        s[name] = (name, "null")
    s["export1"] = ("export1", "null")
    s["export2"] = ("export2", "null")
    s["inference_dir"] = ("inference_dir", "null")
    s["infer_quant"] = ("infer_quant", "False")
    s["infer_param1"] = ("null", "null")
    lite = scan.lite
    lite_dir = lite.dir if lite else None

    # ---- training -------------------------------------------------------------------------------------
    used: dict[str, set[int]] = {role: set() for role in out.flags}

    def use(role: str, flag: Flag | None) -> Flag | None:
        if flag is not None and role in used:
            used[role].add(id(flag))
        return flag

    train_script = scan.scripts.get("train")
    if train_script is None or train is None:
        out.todo("norm_train", "no training script found (looked for train.py, tools/train.py, ...)")
        s["norm_train"] = ("norm_train", "null")
    else:
        subs = [f.subcommand for f in train.flags if f.subcommand]
        sub = "train" if "train" in subs else (subs[0] if subs else None)
        s["norm_train"] = ("norm_train", train_script + (f" {sub}" if sub else ""))

    # use_gpu: eval receives the same parameter, so prefer a flag both scripts accept.
    flag = use("train", find(train, "use_gpu"))
    if flag is None:
        s["train_use_gpu"] = ("null", "null")
        out.notes.append(
            "train use_gpu: the training script has no device flag; it runs on its default device"
        )
    elif _bool_problem(flag) and not _is_device_flag(flag):
        s["train_use_gpu"] = ("null", "null")
        out.notes.append(
            f"train use_gpu: {flag.flag} is not passed ({_bool_problem(flag)}); default device used"
        )
    else:
        if (
            evals is not None
            and scan.scripts.get("eval")
            and flag.flag not in {o for f in evals.flags for o in f.options}
        ):
            out.todo("train_use_gpu", f"{scan.scripts['eval']} has no {flag.flag}, but eval receives it too")
        elif evals is not None:
            use("eval", next(f for f in evals.flags if flag.flag in f.options))
        s["train_use_gpu"] = (flag.flag, "cpu" if _is_device_flag(flag) else "False")
        out.notes.append(f"train use_gpu: {flag.flag} from {_where(flag)}")

    flag = use("train", find(train, "epoch"))
    if flag is None:
        s["epoch"] = ("null", "null")
        if train is not None:
            out.todo("epoch", "no epochs flag found in the training script; lite runs use its default epochs")
    else:
        default = _int_default(flag)
        lite_epochs = min(default, 5) if default else 2
        whole = f"|whole_train_whole_infer={default}" if default else ""
        s["epoch"] = (
            flag.flag,
            f"lite_train_lite_infer={lite_epochs}|lite_train_whole_infer={lite_epochs}{whole}",
        )
        out.notes.append(f"epoch: {flag.flag} from {_where(flag)} (script default {flag.default})")

    flag = use("train", find(train, "save_model"))
    if flag is None:
        s["save_model"] = ("null", "null")
        if train is not None:
            out.todo(
                "save_model", "no output-dir flag found: eval and export cannot find the trained weights"
            )
    else:
        s["save_model"] = (flag.flag, "./output/")
        out.notes.append(f"save model dir: {flag.flag} from {_where(flag)}")

    flag = use("train", find(train, "batch"))
    if flag is None:
        s["train_batch"] = ("null", "null")
    else:
        default = _int_default(flag)
        lite_bs = min(default, 16) if default else 8
        whole = f"|whole_train_whole_infer={default}" if default else ""
        s["train_batch"] = (
            flag.flag,
            f"lite_train_lite_infer={lite_bs}|lite_train_whole_infer={lite_bs}{whole}",
        )
        out.notes.append(f"train batch: {flag.flag} from {_where(flag)} (script default {flag.default})")

    # pretrain key: eval reuses it to pass the trained weights, so it must be a flag eval accepts too.
    def preference(f: Flag) -> int:
        return min(SYNONYMS["weights"].index(n) for n in f.names if n in SYNONYMS["weights"])

    train_weights = sorted(
        (f for f in (train or empty).flags if set(f.names) & set(SYNONYMS["weights"])), key=preference
    )
    eval_by_option = {o: f for f in (evals or empty).flags for o in f.options}
    shared = [f for f in train_weights if f.flag in eval_by_option]
    flag = use("train", shared[0] if shared else (train_weights[0] if train_weights else None))
    eval_weight = find(evals, "weights")
    if flag is not None:
        s["pretrain"] = (flag.flag, "null")
        out.notes.append(
            f"pretrain: {flag.flag} from {_where(flag)}; eval gets the trained weights through it"
        )
        if flag.flag in eval_by_option:
            use("eval", eval_by_option[flag.flag])
        elif evals is not None:
            out.todo(
                "pretrain",
                f"eval receives the weights as {flag.flag}=..., which {evals.path} does not define",
            )
    elif eval_weight is not None:
        use("eval", eval_weight)
        s["pretrain"] = (eval_weight.flag, "null")
        out.notes.append(f"pretrain: {eval_weight.flag} from {_where(eval_weight)} (eval's weights flag)")
    else:
        s["pretrain"] = ("null", "null")
        if evals is not None:
            out.todo("pretrain", "no weights flag found: eval cannot receive the trained weights")

    names = saved_checkpoint_names(root / train_script) if train_script else ()
    if names:
        s["train_model_name"] = ("train_model_name", names[0])
        out.notes.append(f"train_model_name: {names[0]} (saved by {train_script})")
    else:
        s["train_model_name"] = ("train_model_name", "latest.pdparams")
        if train is not None:
            out.todo(
                "train_model_name",
                "could not tell which .pdparams file training saves; set the file name under the output dir",
            )

    # data dir: pass it only when the script's default does not already point at the lite data.
    def data_arg(script: ScriptFlags | None, role: str) -> tuple[str, str] | None:
        flag = find(script, "data")
        if flag is None or lite_dir is None:
            return None  # a required data flag nobody passes is reported with the other required flags
        use(role, flag)
        if _same_path(lite_dir, flag.default):
            out.notes.append(f"{role} data: {flag.flag} already defaults to {flag.default}")
            return None
        out.notes.append(f"{role} data: {flag.flag}={_rel(lite_dir)}")
        return (flag.flag, _rel(lite_dir))

    train_data = data_arg(train, "train")
    eval_data = data_arg(evals, "eval")
    if dialect == "template":
        s["train_param1"] = train_data or ("null", "null")
        s["eval_param1"] = eval_data or ("null", "null")
    else:
        s["data_path"] = train_data or ("null", "null")
        if train_data and s["norm_train"][1] != "null":
            s["norm_train"] = ("norm_train", f"{s['norm_train'][1]} {train_data[0]}={train_data[1]}")

    eval_script = scan.scripts.get("eval")
    if eval_script is None:
        s["eval"] = ("eval", "null")
        out.notes.append("eval: no eval script found; the eval stage is skipped (eval:null)")
    else:
        value = eval_script
        if dialect == "compact" and eval_data:
            value += f" {eval_data[0]}={eval_data[1]}"
        s["eval"] = ("eval", value)

    # ---- export -------------------------------------------------------------------------------------
    export_script = scan.scripts.get("export")
    infer_dir = f"./test_tipc/output/{model}/whole_infer/inference/"
    if export_script is None or export is None:
        s["norm_export"] = ("norm_export", "null")
        s["save_inference"] = ("null", "null")
        s["export_weight"] = ("null", "null")
        out.todo(
            "norm_export",
            "no export script found (export_model.py, tools/export_model.py): "
            "without export, train modes run no inference",
        )
    else:
        s["norm_export"] = ("norm_export", export_script)
        flag = use("export", find(export, "save_inference"))
        if flag is None:
            s["save_inference"] = ("null", "null")
            out.todo("save_inference", f"{export_script}: no output-dir flag found for the exported model")
        else:
            s["save_inference"] = (flag.flag, infer_dir if dialect == "compact" else "./output/")
            out.notes.append(f"export save dir: {flag.flag} from {_where(flag)}")
        flag = use("export", find(export, "weights"))
        if flag is None:
            s["export_weight"] = ("null", "null")
            out.todo("export_weight", f"{export_script}: no weights flag found (e.g. --pretrained)")
        else:
            s["export_weight"] = (flag.flag, "")
            out.notes.append(f"export weights: {flag.flag} from {_where(flag)}")

    # ---- inference ----------------------------------------------------------------------------------
    infer_script = scan.scripts.get("infer")
    if infer_script is None or infer is None:
        s["inference"] = ("inference", "null")
        out.todo("inference", "no Paddle Inference script found (infer.py, deploy/python/infer.py, ...)")
    else:
        s["inference"] = ("inference", infer_script)

    def bool_slot(slot: str, role: str, value: str, *, raw: bool) -> None:
        flag = use("infer", find(infer, role))
        if flag is None:
            s[slot] = ("null", "null")
            if raw and infer is not None:
                out.todo(
                    slot,
                    f"{infer_script} has no {SYNONYMS[role][0]} flag; this slot is always passed as "
                    f"`key={value}`, so add --{SYNONYMS[role][0]}",
                )
            return
        problem = _bool_problem(flag) if not _is_device_flag(flag) else None
        if problem and not raw:
            s[slot] = ("null", "null")
            out.notes.append(f"{slot}: {flag.flag} left out ({problem})")
            return
        if problem:
            out.todo(slot, problem)
        s[slot] = (flag.flag, "cpu" if _is_device_flag(flag) else value)
        out.notes.append(f"{slot}: {flag.flag} from {_where(flag)}")

    bool_slot("infer_use_gpu", "use_gpu", "False", raw=True)
    if dialect == "template":
        bool_slot("mkldnn", "mkldnn", "False", raw=True)
        bool_slot("tensorrt", "trt", "False", raw=False)
        for slot, role, value in (("cpu_threads", "threads", "1"), ("precision", "precision", "fp32")):
            flag = use("infer", find(infer, role))
            if flag is None:
                s[slot] = ("null", "null")
                continue
            choices = [str(c) for c in flag.choices or ()]
            if choices and value not in choices:
                # e.g. PaddleDetection's --run_mode (paddle|trt_fp32|...) stands in for precision.
                value = "paddle" if "paddle" in choices else choices[0]
                out.notes.append(f"{slot}: {flag.flag} takes {'|'.join(choices)}; using {value}")
            s[slot] = (flag.flag, value)
            out.notes.append(f"{slot}: {flag.flag} from {_where(flag)}")
        flag = use("infer", find(infer, "save_log"))
        s["save_log"] = (flag.flag, "null") if flag else ("null", "null")
    bool_slot("benchmark", "benchmark", "False", raw=False)
    flag = use("infer", find(infer, "batch"))
    s["infer_batch"] = (flag.flag, "1") if flag else ("null", "null")

    flag = use("infer", find(infer, "model_dir"))
    if flag is None:
        s["model_dir"] = ("null", "null")
        if infer is not None:
            out.todo(
                "model_dir",
                f"{infer_script}: no model-dir flag found (--model_dir); inference cannot "
                "be pointed at the exported model",
            )
    else:
        s["model_dir"] = (flag.flag, infer_dir if dialect == "compact" else "")
        out.notes.append(f"model dir: {flag.flag} from {_where(flag)}")

    # image: the script's own default when it lies in the lite data, else a lite image, else its default.
    flag = use("infer", find(infer, "image"))
    image_value = "null"
    if flag is not None:
        wants_dir = "dir" in flag.flag or flag.flag.endswith("imgs")
        images = lite.images if lite else ()
        image_default = flag.default if isinstance(flag.default, str) and flag.default.strip() else None
        default_in_lite = (
            image_default is not None
            and lite_dir is not None
            and (root / image_default).exists()
            and posixpath.normpath(image_default).startswith(posixpath.normpath(lite_dir) + "/")
        )
        if default_in_lite and image_default is not None:
            # The script already points at its own lite inference images: keep its choice (file or folder).
            image_value = _rel(image_default)
            out.notes.append(f"image: {flag.flag}={image_value} (the script's default, inside the lite data)")
        elif images:
            image_value = _rel(posixpath.dirname(images[0]) + "/") if wants_dir else _rel(images[0])
            out.notes.append(f"image: {flag.flag}={image_value} (from the lite data)")
        elif image_default is not None and (root / image_default).exists():
            image_value = _rel(image_default)
            out.notes.append(f"image: {flag.flag}={image_value} (the script's default, present in the repo)")
        elif flag.default is not None or not flag.required:
            out.todo(
                "image",
                f"no image found under the lite data; inference uses {flag.flag}'s default "
                f"({flag.default!r})",
            )
        else:
            out.todo("image", f"no image found for {flag.flag}; put a few under the lite data")
        s["image"] = (flag.flag, image_value)
    else:
        s["image"] = ("null", "null")
        if infer is not None:
            out.notes.append("image: the inference script has no image flag; it uses its own input")
    if dialect == "template":
        s["train_infer_img_dir"] = ("train_infer_img_dir", image_value)

    # whole_infer: pretrained weights exported with the export script.
    if scan.weights and export_script:
        s["infer_model"] = ("infer_model" if dialect == "template" else "train_model", _rel(scan.weights[0]))
        s["infer_export"] = ("infer_export", export_script)
        out.notes.append(f"whole_infer weights: {scan.weights[0]}")
    else:
        s["infer_model"] = ("infer_model" if dialect == "template" else "train_model", "null")
        s["infer_export"] = ("infer_export", "null")
        out.todo(
            "infer_model",
            "no pretrained *.pdparams found (pretrained/, weights/, ...): whole_infer has "
            "nothing to run until you set infer_model and infer_export",
        )

    # Anything a script requires that no slot passes.
    for role, script in out.flags.items():
        if role == "predict":
            continue
        for flag in script.flags:
            if flag.required and id(flag) not in used.get(role, set()):
                what = f"positional argument {flag.dest}" if flag.positional else f"required flag {flag.flag}"
                out.todo(
                    None,
                    f"{script.path}: {what} ({_where(flag)}) is not passed by any slot; "
                    "add it to the script's value in the config",
                )
    known = slots_of(dialect)
    out.slots = {k: v for k, v in s.items() if k in known}
    # Detected paths end up in a positional line that bash splits on ':' and re-splits on spaces.
    path_slots = {"image", "train_infer_img_dir", "infer_model", "train_param1", "eval_param1", "data_path"}
    for name, (key, value) in out.slots.items():
        spaced = name in path_slots and any(c.isspace() for c in value)
        if ":" in key + value or spaced:
            out.todo(name, f"{key}:{value!r} holds ':' or white space, which the TIPC scripts split apart")
            out.slots[name] = (key if ":" not in key else "null", "null")
    # Config order first, repo-wide items last.
    out.todos.sort(key=lambda t: known.get(t.slot, 10_000) if t.slot else 10_000)
    missing = set(known) - set(out.slots)
    if missing:  # a bug in this module, not a user problem
        raise AssertionError(f"unfilled slots: {sorted(missing)}")
    return out


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
