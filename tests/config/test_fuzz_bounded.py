"""A seeded mutator over the real configs of ../shared/tipc-corpus: every mutant finishes lint and plan
within a time bound, and ends in findings or a located ConfigError, never another exception.

The mutations are the ones that made work unbounded before (long values, `|` alternatives, repeated
items, globs, quotes) mixed with the everyday damage configs suffer (blank, dropped, swapped or CRLF lines).
A failure prints the seed and mutant number; `TIPC_FUZZ_N` raises the count for a longer local run.
"""

from __future__ import annotations

import functools
import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.planning.test_corpus import CORPUS
from tipc.core.errors import ConfigError
from tipc.core.steps import MODES
from tipc.planning.corpus import iter_cases
from tipc.planning.lint import lint_paths
from tipc.planning.planner import plan

SEED = 20261124
COUNT = int(os.environ.get("TIPC_FUZZ_N", "150"))
BOUND_S = 1.0  # CPU seconds per lint, and per plan of one mode

Mutation = Callable[[random.Random, list[str]], None]


def _value_line(rng: random.Random, lines: list[str]) -> int | None:
    candidates = [i for i, line in enumerate(lines) if ":" in line and not line.startswith("=")]
    return rng.choice(candidates) if candidates else None


def _set_value(lines: list[str], i: int, value: str) -> None:
    lines[i] = lines[i].split(":", 1)[0] + ":" + value


def m_alternatives(rng: random.Random, lines: list[str]) -> None:
    for _ in range(rng.randint(1, 6)):
        i = _value_line(rng, lines)
        if i is not None:
            value = lines[i].split(":", 1)[1] or "1"
            _set_value(lines, i, "|".join([value] * rng.randint(2, 60)))


def m_nulls(rng: random.Random, lines: list[str]) -> None:
    for _ in range(rng.randint(1, 10)):
        i = _value_line(rng, lines)
        if i is not None:
            _set_value(
                lines, i, "|".join([rng.choice(["null", "", "True", "False"])] * rng.randint(10, 1500))
            )


def m_long(rng: random.Random, lines: list[str]) -> None:
    i = _value_line(rng, lines)
    if i is not None:
        piece = rng.choice(["x", "a b ", "'q q' ", '"d \\" d" ', "\\ ", "$HOME ", "*.py "])
        _set_value(lines, i, lines[i].split(":", 1)[1] + " " + piece * rng.randint(100, 8000 // len(piece)))


def m_glob(rng: random.Random, lines: list[str]) -> None:
    i = _value_line(rng, lines)
    if i is not None:
        _set_value(lines, i, rng.choice(["/*/*/*/*", "*/*/*", "**/*", "../*", "./*.txt", "[a-z]*", "?"]))


def m_quote(rng: random.Random, lines: list[str]) -> None:
    i = _value_line(rng, lines)
    if i is not None:
        value = lines[i].split(":", 1)[1]
        pos = rng.randint(0, len(value))
        _set_value(
            lines, i, value[:pos] + rng.choice(["'", '"', "\\", "`", "$(", ";", "&", ">"]) + value[pos:]
        )


def m_blank(rng: random.Random, lines: list[str]) -> None:
    lines.insert(rng.randint(0, len(lines)), "")


def m_drop(rng: random.Random, lines: list[str]) -> None:
    if lines:
        del lines[rng.randrange(len(lines))]


def m_swap(rng: random.Random, lines: list[str]) -> None:
    if len(lines) > 1:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]


def m_crlf(rng: random.Random, lines: list[str]) -> None:
    for i in range(len(lines)):
        if rng.random() < 0.5:
            lines[i] += "\r"


def m_colons(rng: random.Random, lines: list[str]) -> None:
    i = _value_line(rng, lines)
    if i is not None:
        lines[i] += ":" * rng.randint(1, 50) + "=" * rng.randint(0, 50)


MUTATIONS: tuple[Mutation, ...] = (
    m_alternatives,
    m_nulls,
    m_long,
    m_glob,
    m_quote,
    m_blank,
    m_drop,
    m_swap,
    m_crlf,
    m_colons,
)


def _bounded(what: str, call: Callable[[], object]) -> None:
    start = time.process_time()
    try:
        call()
    except ConfigError as exc:
        assert exc.path, f"{what}: unlocated error {exc}"
    spent = time.process_time() - start
    assert spent < BOUND_S, f"{what}: {spent:.2f} s of CPU (bound {BOUND_S} s)"


@pytest.mark.skipif(CORPUS is None, reason="corpus not found: shared/tipc-corpus")
def test_every_mutant_of_the_corpus_lints_and_plans_within_the_bound(tmp_path: Path) -> None:
    assert CORPUS is not None
    cases = list(iter_cases(CORPUS))
    rng = random.Random(SEED)
    for n in range(COUNT):
        case = rng.choice(cases)
        lines = case.config.read_text(encoding="utf-8").split("\n")
        for mutation in rng.sample(MUTATIONS, rng.randint(1, 3)):
            mutation(rng, lines)
        repo = tmp_path / f"m{n}"
        config = repo / "test_tipc" / "configs" / "m" / case.config.name
        config.parent.mkdir(parents=True)
        config.write_text("\n".join(lines), encoding="utf-8", newline="")
        what = f"seed {SEED} mutant {n} of {case.name}"
        dialect, mode = case.dialect, rng.choice(MODES)
        _bounded(f"{what}: lint", functools.partial(lint_paths, [config], dialect=dialect))
        _bounded(f"{what}: plan {mode}", functools.partial(plan, config, mode, dialect=dialect))
