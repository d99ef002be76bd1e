"""The weights slots: which flag loads trained weights (by name, by what the script does with it), where
training leaves them (its save folder, its default folder, a model-name folder or file), and the pretrained
weights by name. What cannot be tied to training's output becomes a Todo with candidates.
"""

from __future__ import annotations

import posixpath

from tipc.config.script_flags import Flag
from tipc.scaffold.dataflow import (
    WeightRef,
    literal_save_paths,
)
from tipc.scaffold.detect import saved_checkpoint_names
from tipc.scaffold.fill.context import SYNONYMS, _Ctx, _path_candidates, _rel, _same_path, _where


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
