"""What `tipc run --dry-run` and `tipc plan` say before the plan, one line each: a planned command's
interpreter that is missing here (what `tipc run` runs instead, or that the steps cannot run), no Paddle for
the chain (the exit 3 `tipc run` would end with), and steps that ask for a GPU on a machine without one.

The decisions are the ones `tipc run` takes at run time (tipc.execute.runner's interpreter substitution,
tipc.commands._extras' Paddle check), so a dry run and a run agree.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from tipc.core.errors import MissingExtra
from tipc.core.steps import Plan

_SHOWN = 3  # step ids named per line


def gpu_present(which: Callable[[str], str | None] = shutil.which) -> bool:
    """Whether this machine has an NVIDIA GPU to speak of: nvidia-smi on PATH, as the run's probe decides."""
    return which("nvidia-smi") is not None


def _ids(ids: Sequence[str]) -> str:
    more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
    return ", ".join(ids[:_SHOWN]) + more


def gpu_lines(plan: Plan, *, has_gpu: bool, device: str | None) -> list[str]:
    """The steps that ask for a GPU when there is none here, and what `tipc run` does with them."""
    from tipc.planning.device_flags import add_cpu_flags, gpu_ask, multi_gpu

    if has_gpu:
        return []
    defaults: set[str] = set()
    if device != "cpu":  # what --device cpu would rewrite: a script whose device flag defaults to the GPU
        edited, _ = add_cpu_flags(plan.steps, Path(plan.repo), plan.config_path)
        defaults = {s.id for s, e in zip(plan.steps, edited, strict=True) if s.argv != e.argv}
    single: list[str] = []
    several: list[str] = []
    first = ""
    for step in plan.steps:
        if step.not_applicable:
            continue
        ask = gpu_ask(step) or ("its script's default device" if step.id in defaults else None)
        if ask is None:
            continue
        first = first or f"{step.id}: {ask}"
        (several if multi_gpu(ask) else single).append(step.id)
    lines: list[str] = []
    cpu = "" if device == "cpu" else "; --device cpu gives them their CPU form"
    if single:
        lines.append(
            f"no GPU here (no nvidia-smi on PATH) and {len(single)} step(s) ask for one ({_ids(single)}; "
            f"first {first}): tipc run runs them as written, Paddle falls back to the CPU or the step fails, "
            f"and gpu_flag_on_cpu_build fails a step that asked for the GPU{cpu}"
        )
    if several:
        plan_them = "" if device == "cpu" else " (--device cpu plans them, not run)"
        lines.append(
            f"no GPU here and {len(several)} step(s) launch on several GPUs ({_ids(several)}): they cannot "
            f"run as asked; tipc run runs them as written (a CPU-only Paddle fails or falls back){plan_them}"
        )
    return lines


def lines(
    plan: Plan,
    *,
    python: str | None,
    given: str | None,
    written: Sequence[str],
    device: str | None,
    has_gpu: bool | None = None,
) -> list[str]:
    """Every up-front line for `plan`: `python` is the interpreter `tipc run` hands the runner (its choice
    from `tipc.commands._target.choose_python`), `given` the user's --python, `written` the config's."""
    from tipc.commands import _extras
    from tipc.execute.runner import missing_interpreters

    out = missing_interpreters(plan, python)
    try:
        _extras.require_paddle(given, written)
    except MissingExtra as exc:
        out.append(f"tipc run would stop before the chain (exit 3): {exc}")
    out += gpu_lines(plan, has_gpu=gpu_present() if has_gpu is None else has_gpu, device=device)
    return out


def say(found: Sequence[str], stream: IO[str]) -> None:
    for line in found:
        stream.write(f"tipc: {line}\n")
    stream.flush()
