"""What the repo's docs and scripts say before any slot is filled: each script's argparse flags, the eval
script (by name, else the training script with a switch, else the script the docs run with trained
weights), a lite data folder the docs pass to a data flag; and, last, the arguments the docs' lite command
lines pass that no slot carries.
"""

from __future__ import annotations

import re

from tipc.config.script_flags import ScriptFlags, read_flags
from tipc.scaffold.detect import LiteData, images_under, train_samples
from tipc.scaffold.evidence import Command, commands_for, mentions
from tipc.scaffold.fill.context import SYNONYMS, _Ctx


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
