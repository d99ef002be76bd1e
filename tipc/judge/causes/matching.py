"""Matching one entry's conditions against a step's facts: one matcher per operator of `OPERATORS`
(`_MATCHERS`, the closed set: never eval), all of an entry's conditions holding give a hit (evidence, named
groups, the output line, the upstream step a `follows` condition named). A precondition on an unknown fact
does not hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath

from tipc.judge.causes.logs import _version_tuple
from tipc.judge.causes.model import Condition, _Facts, _Hit
from tipc.judge.causes.repo_code import _search_code
from tipc.judge.causes.upstream import _nearest, _origin, _would_make


def _match_all(conditions: Sequence[Condition], facts: _Facts) -> _Hit | None:
    """All conditions hold, output conditions first (fact conditions read the output's groups, e.g.
    {path}): the hit carries the first output evidence, else the first fact's."""
    ordered = sorted(conditions, key=lambda c: 0 if c.op in ("output", "any") else 1)
    best: _Hit | None = None
    upstream: str | None = None
    groups: dict[str, str] = {}
    for cond in ordered:
        hit = _match(cond, facts, groups)
        if hit is None:
            return None
        groups = {**hit.groups, **groups}
        upstream = upstream or hit.upstream
        if best is None or (best.line_index is None and hit.line_index is not None):
            best = hit
    if best is None:
        return None
    return _Hit(best.evidence, groups, best.line_index, upstream)


def _match_output(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    # Patterns in order, the first listed is the most telling; for it, the last matching line (nearest
    # the failure, after any earlier warnings of the same kind).
    for pattern in cond.patterns:
        for index in range(len(facts.lines) - 1, -1, -1):
            m = pattern.search(facts.lines[index])
            if m:
                found = {k: v for k, v in m.groupdict().items() if v is not None}
                return _Hit(facts.lines[index].strip(), found, index)
    return None


def _match_output_absent(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if any(p.search(line) for line in facts.lines for p in cond.patterns):
        return None
    return _Hit("", {}, None)


def _match_argv(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if facts.argv and any(p.search(facts.argv) for p in cond.patterns):
        return _Hit(f"command: {facts.argv}", {}, None)
    return None


def _match_exit_code(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if facts.exit_code is not None and facts.exit_code in cond.ints:
        return _Hit(f"exit code {facts.exit_code}", {}, None)
    return None


def _match_signal(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    if facts.signal_name is not None and facts.signal_name in cond.names:
        return _Hit(f"killed by {facts.signal_name}", {}, None)
    return None


def _match_status(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    status = facts.context.status
    return _Hit(f"status {status}", {}, None) if status in cond.names else None


def _match_stage(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    stage = facts.context.stage
    return _Hit("", {}, None) if stage is not None and stage in cond.names else None


def _match_file(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """file_exists / file_missing."""
    if facts.cwd is None:
        return None  # unknown: the fact cannot support a cause
    exists = (facts.cwd / cond.path).exists()
    if exists == (cond.op == "file_exists"):
        return _Hit(f"{cond.path} {'exists' if exists else 'is missing'}", {}, None)
    return None


def _match_paddle(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    version = facts.context.paddle
    if version is None or not _version_holds(version, cond.spec):
        return None
    return _Hit(f"Paddle {version}", {"paddle": version}, None)


def _match_pir(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    pir = facts.context.pir
    if pir is None or pir != cond.flag:
        return None
    return _Hit(f"PIR {'on' if pir else 'off'}", {}, None)


def _match_switch(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """switch: every named switch in force; no_switch: none of them."""
    in_force = facts.context.switches
    if cond.op == "switch":
        return _Hit("", {}, None) if all(n in in_force for n in cond.names) else None
    return _Hit("", {}, None) if not any(n in in_force for n in cond.names) else None


def _match_upstream(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """upstream: {stage, status}: the nearest earlier step of that stage (one this step consumes, else the
    nearest before it) has one of these statuses; `absent` when no earlier step has that stage."""
    stage = cond.names[0]
    wanted = cond.names[1:]
    step = _nearest(facts.context, stage)
    status = step.status if step is not None else "absent"
    if status not in wanted:
        return None
    return _Hit("", {"upstream_step": step.id if step is not None else "(none)"}, None)


def _match_missing_from(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    path = groups.get("path")
    if not path:
        return None
    origin, where = _origin(path, facts)
    if origin not in cond.names:
        return None
    words = {
        "argv": "the step's command line (the config)",
        "code": f"the code at {where}" if where else "the code",
        "download": "a download",
        "unknown": "nothing tipc can see",
    }
    return _Hit("", {"origin": words[origin], "where": where or ""}, None)


def _match_backbone(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    path = groups.get("path")
    if not path:
        return None
    name = PurePosixPath(path.replace("\\", "/")).name
    known = any(p.search(name) or p.search(path) for p in facts.backbones)
    return _Hit("", {}, None) if known == cond.flag else None


def _match_code(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    found = _search_code(facts, cond.patterns[0])
    if found is None:
        return None
    where, text = found
    return _Hit(f"{where}: {text}", {"where": where, "code": text}, None)


def _match_follows(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """follows: an earlier step (of these stages) that did not pass should have made the missing {path}."""
    path = groups.get("path")
    if not path:
        return None
    ctx = facts.context
    ordered = sorted(ctx.earlier, key=lambda e: 0 if e.id in ctx.depends_on else 1)
    for step in ordered:
        if step.stage not in cond.names or step.status in ("passed", "skipped"):
            continue
        why = _would_make(step, path, facts)
        if why is None:
            continue
        status = step.status + (f" ({step.reason})" if step.reason and step.status != "blocked" else "")
        if step.status == "blocked":
            status = f"was blocked ({step.reason})" if step.reason else "was blocked"
        return _Hit(
            f"{step.id} {step.status}",
            {
                "upstream": step.id,
                "upstream_status": status,
                "upstream_cause": step.cause or step.reason or step.status,
                "upstream_log": step.log or "its log",
                "made_by": why,
            },
            None,
            upstream=step.id,
        )
    return None


def _match_follows_silent(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    """follows_silent: an earlier step (of these stages) that passed although its log ends with an exception
    should have made the missing {path}: it failed and hid it (exit 0)."""
    path = groups.get("path")
    if not path:
        return None
    ctx = facts.context
    ordered = sorted(ctx.earlier, key=lambda e: 0 if e.id in ctx.depends_on else 1)
    for step in ordered:
        if step.stage not in cond.names or step.status != "passed" or not step.error:
            continue
        why = _would_make(step, path, facts)
        if why is None:
            continue
        return _Hit(
            f"{step.id} passed, its log ends with: {step.error}",
            {
                "upstream": step.id,
                "upstream_error": step.error,
                "upstream_log": step.log or "its log",
                "made_by": why,
            },
            None,
            upstream=step.id,
        )
    return None


def _match_module_in_repo(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    module = groups.get("module")
    repo = facts.context.repo
    if not module or repo is None:
        return None
    top = module.split(".")[0]
    in_repo = any(
        (base / top).is_dir() or (base / f"{top}.py").is_file() for base in {repo, facts.cwd or repo}
    ) or _named_in_code(facts, top)
    return _Hit("", {}, None) if in_repo == cond.flag else None


def _named_in_code(facts: _Facts, top: str) -> bool:
    """The repo's own code imports `top` as one of its packages (a folder the code expects in the repo)."""
    pattern = re.compile(rf"^\s*(?:from|import)\s+{re.escape(top)}[.\s]")
    found = _search_code(facts, pattern)
    return found is not None and _is_package_name(top, facts.context.pip_names)


def _is_package_name(top: str, pip_names: Mapping[str, str]) -> bool:
    return top not in pip_names


def _match_loaded(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    load = facts.context.load
    if load is None:
        return None
    average, cores = load
    loaded = average > max(1, cores)
    if loaded != cond.flag:
        return None
    return _Hit(
        f"load average {average:.1f} on {cores} cores", {"load": f"{average:.1f}", "cores": str(cores)}, None
    )


def _match_any(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    hits = [h for h in (_match(c, facts, groups) for c in cond.children) if h is not None]
    if not hits:
        return None
    with_line = [h for h in hits if h.line_index is not None]
    return with_line[0] if with_line else hits[0]


# One matcher per operator of OPERATORS.
_MATCHERS: dict[str, Callable[[Condition, _Facts, Mapping[str, str]], _Hit | None]] = {
    "output": _match_output,
    "output_absent": _match_output_absent,
    "argv": _match_argv,
    "exit_code": _match_exit_code,
    "signal": _match_signal,
    "status": _match_status,
    "stage": _match_stage,
    "file_exists": _match_file,
    "file_missing": _match_file,
    "paddle": _match_paddle,
    "pir": _match_pir,
    "switch": _match_switch,
    "no_switch": _match_switch,
    "upstream": _match_upstream,
    "missing_from": _match_missing_from,
    "backbone": _match_backbone,
    "code": _match_code,
    "follows": _match_follows,
    "follows_silent": _match_follows_silent,
    "module_in_repo": _match_module_in_repo,
    "loaded": _match_loaded,
    "any": _match_any,
}


def _match(cond: Condition, facts: _Facts, groups: Mapping[str, str]) -> _Hit | None:
    matcher = _MATCHERS.get(cond.op)
    if matcher is None:
        raise AssertionError(f"operator {cond.op!r} escaped the schema")  # the loader admits only OPERATORS
    return matcher(cond, facts, groups)


def _version_holds(version: str, spec: tuple[str, tuple[int, ...]]) -> bool:
    op, wanted = spec
    have = _version_tuple(version)
    if not have:
        return False
    width = len(wanted)
    have = have[:width] + (0,) * max(0, width - len(have))
    return {
        "<": have < wanted,
        "<=": have <= wanted,
        ">": have > wanted,
        ">=": have >= wanted,
        "==": have == wanted,
        "!=": have != wanted,
    }[op or "=="]
