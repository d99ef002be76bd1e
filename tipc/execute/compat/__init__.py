"""Compatibility switches (`--paddle-compat NAME`) and the `auto_log` stand-in tipc offers to steps.

A switch is data: environment variables set for every step of the chain, with a description. The shim folder
holds an `auto_log` module written from AutoLog's documented interface; tipc appends the folder to the END of
a step's PYTHONPATH, so a really installed AutoLog still wins.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tipc.core.errors import UserError


@dataclass(frozen=True)
class Switch:
    name: str
    env: Mapping[str, str]
    description: str
    # the environment read from this machine when the switch is used (a library's path); UserError if absent
    resolve: Callable[[], Mapping[str, str]] | None = None


# Where the system's zlib lives on common Linux layouts (Debian/Ubuntu multiarch, Red Hat, Alpine).
_LIBZ_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/lib",
)


def _system_libz() -> Mapping[str, str]:
    """LD_PRELOAD of the system's libz.so.1: Paddle 2.x wheels load a libz of their own, and Python's zlib
    module then fails with `Error -2 while decompressing data: inconsistent stream state`."""
    for folder in _LIBZ_DIRS:
        candidate = Path(folder) / "libz.so.1"
        if candidate.is_file():
            return {"LD_PRELOAD": str(candidate)}
    raise UserError("--paddle-compat zlib: no system libz.so.1 found in " + ", ".join(_LIBZ_DIRS))


SWITCHES: dict[str, Switch] = {
    s.name: s
    for s in (
        Switch(
            "export",
            {"FLAGS_enable_pir_api": "0"},
            "Paddle 3 exports the old format (inference.pdmodel + .pdiparams) instead of PIR's "
            "inference.json, for scripts that open *.pdmodel",
        ),
        Switch(
            "zlib",
            {"LD_PRELOAD": "<the system's libz.so.1>"},
            "preloads the system's libz (LD_PRELOAD) for Paddle 2.x wheels whose own libz breaks Python's "
            "zlib (`Error -2 while decompressing data`)",
            _system_libz,
        ),
    )
}


def compat_env(names: Sequence[str]) -> dict[str, str]:
    """The environment the named switches set, merged in order; UserError naming the known ones."""
    env: dict[str, str] = {}
    for name in names:
        switch = SWITCHES.get(name.strip())
        if switch is None:
            known = ", ".join(f"{s.name} ({s.description})" for s in SWITCHES.values())
            raise UserError(f"unknown --paddle-compat switch {name!r}; known: {known}")
        env.update(switch.resolve() if switch.resolve is not None else switch.env)
    return env


@functools.lru_cache(maxsize=1)
def shim_path() -> Path:
    """The folder to append to a step's PYTHONPATH: it holds the `auto_log` stand-in (resolved once: every
    step asks)."""
    return Path(__file__).resolve().parent / "shim"


def pythonpath_with_shim(pythonpath: str | None) -> str:
    """`pythonpath` (a step's PYTHONPATH, maybe unset) with the shim folder appended at the END, so that a
    module the repo or the interpreter provides always wins. An empty value adds no empty entry (which
    Python would read as the working directory)."""
    shim = str(shim_path())
    entries = [e for e in (pythonpath or "").split(os.pathsep) if e]
    if shim in entries:
        return os.pathsep.join(entries)
    return os.pathsep.join([*entries, shim])
