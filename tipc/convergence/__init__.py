"""Convergence regression by checkpoint segments (seed 003): gather a known-good run's checkpoints and the
metrics of a few steps after each; later restart from every checkpoint and compare the same steps.

Importing this package is cheap (the pytest plugin loads it into every pytest run): the submodules load
on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tipc.convergence.api import do_convergence_test
    from tipc.convergence.result import ConvergeResult

__all__ = ["ConvergeResult", "do_convergence_test"]


def __getattr__(name: str) -> Any:
    if name == "do_convergence_test":
        from tipc.convergence.api import do_convergence_test

        return do_convergence_test
    if name == "ConvergeResult":
        from tipc.convergence.result import ConvergeResult

        return ConvergeResult
    raise AttributeError(name)
