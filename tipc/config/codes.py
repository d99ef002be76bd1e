"""The stable finding codes of `tipc lint` / `tipc plan` and their levels: the one table of both
(docs/lint-codes.md is generated from it; tests/config/test_codes.py holds every finding tipc emits to it).

Codes never change meaning once released; retired codes stay reserved. `level` is the default level; a few
checks lower or raise it where the trap bites less or more (`also`, and the meaning says when).
"""

from __future__ import annotations

from dataclasses import dataclass

from tipc.core.findings import Level


@dataclass(frozen=True)
class Code:
    level: Level  # the level it is reported at by default
    meaning: str
    also: tuple[Level, ...] = ()  # the other levels it is reported at, where the meaning says when

    @property
    def levels(self) -> tuple[Level, ...]:
        return (self.level, *self.also)


CODES: dict[str, Code] = {
    # file and chain
    "TIPC000": Code(
        Level.INFO,
        "which dialect reads the config, and why (fingerprint, script cue or config shape)",
    ),
    "TIPC001": Code(Level.ERROR, "empty config: nothing for the script to read"),
    "TIPC002": Code(Level.ERROR, "the config could not be planned while linting (message says why)"),
    "TIPC030": Code(
        Level.INFO,
        "config of another chain (cpp, paddle2onnx, lite, ptq, dy2static...: not planned; serving: planned "
        "by tipc plan/run/check, not linted slot by slot)",
    ),
    "TIPC031": Code(
        Level.WARNING,
        "file under test_tipc/configs that is not recognised as a config of any chain",
    ),
    "TIPC032": Code(Level.INFO, "not a .txt file (model YAML, data list...): skipped"),
    "TIPC033": Code(
        Level.WARNING,
        "planned although the file looks like a PTQ or unknown config (read positionally)",
    ),
    # plans observed from the repo's own script (tipc.planning.observe)
    "TIPC040": Code(
        Level.WARNING,
        "the plan observed from the repo's own script differs from the profile plan (a missing or extra "
        "step, other words in a command, another output folder or log)",
    ),
    "TIPC041": Code(
        Level.INFO,
        "the repo's script is no known dialect (an edited or unknown copy): the plan is the one observed "
        "from running it with recording stand-ins",
    ),
    "TIPC042": Code(
        Level.WARNING,
        "observed: the repo's script runs no python command in this mode, and why (a `source` of a missing "
        "path, a failed parse, an unknown mode...)",
    ),
    "TIPC043": Code(
        Level.WARNING,
        "the repo's script could not be observed to its end (stopped at the timeout, bash missing): the "
        "profile plan is used",
    ),
    "TIPC044": Code(
        Level.WARNING,
        "`tipc plan` without --observe: the repo's script is no known dialect, so `tipc run` observes it "
        "and runs what it runs; the profile plan shown may differ (`tipc plan --observe` shows what run "
        "executes)",
    ),
    "TIPC045": Code(
        Level.ERROR,
        "observed: the repo's script attempted system calls the sandbox denies (mount, unshare, ptrace...); "
        "they failed and are named",
    ),
    "TIPC100": Code(
        Level.WARNING,
        "the script runs nothing in this mode (info when linting all modes)",
        also=(Level.INFO,),
    ),
    # static traps (lint)
    "TIPC101": Code(Level.ERROR, "CRLF line endings: every value keeps a trailing \\r"),
    "TIPC102": Code(
        Level.ERROR,
        "blank line inside the read range: every later line moves one slot up (warning when no line is cut "
        "off by the read limit, info after the last slot)",
        also=(Level.WARNING, Level.INFO),
    ),
    "TIPC103": Code(
        Level.WARNING,
        "value contains a second ':' and is cut there by common_func.sh (info for *_url keys)",
        also=(Level.INFO,),
    ),
    "TIPC104": Code(Level.WARNING, "glob characters in a value: bash expands them when reading the config"),
    "TIPC105": Code(
        Level.ERROR,
        "a key sits in a slot meant for something else (e.g. --benchmark in the mkldnn slot; a warning where "
        "every planned inference command passes it as a well-formed parameter, and in `tipc check` when the "
        "plan that ran reads the line as the command its value is)",
        also=(Level.WARNING,),
    ),
    "TIPC106": Code(Level.WARNING, "not a True/False value in a boolean slot (e.g. infer_quant:Fasle)"),
    "TIPC107": Code(Level.WARNING, "key with surrounding spaces (bash keeps them in the emitted parameter)"),
    "TIPC108": Code(
        Level.WARNING,
        "blank (spaces-only) value: parameters omit it but stage tests do not treat it as null",
    ),
    "TIPC109": Code(Level.WARNING, "unknown mode name in a mode-keyed value"),
    "TIPC111": Code(
        Level.WARNING,
        "trainer listed on the trainer line but its script is null: skipped with eval/export/infer",
    ),
    "TIPC112": Code(
        Level.WARNING,
        "norm_export is null while inference is configured: no inference runs after training",
    ),
    "TIPC113": Code(Level.WARNING, "gpu_list and train use_gpu lists differ in length (paired by position)"),
    "TIPC114": Code(
        Level.WARNING,
        "infer_model / infer_export / infer_quant lists differ in length (paired by position)",
    ),
    "TIPC115": Code(
        Level.WARNING,
        "gpu_list item longer than 15 characters without ';': classified multi-node by length",
    ),
    "TIPC116": Code(Level.WARNING, "inference use_gpu key is null: passed raw as null=<value>"),
    "TIPC117": Code(
        Level.WARNING,
        "benchmark section field out of the order its reader expects (read positionally)",
    ),
    "TIPC118": Code(
        Level.WARNING,
        "blank line before a trailing section header: its fields are read one line off",
    ),
    "TIPC119": Code(Level.INFO, "config has a different number of lines than the dialect's layout"),
    # bash semantics recorded while planning
    "TIPC120": Code(
        Level.WARNING,
        "a listed trainer's export value is empty: export and inference silently skipped",
    ),
    "TIPC201": Code(
        Level.WARNING, "mode missing from a mode-keyed value: the parameter is omitted in that mode"
    ),
    "TIPC202": Code(Level.WARNING, "plain value on a mode-keyed line: the script passes nothing"),
    "TIPC205": Code(
        Level.INFO,
        "the script reads the epoch line without the mode (PaddleClas): default epochs used",
    ),
    "TIPC206": Code(
        Level.WARNING,
        "the script has no klquant_whole_infer branch: that mode runs the training branch",
    ),
    "TIPC207": Code(Level.INFO, "klquant_whole_infer re-reads the config with the legacy klquant layout"),
    "TIPC210": Code(
        Level.WARNING,
        "trainer name matches no trainer slot and this script skips it (PaddleDetection)",
    ),
    "TIPC211": Code(
        Level.INFO, "trainer name matches no special trainer key: the script runs norm_train for it"
    ),
    "TIPC212": Code(
        Level.ERROR,
        "trainer with an empty script value: the script runs the interpreter with parameters only",
    ),
    "TIPC213": Code(Level.INFO, "pact/fpgm trainer loads the weights of the preceding norm_train run"),
    "TIPC214": Code(
        Level.INFO,
        "PaddleSeg falls back to iter_<iters>/model.pdparams when train_model_name is missing",
    ),
    "TIPC215": Code(Level.WARNING, "empty eval script: the stage test errors and eval is skipped"),
    "TIPC216": Code(
        Level.INFO, "export of a trainer is null/empty: no export and no inference after training"
    ),
    "TIPC217": Code(
        Level.WARNING,
        "PaddleClas RecModel models: export reuses the previous export's weight argument",
    ),
    "TIPC220": Code(Level.INFO, "gpu_list item classified multi-node by its length (ips/gpus split shown)"),
    "TIPC230": Code(Level.INFO, "quantized model: the int8-only skip rules apply"),
    "TIPC231": Code(
        Level.ERROR,
        "inference use_gpu value is none of True/False/gpu/cpu: nothing runs for it (a warning where the "
        "inference script is null anyway)",
        also=(Level.WARNING,),
    ),
    "TIPC232": Code(
        Level.WARNING,
        "missing infer_quant item: the script shifts its arguments (gpu id used as quant flag)",
    ),
    "TIPC240": Code(
        Level.INFO,
        "PaddleClas whole_infer runs only the KL-quant command, which is null: nothing runs",
    ),
    "TIPC241": Code(
        Level.INFO, "PaddleClas KL-quant: the script symlinks the quantized model before inference"
    ),
    "TIPC242": Code(
        Level.ERROR,
        "PaddleDetection infer_mode value is not norm/pact/fpgm/distill/kl_quant: script exits 1",
    ),
    "TIPC250": Code(Level.INFO, "compact script parses the train use_gpu line but never passes it"),
    "TIPC260": Code(
        Level.WARNING,
        "whole_infer export: this script prints the command and exits before running it, so nothing runs in "
        "whole_infer (hand-edited copy)",
    ),
    "TIPC270": Code(
        Level.ERROR,
        "planning stopped at the step cap (default 1000 per mode, or 20 loop iterations per allowed step): "
        "the `|` alternatives multiply into too many commands; raise it with --max-steps or TIPC_MAX_STEPS",
    ),
    "TIPC302": Code(
        Level.WARNING, "command is not valid shell words (unbalanced quotes): split on whitespace"
    ),
    "TIPC303": Code(
        Level.WARNING,
        "unquoted glob in a command: bash expands it at run time; argv keeps it literally",
    ),
    "TIPC304": Code(
        Level.WARNING,
        "`$` in a command: the script's eval expands it from the environment at run time",
    ),
    "TIPC900": Code(
        Level.INFO,
        "value overridden in memory by --device / --set (the file is not edited); with --device cpu also the "
        "CPU form of a device flag the command's entry script accepts (says which flag, defined where)",
    ),
    "TIPC901": Code(
        Level.WARNING,
        "--device cpu: the entry script's device flag has no evident CPU value (a GPU id the script never "
        "maps to the CPU, choices without cpu, a switch always on): the command is left as it is",
    ),
    "TIPC902": Code(
        Level.INFO,
        "--device cpu: a step is planned but not applicable (a multi-GPU launch, or a repeat of the CPU "
        "run); run/check record it SKIPPED with the reason",
    ),
    "TIPC910": Code(
        Level.INFO,
        "tipc run/check redirect a write the script makes outside the output folder into it "
        "(says what the script would have written where; `tipc plan` shows the script's own path)",
    ),
    "TIPC911": Code(
        Level.WARNING,
        "a step writes where tipc cannot redirect it (free-form command, no output-dir argument, "
        "another cwd): run/check may change files outside the output folder",
    ),
    "TIPC920": Code(
        Level.INFO,
        "--only STAGE: the plan shows only the selected stages' steps (and the servers they talk to)",
    ),
}


def render_markdown() -> str:
    lines = [
        "# tipc finding codes",
        "",
        "Generated from `tipc/config/codes.py` (a test keeps this file in sync). Findings print as",
        "`path:line:col: LEVEL CODE message`; `tipc lint` exits 1 when any ERROR is reported, 0 otherwise,",
        "2 when an input cannot be read.",
        "",
        "| code | level | meaning |",
        "|---|---|---|",
    ]
    for code, entry in CODES.items():
        also = f" ({', '.join(lv.value for lv in entry.also)} where stated)" if entry.also else ""
        levels = entry.level.value + also
        lines.append(f"| {code} | {levels} | {entry.meaning.replace('|', '/')} |")
    return "\n".join(lines) + "\n"
