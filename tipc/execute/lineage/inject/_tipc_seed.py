# ruff: noqa: SIM105  (try/except/pass: contextlib is not imported into every process this file starts in)
"""Seeding for model CI, loaded by tipc's injected `sitecustomize` when TIPC_SEED is set.

A model whose training is random (weight init, shuffling, augmentation, dropout) gives different losses on
every run, so a baseline of its effect metrics needs wide margins; seeded, many models give the same numbers
to the last digit and can be judged exactly. In every Python process of a step this module:
- seeds `random` at once, and NumPy and Paddle as soon as they are imported (`numpy.random.seed`,
  `paddle.seed`): the script's own seeding, if any, comes later and wins;
- sets Paddle's deterministic flags in the environment before Paddle reads them (FLAGS_cudnn_deterministic,
  FLAGS_cpu_deterministic, FLAGS_embedding_deterministic), unless the step set them itself.
PYTHONHASHSEED cannot be set from inside a running interpreter; tipc sets it in the step's environment.

Standard library only, no tipc import, Python 3.7 syntax; works without NumPy or Paddle; never raises into
the program it runs in.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported into every process for this
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

ENV_SEED = "TIPC_SEED"
DETERMINISTIC_FLAGS = (
    ("FLAGS_cudnn_deterministic", "1"),
    ("FLAGS_cpu_deterministic", "1"),
    ("FLAGS_embedding_deterministic", "1"),
)
_SEEDERS: dict[str, Callable[[Any, int], object]] = {
    "numpy": lambda module, seed: module.random.seed(seed),
    "paddle": lambda module, seed: module.seed(seed),
}


def _seed_module(name: str, seed: int) -> None:
    module = sys.modules.get(name)
    seeder = _SEEDERS.get(name)
    if module is None or seeder is None:
        return
    try:
        seeder(module, seed)
    except Exception:
        pass


class _SeedOnImport:
    """A meta path finder that finds nothing itself: it asks the finders after it for numpy and paddle and
    wraps the loader, so the module is seeded right after it has been executed."""

    def __init__(self, seed: int) -> None:
        import _thread

        self.seed = seed
        self._ident = _thread.get_ident
        self._busy: set[int] = set()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in _SEEDERS:
            return None
        ident = self._ident()
        if ident in self._busy:  # another finder that delegates (the lineage recorder) asked us back
            return None
        self._busy.add(ident)
        try:
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    self._wrap(spec, fullname)
                    return spec
        except Exception:
            pass
        finally:
            self._busy.discard(ident)
        return None

    def _wrap(self, spec: Any, fullname: str) -> None:
        loader = getattr(spec, "loader", None)
        original = getattr(loader, "exec_module", None)
        if original is None or getattr(original, "__tipc_seed__", False):
            return
        seed = self.seed

        def exec_module(module: Any) -> None:
            original(module)
            _seed_module(fullname, seed)

        exec_module.__tipc_seed__ = True  # type: ignore[attr-defined]
        try:
            loader.exec_module = exec_module  # type: ignore[union-attr]
        except Exception:
            pass


def seed_from_env() -> int | None:
    """The seed TIPC_SEED asks for, or None (unset or not an integer)."""
    raw = os.environ.get(ENV_SEED, "").strip()
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


def install() -> None:
    """Seed this process as TIPC_SEED asks; nothing when it is unset."""
    seed = seed_from_env()
    if seed is None:
        return
    for name, value in DETERMINISTIC_FLAGS:
        if name not in os.environ:
            os.environ[name] = value
    import random

    random.seed(seed)
    for name in _SEEDERS:
        if name in sys.modules:  # imported already (by a .pth file): seed it now
            _seed_module(name, seed)
    sys.meta_path.insert(0, _SeedOnImport(seed))
