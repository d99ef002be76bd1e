"""`--device cpu` on real scripts: give each command the CPU form of the device flag its entry script accepts.

Config slots only reach the flags a script's test_tipc passes; many entry scripts default to the GPU
through a flag the config never passes (`--device gpu`, `--cuda True`, `--use-gpu`...). The entry script of
every planned command is read statically (`tipc.config.script_flags`, as `tipc init` does); the command
then gets that flag's CPU value, or has the value it passes rewritten. Pure apart from reading the scripts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from tipc.config.script_flags import Flag, ScriptFlags, normalise, read_flags
from tipc.core.findings import Finding, Level
from tipc.core.steps import Stage, Step

__all__ = ["DeviceEdit", "add_cpu_flags", "cpu_edit", "entry_script", "gpu_ask", "multi_gpu"]

_STAGES = frozenset({Stage.TRAIN, Stage.EVAL, Stage.EXPORT, Stage.INFER, Stage.QUANT, Stage.OTHER})
_LAUNCHERS = frozenset({"paddle.distributed.launch", "paddle.distributed.fleet.launch", "fleetrun"})
# Names of device flags, in preference order (normalised: no dashes, lower case, `-` -> `_`).
_DEVICE = ("device",)
_BOOL = ("use_gpu", "use_cuda", "cuda", "use_gpus")
_CPU_SWITCH = ("cpu", "use_cpu", "no_cuda", "no_gpu")
_IDS = ("gpu_id", "gpu_ids", "gpus", "gpu", "device_id", "device_ids")
_NAMES = (*_DEVICE, *_BOOL, *_CPU_SWITCH, *_IDS)
_BOOL_TYPES = frozenset({"bool", "str2bool", "strtobool", "boolean", "str_to_bool"})
_TRUE = frozenset({"true", "1", "yes", "y", "t"})
_FALSE = frozenset({"false", "0", "no", "n", "f", ""})
_GPU_WORDS = frozenset({"gpu", "cuda", "gpu:0", "cuda:0"})
_PY_OPTS_WITH_VALUE = frozenset({"-W", "-X", "-Q"})


_GPU_OPTIONS = frozenset({"use_gpu", "usegpu", "use_cuda", "cuda", "gpu"})
_DEVICE_OPTIONS = frozenset({"device", "place", "run_device"})


def gpu_ask(step: Step) -> str | None:
    """How a planned command asks for a GPU in its argv (`--gpus=0,1`, `--use-gpu=True`,
    `-o Global.device=gpu`), or None. A launcher's `--gpus` list comes first: it says how many cards the
    step needs.
    CUDA_VISIBLE_DEVICES alone asks for nothing: it picks a card where there is one, and is moot without."""
    words = step.argv[-1].split() if step.shell and step.argv else list(step.argv)
    asks: list[str] = []
    for i, word in enumerate(words):
        if not word.startswith("-") and "=" not in word:
            continue
        key, sep, value = word.lstrip("-").partition("=")
        if not sep and i + 1 < len(words) and not words[i + 1].startswith("-"):
            value = words[i + 1]
        k = key.replace("-", "_").lower().rsplit(".", 1)[-1]  # `-o Global.use_gpu=True` names use_gpu
        v = value.strip().lower()
        if k in ("gpus", "selected_gpus") and v and v != "-1" and word.startswith("-"):
            return word if sep else f"{word} {value}"
        if (k in _GPU_OPTIONS and v in _TRUE) or (
            k in _DEVICE_OPTIONS and v.split(":")[0] in ("gpu", "cuda")
        ):
            asks.append(word if sep else f"{word} {value}")
    return asks[0] if asks else None


def multi_gpu(ask: str) -> bool:
    """Whether a `gpu_ask` answer names more than one card (a distributed launch over `0,1`...)."""
    return "," in ask.split("=", 1)[-1].split(" ", 1)[-1]


@dataclass(frozen=True)
class DeviceEdit:
    """What to do with one device flag: `value` to pass (None for a switch), or why nothing can be done."""

    flag: Flag
    value: str | None  # the CPU value; None: a switch (added when `add_switch`, dropped otherwise)
    add_switch: bool = False
    warning: str = ""  # set when no CPU form is evident: nothing is changed


def entry_script(step: Step, repo: Path) -> tuple[int, Path] | None:
    """(argv index, file) of the Python script a command runs: the first `.py` word, or `-m module`
    (a distributed launcher's script is the `.py` after it). None for shell steps and non-Python commands."""
    if step.shell or not step.argv or "python" not in Path(step.argv[0]).name:
        return None
    base = repo / step.cwd
    i = 1
    while i < len(step.argv):
        word = step.argv[i]
        if word == "-m" and i + 1 < len(step.argv):
            module = step.argv[i + 1]
            if module in _LAUNCHERS:
                i += 2
                continue
            found = _module_file(base, repo, module)
            return (i + 1, found) if found is not None else None
        if word in _PY_OPTS_WITH_VALUE:
            i += 2
            continue
        if word.endswith(".py") and not word.startswith("-"):
            return i, (base / word)
        if not word.startswith("-") and "=" not in word:
            return None  # a script without .py, or something that is not Python: unknown
        i += 1
    return None


def _module_file(base: Path, repo: Path, module: str) -> Path | None:
    parts = module.split(".")
    for root in dict.fromkeys((base, repo)):
        path = root.joinpath(*parts)
        for file in (path.with_suffix(".py"), path / "__main__.py"):
            if file.is_file():
                return file
    return None


def _truthy(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return None


def _id_cpu_value(flag: Flag, source: str) -> str | None:
    """The value an int/str GPU-id flag takes for the CPU, when the script makes it evident: it exports the
    flag as CUDA_VISIBLE_DEVICES (-1 hides every GPU), or compares it with -1 / 0 (`< 0` is the CPU)."""
    dest = re.escape(flag.dest)
    evident = (
        rf"CUDA_VISIBLE_DEVICES['\"]\s*\]\s*=\s*(?:str\()?\s*\w+\.{dest}\b",
        rf"\.{dest}\s*(?:==|!=)\s*['\"]?-1\b",
        rf"\.{dest}\s*(?:<|>=)\s*0\b",
    )
    return "-1" if any(re.search(p, source) for p in evident) else None


def cpu_edit(flag: Flag, source: str) -> DeviceEdit:
    """The CPU form of `flag` (from `read_flags`), in the value form its type accepts."""
    where = f"{flag.path}:{flag.line}"
    if flag.is_switch:
        return _switch_edit(flag, where)
    int_like = flag.type_name == "int" or (
        isinstance(flag.default, int) and not isinstance(flag.default, bool)
    )
    if _takes_device_word(flag, int_like):
        return _device_word_edit(flag, where)
    if _takes_bool(flag):
        return _bool_edit(flag, int_like, where)
    value = _id_cpu_value(flag, source)
    if value is not None:
        return DeviceEdit(flag, value)
    return DeviceEdit(
        flag,
        None,
        warning=f"{flag.flag} ({where}) takes a GPU id and the script shows no value that means the CPU",
    )


def _switch_edit(flag: Flag, where: str) -> DeviceEdit:
    # What the switch stores decides: `--cpu` / `--no-cuda` (store_true) and `--cpu dest=use_gpu`
    # (store_false) turn the GPU off when given; a `--use_gpu` store_true switch is simply left out.
    dest = normalise(flag.dest)
    gpu_dest = dest in _BOOL or dest == "gpu"
    if (dest in _CPU_SWITCH and flag.action == "store_true") or (gpu_dest and flag.action == "store_false"):
        return DeviceEdit(flag, None, add_switch=True)
    if gpu_dest and flag.action == "store_true" and flag.default is True:
        return DeviceEdit(flag, None, warning=f"{flag.flag} ({where}) is a switch that is always on")
    return DeviceEdit(flag, None)


def _choices(flag: Flag) -> tuple[str, ...] | None:
    return tuple(str(c) for c in flag.choices) if flag.choices is not None else None


def _takes_device_word(flag: Flag, int_like: bool) -> bool:
    """A `--device gpu`-style flag: named device (not an id), a gpu/cpu word default, or a cpu choice."""
    default, choices = flag.default, _choices(flag)
    wordy = isinstance(default, str) and default.strip().lower() in _GPU_WORDS | {"cpu"}
    has_cpu_choice = bool(choices and any(c.lower() == "cpu" for c in choices))
    return bool(set(flag.names) & set(_DEVICE) and not int_like) or wordy or has_cpu_choice


def _device_word_edit(flag: Flag, where: str) -> DeviceEdit:
    choices = _choices(flag)
    if choices is None:
        return DeviceEdit(flag, "cpu")
    picked = [c for c in choices if c.lower() == "cpu"]
    if not picked:
        return DeviceEdit(
            flag, None, warning=f"{flag.flag} ({where}) has no cpu among its choices {list(choices)}"
        )
    return DeviceEdit(flag, picked[0])


def _takes_bool(flag: Flag) -> bool:
    """A `--use_gpu True`-style flag: a boolean name, or `--gpu` typed as a boolean."""
    boolish = flag.type_name in _BOOL_TYPES or isinstance(flag.default, bool)
    return bool(set(flag.names) & set(_BOOL)) or ("gpu" in flag.names and boolish)


def _bool_edit(flag: Flag, int_like: bool, where: str) -> DeviceEdit:
    if flag.type_name == "bool":
        # argparse's bool("False") is True: only an empty value turns it off.
        return DeviceEdit(flag, "")
    if int_like:
        return DeviceEdit(flag, "0")
    if flag.choices is not None:
        falses = [c for c in flag.choices if _truthy(c) is False]
        if falses:
            return DeviceEdit(flag, str(falses[0]))
        return DeviceEdit(flag, None, warning=f"{flag.flag} ({where}) has no false value among its choices")
    return DeviceEdit(flag, "False")


def _is_cpu_already(edit: DeviceEdit, value: object, *, literal: bool = True) -> bool:
    """Whether `value` (a default, or a value the command passes) already selects the CPU."""
    if edit.value is None or not literal:
        return False
    if edit.flag.type_name == "bool":
        return value is None or value is False or value == ""  # bool("False") is True
    if value is None:
        return False
    if edit.value in ("False", "0"):
        return _truthy(value) is False
    return str(value).strip().lower() == edit.value.lower()


def _passed(argv: tuple[str, ...], start: int, flag: Flag) -> tuple[int, str | None, bool] | None:
    """(index, value, joined) of `flag` in argv after `start`: `--f=v` (joined), `--f v`, or a bare switch."""
    for i in range(start + 1, len(argv)):
        word = argv[i]
        for option in flag.options:
            if word == option:
                if flag.is_switch:
                    return i, None, False
                value = argv[i + 1] if i + 1 < len(argv) else None
                return i, value, False
            if word.startswith(option + "="):
                return i, word[len(option) + 1 :], True
    return None


def _replace_words(command: str, old: list[str], new: list[str]) -> str:
    """`command` with the first run of whitespace-separated words `old` replaced by `new` (literally)."""
    pattern = re.compile(r"(?<!\S)" + r"\s+".join(re.escape(w) for w in old) + r"(?!\S)")
    text = " ".join(new)
    return pattern.sub(lambda _: text, command, count=1)


def _spelled(flag: Flag, value: str | None) -> list[str]:
    option = flag.flag
    if value is None:
        return [option]
    return [f"{option}={value}"] if option.startswith("--") else [option, value]


@dataclass(frozen=True)
class _Change:
    script: str
    word: str  # the script as the command names it (to find the config line that names it)
    text: str  # e.g. "added --device=cpu" / "rewrote --cuda True -> --cuda=False"
    level: Level


@dataclass
class _StepEdit:
    """One command being given the CPU form of its entry script's device flags."""

    step: Step
    at: int  # argv index of the entry script
    rel: str  # the script, as findings name it
    source: str
    argv: list[str]
    command: str
    changes: list[_Change] = field(default_factory=list)

    def change(self, text: str, level: Level) -> _Change:
        return _Change(self.rel, self.step.argv[self.at], text, level)

    def splice(self, start: int, old_words: list[str], new_words: list[str]) -> None:
        """Replace `old_words` at argv[start] by `new_words`, in the argv and the status command."""
        self.argv[start : start + len(old_words)] = new_words
        self.command = _replace_words(self.command, old_words, new_words)


def _script_flags(
    script: Path, repo: Path, cache: dict[Path, tuple[ScriptFlags, str]]
) -> tuple[ScriptFlags, str]:
    if script not in cache:
        try:
            source = script.read_text(encoding="utf-8", errors="replace")
        except OSError:
            source = ""
        cache[script] = (read_flags(script, repo), source)
    return cache[script]


def _edit_step(
    step: Step, repo: Path, cache: dict[Path, tuple[ScriptFlags, str]]
) -> tuple[Step, list[_Change]]:
    found = entry_script(step, repo)
    if found is None:
        return step, []
    at, script = found
    if not script.is_file():
        return step, []
    flags, source = _script_flags(script, repo, cache)
    wanted = [f for name in _NAMES for f in flags.flags if name in f.names and f.subcommand is None]
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        return _config_override(step, at, flags, repo)
    edit = _StepEdit(step, at, flags.path, source, list(step.argv), step.status_command)
    handled, pending = _rewrite_passed(edit, wanted)
    if not handled:
        _add_missing(edit, wanted, pending)
    if tuple(edit.argv) == step.argv:
        return step, edit.changes
    return replace(step, argv=tuple(edit.argv), status_command=edit.command), edit.changes


def _rewrite_passed(edit: _StepEdit, wanted: list[Flag]) -> tuple[bool, list[_Change]]:
    """Rewrite the device flags the command passes to their CPU value.

    Returns whether a passed flag now selects the CPU, and the warnings for passed flags with no evident
    CPU value (said only if nothing else fits)."""
    handled = False
    pending: list[_Change] = []
    for flag in wanted:
        hit = _passed(tuple(edit.argv), edit.at, flag)
        if hit is None:
            continue
        device = cpu_edit(flag, edit.source)
        handled = handled or not device.warning
        if device.warning:
            pending.append(
                edit.change(f"cannot rewrite {edit.argv[hit[0]]}: {device.warning}", Level.WARNING)
            )
            continue
        _rewrite_one(edit, flag, device, hit)
    return handled, pending


def _rewrite_one(edit: _StepEdit, flag: Flag, device: DeviceEdit, hit: tuple[int, str | None, bool]) -> None:
    index, value, joined = hit
    argv = edit.argv
    old_words = [argv[index]] if joined or flag.is_switch else argv[index : index + 2]
    if device.value is None:
        if device.add_switch:
            return  # the CPU switch is already there
        new_words: list[str] = []
    else:
        if _is_cpu_already(device, value):
            return
        new_words = _spelled(flag, device.value)
    edit.splice(index, old_words, new_words)
    shown = " ".join(new_words) or "(dropped)"
    edit.changes.append(
        edit.change(
            f"rewrote {' '.join(old_words)} -> {shown} ({flag.flag} at {flag.path}:{flag.line})", Level.INFO
        )
    )


def _add_missing(edit: _StepEdit, wanted: list[Flag], pending: list[_Change]) -> None:
    """Add the first device flag the command leaves out, unless the script's default already is the CPU."""
    warning = ""
    for flag in wanted:
        if _passed(tuple(edit.argv), edit.at, flag) is not None:
            continue  # passed, with no evident CPU value (pending)
        device = cpu_edit(flag, edit.source)
        if device.warning:
            warning = warning or device.warning
            continue
        if device.value is None and not device.add_switch:
            continue  # a GPU switch the command leaves out: nothing to do for it
        if not _is_cpu_already(device, flag.default, literal=flag.default_text is None):
            _add_flag(edit, flag, device)
        return  # added, or the script's default already is the CPU
    edit.changes.extend(pending)
    if warning and not pending:
        edit.changes.append(edit.change(f"no device flag added: {warning}", Level.WARNING))


def _add_flag(edit: _StepEdit, flag: Flag, device: DeviceEdit) -> None:
    words = _spelled(flag, device.value)
    script_word = edit.step.argv[edit.at]
    edit.argv[edit.at + 1 : edit.at + 1] = words
    edit.command = _replace_words(edit.command, [script_word], [script_word, *words])
    default = f", default {flag.default!r}" if flag.default is not None or flag.default_text else ""
    if device.value == "":
        default += "; type=bool: only an empty value is false"
    edit.changes.append(
        edit.change(f"added {' '.join(words)} ({flag.flag} at {flag.path}:{flag.line}{default})", Level.INFO)
    )


# `-o Global.use_gpu=False`-style options of config-driven scripts (PaddleOCR/Clas/Det/Video `ArgsParser`).
_OPTION_FLAGS = ("opt", "opts", "override", "options", "config_options")
_CONFIG_FLAGS = ("config", "cfg", "c")
_CONFIG_KEYS = ("use_gpu", "device")


def _yaml_device_keys(path: Path, seen: frozenset[Path] = frozenset()) -> dict[str, tuple[object, str]]:
    """{`Global.use_gpu` / `use_gpu` / `Global.device` / `device`: (value, file:line)} in a YAML config and
    the `_BASE_` files it includes (PaddleDetection); later files win, as the loaders merge them. The
    config is the model's, not tipc's: read as leniently as PyYAML reads it (anchors, tags), with lines."""
    from tipc.core.yamlschema import LMap, YamlShapeError, load_located, plain

    path = path.resolve()
    if path in seen or not path.is_file():
        return {}
    try:
        tree = load_located(path.read_text(encoding="utf-8", errors="replace"), foreign=True)
    except (OSError, YamlShapeError):
        return {}
    if not isinstance(tree, LMap):
        return {}
    found: dict[str, tuple[object, str]] = {}
    bases = plain(tree.items.get("_BASE_", []))
    for base in [bases] if isinstance(bases, str) else bases if isinstance(bases, list) else []:
        if isinstance(base, str):
            found.update(_yaml_device_keys(path.parent / base, seen | {path}))
    scopes = [("", tree)]
    if isinstance(tree.items.get("Global"), LMap):
        scopes.append(("Global.", tree.items["Global"]))
    for prefix, scope in scopes:
        for key in _CONFIG_KEYS:
            if key in scope.items:
                found[prefix + key] = (plain(scope.items[key]), f"{path.name}:{scope.line_of(key)}")
    return found


def _config_override(step: Step, at: int, flags: ScriptFlags, repo: Path) -> tuple[Step, list[_Change]]:
    """A config-driven command (`-c x.yml -o K=V`) whose YAML selects the GPU gets `-o <key>=False|cpu`."""
    option = next((f for n in _OPTION_FLAGS for f in flags.flags if n in f.names and not f.is_switch), None)
    config_flag = next(
        (f for n in _CONFIG_FLAGS for f in flags.flags if n in f.names and not f.is_switch), None
    )
    if option is None or config_flag is None:
        return step, []
    found = _gpu_config_key(step, at, config_flag, repo)
    if found is None:
        return step, []
    config, key, where = found
    cpu = "False" if key.endswith("use_gpu") else "cpu"
    if any(w.startswith(f"{key}=") for w in step.argv[at + 1 :]):
        # passed already (a GPU value there is rewritten by tipc.planning.planner.apply_overrides)
        return step, []
    setting = f"{key}={cpu}"
    argv, command = _with_option(step, at, option, setting)
    change = _Change(
        flags.path,
        step.argv[at],
        f"added {option.options[0]} {setting} ({config} sets {key} at {where}; {option.flag} at "
        f"{option.path}:{option.line})",
        Level.INFO,
    )
    return replace(step, argv=tuple(argv), status_command=command), [change]


def _gpu_config_key(step: Step, at: int, config_flag: Flag, repo: Path) -> tuple[str, str, str] | None:
    """(config as passed, key, file:line) of the first device key selecting the GPU in the passed config."""
    hit = _passed(step.argv, at, config_flag)
    if hit is None or not hit[1]:
        return None
    keys = _yaml_device_keys(repo / step.cwd / hit[1])
    gpu = {k: v for k, v in keys.items() if v[0] is True or str(v[0]).lower() in _GPU_WORDS}
    if not gpu:
        return None
    key, (_value, where) = next(iter(gpu.items()))
    return hit[1], key, where


def _with_option(step: Step, at: int, option: Flag, setting: str) -> tuple[list[str], str]:
    """(argv, status command) with `setting` given through the script's option flag."""
    argv = list(step.argv)
    given = next((i for i in range(at + 1, len(argv)) if argv[i] in option.options), None)
    if given is not None and option.action != "append":
        # nargs='+' / '*': a second -o would replace the first list, so the setting joins the given one
        words_old, words_new = [argv[given]], [argv[given], setting]
        argv.insert(given + 1, setting)
    else:
        script_word = argv[at]
        words_old, words_new = [script_word], [script_word, option.options[0], setting]
        argv[at + 1 : at + 1] = [option.options[0], setting]
    return argv, _replace_words(step.status_command, words_old, words_new)


def add_cpu_flags(
    steps: tuple[Step, ...],
    repo: Path,
    config_path: str,
    locate: Callable[[str], tuple[int, int] | None] = lambda _word: None,
) -> tuple[tuple[Step, ...], list[Finding]]:
    """Every applicable train/eval/export/infer step with the CPU form of its entry script's device flag.

    Each change is a finding: TIPC900 (info) naming the flag, the script and where the flag is defined;
    TIPC901 (warning) when the script's flag has no evident CPU value. Findings are grouped by script and
    change, listing the steps; `locate(script_word)` gives the config line naming the script."""
    cache: dict[Path, tuple[ScriptFlags, str]] = {}
    out: list[Step] = []
    grouped: dict[_Change, list[Step]] = {}
    for step in steps:
        if step.stage not in _STAGES or step.not_applicable:
            out.append(step)
            continue
        new, changes = _edit_step(step, repo, cache)
        out.append(new)
        for change in changes:
            grouped.setdefault(change, []).append(step)
    findings: list[Finding] = []
    for change, touched in grouped.items():
        line, col = locate(change.word) or (
            next((s.source_lines[0] for s in touched if s.source_lines), 0),
            0,
        )
        ids = ", ".join(s.id for s in touched[:3]) + (
            f" and {len(touched) - 3} more" if len(touched) > 3 else ""
        )
        code = "TIPC900" if change.level is Level.INFO else "TIPC901"
        findings.append(
            Finding(
                config_path,
                line,
                col,
                change.level,
                code,
                f"--device cpu: {change.script}: {change.text} [{ids}]",
            )
        )
    return tuple(out), findings
