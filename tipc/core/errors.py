"""A small error hierarchy and the one place that maps errors to exit codes.

Exit-code contract: 0 ok, 1 a check failed, 2 usage or config error, 3 internal or infrastructure error.
"""

from __future__ import annotations

from dataclasses import dataclass

# The codes, re-exported where the errors that carry them live.
from tipc.core.exit_codes import EXIT_CHECK_FAILED as EXIT_CHECK_FAILED
from tipc.core.exit_codes import EXIT_INTERNAL as EXIT_INTERNAL
from tipc.core.exit_codes import EXIT_OK as EXIT_OK
from tipc.core.exit_codes import EXIT_USAGE as EXIT_USAGE


class TipcError(Exception):
    """Base of every error tipc raises on purpose."""

    exit_code = EXIT_INTERNAL

    def render(self) -> str:
        return str(self)


class UserError(TipcError):
    """The user asked for something impossible: bad arguments, missing files."""

    exit_code = EXIT_USAGE


@dataclass
class ConfigError(UserError):
    """A located problem in an input file."""

    path: str
    line: int | None
    message: str
    col: int | None = None

    def __post_init__(self) -> None:
        super().__init__(self.render())

    def render(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: {self.message}"


class RuleError(ConfigError):
    """A ruleset file does not match the rule schema."""


class InfraError(TipcError):
    """Something outside the user's input broke (a worker died, a port was taken)."""

    exit_code = EXIT_INTERNAL
