"""tipc: one trustworthy command to check a PaddlePaddle repo's training and inference pipeline.

The Python API (`tipc.lint`, `tipc.plan`, `tipc.run`, `tipc.check`, see tipc.api) is loaded on first use, so
`import tipc` and the CLI stay cheap (not even `typing` is imported here).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # type checkers see the API's real signatures; at run time __getattr__ loads it
    from tipc.api import CheckResult, LintResult, RuleOutcome, RunResult, StepOutcome, check, lint, plan, run
    from tipc.core.version import __version__

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


def __getattr__(name: str) -> object:
    if name == "__version__":  # kept in tipc.core.version, where the layers below may read it
        from tipc.core.version import __version__

        return __version__
    if name in _API:
        from tipc import api

        return getattr(api, name)
    raise AttributeError(f"module 'tipc' has no attribute {name!r}")


__all__ = [
    "CheckResult",
    "LintResult",
    "RuleOutcome",
    "RunResult",
    "StepOutcome",
    "__version__",
    "check",
    "lint",
    "plan",
    "run",
]
