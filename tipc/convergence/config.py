"""Seed 003's YAML test config as typed values, with every schema error located (file:line).

The format is the original harness's, read unchanged: top-level test names, each with `directory`,
`executable`, `log_output`, `log_parsing` (mandatory `step_num` and `model_save` parsers, metric regexes with
optional `labels`), `metrics` (`margin`, `comparison`), `recording.steps_to_record_after_save` and `flags`
(`common` / `gather` / `run`, `set_in_script`, `misc`). tipc's additions are optional and ignored by the
original: `metrics.<m>.abs_margin` (an absolute tolerance for values near zero), `flags.gather.seed`
(a set-in-script seed flag for `gather --seeds K`) and `timeout_s` (per segment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.errors import ConfigError
from tipc.rules.yamlnodes import LMap, LSeq, YamlShapeError, load_located

COMPARISONS = ("==", "!=", "<=", "<", ">=", ">")
MANDATORY_PARSERS = ("step_num", "model_save")
GATHER_FLAGS = ("checkpoint_output",)
RUN_FLAGS = ("checkpoint_input", "start_step", "run_for")
OPTIONAL_SCRIPT_FLAGS = {"gather": ("seed",), "run": ()}
_TEST_KEYS = frozenset(
    {"directory", "executable", "log_output", "log_parsing", "metrics", "recording", "flags", "timeout_s"}
)


@dataclass(frozen=True)
class LogParser:
    name: str
    regex: re.Pattern[str]
    labels: tuple[str, ...] | None
    line: int

    def parse(self, text: str) -> dict[str, str] | None:
        """The groups of the first match keyed by label, or by index when labels and groups differ in
        number (the original's fallback); None when the line does not match."""
        m = self.regex.search(text)
        if m is None:
            return None
        groups = m.groups()
        if self.labels is not None and len(self.labels) == len(groups):
            keys: tuple[str, ...] = self.labels
        else:
            keys = tuple(str(i) for i in range(len(groups)))
        return {k: (g if g is not None else "") for k, g in zip(keys, groups, strict=True)}

    def first(self, text: str) -> str | None:
        m = self.regex.search(text)
        if m is None:
            return None
        return m.group(1) if m.groups() else m.group(0)


@dataclass(frozen=True)
class Metric:
    name: str
    margin: float
    comparison: str
    abs_margin: float
    line: int


@dataclass(frozen=True)
class Flag:
    name: str
    key: str
    value: object  # None: a key-only flag
    set_in_script: bool
    line: int

    def argv(self, value: object = None) -> list[str]:
        chosen = value if self.set_in_script else self.value
        return [self.key] if chosen is None else [self.key, _text(chosen)]


def _text(value: object) -> str:
    return str(value)


@dataclass(frozen=True)
class ModeFlags:
    script: dict[str, Flag]  # mandatory / tipc-known flags the harness fills
    misc: tuple[Flag, ...]


@dataclass(frozen=True)
class TestConfig:
    __test__ = False  # not a pytest test class

    name: str
    path: str
    line: int
    directory: str
    directory_line: int
    executable: tuple[str, ...]
    log_output: str
    parsers: dict[str, LogParser]
    metrics: dict[str, Metric]
    steps_to_record: int
    common: tuple[Flag, ...]
    gather: ModeFlags
    run: ModeFlags
    timeout_s: float | None

    @property
    def step_parser(self) -> LogParser:
        return self.parsers["step_num"]

    @property
    def save_parser(self) -> LogParser:
        return self.parsers["model_save"]

    def gather_argv(self, checkpoint_output: str, seed: int | None = None) -> list[str]:
        argv = list(self.executable)
        argv += self.gather.script["checkpoint_output"].argv(checkpoint_output)
        if seed is not None:
            argv += self.gather.script["seed"].argv(seed)
        for flag in (*self.gather.misc, *self.common):
            argv += flag.argv()
        return argv

    def run_argv(self, checkpoint_input: str, start_step: int, run_for: int) -> list[str]:
        argv = list(self.executable)
        values = {"checkpoint_input": checkpoint_input, "start_step": start_step, "run_for": run_for}
        for name in RUN_FLAGS:
            argv += self.run.script[name].argv(values[name])
        for flag in (*self.run.misc, *self.common):
            argv += flag.argv()
        return argv

    def resolve_directory(self) -> Path:
        """`directory` as the original meant it (relative to where the harness runs) or, for configs that
        travel with their repo, relative to the config file's folder; the config's folder wins when both
        exist only if the working directory has no such folder."""
        raw = Path(self.directory)
        if raw.is_absolute():
            candidates = [raw]
        else:
            candidates = [Path(self.path).resolve().parent / raw, Path.cwd() / raw]
        for cand in candidates:
            if cand.is_dir():
                return cand.resolve()
        raise ConfigError(self.path, self.directory_line, f"directory {self.directory!r} does not exist")


class _Ctx:
    def __init__(self, path: str) -> None:
        self.path = path

    def err(self, line: int | None, message: str) -> ConfigError:
        return ConfigError(self.path, line, message)

    def mapping(self, node: Any, line: int, what: str) -> LMap:
        if not isinstance(node, LMap):
            raise self.err(line, f"{what} must be a mapping")
        return node

    def string(self, node: Any, line: int, what: str) -> str:
        if isinstance(node, bool) or not isinstance(node, str | int | float) or node == "":
            raise self.err(line, f"{what} must be a non-empty string")
        return str(node)

    def number(self, node: Any, line: int, what: str, *, minimum: float = 0.0) -> float:
        if isinstance(node, bool) or not isinstance(node, int | float) or node < minimum:
            raise self.err(line, f"{what} must be a number >= {minimum:g}")
        return float(node)

    def required(self, node: LMap, key: str, what: str) -> Any:
        if key not in node.items:
            raise self.err(node.line, f"{what}: missing {key!r}")
        return node.items[key]


def _parser(c: _Ctx, name: str, node: Any, line: int) -> LogParser:
    m = c.mapping(node, line, f"log_parsing.{name}")
    unknown = set(m.items) - {"regex", "labels"}
    if unknown:
        key = sorted(unknown)[0]
        raise c.err(m.line_of(key), f"log_parsing.{name}: unknown key {key!r} (expected regex, labels)")
    raw = c.string(
        c.required(m, "regex", f"log_parsing.{name}"), m.line_of("regex"), f"log_parsing.{name}.regex"
    )
    try:
        regex = re.compile(raw)
    except re.error as exc:
        raise c.err(m.line_of("regex"), f"log_parsing.{name}.regex does not compile: {exc}") from None
    if name in MANDATORY_PARSERS and regex.groups < 1:
        raise c.err(m.line_of("regex"), f"log_parsing.{name}.regex needs one group (the {name} value)")
    labels: tuple[str, ...] | None = None
    if "labels" in m.items and m.items["labels"] is not None:
        seq = m.items["labels"]
        if not isinstance(seq, LSeq):
            raise c.err(m.line_of("labels"), f"log_parsing.{name}.labels must be a list")
        labels = tuple(
            c.string(v, seq.line_of(i), f"log_parsing.{name}.labels[{i}]") for i, v in enumerate(seq.items)
        )
        if len(set(labels)) != len(labels):
            raise c.err(m.line_of("labels"), f"log_parsing.{name}.labels repeat a name")
    return LogParser(name, regex, labels, m.line_of("regex"))


def _metric(c: _Ctx, name: str, node: Any, line: int, parsers: dict[str, LogParser]) -> Metric:
    m = c.mapping(node, line, f"metrics.{name}")
    unknown = set(m.items) - {"margin", "comparison", "abs_margin"}
    if unknown:
        key = sorted(unknown)[0]
        raise c.err(
            m.line_of(key), f"metrics.{name}: unknown key {key!r} (expected margin, comparison, abs_margin)"
        )
    if name not in parsers or name in MANDATORY_PARSERS:
        raise c.err(line, f"metrics.{name}: no log_parsing.{name} regex to read it from the log")
    margin = c.number(
        c.required(m, "margin", f"metrics.{name}"), m.line_of("margin"), f"metrics.{name}.margin"
    )
    comparison = c.required(m, "comparison", f"metrics.{name}")
    if comparison not in COMPARISONS:
        raise c.err(
            m.line_of("comparison"),
            f"metrics.{name}.comparison {comparison!r} is not one of {', '.join(COMPARISONS)}",
        )
    abs_margin = 0.0
    if "abs_margin" in m.items:
        abs_margin = c.number(m.items["abs_margin"], m.line_of("abs_margin"), f"metrics.{name}.abs_margin")
    return Metric(name, margin, str(comparison), abs_margin, line)


def _flag(c: _Ctx, where: str, name: str, node: Any, line: int) -> Flag:
    m = c.mapping(node, line, f"{where}.{name}")
    unknown = set(m.items) - {"key", "value", "set_in_script"}
    if unknown:
        key = sorted(unknown)[0]
        raise c.err(
            m.line_of(key), f"{where}.{name}: unknown key {key!r} (expected key, value, set_in_script)"
        )
    key = c.string(c.required(m, "key", f"{where}.{name}"), m.line_of("key"), f"{where}.{name}.key")
    value = m.items.get("value")
    if isinstance(value, LMap | LSeq):
        raise c.err(
            m.line_of("value"), f"{where}.{name}.value must be a single value (or null for a key-only flag)"
        )
    sis = m.items.get("set_in_script", False)
    if not isinstance(sis, bool):
        raise c.err(m.line_of("set_in_script"), f"{where}.{name}.set_in_script must be true or false")
    return Flag(name, key, value, sis, line)


def _flag_list(c: _Ctx, where: str, node: Any, line: int) -> tuple[Flag, ...]:
    if node is None:
        return ()
    m = c.mapping(node, line, where)
    return tuple(_flag(c, where, k, v, m.line_of(k)) for k, v in m.items.items())


def _mode(c: _Ctx, flags: LMap, mode: str, mandatory: tuple[str, ...]) -> ModeFlags:
    if mode not in flags.items:
        raise c.err(flags.line, f"flags: missing {mode!r} (both gather and run flags are required)")
    m = c.mapping(flags.items[mode], flags.line_of(mode), f"flags.{mode}")
    script: dict[str, Flag] = {}
    misc: tuple[Flag, ...] = ()
    for key, value in m.items.items():
        if key == "misc":
            misc = tuple(
                f for f in _flag_list(c, f"flags.{mode}.misc", value, m.line_of(key)) if not f.set_in_script
            )
        elif key in mandatory or key in OPTIONAL_SCRIPT_FLAGS[mode]:
            script[key] = _flag(c, f"flags.{mode}", key, value, m.line_of(key))
        else:
            raise c.err(
                m.line_of(key),
                f"flags.{mode}: unknown flag {key!r} (harness flags: {', '.join(mandatory)}; "
                "application flags go under misc)",
            )
    for key in mandatory:
        if key not in script:
            raise c.err(flags.line_of(mode), f"flags.{mode}: missing mandatory flag {key!r}")
    return ModeFlags(script, misc)


def _test(c: _Ctx, name: str, node: Any, line: int) -> TestConfig:
    t = c.mapping(node, line, f"test {name!r}")
    for key in t.items:
        if key not in _TEST_KEYS:
            raise c.err(
                t.line_of(key), f"{name}: unknown key {key!r} (expected {', '.join(sorted(_TEST_KEYS))})"
            )
    directory = c.string(c.required(t, "directory", name), t.line_of("directory"), f"{name}.directory")
    exe = c.required(t, "executable", name)
    if isinstance(exe, str):
        exe = LSeq([exe], t.line_of("executable"), [t.line_of("executable")])
    if not isinstance(exe, LSeq) or not exe.items:
        raise c.err(t.line_of("executable"), f"{name}.executable must be a non-empty list of strings")
    executable = tuple(
        c.string(v, exe.line_of(i), f"{name}.executable[{i}]") for i, v in enumerate(exe.items)
    )
    log_output = t.items.get("log_output", "stdout")
    if log_output not in ("stdout", "stderr"):
        raise c.err(t.line_of("log_output"), f"{name}.log_output must be stdout or stderr")
    lp = c.mapping(c.required(t, "log_parsing", name), t.line_of("log_parsing"), f"{name}.log_parsing")
    parsers = {k: _parser(c, k, v, lp.line_of(k)) for k, v in lp.items.items()}
    for must in MANDATORY_PARSERS:
        if must not in parsers:
            raise c.err(t.line_of("log_parsing"), f"{name}.log_parsing: missing the mandatory {must!r} regex")
    mt = c.mapping(c.required(t, "metrics", name), t.line_of("metrics"), f"{name}.metrics")
    metrics = {k: _metric(c, k, v, mt.line_of(k), parsers) for k, v in mt.items.items()}
    if not metrics:
        raise c.err(mt.line, f"{name}.metrics: name at least one metric to compare")
    rec = c.mapping(c.required(t, "recording", name), t.line_of("recording"), f"{name}.recording")
    steps = c.required(rec, "steps_to_record_after_save", f"{name}.recording")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise c.err(
            rec.line_of("steps_to_record_after_save"), "steps_to_record_after_save must be an integer >= 1"
        )
    fl = c.mapping(c.required(t, "flags", name), t.line_of("flags"), f"{name}.flags")
    for key in fl.items:
        if key not in ("common", "gather", "run"):
            raise c.err(
                fl.line_of(key), f"{name}.flags: unknown section {key!r} (expected common, gather, run)"
            )
    common = tuple(
        f
        for f in _flag_list(c, "flags.common", fl.items.get("common"), fl.line_of("common"))
        if not f.set_in_script
    )
    gather = _mode(c, fl, "gather", GATHER_FLAGS)
    run = _mode(c, fl, "run", RUN_FLAGS)
    timeout_s = None
    if "timeout_s" in t.items:
        timeout_s = c.number(t.items["timeout_s"], t.line_of("timeout_s"), f"{name}.timeout_s", minimum=1.0)
    return TestConfig(
        name,
        c.path,
        line,
        directory,
        t.line_of("directory"),
        executable,
        str(log_output),
        parsers,
        metrics,
        steps,
        common,
        gather,
        run,
        timeout_s,
    )


def load_text(text: str, path: str) -> dict[str, TestConfig]:
    c = _Ctx(path)
    try:
        doc = load_located(text)
    except YamlShapeError as exc:
        raise c.err(exc.line, exc.message) from None
    if not isinstance(doc, LMap) or not doc.items:
        raise c.err(1, "a convergence config maps test names to their settings")
    return {name: _test(c, name, node, doc.line_of(name)) for name, node in doc.items.items()}


def read_text_bounded(path: Path, limit: int, what: str) -> str:
    """A regular file's UTF-8 text, at most `limit` bytes; special files are refused before reading (the
    bounded reader `tipc lint` uses), so a FIFO or /dev/zero given as an input cannot hang or flood tipc."""
    from tipc.config.parse import read_bytes_bounded

    data = read_bytes_bounded(path, limit, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(str(path), line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})") from None


MAX_CONFIG_BYTES = 1024 * 1024


def load(path: str | Path) -> dict[str, TestConfig]:
    p = Path(path)
    return load_text(read_text_bounded(p, MAX_CONFIG_BYTES, "a convergence config"), str(p))


def select(tests: dict[str, TestConfig], names: list[str] | None, path: str) -> list[TestConfig]:
    if not names:
        return list(tests.values())
    missing = [n for n in names if n not in tests]
    if missing:
        raise ConfigError(path, None, f"no test named {missing[0]!r} (tests: {', '.join(tests)})")
    return [tests[n] for n in names]
