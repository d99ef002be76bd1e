"""tipc: one trustworthy command to check a PaddlePaddle repo's training and inference pipeline.

The Python API (`tipc.lint`, `tipc.plan`, `tipc.run`, `tipc.check`, see tipc.api) is loaded on first use, so
`import tipc` and the CLI stay cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.2.0"

_API = (
    "lint",
    "plan",
    "run",
    "check",
    "LintResult",
    "RunResult",
    "CheckResult",
    "StepOutcome",
    "RuleOutcome",
)


def __getattr__(name: str) -> Any:
    # `tipc.plan` is also the submodule tipc/plan.py: after `import tipc.plan` the attribute is that module,
    # so the API's plan is reached as tipc.api.plan there; plain `tipc.plan(...)` works before any import.
    if name in _API:
        from tipc import api

        return getattr(api, name)
    raise AttributeError(f"module 'tipc' has no attribute {name!r}")


__all__ = ["__version__", *_API]
