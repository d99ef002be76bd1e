"""Model-side engines, run ONLY inside worker subprocesses (`python -m tipc.judge.engines.worker`).

This package's __init__ stays import-light (no numpy/paddle): the registry maps an engine name to a
"module:factory" string that the worker imports on demand. Another package adds an engine (e.g. "serving")
by calling `register_engine("serving", "tipc.judge.engines.serving:ServingEngine")` from a module the worker
imports
through the request's `plugins` list, or by adding a line to BUILTIN_ENGINES.
"""

from __future__ import annotations

BUILTIN_ENGINES: dict[str, str] = {
    "paddle_inference": "tipc.judge.engines.paddle_inference:PaddleInferenceEngine",
    "onnxruntime": "tipc.judge.engines.onnx_runtime:OnnxRuntimeEngine",
    "paddle_jit": "tipc.judge.engines.paddle_jit:PaddleJitEngine",
}

_REGISTRY: dict[str, str] = dict(BUILTIN_ENGINES)


def register_engine(name: str, factory: str) -> None:
    """Register an engine factory by dotted path "package.module:Callable".

    The worker calls it with the request's `engine_options[name]` as keyword arguments (none by default) and
    expects an object following `tipc.judge.engines.base.Engine`.
    """
    if ":" not in factory:
        raise ValueError(f"engine factory must look like 'module:attr', got {factory!r}")
    _REGISTRY[name] = factory


def engine_names() -> list[str]:
    return sorted(_REGISTRY)


def engine_factory(name: str) -> str | None:
    return _REGISTRY.get(name)
