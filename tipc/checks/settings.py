"""`test_tipc/tipc.yaml`: tipc's optional per-repo settings, validated with file:line errors.

Schema (every key optional; unknown keys are errors so typos never pass silently):

    python: /path/to/python            # interpreter for model-side work (default: the run's python)
    agreement:
      inputs: lite_data/infer_inputs.npy   # repo-relative .npy (or .npz: first array) batch
      engines: [paddle_inference, onnxruntime]
      tolerances: {atol: 1.0e-5, rtol: 1.0e-4, cosine_min: 0.99999}
      seed: 0                          # for random inputs when `inputs` is absent
      timeout_s: 300
      predict_args: "predict.py --img_path {image}"   # string (shell-split) or list; {image} substituted
      infer_args: "infer.py --model_dir ... --img_path {image}"
      images: [lite_data/test/0.png]
      prob_atol: 1.0e-5                # predict vs infer probability tolerance
      plugins: [my_pkg.serving_engine]   # modules the worker imports to register more engines
      engine_options: {serving: {url: "http://127.0.0.1:9393"}}   # keyword arguments per engine factory
    log_fields:
      require_eval: true
      fields: [loss, avg_reader_cost, avg_batch_cost, avg_ips]
    convergence:
      max_iters: 100
      window: 10
      alpha: 0.05
      min_points: 8
    ground_truth:
      atol: 1.0e-3
      rtol: 1.0e-3
      modes: [whole_infer, klquant_whole_infer]   # modes whose inference uses the pretrained model
    serving:
      model_dir: output/inference      # repo-relative exported model the serving check serves

`CheckContext.settings` may hold either the raw mapping or a `Settings`; checks call `as_settings()`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipc.errors import ConfigError

SETTINGS_PATH = "test_tipc/tipc.yaml"

DEFAULT_ENGINES: tuple[str, ...] = ("paddle_inference", "onnxruntime")
DEFAULT_LOG_FIELDS: tuple[str, ...] = ("loss", "avg_reader_cost", "avg_batch_cost", "avg_ips")


@dataclass(frozen=True)
class Tolerances:
    atol: float = 1e-5
    rtol: float = 1e-4
    cosine_min: float = 0.99999


@dataclass(frozen=True)
class AgreementSettings:
    inputs: str | None = None
    engines: tuple[str, ...] = DEFAULT_ENGINES
    tolerances: Tolerances = field(default_factory=Tolerances)
    seed: int = 0
    timeout_s: float = 300.0
    predict_args: tuple[str, ...] | None = None
    infer_args: tuple[str, ...] | None = None
    images: tuple[str, ...] = ()
    prob_atol: float = 1e-5
    plugins: tuple[str, ...] = ()  # modules the worker imports to register extra engines (e.g. serving)
    engine_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # engine -> factory kwargs


@dataclass(frozen=True)
class LogFieldsSettings:
    require_eval: bool | None = None  # None: require eval lines only if the log shows any
    fields: tuple[str, ...] = DEFAULT_LOG_FIELDS


@dataclass(frozen=True)
class ConvergenceSettings:
    max_iters: int = 100
    window: int | None = None  # None: a fifth of the points, at least 3
    alpha: float = 0.05
    min_points: int = 8


# Ground truth is made from the repo's pretrained model; modes that train first infer with other weights.
GROUND_TRUTH_MODES: tuple[str, ...] = ("whole_infer", "klquant_whole_infer")


@dataclass(frozen=True)
class GroundTruthSettings:
    atol: float = 1e-3
    rtol: float = 1e-3
    modes: tuple[str, ...] = GROUND_TRUTH_MODES


@dataclass(frozen=True)
class ServingSettings:
    model_dir: str | None = None  # default: found from the run's export / inference steps


@dataclass(frozen=True)
class Settings:
    python: str | None = None
    agreement: AgreementSettings = field(default_factory=AgreementSettings)
    log_fields: LogFieldsSettings = field(default_factory=LogFieldsSettings)
    convergence: ConvergenceSettings = field(default_factory=ConvergenceSettings)
    ground_truth: GroundTruthSettings = field(default_factory=GroundTruthSettings)
    serving: ServingSettings = field(default_factory=ServingSettings)
    path: str | None = None  # where they came from, for messages


# ---------------------------------------------------------------------------------------------- validation


class _Where:
    """Line lookup for a path of keys in the located tree of tipc.rules.yamlnodes (the one YAML reader with
    lines that rulesets, the causes catalogue and tipc.yaml share)."""

    def __init__(self, tree: Any, first_line: int | None = None) -> None:
        self.tree = tree
        self.first_line = first_line  # where a document that is a bare scalar starts

    def line(self, keys: tuple[str | int, ...], *, of_key: bool = False) -> int | None:
        from tipc.rules.yamlnodes import line_at

        found = line_at(self.tree, keys)
        return found if found is not None else self.first_line


class _Validator:
    def __init__(self, path: str, where: _Where | None) -> None:
        self.path = path
        self.where = where

    def error(self, keys: tuple[str | int, ...], message: str, *, of_key: bool = False) -> ConfigError:
        line = self.where.line(keys, of_key=of_key) if self.where is not None else None
        dotted = ".".join(str(k) for k in keys)
        return ConfigError(self.path, line, f"{dotted}: {message}" if dotted else message)

    def mapping(self, value: Any, keys: tuple[str | int, ...], allowed: set[str]) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(keys, f"expected a mapping, got {type(value).__name__}")
        for k in value:
            if not isinstance(k, str) or k not in allowed:
                raise self.error(
                    (*keys, str(k)),
                    f"unknown key {k!r}; expected one of: {', '.join(sorted(allowed))}",
                    of_key=True,
                )
        return value

    def number(self, value: Any, keys: tuple[str | int, ...], *, positive: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(keys, f"expected a number, got {value!r}")
        if positive and value <= 0:
            raise self.error(keys, f"expected a positive number, got {value!r}")
        if value < 0:
            raise self.error(keys, f"expected a non-negative number, got {value!r}")
        return float(value)

    def integer(self, value: Any, keys: tuple[str | int, ...], *, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(keys, f"expected an integer, got {value!r}")
        if value < minimum:
            raise self.error(keys, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def boolean(self, value: Any, keys: tuple[str | int, ...]) -> bool:
        if not isinstance(value, bool):
            raise self.error(keys, f"expected true or false, got {value!r}")
        return value

    def string(self, value: Any, keys: tuple[str | int, ...]) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(keys, f"expected a non-empty string, got {value!r}")
        return value

    def strings(self, value: Any, keys: tuple[str | int, ...]) -> tuple[str, ...]:
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list):
            raise self.error(keys, f"expected a list of strings, got {value!r}")
        return tuple(self.string(v, (*keys, i)) for i, v in enumerate(value))

    def argv(self, value: Any, keys: tuple[str | int, ...]) -> tuple[str, ...]:
        if isinstance(value, str):
            try:
                parts = tuple(shlex.split(value))
            except ValueError as exc:
                raise self.error(keys, f"cannot split into arguments: {exc}") from None
            if not parts:
                raise self.error(keys, "expected a command, got an empty string")
            return parts
        if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
            return tuple(str(v) for v in value)
        raise self.error(keys, f"expected a command string or a list of arguments, got {value!r}")


def validate_settings(data: Any, path: str = SETTINGS_PATH, node: Any = None) -> Settings:
    """Turn a parsed mapping into `Settings`; raises ConfigError naming path:line on any problem."""
    where = node if isinstance(node, _Where) or node is None else _Where(node)
    v = _Validator(path, where)
    top = v.mapping(data, (), {"python", "agreement", "log_fields", "convergence", "ground_truth", "serving"})

    python = v.string(top["python"], ("python",)) if top.get("python") is not None else None

    a = v.mapping(
        top.get("agreement"),
        ("agreement",),
        {
            "inputs",
            "engines",
            "tolerances",
            "seed",
            "timeout_s",
            "predict_args",
            "infer_args",
            "images",
            "prob_atol",
            "plugins",
            "engine_options",
        },
    )
    tol_raw = v.mapping(a.get("tolerances"), ("agreement", "tolerances"), {"atol", "rtol", "cosine_min"})
    dt = Tolerances()
    tol = Tolerances(
        atol=v.number(tol_raw.get("atol", dt.atol), ("agreement", "tolerances", "atol")),
        rtol=v.number(tol_raw.get("rtol", dt.rtol), ("agreement", "tolerances", "rtol")),
        cosine_min=v.number(
            tol_raw.get("cosine_min", dt.cosine_min), ("agreement", "tolerances", "cosine_min")
        ),
    )
    if tol.cosine_min > 1.0:
        raise v.error(("agreement", "tolerances", "cosine_min"), "must be at most 1.0")
    engines = v.strings(a.get("engines", list(DEFAULT_ENGINES)), ("agreement", "engines"))
    if len(engines) < 2:
        raise v.error(("agreement", "engines"), "agreement needs at least two engines to compare")
    da = AgreementSettings()
    agreement = AgreementSettings(
        inputs=v.string(a["inputs"], ("agreement", "inputs")) if a.get("inputs") is not None else None,
        engines=engines,
        tolerances=tol,
        seed=v.integer(a.get("seed", da.seed), ("agreement", "seed")),
        timeout_s=v.number(a.get("timeout_s", da.timeout_s), ("agreement", "timeout_s"), positive=True),
        predict_args=(
            v.argv(a["predict_args"], ("agreement", "predict_args"))
            if a.get("predict_args") is not None
            else None
        ),
        infer_args=(
            v.argv(a["infer_args"], ("agreement", "infer_args")) if a.get("infer_args") is not None else None
        ),
        images=v.strings(a.get("images", []), ("agreement", "images")),
        prob_atol=v.number(a.get("prob_atol", da.prob_atol), ("agreement", "prob_atol")),
        plugins=v.strings(a.get("plugins", []), ("agreement", "plugins")),
        engine_options=_engine_options(v, a.get("engine_options")),
    )

    lf = v.mapping(top.get("log_fields"), ("log_fields",), {"require_eval", "fields"})
    log_fields = LogFieldsSettings(
        require_eval=(
            v.boolean(lf["require_eval"], ("log_fields", "require_eval"))
            if lf.get("require_eval") is not None
            else None
        ),
        fields=v.strings(lf.get("fields", list(DEFAULT_LOG_FIELDS)), ("log_fields", "fields")),
    )

    cv = v.mapping(top.get("convergence"), ("convergence",), {"max_iters", "window", "alpha", "min_points"})
    dc = ConvergenceSettings()
    alpha = v.number(cv.get("alpha", dc.alpha), ("convergence", "alpha"), positive=True)
    if alpha >= 1:
        raise v.error(("convergence", "alpha"), "must be below 1")
    convergence = ConvergenceSettings(
        max_iters=v.integer(cv.get("max_iters", dc.max_iters), ("convergence", "max_iters"), minimum=3),
        window=(
            v.integer(cv["window"], ("convergence", "window"), minimum=1)
            if cv.get("window") is not None
            else None
        ),
        alpha=alpha,
        min_points=v.integer(cv.get("min_points", dc.min_points), ("convergence", "min_points"), minimum=3),
    )

    gt = v.mapping(top.get("ground_truth"), ("ground_truth",), {"atol", "rtol", "modes"})
    dg = GroundTruthSettings()
    ground_truth = GroundTruthSettings(
        atol=v.number(gt.get("atol", dg.atol), ("ground_truth", "atol")),
        rtol=v.number(gt.get("rtol", dg.rtol), ("ground_truth", "rtol")),
        modes=v.strings(gt.get("modes", list(dg.modes)), ("ground_truth", "modes")),
    )
    sv = v.mapping(top.get("serving"), ("serving",), {"model_dir"})
    serving = ServingSettings(
        model_dir=v.string(sv["model_dir"], ("serving", "model_dir"))
        if sv.get("model_dir") is not None
        else None
    )
    return Settings(
        python=python,
        agreement=agreement,
        log_fields=log_fields,
        convergence=convergence,
        ground_truth=ground_truth,
        serving=serving,
        path=path,
    )


def _engine_options(v: _Validator, value: Any) -> dict[str, dict[str, Any]]:
    keys: tuple[str | int, ...] = ("agreement", "engine_options")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise v.error(keys, f"expected a mapping of engine name to options, got {value!r}")
    out: dict[str, dict[str, Any]] = {}
    for name, opts in value.items():
        if not isinstance(opts, Mapping) or not all(isinstance(k, str) for k in opts):
            raise v.error((*keys, str(name)), f"expected a mapping of option names to values, got {opts!r}")
        out[str(name)] = dict(opts)
    return out


def parse_settings(text: str, path: str = SETTINGS_PATH) -> Settings:
    from tipc.rules.yamlnodes import YamlShapeError, load_located, plain

    try:
        tree = load_located(text)
    except YamlShapeError as exc:
        problem = exc.message.removeprefix("invalid YAML: ")
        raise ConfigError(path, exc.line, f"not valid YAML: {problem}") from None
    first = next((n for n, line in enumerate(text.splitlines(), 1) if line.strip()), None)
    return validate_settings(plain(tree), path, _Where(tree, first))


def load_settings(repo: Path) -> Settings:
    """Read `<repo>/test_tipc/tipc.yaml`; defaults when the file is absent."""
    file = Path(repo) / SETTINGS_PATH
    if not file.is_file():
        return Settings()
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ConfigError(SETTINGS_PATH, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(SETTINGS_PATH, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})") from None
    return parse_settings(text, SETTINGS_PATH)


def as_settings(value: Any) -> Settings:
    """Accept what CheckContext.settings holds: a Settings, a raw mapping (validated) or None."""
    if isinstance(value, Settings):
        return value
    if value is None:
        return Settings()
    return validate_settings(value)
