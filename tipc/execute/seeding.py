"""Seeded runs for model CI: the environment that makes every Python process of a step seed `random`,
NumPy and Paddle and turn on Paddle's deterministic flags (the injected `_tipc_seed` module does the work),
and the seed a finished run was given, read back from its record."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tipc.core.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tipc.execute.record import StepResult

ENV_SEED = "TIPC_SEED"  # read by tipc/execute/lineage/inject/_tipc_seed.py
DEFAULT_SEED = 0  # model CI's default: `tipc baseline record`, `tipc check --baseline`, `tipc matrix`
_MAX_SEED = 2**32 - 1  # numpy.random.seed's limit
SEED_VARIABLES = (ENV_SEED, "PYTHONHASHSEED")


def seed_env(seed: int | None) -> dict[str, str]:
    """Variables for every step of a run seeded with `seed` (nothing for None). PYTHONHASHSEED too: it can
    only be set before an interpreter starts."""
    if seed is None:
        return {}
    if not 0 <= seed <= _MAX_SEED:
        raise UserError(f"--seed {seed}: expected an integer from 0 to {_MAX_SEED}")
    return dict.fromkeys(SEED_VARIABLES, str(seed))


def chosen_seed(seed: int | None, no_seed: bool, model_ci: bool) -> int | None:
    """--seed N wins, --no-seed turns seeding off, else model CI verbs seed with DEFAULT_SEED."""
    if no_seed:
        if seed is not None:
            raise UserError("--seed and --no-seed contradict each other: give one")
        return None
    if seed is not None:
        return seed
    return DEFAULT_SEED if model_ci else None


def seed_of(results: Iterable[StepResult]) -> int | None:
    """The seed the steps of a run record were given, from their results (None: not seeded, or steps seeded
    differently)."""
    seen: set[str | None] = set()
    for result in results:
        if result.started is None:
            continue  # never ran: no environment
        seen.add(dict(result.env_delta).get(ENV_SEED))
    if len(seen) != 1:
        return None
    value = seen.pop()
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
