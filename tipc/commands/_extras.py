"""tipc's own optional parts, checked before anything runs: a part of tipc that is not installed is no failure
of the repo under check. It ends the command with exit 3 and one line saying what to install, never with a
rule FAIL (docs/exit-codes.md).

- `serve` (uvicorn, starlette): `tipc serve`, which a check's serving rules and the demo's serving chain run;
- Paddle itself (`model,cpu`): a chain needs an interpreter with Paddle. Without `--python`, tipc runs the
  chain under its own interpreter when that has Paddle, else under the config's `python:`; when neither has
  it, nothing could pass. An interpreter the user names with `--python` is theirs: its failures are the run's.

Where the repo's interpreter lacks what tipc's model-side workers need, tipc.execute's placement of its own
parts says so (the causes work); this module is about tipc's own installation.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.errors import MissingExtra

if TYPE_CHECKING:
    from tipc.core.steps import Plan

SERVE_MODULES = ("uvicorn", "starlette")
INSTALL_SERVE = 'pip install "tipc[serve]"'
INSTALL_PADDLE = 'pip install "tipc[model,cpu]"'
INSTALL_PADDLE_GPU = 'pip install paddlepaddle-gpu "tipc[model]"'
_PROBE = Path(__file__).resolve().parents[1] / "execute" / "probes" / "findmodules.py"


def _found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def absent(modules: Iterable[str], found: Callable[[str], bool] | None = None) -> list[str]:
    """The modules tipc's own interpreter cannot import (located, not imported)."""
    found = found or _found
    return [m for m in modules if not found(m)]


def require_serve(why: str, found: Callable[[str], bool] | None = None) -> None:
    """MissingExtra when `tipc serve` cannot start here: `why` says what needs it."""
    missing = absent(SERVE_MODULES, found)
    if missing:
        raise MissingExtra(
            f"{why} needs tipc's serve extra ({', '.join(missing)} not installed for {sys.executable}): "
            f"{INSTALL_SERVE}"
        )


def runs_tipc_serve(plan: Plan | None) -> bool:
    """Whether a step of the plan starts `python -m tipc serve` (the demo's serving chain does)."""
    if plan is None:
        return False
    for step in plan.steps:
        words = list(step.argv)
        at = words.index("-m") if "-m" in words[:3] else -1
        if at >= 0 and words[at + 1 : at + 3] == ["tipc", "serve"]:
            return True
    return False


def uses_check(rulesets: Sequence[Any], name: str) -> bool:
    """Whether a rule of the rulesets calls the registered check `name` (`check: {name: serving}`)."""

    def walk(node: Any) -> bool:
        if isinstance(node, dict):
            call = node.get("check")
            if isinstance(call, dict) and call.get("name") == name:
                return True
            return any(walk(v) for v in node.values())
        if isinstance(node, list):
            return any(walk(v) for v in node)
        return False

    return any(walk(rule.check.to_json()) for rs in rulesets for rule in rs.rules)


def check_serving(
    serving_plan: Plan | None, rulesets: Sequence[Any], found: Callable[[str], bool] | None = None
) -> None:
    """`tipc check`: the serving chain runs (its config is there and a ruleset asks for it) and either its
    server is `tipc serve` or a rule compares the served model (tipc serves it): the serve extra is needed."""
    if serving_plan is None:
        return
    if runs_tipc_serve(serving_plan):
        require_serve(f"the serving chain of {serving_plan.config_path} (its server is `tipc serve`)", found)
    elif uses_check(rulesets, "serving"):
        require_serve("the serving rules (tipc serves the exported model to compare it)", found)


def _has_paddle(python: str) -> bool:
    """Whether `python` can import paddle, asked from an empty folder (the probe imports nothing)."""
    from tipc.execute import proc

    with tempfile.TemporaryDirectory(prefix="tipc-paddle-") as empty:
        try:
            code, _out = proc.capture([python, str(_PROBE), "paddle"], cwd=Path(empty), timeout_s=120)
        except OSError:
            return False
    return code == 0


def require_paddle(
    given: str | None,
    written: Sequence[str],
    *,
    own_has_paddle: Callable[[], bool] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    has_paddle: Callable[[str], bool] | None = None,
) -> None:
    """MissingExtra when no interpreter the chain could run under has Paddle: tipc's own has none and the
    config's `python:` has none (or is not on this machine). Nothing is asked when `--python` names one
    (`given`: the user's choice) or tipc's own interpreter has Paddle."""
    from tipc.commands._target import paddle_findable

    if given or (own_has_paddle or paddle_findable)():
        return
    word = next(iter(written), "python")
    found = which(word) if os.sep not in word else (word if os.access(word, os.X_OK) else None)
    if found is not None and (has_paddle or _has_paddle)(found):
        return
    where = f"the config's '{word}' ({found})" if found else f"the config's '{word}' (not on this machine)"
    raise MissingExtra(
        f"no Paddle to run the chain: neither tipc's interpreter {sys.executable} nor {where} has it. "
        f"Install it with tipc: {INSTALL_PADDLE} (on a GPU machine: {INSTALL_PADDLE_GPU}), "
        "or give an interpreter that has it: --python PATH"
    )
