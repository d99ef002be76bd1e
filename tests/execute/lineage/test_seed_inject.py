"""The injected seeding (`_tipc_seed`, loaded by tipc's `sitecustomize` when TIPC_SEED is set), in real Python
processes: two seeded processes draw the same numbers from random and NumPy (Paddle too, where installed),
unseeded ones do not; Paddle's deterministic flags are set unless the step set them; an interpreter without
NumPy or Paddle, and an old Python, are left working."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.pythons import pyenv_pythons
from tipc.execute.lineage import INJECT_DIR
from tipc.execute.seeding import chosen_seed, seed_env, seed_of

DRAW = (
    "import os, random, numpy\n"
    "print(random.random(), numpy.random.rand(), os.environ.get('FLAGS_cpu_deterministic'), "
    "os.environ.get('FLAGS_cudnn_deterministic'))\n"
)


def _python(code: str, env: dict[str, str], python: str = sys.executable) -> str:
    full = {**os.environ, "PYTHONPATH": str(INJECT_DIR), **env}
    full.pop("TIPC_LINEAGE_FILE", None)
    done = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=full, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_seeded_processes_draw_the_same_numbers_and_set_the_flags() -> None:
    first = _python(DRAW, seed_env(7))
    assert first == _python(DRAW, seed_env(7))
    assert first.endswith("1 1")
    assert first != _python(DRAW, seed_env(8))
    unseeded = {k: v for k, v in os.environ.items() if k not in ("TIPC_SEED", "PYTHONHASHSEED")}
    assert _python(DRAW, unseeded) != _python(DRAW, unseeded)
    # a flag the step set itself is left alone
    assert _python(DRAW, {**seed_env(7), "FLAGS_cudnn_deterministic": "0"}).endswith("1 0")


def test_paddle_is_seeded_when_imported() -> None:
    pytest.importorskip("paddle")
    code = "import paddle\nprint(paddle.rand([2]).numpy().tolist())\n"
    assert _python(code, seed_env(3)) == _python(code, seed_env(3))


@pytest.mark.parametrize("version", ["3.7", "3.8"])
def test_an_old_python_without_numpy_or_paddle_keeps_working(version: str) -> None:
    found = pyenv_pythons(version)
    if not found:
        pytest.skip(f"no Python {version} here")
    out = _python("import random; print(random.random())", seed_env(7), str(found[-1]))
    assert out == _python("import random; print(random.random())", seed_env(7), str(found[-1]))


def test_which_seed() -> None:
    assert chosen_seed(None, False, model_ci=True) == 0 and chosen_seed(None, False, model_ci=False) is None
    assert chosen_seed(5, False, model_ci=False) == 5 and chosen_seed(None, True, model_ci=True) is None
    assert seed_env(None) == {} and seed_env(3) == {"TIPC_SEED": "3", "PYTHONHASHSEED": "3"}
    from tipc.core.errors import UserError

    with pytest.raises(UserError, match="--seed -1"):
        seed_env(-1)
    with pytest.raises(UserError, match="contradict"):
        chosen_seed(1, True, model_ci=True)
    from tipc.core.steps import Status
    from tipc.execute.record import StepResult

    ran = StepResult("a", Status.PASSED, started=1.0, env_delta=(("TIPC_SEED", "3"),))
    never = StepResult("b", Status.BLOCKED)
    assert seed_of((ran, never)) == 3
    assert seed_of((ran, StepResult("c", Status.PASSED, started=1.0))) is None
