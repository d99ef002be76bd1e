"""The data slots: which flags name data (by name, not outputs or weights), the lite folder standing for
what each names (its split: train, val, test), and where the lite data comes from for prepare.sh.
"""

from __future__ import annotations

import posixpath
import re

from tipc.config.script_flags import Flag
from tipc.scaffold.fill.context import _Ctx, _rel, _same_path, _where

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
