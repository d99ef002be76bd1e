"""A loaded catalogue (`Catalogue`) and its one question: which entries hold for a step's output and
context, in file order (the step's own error first; a fallback entry not on a line already explained; a
`last_resort` entry only when nothing else held), each as a `Cause` with its text filled from the named
groups and the facts every entry may name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from tipc.core.causes import Cause, hide_own_frames
from tipc.judge.causes.logs import _last_exception, _lines, _norm_signal, _signal_of
from tipc.judge.causes.matching import _match_all
from tipc.judge.causes.model import _PLACEHOLDER, MAX_EVIDENCE_CHARS, Context, Entry, _Facts
from tipc.judge.causes.repo_code import _repo_frame


class Catalogue:
    def __init__(
        self,
        entries: Sequence[Entry],
        source: str = "",
        backbones: Sequence[re.Pattern[str]] = (),
        pip_names: Mapping[str, str] | None = None,
    ) -> None:
        self.entries = tuple(entries)
        self.source = source
        self.backbones = tuple(backbones)
        self.pip_names = dict(pip_names or {})

    def __len__(self) -> int:
        return len(self.entries)

    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.entries)

    def diagnose(
        self,
        output: str,
        *,
        argv: Sequence[str] = (),
        exit_code: int | None = None,
        signal_name: str | None = None,
        cwd: Path | None = None,
        context: Context | None = None,
    ) -> list[Cause]:
        """Every entry that holds, in catalogue order (the step's own error first)."""
        if signal_name is None and exit_code is not None and exit_code < 0:
            signal_name = _signal_of(-exit_code)
        ctx = context if context is not None else Context()
        if not ctx.pip_names and self.pip_names:
            ctx = replace(ctx, pip_names=self.pip_names)
        facts = _Facts(
            _lines(hide_own_frames(output)),
            " ".join(argv),
            tuple(argv),
            exit_code,
            _norm_signal(signal_name),
            cwd,
            ctx,
            self.backbones,
        )
        always = _always_groups(facts)
        found: list[Cause] = []
        explained: set[int] = set()
        for entry in self.entries:
            if entry.last_resort and found:
                continue
            hit = _match_all(entry.conditions, facts)
            if hit is None:
                continue
            if entry.fallback and hit.line_index is not None and hit.line_index in explained:
                continue
            if hit.line_index is not None:
                explained.add(hit.line_index)
            groups = {**always, **hit.groups}
            if "module" in groups:
                top = groups["module"].split(".")[0]
                groups["pip"] = ctx.pip_names.get(top, top)
            found.append(
                Cause(
                    id=entry.id,
                    cause=_fill(entry.cause, groups),
                    remedy=_fill(entry.remedy, groups),
                    switch=entry.switch,
                    evidence=hit.evidence[:MAX_EVIDENCE_CHARS],
                    upstream=hit.upstream,
                )
            )
        return found


def _always_groups(facts: _Facts) -> dict[str, str]:
    ctx = facts.context
    groups = {
        "python": ctx.python or "the run's interpreter",
        "stage": ctx.stage or "this",
        "step": ctx.step or "this step",
        "log": ctx.log or "the step's log",
        "exit": "" if facts.exit_code is None else str(facts.exit_code),
        "last": facts.lines[-1].strip()[:MAX_EVIDENCE_CHARS] if facts.lines else "(an empty log)",
        "paddle": ctx.paddle or "unknown",
        "exception": "",
        "message": "",
        "frame": "the traceback",
        "pip": "",
    }
    exc = _last_exception(facts.lines)
    if exc is not None:
        groups["exception"], groups["message"] = exc
    frame = _repo_frame(facts)
    if frame is not None:
        groups["frame"] = frame
    return groups


def _fill(template: str, groups: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: groups.get(m.group(1), m.group(0)), template)
