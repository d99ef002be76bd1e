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

from tipc.core import yamlschema as ys
from tipc.core.errors import ConfigError
from tipc.core.yamlschema import Document, Keys

COMPARISONS = ("==", "!=", "<=", "<", ">=", ">")
MANDATORY_PARSERS = ("step_num", "model_save")
GATHER_FLAGS = ("checkpoint_output",)
RUN_FLAGS = ("checkpoint_input", "start_step", "run_for")
OPTIONAL_SCRIPT_FLAGS = {"gather": ("seed",), "run": ()}


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


_TEXT = ys.Str(scalar=True)
_PARSER = ys.Map(
    {
        "regex": ys.Field(ys.Str(scalar=True, check=ys.regex_problem, what="a regex"), True),
        "labels": ys.Field(ys.Seq(_TEXT, nullable=True)),
    }
)
_METRIC = ys.Map(
    {
        "margin": ys.Field(ys.Num(minimum=0), True),
        "comparison": ys.Field(ys.Enum(COMPARISONS), True),
        "abs_margin": ys.Field(ys.Num(minimum=0)),
    }
)
_FLAG = ys.Map(
    {
        "key": ys.Field(_TEXT, True),
        "value": ys.Field(ys.Scalar(what="a single value (or null for a key-only flag)")),
        "set_in_script": ys.Field(ys.Bool(), default=False),
    }
)
_FLAGS = ys.Map(values=_FLAG, nullable=True, what="a mapping of flag names to {key, value, set_in_script}")


def _mode_schema(mode: str, mandatory: tuple[str, ...]) -> ys.Map:
    fields = {name: ys.Field(_FLAG, True) for name in mandatory}
    fields.update({name: ys.Field(_FLAG) for name in OPTIONAL_SCRIPT_FLAGS[mode]})
    fields["misc"] = ys.Field(_FLAGS)
    return ys.Map(fields, hint=f"harness flags: {', '.join(mandatory)}; application flags go under misc")


_TEST = ys.Map(
    {
        "directory": ys.Field(_TEXT, True),
        "executable": ys.Field(ys.OneOf((_TEXT, ys.Seq(_TEXT, min_items=1))), True),
        "log_output": ys.Field(ys.Enum(("stdout", "stderr")), default="stdout"),
        "log_parsing": ys.Field(
            ys.Map({name: ys.Field(_PARSER, True) for name in MANDATORY_PARSERS}, values=_PARSER), True
        ),
        "metrics": ys.Field(
            ys.Map(values=_METRIC, min_items=1, what="a mapping naming at least one metric"), True
        ),
        "recording": ys.Field(
            ys.Map({"steps_to_record_after_save": ys.Field(ys.Int(minimum=1), True)}), True
        ),
        "flags": ys.Field(
            ys.Map(
                {
                    "common": ys.Field(_FLAGS),
                    "gather": ys.Field(_mode_schema("gather", GATHER_FLAGS), True),
                    "run": ys.Field(_mode_schema("run", RUN_FLAGS), True),
                }
            ),
            True,
        ),
        "timeout_s": ys.Field(ys.Num(minimum=1)),
    }
)
CONFIG = ys.Map(values=_TEST, min_items=1, what="a mapping of test names to their settings")


def _parser(doc: Document, name: str, raw: dict[str, Any], keys: Keys) -> LogParser:
    regex = re.compile(raw["regex"])
    if name in MANDATORY_PARSERS and regex.groups < 1:
        raise doc.error((*keys, "regex"), f"needs one group (the {name} value)")
    labels = raw.get("labels")
    if labels and len(set(labels)) != len(labels):
        raise doc.error((*keys, "labels"), "labels repeat a name")
    return LogParser(name, regex, tuple(labels) if labels else None, doc.line((*keys, "regex")))


def _flags(doc: Document, raw: dict[str, Any], keys: Keys) -> dict[str, Flag]:
    return {
        name: Flag(name, f["key"], f.get("value"), f["set_in_script"], doc.line((*keys, name)))
        for name, f in raw.items()
    }


def _mode(doc: Document, raw: dict[str, Any], keys: Keys) -> ModeFlags:
    script = _flags(doc, {k: v for k, v in raw.items() if k != "misc"}, keys)
    misc = _flags(doc, raw.get("misc", {}), (*keys, "misc"))
    return ModeFlags(script, tuple(f for f in misc.values() if not f.set_in_script))


def _test(doc: Document, name: str, raw: dict[str, Any]) -> TestConfig:
    keys: Keys = (name,)
    parsers = {k: _parser(doc, k, v, (name, "log_parsing", k)) for k, v in raw["log_parsing"].items()}
    metrics = {}
    for metric, m in raw["metrics"].items():
        if metric not in parsers or metric in MANDATORY_PARSERS:
            raise doc.error(
                (name, "metrics", metric), f"no log_parsing.{metric} regex to read it from the log"
            )
        line = doc.line((name, "metrics", metric))
        metrics[metric] = Metric(
            metric, float(m["margin"]), m["comparison"], float(m.get("abs_margin", 0.0)), line
        )
    flags = raw["flags"]
    exe = raw["executable"]
    timeout = raw.get("timeout_s")
    return TestConfig(
        name,
        doc.path,
        doc.line(keys),
        raw["directory"],
        doc.line((*keys, "directory")),
        tuple(exe) if isinstance(exe, list) else (exe,),
        raw["log_output"],
        parsers,
        metrics,
        raw["recording"]["steps_to_record_after_save"],
        tuple(
            f
            for f in _flags(doc, flags.get("common", {}), (*keys, "flags", "common")).values()
            if not f.set_in_script
        ),
        _mode(doc, flags["gather"], (*keys, "flags", "gather")),
        _mode(doc, flags["run"], (*keys, "flags", "run")),
        None if timeout is None else float(timeout),
    )


def load_text(text: str, path: str) -> dict[str, TestConfig]:
    doc = Document(text, path)
    data = doc.conform(CONFIG)
    return {name: _test(doc, name, raw) for name, raw in data.items()}


def read_text_bounded(path: Path, limit: int, what: str) -> str:
    """A regular file's UTF-8 text, at most `limit` bytes; special files are refused before reading (the
    bounded reader `tipc lint` uses), so a FIFO or /dev/zero given as an input cannot hang or flood tipc."""
    from tipc.config.parse import read_bytes_bounded
    from tipc.core.yamlschema import decode

    return decode(read_bytes_bounded(path, limit, what), str(path))


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
