"""What a run did, beside the defaults of its interpreter that the environment header states: the inference
model format its export steps really wrote (from the run's lineage: the files they wrote) and the PIR flag in
force for them (FLAGS_enable_pir_api from tipc's switches or the config; else Paddle's default).

The header line "Paddle 3.3.1 · by default: PIR on, export json+pdiparams" is what the interpreter does; a
repo whose export script switches PIR off itself, or a run with `--paddle-compat export`, writes `.pdmodel`.
The report states both, so nobody reads the default as what happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord

_PIR_FLAG = "FLAGS_enable_pir_api"
_FORMATS = {
    ".pdmodel": "inference .pdmodel (the program format PIR off writes)",
    ".json": "inference .json (PIR)",
}


def export_formats(paths: Iterable[str]) -> list[str]:
    """The model formats among the files an export step wrote (`.pdmodel`, `.json` beside a `.pdiparams`)."""
    names = [PurePosixPath(p).name for p in paths]
    params = {n[: -len(".pdiparams")] for n in names if n.endswith(".pdiparams")}
    found: list[str] = []
    for name in names:
        for suffix in _FORMATS:
            if name.endswith(suffix) and name[: -len(suffix)] in params and suffix not in found:
                found.append(suffix)
    return found


def did_lines(record: RunRecord, written: Mapping[str, Iterable[str]]) -> list[str]:
    """One line about the export steps of `record` (written: step id -> files it wrote), or none when the
    run has no export step that passed."""
    exports = [s for s in record.plan.steps if s.stage.value == "export"]
    passed = [s for s in exports if (r := record.result(s.id)) is not None and r.status.value == "passed"]
    if not passed:
        return []
    formats: list[str] = []
    flags: list[str] = []
    for step in passed:
        formats += [f for f in export_formats(written.get(step.id, ())) if f not in formats]
        result = record.result(step.id)
        env = dict(result.env_delta) if result is not None else {}
        value = env.get(_PIR_FLAG, dict(step.env).get(_PIR_FLAG))
        flag = (
            f"{_PIR_FLAG}={value}"
            if value is not None
            else f"{_PIR_FLAG} not set by tipc or the config (Paddle's default, unless the code sets it)"
        )
        if flag not in flags:
            flags.append(flag)
    wrote = " and ".join(_FORMATS[f] for f in formats) if formats else "no inference model tipc saw"
    return [f"this run: export wrote {wrote}; {', '.join(flags)}"]


def written_by_step(record: RunRecord, repo: Path | None = None) -> dict[str, list[str]]:
    """{step id: paths it wrote} from the run's lineage folder (tipc.execute.lineage), readable at `repo`."""
    from tipc.execute import lineage

    try:
        steps = lineage.load(lineage.dir_for(record.plan, repo))
    except OSError:
        return {}
    return {sid: [a.path for a in access.writes] for sid, access in steps.items()}


def run_did(record: RunRecord, repo: Path | None = None) -> list[str]:
    return did_lines(record, written_by_step(record, repo))
