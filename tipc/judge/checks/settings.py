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
      prob_atol: 1.0e-5                # predict vs infer: absolute tolerance of a printed score
      prob_rtol: 1.0e-4                # ... and relative to the score (the larger of the two is used)
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

import functools
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.errors import ConfigError
from tipc.core.steps import PRETRAINED_MODES

if TYPE_CHECKING:
    from tipc.core.yamlschema import Map

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
    prob_rtol: float = 1e-4
    plugins: tuple[str, ...] = ()  # modules the worker imports to register extra engines (e.g. serving)
    engine_options: dict[str, dict[str, object]] = field(default_factory=dict)  # engine -> factory kwargs


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
GROUND_TRUTH_MODES: tuple[str, ...] = PRETRAINED_MODES


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


@functools.cache
def _schema() -> Map:
    # tipc.core.yamlschema is imported here, not at the top: the check modules import this one and stay cheap.
    from tipc.core.yamlschema import Bool, Field, Int, Map, Num, OneOf, Seq, Str

    def section(fields: dict[str, Field]) -> Map:
        return Map(fields, nullable=True)

    number = Field(Num(minimum=0))
    strings = Seq(Str(), one_or_many=True)
    command = Field(
        OneOf((Str(what="a command string"), Seq(Str(scalar=True, nonempty=False), min_items=1))),
        nullable=True,
    )
    return section(
        {
            "python": Field(Str(), nullable=True),
            "agreement": Field(
                section(
                    {
                        "inputs": Field(Str(), nullable=True),
                        "engines": Field(strings),
                        "tolerances": Field(
                            section(
                                {
                                    "atol": number,
                                    "rtol": number,
                                    "cosine_min": Field(Num(minimum=0, maximum=1)),
                                }
                            )
                        ),
                        "seed": Field(Int(minimum=0)),
                        "timeout_s": Field(Num(minimum=0, exclusive_minimum=True)),
                        "predict_args": command,
                        "infer_args": command,
                        "images": Field(strings),
                        "prob_atol": number,
                        "prob_rtol": number,
                        "plugins": Field(strings),
                        "engine_options": Field(
                            Map(
                                values=Map(closed=False, what="a mapping of option names to values"),
                                nullable=True,
                                what="a mapping of engine name to options",
                            )
                        ),
                    }
                )
            ),
            "log_fields": Field(
                section({"require_eval": Field(Bool(), nullable=True), "fields": Field(strings)})
            ),
            "convergence": Field(
                section(
                    {
                        "max_iters": Field(Int(minimum=3)),
                        "window": Field(Int(minimum=1), nullable=True),
                        "alpha": Field(
                            Num(minimum=0, maximum=1, exclusive_minimum=True, exclusive_maximum=True)
                        ),
                        "min_points": Field(Int(minimum=3)),
                    }
                )
            ),
            "ground_truth": Field(section({"atol": number, "rtol": number, "modes": Field(strings)})),
            "serving": Field(section({"model_dir": Field(Str(), nullable=True)})),
        }
    )


Fail = Callable[[tuple[str | int, ...], str], ConfigError]


def _build(data: dict[str, Any], path: str, fail: Fail) -> Settings:
    """Settings from data the schema accepted; `fail` locates the problems the schema cannot express."""
    a = data.get("agreement", {})
    engines = tuple(a.get("engines", DEFAULT_ENGINES))
    if len(engines) < 2:
        raise fail(("agreement", "engines"), "agreement needs at least two engines to compare")
    tol, dt, da = a.get("tolerances", {}), Tolerances(), AgreementSettings()
    agreement = AgreementSettings(
        inputs=a.get("inputs"),
        engines=engines,
        tolerances=Tolerances(
            float(tol.get("atol", dt.atol)),
            float(tol.get("rtol", dt.rtol)),
            float(tol.get("cosine_min", dt.cosine_min)),
        ),
        seed=a.get("seed", da.seed),
        timeout_s=float(a.get("timeout_s", da.timeout_s)),
        predict_args=_argv(a.get("predict_args"), ("agreement", "predict_args"), fail),
        infer_args=_argv(a.get("infer_args"), ("agreement", "infer_args"), fail),
        images=tuple(a.get("images", ())),
        prob_atol=float(a.get("prob_atol", da.prob_atol)),
        prob_rtol=float(a.get("prob_rtol", da.prob_rtol)),
        plugins=tuple(a.get("plugins", ())),
        engine_options=a.get("engine_options", {}),
    )
    lf, cv, gt = data.get("log_fields", {}), data.get("convergence", {}), data.get("ground_truth", {})
    dc, dg = ConvergenceSettings(), GroundTruthSettings()
    return Settings(
        python=data.get("python"),
        agreement=agreement,
        log_fields=LogFieldsSettings(lf.get("require_eval"), tuple(lf.get("fields", DEFAULT_LOG_FIELDS))),
        convergence=ConvergenceSettings(
            max_iters=cv.get("max_iters", dc.max_iters),
            window=cv.get("window"),
            alpha=float(cv.get("alpha", dc.alpha)),
            min_points=cv.get("min_points", dc.min_points),
        ),
        ground_truth=GroundTruthSettings(
            atol=float(gt.get("atol", dg.atol)),
            rtol=float(gt.get("rtol", dg.rtol)),
            modes=tuple(gt.get("modes", dg.modes)),
        ),
        serving=ServingSettings(model_dir=data.get("serving", {}).get("model_dir")),
        path=path,
    )


def _argv(value: str | list[str] | None, keys: tuple[str | int, ...], fail: Fail) -> tuple[str, ...] | None:
    if value is None or isinstance(value, list):
        return None if value is None else tuple(value)
    try:
        parts = tuple(shlex.split(value))
    except ValueError as exc:
        raise fail(keys, f"cannot split into arguments: {exc}") from None
    if not parts:
        raise fail(keys, "expected a command, got an empty string")
    return parts


def validate_settings(data: object, path: str = SETTINGS_PATH) -> Settings:
    """Settings from plain data (a mapping without positions); ConfigError naming the path on any problem."""
    from tipc.core.yamlschema import dotted, validate

    value, issues = validate(data, _schema())
    if issues:
        raise ConfigError(path, None, issues[0].text())
    if not isinstance(value, dict):  # the schema is a mapping: what it accepts is one
        raise ConfigError(path, None, "expected a mapping")
    return _build(value, path, lambda keys, message: ConfigError(path, None, f"{dotted(keys)}: {message}"))


def parse_settings(text: str, path: str = SETTINGS_PATH) -> Settings:
    from tipc.core.yamlschema import Document

    doc = Document(text, path)
    return _build(doc.conform(_schema()), path, doc.error)


def load_settings(repo: Path) -> Settings:
    """Read `<repo>/test_tipc/tipc.yaml`; defaults when the file is absent."""
    file = Path(repo) / SETTINGS_PATH
    if not file.is_file():
        return Settings()
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ConfigError(SETTINGS_PATH, None, f"cannot read: {exc.strerror or exc}") from None
    from tipc.core.yamlschema import decode

    return parse_settings(decode(data, SETTINGS_PATH), SETTINGS_PATH)


def as_settings(value: object) -> Settings:
    """Accept what CheckContext.settings holds: a Settings, a raw mapping (validated) or None."""
    if isinstance(value, Settings):
        return value
    if value is None:
        return Settings()
    return validate_settings(value)
