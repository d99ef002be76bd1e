"""The whole fill: `fill` runs the sections in order (docs, train, weights, data, eval and export,
inference, the docs' extra arguments), then the Todos of required slots and the finish; `choose_dialect`
picks the layout from the repo, `apply_sets` applies `--set SLOT=VALUE` overrides.
"""

from __future__ import annotations

from pathlib import Path

from tipc.config.script_flags import read_flags
from tipc.scaffold.detect import RepoScan
from tipc.scaffold.evidence import read_commands
from tipc.scaffold.fill.context import SYNONYMS, _Ctx, _where
from tipc.scaffold.fill.data import _fill_data
from tipc.scaffold.fill.docs import _append_doc_args, _lite_from_docs, _read_scripts
from tipc.scaffold.fill.eval_export import _fill_eval, _fill_export
from tipc.scaffold.fill.inference import _fill_image, _fill_inference, _fill_whole_infer
from tipc.scaffold.fill.train import (
    _compact_device_args,
    _fill_batch,
    _fill_epoch,
    _fill_fixed,
    _fill_save_model,
    _fill_train_device,
    _fill_train_script,
)
from tipc.scaffold.fill.weights import _fill_weights
from tipc.scaffold.filled import Filled
from tipc.scaffold.render import check_model_name
from tipc.scaffold.slots import slots_of


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
