"""Small helpers every check uses: finding steps in a record, reading logs, building outcomes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.errors import ConfigError
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.settings import Settings, as_settings

if TYPE_CHECKING:
    from tipc.core.steps import Step
    from tipc.execute.record import RunRecord, StepResult

NO_RECORD = "no run record"


@dataclass(frozen=True)
class StepRun:
    """A planned step paired with its result (None when the record has no result for it)."""

    step: Step
    result: StepResult | None

    @property
    def log(self) -> str | None:
        """Repo-relative log path, normalised (`./a/../b.log` -> `b.log`) so evidence locations are clean."""
        raw = self.result.log if self.result is not None and self.result.log else self.step.log
        return os.path.normpath(str(raw)) if raw else None

    @property
    def argv(self) -> tuple[str, ...]:
        if self.result is not None and self.result.argv:
            return tuple(self.result.argv)
        return tuple(self.step.argv)

    @property
    def ran(self) -> bool:
        return self.result is not None and self.result.started is not None

    @property
    def passed(self) -> bool:
        from tipc.core.steps import Status

        return self.result is not None and self.result.status is Status.PASSED


def step_runs(record: RunRecord, stage: str) -> list[StepRun]:
    """Steps of `stage` (a Stage value string such as "train") in plan order, with their results."""
    out = []
    for step in record.plan.steps:
        if getattr(step.stage, "value", step.stage) == stage:
            out.append(StepRun(step, record.result(step.id)))
    return out


def ran_train_runs(
    ctx: CheckContext, step_filter: str | None, *, list_steps: bool = False
) -> list[StepRun] | CheckOutcome:
    """The train steps (ids containing `step_filter`) that ran and left a log, or the outcome saying why none.

    Shared by the log checks so they agree on NA (no train step planned) versus SKIP (none ran);
    `list_steps` puts the planned step ids in the SKIP outcome's data.
    """
    if ctx.record is None:
        return no_record()
    runs = [r for r in step_runs(ctx.record, "train") if step_filter is None or step_filter in r.step.id]
    if not runs:
        return outcome(Verdict.NA, "no train step in the plan")
    ran = [r for r in runs if r.ran and r.log]
    if not ran:
        if list_steps:
            return outcome(Verdict.SKIP, "no train step ran", data={"steps": [r.step.id for r in runs]})
        return outcome(Verdict.SKIP, "no train step ran")
    return ran


def outcome(verdict: Verdict, summary: str, *evidence: Evidence, **data: object) -> CheckOutcome:
    return CheckOutcome(verdict, summary, tuple(evidence), dict(data))


def no_record() -> CheckOutcome:
    return outcome(Verdict.SKIP, NO_RECORD)


def bad_args(check: str, message: str) -> CheckOutcome:
    return outcome(Verdict.FAIL, f"{check}: bad arguments: {message}")


def settings_of(ctx: CheckContext) -> Settings | CheckOutcome:
    """The typed settings, or a FAIL outcome naming the bad settings entry."""
    try:
        return as_settings(ctx.settings)
    except ConfigError as exc:
        return outcome(
            Verdict.FAIL,
            f"invalid tipc settings: {exc.render()}",
            Evidence(exc.message, path=exc.path, line=exc.line),
        )


def resolve(repo: Path | str, rel: str) -> Path:
    p = Path(rel)
    return p if p.is_absolute() else Path(repo) / p


def work_dir_for(ctx: CheckContext, name: str) -> Path:
    """A check's scratch folder inside the run's output folder (never elsewhere in the user's repo)."""
    out = ctx.record.plan.output_dir if ctx.record is not None else "test_tipc/output"
    return resolve(ctx.repo, out) / name


def repo_relative(repo: Path | str, path: Path) -> str:
    """`path` relative to the repo for evidence locations; as given when it lies outside the repo."""
    try:
        return str(Path(path).resolve().relative_to(Path(repo).resolve()))
    except ValueError:
        return str(path)


def read_lines(path: Path) -> list[str] | None:
    """File lines, splitting on \\n and on \\r (progress bars rewrite one line with \\r)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    text = raw.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").split("\n")


def physical_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, segment) for each \\r-separated segment of each \\n line."""
    lines = read_lines(path)
    if lines is None:
        return
    for no, line in enumerate(lines, start=1):
        for seg in line.split("\r"):
            if seg.strip():
                yield no, seg


def excerpt(text: str, limit: int = 200) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def argv_options(argv: tuple[str, ...] | list[str]) -> list[tuple[str, str]]:
    """(key, value) pairs from `--k=v`, `--k v`, `-o A.k=v` and bare `k=v` tokens; keys lose dashes."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("-") and "=" in tok:
            k, v = tok.lstrip("-").split("=", 1)
            out.append((k, v))
        elif tok.startswith("-") and not _is_number(tok):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is not None and (not nxt.startswith("-") or _is_number(nxt)):
                if "=" in nxt and tok in ("-o", "--opt", "--override", "-c"):
                    k, v = nxt.split("=", 1)
                    out.append((k, v))
                else:
                    out.append((tok.lstrip("-"), nxt))
                i += 1
        elif "=" in tok:
            k, v = tok.split("=", 1)
            out.append((k, v))
        i += 1
    return out


def norm_key(key: str) -> str:
    """An option key as one spelling: last dotted part, lower case, dashes as underscores.

    Real repos write `--save-inference-dir`, `--save_inference_dir`, `-o Global.use_gpu=`, `--use-gpu`:
    detectors compare this form, while argv rewriting keeps the key as the repo wrote it.
    """
    return key.split(".")[-1].strip().lower().replace("-", "_")


def _is_number(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def run_python(ctx: CheckContext, settings: Settings, override: str | None = None) -> str:
    """The interpreter for model-side work: rule arg > tipc.yaml `python` > the run's python > ours."""
    import sys

    if override:
        return override
    if settings.python:
        return settings.python
    rec_python = getattr(ctx.record, "python", "") if ctx.record is not None else ""
    return str(rec_python) if rec_python else sys.executable


def shipped_files(repo: Path | str, pattern: object) -> list[str] | str:
    """Repo-relative files a `path` arg names: a path or glob (`**/`, `{a,b}`), or a list of them.

    Uses the rules' repo walk, so tipc's own output (test_tipc/output) and VCS folders never match: a log
    tipc wrote is not a log the author shipped. Returns an error message for a bad argument.
    """
    from tipc.core.fs import is_safe_relative
    from tipc.judge.rules.files import RepoFiles  # lazy: tipc.judge.rules imports this package

    patterns = [pattern] if isinstance(pattern, str) else pattern
    if not isinstance(patterns, list | tuple) or not all(isinstance(p, str) for p in patterns or [None]):
        return f"path must be a repo-relative path or glob (or a list of them), got {pattern!r}"
    bad = [p for p in patterns if not is_safe_relative(p)]
    if bad:
        return f"path {bad[0]!r} must be repo-relative without '..'"
    return sorted(RepoFiles(Path(repo)).glob(tuple(patterns)))


def shipped_logs(ctx: CheckContext, check: str, pattern: object) -> list[str] | CheckOutcome:
    """The training logs a `path` arg names, or the FAIL when it is bad or matches no file."""
    shipped = shipped_files(ctx.repo, pattern)
    if isinstance(shipped, str):
        return bad_args(check, shipped)
    if not shipped:
        return outcome(
            Verdict.FAIL,
            f"no log file matches {pattern!r}",
            Evidence(f"expected a training log at {pattern}"),
        )
    return shipped


def created_paths(record: RunRecord | None) -> set[str]:
    """Repo-relative paths the record's sandbox saw its run create (empty without a sandbox record)."""
    sandbox = getattr(record, "sandbox", None)
    changes = sandbox.get("changes") if isinstance(sandbox, dict) else None
    return {
        str(c["path"])
        for c in changes or ()
        if isinstance(c, dict) and c.get("kind") == "created" and isinstance(c.get("path"), str)
    }


def weights_made_here(ctx: CheckContext, record: RunRecord, step_id: str) -> str:
    """A weights file step `step_id` of `record` read that one of this check's runs (`record`, the basic
    chain's `ctx.record`) created, repo-relative; "" when none (or no lineage was recorded)."""
    from tipc.execute.lineage import dir_for, load, sanitise
    from tipc.judge.lineage_graph import WEIGHT_SUFFIXES

    accesses = load(dir_for(record.plan, ctx.repo))
    access = accesses.get(step_id) or accesses.get(sanitise(step_id))
    if access is None:
        return ""
    made = created_paths(record) | created_paths(ctx.record)
    roots = [Path(str(record.plan.repo)), Path(str(ctx.repo))]
    for read in access.reads:
        if not read.path.endswith(WEIGHT_SUFFIXES):
            continue
        for root in roots:
            try:
                rel = Path(read.path).relative_to(root).as_posix()
            except ValueError:
                continue
            if rel in made:
                return rel
    return ""
