"""What a clean `tipc check` of a repo shows, read from tipc's own outputs only: the JSON report
(`--format json`: verdicts, notes, the lineage graph) and the run record (`tipc_run.json`: each step's argv,
status and log). The injectors plant a kind from these facts (the train script is the one the train step
ran, the weights are the ones eval read), never from a path written for one repo.

Where the run's files lie: a sandboxed run keeps what it wrote in its run folder
`<repo>/<sandbox.folder>/`: the chain's output folder under `logs/`, every other write under `upper/`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bench.silent.edit import entry_script, norm_key

# Command-line keys whose value names weights to load (as tipc's lineage rule reads them).
WEIGHT_KEYS = frozenset(
    {
        "pretrained",
        "pretrained_model",
        "pretrain_weights",
        "model_path",
        "resume",
        "checkpoint",
        "weights",
        "init_model",
        "params_path",
        "load_model",
        "resume_from",
        "weights_path",
    }
)
WEIGHT_SUFFIXES = (".pdparams", ".pth", ".pt", ".ckpt")
PROGRAM_SUFFIXES = (".pdmodel", ".json")


@dataclass(frozen=True)
class Step:
    """One step of the run, as the record has it."""

    id: str
    stage: str
    status: str
    argv: tuple[str, ...]
    cwd: str
    log: str | None  # as the record names it (inside the run's view of the repo)
    source_lines: tuple[int, ...]

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class LineageFile:
    path: str  # repo-relative
    kind: str  # weights | model | other
    origin: str
    written_by: tuple[str, ...]
    read_by: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    id: str
    verdict: str
    severity: str
    summary: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def failing(self) -> bool:
        """FAIL, or WARN for a warning-severity rule (its FAIL shows as WARN)."""
        return self.verdict == "FAIL" or (self.verdict == "WARN" and self.severity == "warning")


@dataclass(frozen=True)
class Facts:
    """A checked repo: its report, its run record, and where the run's files lie."""

    repo: Path
    report: dict[str, Any]
    record: dict[str, Any]
    run_folder: Path
    output_dir: str
    config: Path
    steps: tuple[Step, ...]
    rules: dict[str, Rule]
    files: tuple[LineageFile, ...]
    notes: tuple[str, ...]

    def stage_steps(self, stage: str) -> list[Step]:
        return [s for s in self.steps if s.stage == stage]

    def passed(self, stage: str) -> list[Step]:
        return [s for s in self.stage_steps(stage) if s.passed]

    def script(self, step: Step) -> Path | None:
        return entry_script(self.repo, step.cwd, step.argv)

    def run_file(self, rel: str) -> Path | None:
        """Where a file at `rel` (repo-relative) that the run wrote lies now; None when it is not there."""
        rel = rel.removeprefix("./")
        # a report names files where they are on disk (tipc.core.paths): already in the run folder
        shown = self.repo / rel
        if shown.resolve().is_relative_to(self.run_folder.resolve()):
            return shown if shown.is_file() else None
        out = self.output_dir.strip("/").removeprefix("./")
        if out and (rel == out or rel.startswith(out + "/")):
            cand = self.run_folder / "logs" / rel[len(out) :].lstrip("/")
        else:
            cand = self.run_folder / "upper" / rel
        return cand if cand.is_file() else None

    def log_text(self, step: Step) -> str:
        if not step.log:
            return ""
        path = self.run_file(step.log)
        return path.read_text(errors="replace") if path is not None else ""

    def weights_written_by_train(self) -> list[LineageFile]:
        train = {s.id for s in self.stage_steps("train")}
        return [f for f in self.files if f.kind == "weights" and set(f.written_by) & train]

    def trained_weights_read(self, stages: tuple[str, ...] = ("eval", "export")) -> list[LineageFile]:
        """Weights this run's train wrote that a step of `stages` read (what eval and export loaded)."""
        readers = {s.id for st in stages for s in self.stage_steps(st)}
        return [f for f in self.weights_written_by_train() if set(f.read_by) & readers]

    def exported_programs(self) -> list[LineageFile]:
        """Model program files (.pdmodel / .json) this run's export wrote and its inference read."""
        export = {s.id for s in self.stage_steps("export")}
        infer = {s.id for s in self.stage_steps("infer")}
        return [
            f
            for f in self.files
            if f.kind == "model"
            and f.path.endswith(PROGRAM_SUFFIXES)
            and set(f.written_by) & export
            and set(f.read_by) & infer
        ]

    def rule(self, rule_id: str) -> Rule | None:
        return self.rules.get(rule_id)

    def failing_rules(self) -> list[Rule]:
        return [r for r in self.rules.values() if r.failing]


def weight_options(argv: tuple[str, ...]) -> list[tuple[str, str]]:
    """(token as written, value) for each option naming weights by path (`--pretrained=x.pdparams`,
    `-o Global.pretrained_model=...`)."""
    out = []
    tokens = list(argv)
    for i, tok in enumerate(tokens):
        key, sep, value = tok.partition("=")
        if not sep and tok.startswith("-") and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            key, value = tok, tokens[i + 1]
        elif not sep:
            continue
        v = value.strip().strip("'\"")
        if norm_key(key) in WEIGHT_KEYS and ("/" in v or v.endswith(WEIGHT_SUFFIXES)):
            out.append((tok, v))
    return out


def find_record(repo: Path, report: dict[str, Any]) -> Path | None:
    """The train chain's run record of a checked repo."""
    run = report.get("run") or {}
    reused = run.get("record_path")
    if reused and Path(reused).is_file():
        return Path(reused)
    folder = repo / ((run.get("sandbox") or {}).get("folder") or "")
    for path in sorted(folder.glob("logs/**/tipc_run.json")):
        data = json.loads(path.read_text())
        if (data.get("plan") or {}).get("chain") != "serving":
            return path
    return None


def _steps(record: dict[str, Any]) -> tuple[Step, ...]:
    results = {r["step_id"]: r for r in record.get("results") or []}
    out = []
    for s in (record.get("plan") or {}).get("steps") or []:
        r = results.get(s["id"], {})
        out.append(
            Step(
                id=s["id"],
                stage=s["stage"],
                status=r.get("status", "not run"),
                argv=tuple(str(a) for a in (r.get("argv") or s.get("argv") or ())),
                cwd=s.get("cwd") or ".",
                log=r.get("log") or s.get("log"),
                source_lines=tuple(int(n) for n in s.get("source_lines") or ()),
            )
        )
    return tuple(out)


def relocate(path: str, original: str | None, repo: Path) -> Path:
    """A path a record names, in `repo`: relative ones are repo-relative, and absolute ones under the
    repo the record was made in (`plan.repo`, a copy since moved) are mapped into `repo`."""
    p = Path(path)
    if not p.is_absolute():
        return repo / p
    if original and p.is_relative_to(original) and not p.is_relative_to(repo):
        return repo / p.relative_to(original)
    return p


def load_facts(repo: Path, report: dict[str, Any]) -> Facts:
    """The facts of a repo `tipc check` has just checked (its report as printed with --format json)."""
    record_path = find_record(repo, report)
    record: dict[str, Any] = (
        json.loads(record_path.read_text()) if record_path else {"plan": {}, "results": []}
    )
    run = report.get("run") or {}
    folder = repo / ((run.get("sandbox") or {}).get("folder") or "test_tipc/output/tipc")
    plan = record.get("plan") or {}
    config = relocate(str(plan.get("config_path") or run.get("config") or ""), plan.get("repo"), repo)
    rules = {
        r["id"]: Rule(
            r["id"], r["verdict"], r.get("severity", "error"), r.get("summary", ""), r.get("data") or {}
        )
        for r in report.get("rules") or []
    }
    files = tuple(
        LineageFile(
            f.get("seen_as") or f["path"],  # the path as the chain saw it (a report shows where it lies)
            f.get("kind", "other"),
            f.get("origin", ""),
            tuple(f.get("written_by") or ()),
            tuple(f.get("read_by") or ()),
        )
        for f in (report.get("lineage") or {}).get("files") or []
    )
    return Facts(
        repo=repo,
        report=report,
        record=record,
        run_folder=folder,
        output_dir=str(plan.get("output_dir") or run.get("output_dir") or ""),
        config=config,
        steps=_steps(record),
        rules=rules,
        files=files,
        notes=tuple(str(n) for n in report.get("notes") or ()),
    )


_FIELD = re.compile(r"\b(\w+)['\"]?\s*[:=]\s*[-+]?(?:\d|\.\d|nan|inf)", re.IGNORECASE)


def log_fields(text: str) -> set[str]:
    """The `name: number` / `name=number` keys a log prints (lower case)."""
    return {m.group(1).lower() for m in _FIELD.finditer(text)}


def script_label(repo: Path, script: Path) -> PurePosixPath:
    return PurePosixPath(script.resolve().relative_to(repo.resolve()).as_posix())
