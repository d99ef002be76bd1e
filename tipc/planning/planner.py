"""Public planning API: config + mode + overrides -> Plan (the commands the repo's own script would run).

    plan(config, mode, *, repo=None, overrides=Overrides(), dialect=None) -> Plan
    format_plan(plan) -> str                    (what `tipc plan` and `tipc run --dry-run` print)
    status_line(plan, step, ok=True) -> str     (the step's line in the dialect's results_python.log format)

Pure apart from reading the config (and the repo's script, for dialect detection).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from tipc.config import detect as detect_mod
from tipc.config import dialects as dialects_mod
from tipc.config import reader as load_mod
from tipc.config.discover import classify_chain, find_repo_root
from tipc.config.model import SLOT_NAMES, Slot, TipcConfig
from tipc.config.parse import ParsedFile, parse_file
from tipc.core.errors import ConfigError, UserError
from tipc.core.findings import Finding, Level
from tipc.core.steps import ALL_MODES, DEFAULT_MODE, MODES, SERVING_MODE, Mode, Overrides, Plan, Step
from tipc.planning.chain.builder import build as build_chain
from tipc.planning.chain.builder import lint_build
from tipc.planning.chain.context import DEFAULT_MAX_STEPS

__all__ = [
    "Overrides",
    "Plan",
    "Prepared",
    "Step",
    "apply_overrides",
    "default_mode",
    "format_plan",
    "isolate",
    "max_steps_default",
    "plan",
    "plan_prepared",
    "prepare",
    "select_stages",
    "status_line",
]


def default_mode(config: Path) -> Mode:
    """The mode a verb uses when none is given: serving_infer for a serving config, else
    lite_train_lite_infer. Raises ConfigError for a config that cannot be read."""
    return (
        SERVING_MODE if classify_chain(Path(config), parse_file(Path(config))) == "serving" else DEFAULT_MODE
    )


def select_stages(plan: Plan, only: tuple[str, ...]) -> Plan:
    """The plan as `tipc run --only STAGE...` runs it: the steps of those stages, plus the background
    servers a selected step talks to (the runner starts those too); the rest are left out with a TIPC920
    info finding. Empty `only`: the plan unchanged."""
    if not only:
        return plan
    needed = {
        dep
        for step in plan.steps
        if step.stage.value in only
        for dep in step.depends_on
        if any(s.id == dep and s.background for s in plan.steps)
    }
    kept = tuple(s for s in plan.steps if s.stage.value in only or s.id in needed)
    left = len(plan.steps) - len(kept)
    if not left:
        return plan
    note = Finding(
        plan.config_path,
        0,
        0,
        Level.INFO,
        "TIPC920",
        f"--only {','.join(only)}: {len(kept)} of {len(plan.steps)} steps selected; the other {left} are "
        "not run (their outputs are expected to exist already)",
    )
    return replace(plan, steps=kept, findings=(*plan.findings, note))


def max_steps_default() -> int:
    """The step cap: TIPC_MAX_STEPS when set to a positive integer, else chain.context.DEFAULT_MAX_STEPS."""
    raw = os.environ.get("TIPC_MAX_STEPS", "")
    if raw.strip().isdigit() and int(raw) > 0:
        return int(raw)
    return DEFAULT_MAX_STEPS


@dataclass(frozen=True)
class Prepared:
    """What every mode of one config shares: the parsed file, its dialect and its slots (read once)."""

    config: Path
    parsed: ParsedFile
    chain: str
    root: Path
    profile: dialects_mod.Dialect
    cfg: TipcConfig
    findings: tuple[Finding, ...]


def prepare(
    config: Path,
    parsed: ParsedFile,
    chain_name: str,
    root: Path,
    dialect: str | None,
    *,
    slots: TipcConfig | None = None,
) -> Prepared:
    """Dialect detection and slot reading for a train_infer_python-family config (no mode yet).

    `slots`: the config already read with `dialect`'s profile and no repo (lint has it); its globs are
    expanded here instead of reading the slots again."""
    findings: list[Finding] = list(parsed.issues)
    if chain_name != "train_infer_python":
        findings.append(
            Finding(
                str(config),
                0,
                0,
                Level.WARNING,
                "TIPC033",
                f"this looks like a {chain_name} config; planned as test_train_inference_python.sh "
                "would read it" + (" (its klquant_whole_infer layout)" if chain_name == "ptq" else ""),
            )
        )
    if dialect is not None:
        profile = dialects_mod.get(dialect)
        reason = "--dialect"
    else:
        found = detect_mod.detect(parsed, config, root)
        profile = dialects_mod.get(found.dialect)
        reason = found.reason
    findings.append(Finding(str(config), 0, 0, Level.INFO, "TIPC000", f"dialect {profile.name}: {reason}"))
    if slots is not None and slots.dialect == profile.name:
        cfg = load_mod.expand_globs(slots, root, profile.splitter)
    else:
        cfg = load_mod.build(parsed, profile, root=root)
    findings.extend(cfg.findings)
    if "" in parsed.physical:
        from tipc.config.lint import shift_findings

        # The steps below come from the shifted slots (what the script reads); say so where it matters.
        findings.extend(shift_findings(parsed, cfg, profile.read_limit))
    return Prepared(config, parsed, chain_name, root, profile, cfg, tuple(findings))


def plan(
    config: Path,
    mode: str,
    *,
    repo: Path | None = None,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
    dialect: str | None = None,
    max_steps: int | None = None,
) -> Plan:
    """`max_steps`: the cap on planned steps (None: `max_steps_default()`); past it the plan stops with a
    TIPC270 error finding."""
    config = Path(config)
    parsed = parse_file(config)
    chain_name = classify_chain(config, parsed)
    if chain_name == "serving":
        from tipc.planning.serving import plan_serving

        if mode not in ALL_MODES:  # the verbs' --mode accepts no other; a Python caller learns it here
            raise UserError(f"unknown mode {mode!r}; expected one of: {', '.join(ALL_MODES)}")
        return plan_serving(config, repo=repo, overrides=overrides, mode=Mode(mode))
    if mode not in MODES:
        if mode == SERVING_MODE:
            raise UserError(
                f"{config}: mode {SERVING_MODE} runs the serving chain, and this is a {chain_name} config: "
                "give the serving config (test_tipc/configs/<model>/serving_*.txt), or one of: "
                + ", ".join(MODES)
            )
        raise UserError(f"unknown mode {mode!r}; expected one of: {', '.join(MODES)}")
    mode = Mode(mode)
    # PTQ/KL-quant configs are what the template's klquant_whole_infer branch reads; unknown files are read
    # as the script would read them. Other chains have their own scripts.
    if chain_name not in ("train_infer_python", "ptq", "unknown"):
        raise ConfigError(
            str(config),
            None,
            f"this is a {chain_name} config; tipc plans the train_infer_python chain "
            "(test_train_inference_python.sh) only",
        )
    root = Path(repo) if repo is not None else find_repo_root(config)
    prepared = prepare(config, parsed, chain_name, root, dialect)
    return plan_prepared(prepared, mode, overrides=overrides, max_steps=max_steps)


def mode_findings(
    prepared: Prepared, mode: Mode, *, root_abs: str, max_steps: int | None = None
) -> tuple[list[Finding], list[str]]:
    """What lint needs of the plan of one mode, without building it: the findings `plan` would report
    (less the dialect and override notes) and the command of every inference step."""
    findings: list[Finding] = []
    cfg, profile = _mode_slots(prepared, mode, findings)
    cap = max_steps if max_steps is not None else max_steps_default()
    chain_findings, count, infer_commands = lint_build(cfg, profile, mode, root_abs, max_steps=cap)
    findings.extend(chain_findings)
    if count == 0:
        findings.append(
            Finding(
                str(prepared.config),
                0,
                0,
                Level.WARNING,
                "TIPC100",
                f"the script runs nothing in mode {mode}",
            )
        )
    return findings, infer_commands


def _mode_slots(
    prepared: Prepared, mode: Mode, findings: list[Finding]
) -> tuple[TipcConfig, dialects_mod.Dialect]:
    """The slots the script reads in `mode` (klquant_whole_infer re-reads a legacy layout in some scripts)."""
    config, parsed, profile, cfg = prepared.config, prepared.parsed, prepared.profile, prepared.cfg
    if mode == Mode.KLQUANT_WHOLE_INFER and profile.klquant_slots and profile.klquant_branch == "whole_infer":
        legacy = load_mod.build(
            parsed, profile.with_(slots=profile.klquant_slots, read_limit=profile.klquant_read_limit)
        )
        cfg = replace(cfg, **{name: legacy.slot(name) for name in profile.klquant_slots})  # type: ignore[arg-type]
        limit = f"the first {profile.klquant_read_limit} lines" if profile.klquant_read_limit else "the file"
        findings.append(
            Finding(
                str(config),
                0,
                0,
                Level.INFO,
                "TIPC207",
                f"klquant_whole_infer re-reads {limit} with the legacy klquant layout (model_name, python, "
                "infer_model ... at lines 2..); the 51-line slots are not used in this mode",
            )
        )
    return cfg, profile


def plan_prepared(
    prepared: Prepared,
    mode: Mode,
    *,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
    max_steps: int | None = None,
    root_abs: str | None = None,
) -> Plan:
    """The plan of one mode from a `prepare`d config (lint plans several modes from one read)."""
    config = prepared.config
    findings = list(prepared.findings)
    cfg, profile = _mode_slots(prepared, mode, findings)
    if overrides.device is not None or overrides.sets:
        cfg, notes = apply_overrides(cfg, overrides, mode)
        findings.extend(notes)
    if root_abs is None:
        root_abs = str(prepared.root.resolve())
    cap = max_steps if max_steps is not None else max_steps_default()
    steps, chain_findings, log_root = build_chain(
        cfg, profile, mode, root_abs, device=overrides.device, max_steps=cap
    )
    findings.extend(chain_findings)
    if overrides.device == "cpu":
        from tipc.planning.device_flags import add_cpu_flags

        def locate(word: str) -> tuple[int, int] | None:
            for name in SLOT_NAMES:
                slot = cfg.slot(name)
                if slot.present and word in slot.value.split():
                    return slot.line, slot.col
            return None

        cpu_steps, device_findings = add_cpu_flags(tuple(steps), Path(root_abs), str(config), locate)
        steps = list(cpu_steps)
        findings.extend(device_findings)
    if not steps:
        findings.append(
            Finding(str(config), 0, 0, Level.WARNING, "TIPC100", f"the script runs nothing in mode {mode}")
        )

    def rel(path: str) -> str:
        if path.startswith(root_abs + "/"):
            path = path[len(root_abs) + 1 :]
        while path.startswith("./"):
            path = path[2:]
        return path

    return Plan(
        config_path=str(config),
        repo=root_abs,
        mode=mode,
        dialect=profile.name,
        model_name=cfg.model_name.value,
        output_dir=rel(log_root),
        results_log=rel(f"{log_root}/{profile.results_log}"),
        status_format=profile.status_format,
        steps=tuple(steps),
        findings=tuple(findings),
        overrides=overrides,
    )


# ---------------------------------------------------------------------------------------------------------
# overrides


_CPU_VALUE = {"True": "False", "true": "False", "gpu": "cpu", "GPU": "cpu"}
_CPU_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(--device[ =])gpu\b"), r"\1cpu"),
    (re.compile(r"(Global\.device=)gpu\b"), r"\1cpu"),
    (re.compile(r"\b(use_gpu=)True\b"), r"\1False"),
)
_SCRIPT_SLOTS = (
    "norm_train",
    "pact_train",
    "fpgm_train",
    "distill_train",
    "trainer1",
    "trainer2",
    "eval",
    "norm_export",
    "pact_export",
    "fpgm_export",
    "distill_export",
    "inference",
)


def _cpu_items(value: str, *, keep_one: bool) -> str:
    items = value.split("|")
    mapped = [_CPU_VALUE.get(item, item) for item in items]
    if keep_one:
        seen: list[str] = []
        for item in mapped:
            if item not in seen:
                seen.append(item)
        return "|".join(seen)
    return "|".join(mapped)


@dataclass
class _Changes:
    """Slot overrides being gathered for one config; each change is an info finding at its slot."""

    cfg: TipcConfig
    slots: dict[str, Slot] = field(default_factory=dict)
    notes: list[Finding] = field(default_factory=list)

    def current(self, name: str) -> Slot:
        return self.slots.get(name, self.cfg.slot(name))

    def change(self, name: str, value: str, why: str) -> None:
        slot = self.current(name)
        if slot.value == value:
            return
        self.slots[name] = slot.with_value(value)
        self.notes.append(
            Finding(
                self.cfg.path,
                slot.line,
                slot.col,
                Level.INFO,
                "TIPC900",
                f"overridden ({why}): {slot.key or name} {slot.value!r} -> {value!r}",
            )
        )


def apply_overrides(cfg: TipcConfig, overrides: Overrides, mode: Mode) -> tuple[TipcConfig, list[Finding]]:
    """Apply --device / --set in memory; each change is reported as an info finding at its slot."""
    changes = _Changes(cfg)
    if overrides.device not in (None, "cpu", "gpu"):
        raise UserError(f"--device {overrides.device!r}: expected cpu or gpu")
    if overrides.device == "cpu":
        _cpu_changes(changes)
    _set_changes(changes, overrides.sets, mode)
    if not changes.slots:
        return cfg, changes.notes
    return replace(cfg, **changes.slots), changes.notes  # type: ignore[arg-type]


def _cpu_changes(changes: _Changes) -> None:
    # gpu_list keeps its items, so folders and logs keep their names (chain.builder.build(device=)):
    # the use_gpu values, one per item, all take their CPU form.
    cfg = changes.cfg
    if cfg.train_use_gpu.present and cfg.train_use_gpu.value not in ("", "null", "##"):
        changes.change("train_use_gpu", _cpu_items(cfg.train_use_gpu.value, keep_one=False), "--device cpu")
    if cfg.infer_use_gpu.present:
        changes.change("infer_use_gpu", _cpu_items(cfg.infer_use_gpu.value, keep_one=True), "--device cpu")
    for name in _SCRIPT_SLOTS:
        slot = changes.current(name)
        new = slot.value
        for pattern, repl in _CPU_REWRITES:
            new = pattern.sub(repl, new)
        if new != slot.value:
            changes.change(name, new, "--device cpu")


def _set_changes(changes: _Changes, sets: tuple[tuple[str, str], ...], mode: Mode) -> None:
    """The --set KEY=VALUE overrides; KEY is a slot name, a slot's key, or `epochs` / `batch_size`."""
    cfg = changes.cfg
    by_key: dict[str, str] = {}
    for name in SLOT_NAMES:
        slot = cfg.slot(name)
        if slot.present and slot.key.strip() and slot.key.strip() not in ("null", "##"):
            by_key.setdefault(slot.key.strip(), name)
    for key, value in sets:
        target = key if key in SLOT_NAMES else by_key.get(key.strip())
        if target is None:
            target = {"epochs": "epoch", "batch_size": "train_batch"}.get(key)
        if target is None:
            raise ConfigError(
                cfg.path,
                None,
                f"--set {key}: no slot with that key or field name "
                f"(fields: {', '.join(SLOT_NAMES)}; keys: {', '.join(sorted(by_key))})",
            )
        name = target
        slot = changes.current(name)
        new_value = value
        plain = "=" not in value and "|" not in value
        # Keep a mode-keyed line mode-keyed so the script still picks the value in this mode.
        if name in ("epoch", "train_batch", "train_model_name") and plain and "=" in slot.value:
            new_value = f"{mode}={value}"
        changes.change(name, new_value, f"--set {key}={value}")


# ---------------------------------------------------------------------------------------------------------
# rendering


def _fmt_env(step: Step) -> str:
    parts = [f"{k}={v}" for k, v in step.env]
    parts += [f"-{k}" for k in step.unset_env]
    return " ".join(parts)


def format_plan(plan: Plan) -> str:
    """A readable numbered list of the steps (also `tipc run --dry-run`)."""
    head = (
        f"plan: {plan.model_name or '?'} | mode {plan.mode} | dialect {plan.dialect} | "
        f"{len(plan.steps)} step{'s' if len(plan.steps) != 1 else ''}\n"
        f"config: {plan.config_path}\nrepo:   {plan.repo}\n"
        f"output: {plan.output_dir}  (status log {plan.results_log})\n"
    )
    if plan.isolated:
        head += (
            "isolated: what `tipc run` executes; writes outside the output folder go to "
            f"{plan.output_dir}/{ISOLATED_DIR} (TIPC910; `tipc plan` without --isolated shows the script's)\n"
        )
    lines = [head]
    width = len(str(len(plan.steps)))
    for n, step in enumerate(plan.steps, 1):
        lines.append(f"{n:>{width}}. [{step.stage.value}] {step.id}")
        pad = " " * (width + 2)
        lines.append(f"{pad}$ {shlex.join(step.argv)}")
        extras = []
        if step.cwd != ".":
            extras.append(f"cwd: {step.cwd}")
        env = _fmt_env(step)
        if env:
            extras.append(f"env: {env}")
        extras.append(f"log: {step.log or '(console)'}")
        if step.depends_on:
            extras.append(f"after: {', '.join(step.depends_on)}")
        lines.append(f"{pad}{'  '.join(extras)}")
        if step.not_applicable:
            lines.append(f"{pad}not applicable (planned, not run): {step.not_applicable}")
    shown = [f for f in plan.findings if f.level is not Level.INFO or f.code.startswith("TIPC9")]
    hidden = len(plan.findings) - len(shown)
    if shown:  # a header is followed by what it announces; info notes are counted, not listed
        lines.append("")
        also = f", {hidden} info not shown" if hidden else ""
        lines.append(f"findings ({len(plan.findings)}{also}; --format json lists all):")
        lines.extend(f"  {finding.format()}" for finding in shown)
    elif hidden:
        lines.append("")
        some = f"{hidden} info findings not shown (--format json lists them)"
        lines.append(some if hidden > 1 else "1 info finding not shown (--format json lists it)")
    return "\n".join(lines) + "\n"


def status_line(plan: Plan, step: Step, ok: bool = True) -> str:
    """The step's status line exactly as the dialect's script appends it to its results log (the runner's
    writer, tipc.core.results, fed from the plan; an unknown format is read as PaddleOCR's)."""
    from tipc.core.results import STATUS_FORMATS, log_field
    from tipc.core.results import status_line as format_status_line

    fmt = plan.status_format if plan.status_format in STATUS_FORMATS else "ocr"
    return format_status_line(
        fmt,
        ok=ok,
        command=step.status_command,
        model_name=plan.model_name,
        log_path=log_field(fmt, step.status_log, plan.repo),
    )


# ---------------------------------------------------------------------------------------------------------
# isolation: what `tipc run` / `tipc check` execute


ISOLATED_DIR = "tipc_isolated"
_BOUNDARY = r"(?=[\s/'\"]|$)"


def _norm_rel(path: str, repo: str) -> str:
    """A path in the repo-relative normal form used to compare it with output_dir ('' = the repo root)."""
    top = repo.rstrip("/")
    if path == top or path.startswith(top + "/"):
        path = path[len(top) :].lstrip("/")
    norm = posixpath.normpath(path) if path else "."
    return "" if norm == "." else norm


def _inside(path: str, plan: Plan) -> bool:
    rel = _norm_rel(path, plan.repo)
    out = _norm_rel(plan.output_dir, plan.repo)
    return not rel.startswith("/") and (rel == out or rel.startswith(out + "/"))


def _isolated_path(path: str, plan: Plan) -> str:
    """`./<output_dir>/tipc_isolated/<path>`: the path's layout is kept, so distinct targets stay distinct."""
    rel = _norm_rel(path, plan.repo)
    parts = ["__" if p == ".." else p for p in rel.split("/") if p] or ["repo_root"]
    if rel.startswith("/"):
        parts = ["abs", *parts]
    return f"./{_norm_rel(plan.output_dir, plan.repo)}/{ISOLATED_DIR}/" + "/".join(parts)


def _sub(pattern: str, new: str, text: str) -> str:
    """re.sub with a literal replacement (paths may hold backslashes)."""
    return re.sub(pattern, lambda _: new, text)


def _repoint(text: str, start: str, old: str, new: str, plan: Plan) -> str:
    """Paths at or under `old` (after `start`) repointed under `new`; ones inside output_dir stay as they are.

    An export may write to an ancestor of output_dir (PaddleSeg exports into ./test_tipc/output/<model>); the
    logs and result folders inside output_dir must keep their names.
    """
    root = old.rstrip("/") or old
    pattern = re.compile(start + re.escape(root) + r"(?P<rest>(?:/[^\s'\"]*)?)(?=[\s'\"]|$)")

    def repl(match: re.Match[str]) -> str:
        if _inside(root + match["rest"], plan):
            return match.group(0)
        return new + match["rest"]

    return pattern.sub(repl, text)


def _replace_root(text: str, old: str, new: str, plan: Plan) -> str:
    """Every whitespace- or `=`-delimited occurrence of `old` (or a path under it) in a command string."""
    return _repoint(text, r"(?<=[\s=])", old, new, plan)


def _replace_token(argv: tuple[str, ...], old: str, new: str, plan: Plan) -> tuple[str, ...]:
    return tuple(_repoint(word, r"(?:^|(?<==))", old, new, plan) for word in argv)


def _argument_at(argv: tuple[str, ...], flag: str, path: str) -> int | None:
    """Index of the word passing `path` to `flag`: `flag=path`, or `path` right after `flag` (PaddleGAN)."""
    for i, word in enumerate(argv):
        if word == f"{flag}={path}" or (word == path and i > 0 and argv[i - 1] == flag):
            return i
    return None


def _dependents(plan: Plan, step_id: str) -> list[int]:
    """Indices of the steps that (transitively) consume `step_id`'s outputs."""
    found = {step_id}
    out: list[int] = []
    for n, step in enumerate(plan.steps):
        if any(dep in found for dep in step.depends_on):
            found.add(step.id)
            out.append(n)
    return out


def isolate(plan: Plan) -> Plan:
    """The plan `tipc run` / `tipc check` execute: known writes outside output_dir redirected into it.

    Pure and idempotent. `tipc plan` keeps showing the faithful commands. In the writing step, the `key=path`
    argument naming an output folder outside `plan.output_dir` (the template's whole_infer export into the
    folder of `infer_model`, PaddleOCR's into infer_model itself, PaddleDetection's ./output_inference, a
    compact config's save_inference_dir, fastflow's exp_dir...) becomes `./<output_dir>/tipc_isolated/<path>`,
    and so does the same path in the steps that consume it; a log named outside output_dir moves into it.
    Each rewrite is a TIPC910 finding saying what the script would have written where; a write that cannot
    be redirected (free-form command, no output argument, another cwd) is a TIPC911 warning.
    """
    if plan.chain == "serving":
        from tipc.planning.serving import isolate_serving

        return isolate_serving(plan)
    if plan.isolated:
        return plan
    work = _Isolating(plan, list(plan.steps))
    for n, original in enumerate(plan.steps):
        step = work.steps[n]
        if step.writes_unknown:
            work.note(
                step,
                "TIPC911",
                Level.WARNING,
                f"{step.writes_unknown}; tipc cannot keep it in {plan.output_dir}",
            )
        for key, path in original.writes:
            work.redirect_write(n, original, key, path)
    for n in range(len(work.steps)):
        work.redirect_log(n)
    return replace(
        plan, steps=tuple(work.steps), findings=plan.findings + tuple(work.findings), isolated=True
    )


@dataclass
class _Isolating:
    """`isolate`'s work on one plan: the steps as rewritten so far and the findings saying so."""

    plan: Plan
    steps: list[Step]
    findings: list[Finding] = field(default_factory=list)

    def note(self, step: Step, code: str, level: Level, message: str) -> None:
        line = step.source_lines[0] if step.source_lines else 0
        self.findings.append(Finding(self.plan.config_path, line, 0, level, code, f"{step.id}: {message}"))

    def redirect_write(self, n: int, original: Step, key: str, path: str) -> None:
        """Point step n's `key=path` output (and the steps consuming it) into output_dir, or say why not."""
        plan, step = self.plan, self.steps[n]
        words = key.split()
        flag = words[-1] if words else ""
        joined = f"{flag}={path}"
        at = _argument_at(step.argv, flag, path)
        if at is None:
            self.note(
                step,
                "TIPC911",
                Level.WARNING,
                f"its command passes no {joined} (this script's command shape leaves it out): it writes "
                "where its own script defaults to, which tipc cannot redirect",
            )
            return
        if _inside(path, plan):
            return
        if step.cwd != ".":
            self.note(
                step,
                "TIPC911",
                Level.WARNING,
                f"writes {path} (outside {plan.output_dir}) relative to {step.cwd}/, "
                "which tipc cannot redirect",
            )
            return
        new = _isolated_path(path, plan)
        argv = list(step.argv)
        argv[at] = f"{flag}={new}" if argv[at] == joined else new
        command = step.status_command
        for sep in ("=", " "):
            command = _sub(re.escape(f"{key}{sep}{path}") + _BOUNDARY, f"{key}{sep}{new}", command)
        self.steps[n] = step = replace(
            step,
            argv=tuple(argv),
            status_command=command,
            writes=tuple((k, new if (k, p) == (key, path) else p) for k, p in step.writes),
        )
        users = self._repoint_users(original, path, new)
        pointed = f" and points {', '.join(users)} there" if users else ""
        self.note(
            step,
            "TIPC910",
            Level.INFO,
            f"the script writes {key}={path} (outside {plan.output_dir}); tipc writes {new} instead{pointed}",
        )

    def _repoint_users(self, original: Step, path: str, new: str) -> list[str]:
        """Rewrite `path` to `new` in the steps consuming `original`'s outputs; the ids of those changed."""
        users = []
        for m in _dependents(self.plan, original.id):
            dep = self.steps[m]
            changed = replace(
                dep,
                argv=_replace_token(dep.argv, path, new, self.plan),
                status_command=_replace_root(dep.status_command, path, new, self.plan),
            )
            if changed != dep:
                self.steps[m] = changed
                users.append(dep.id)
        return users

    def redirect_log(self, n: int) -> None:
        """Move step n's log into output_dir when the script names it outside."""
        plan, step = self.plan, self.steps[n]
        if not step.log or _inside(step.log, plan):
            return
        new_log = f"{_norm_rel(plan.output_dir, plan.repo)}/{posixpath.basename(step.log)}"
        command = step.status_command
        for spelled in (f"{plan.repo.rstrip('/')}/{step.log}", f"./{step.log}", step.log):
            command = _sub(r"(?<=[\s>])" + re.escape(spelled) + r"(?=\s|$)", f"./{new_log}", command)
        self.note(
            step,
            "TIPC910",
            Level.INFO,
            f"the script logs to {step.log} (outside {plan.output_dir}); tipc logs to {new_log} instead",
        )
        self.steps[n] = replace(
            step,
            log=new_log,
            status_log=new_log if step.status_log == step.log else step.status_log,
            status_command=command,
        )
