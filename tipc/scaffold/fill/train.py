"""The train section's slots: the fixed values, the train script, its device flag (a `--flag=False` that
argparse would misread is a Todo), the epoch (or iteration) count and batch size capped for the lite data,
the save folder (and a save folder train's code pins), and the device arguments compacted.
"""

from __future__ import annotations

from tipc.config.script_flags import Flag
from tipc.scaffold.dataflow import (
    literal_paths_under,
    literal_save_paths,
)
from tipc.scaffold.fill.context import (
    _bool_problem,
    _Ctx,
    _int_default,
    _is_device_flag,
    _path_candidates,
    _where,
)


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
