"""The inference section's slots: the infer script's switches (device, TensorRT, MKLDNN, precision,
threads: CPU-friendly defaults), its model folder or model / params file flags, the image (or input) it
reads from the lite data, and the whole_infer weights.
"""

from __future__ import annotations

import posixpath
import re

from tipc.config.script_flags import Flag
from tipc.scaffold.dataflow import (
    model_dir_refs,
)
from tipc.scaffold.fill.context import (
    SYNONYMS,
    _bool_problem,
    _Ctx,
    _is_device_flag,
    _path_candidates,
    _rel,
    _where,
)


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
