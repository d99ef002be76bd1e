"""Running the benchmark: `tipc check` on each clean repo and each planted variant (through tipc's CLI, as a
reviewer runs it), and the verdict per kind and repo (a Cell): caught by which rule with what evidence,
missed, loud (the plant broke a step, which the step rules report), no effect, or n/a with the reason.

A kind counts as caught when a rule it names in `expect` FAILs on the variant (a FAIL, or a WARN of a
warning-severity rule) and did not on the clean repo, or a report note it names appears; a kind native to
a repo is judged on the clean repo itself.
"""

from __future__ import annotations

import enum
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.silent.facts import Facts, load_facts
from bench.silent.injectors import NotApplicable
from bench.silent.model import Kind, Repo
from bench.silent.variants import ROOT, Variant, build_variant, fresh_copy, why_not

RULESETS = ("--ruleset", "tipc-basic", "--ruleset", "competition")
REPOS_PYTHON = Path(os.environ.get("TIPC_REPOS_PYTHON", ROOT / ".venv-repos" / "bin" / "python"))
CHECK_TIMEOUT_S = 1800.0


class State(enum.Enum):
    CAUGHT = "caught"
    MISSED = "missed"
    LOUD = "loud"  # the plant made a step fail: not silent on this repo (the step rules report it)
    NO_EFFECT = "no effect"  # the planted code never acted (the repo does not go through what it patches)
    NA = "n/a"
    ERROR = "error"  # the benchmark could not check the variant


@dataclass(frozen=True)
class Cell:
    kind: str
    repo: str
    state: State
    native: bool = False
    rules: tuple[str, ...] = ()  # the expected rules that caught it (or the others that newly failed)
    evidence: str = ""  # the catching rule's summary, or what the expected rules said
    why: str = ""  # n/a reason, what was planted, what made it loud
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["state"] = self.state.value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Cell:
        return cls(**{**data, "state": State(data["state"]), "rules": tuple(data.get("rules") or ())})


@dataclass(frozen=True)
class Checked:
    """A finished `tipc check`: its JSON report (None when it printed none) and how it ended."""

    repo: Path
    returncode: int
    report: dict[str, Any] | None
    stderr_tail: str
    seconds: float


def interpreter(spec: Repo) -> str:
    return sys.executable if spec.python == "tipc" else str(REPOS_PYTHON)


def tipc_check(repo: Path, spec: Repo, reuse_run: bool = False, timeout: float = CHECK_TIMEOUT_S) -> Checked:
    """`tipc check REPO --format json` with the repo's switches and the default rulesets."""
    argv = [sys.executable, "-m", "tipc", "check", str(repo), "--format", "json", "--no-color", *RULESETS]
    if spec.python == "repos":
        argv += ["--python", str(REPOS_PYTHON)]
    argv += list(spec.switches)
    if reuse_run:
        argv.append("--reuse-run")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("FLAGS_enable_pir_api", None)
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        tail = (exc.stderr or b"")[-2000:]
        text = tail.decode(errors="replace") if isinstance(tail, bytes) else str(tail)
        return Checked(repo, -1, None, f"timed out after {timeout:.0f} s\n{text}", time.monotonic() - started)
    report: dict[str, Any] | None
    try:
        report = json.loads(done.stdout) if done.stdout.strip() else None
    except ValueError:
        report = None
    return Checked(repo, done.returncode, report, done.stderr[-3000:], time.monotonic() - started)


def probe_counts(repo: Path, kind: str, key: str) -> int | None:
    """How often the plant's prelude acted (its counter `key`, summed over the probe files it left), or None
    when no probe file was left (the planted code never ran)."""
    files = [p for p in repo.rglob(f".silent_bench/{kind}.*.json") if p.is_file()]
    if not files:
        return None
    total = 0
    for path in files:
        try:
            value = json.loads(path.read_text()).get(key, 0)
        except ValueError:
            continue
        total += int(value) if isinstance(value, int | float) else 0
    return total


def _notes_matching(facts: Facts, patterns: tuple[str, ...]) -> list[str]:
    return [n for n in facts.notes if any(re.search(p, n) for p in patterns)]


def judge_native(kind: Kind, spec: Repo, clean: Facts) -> Cell:
    """A kind the unmodified repo shows: caught when an expected rule FAILs (or an expected note is there)."""
    caught = [r for r in kind.expect if (rule := clean.rule(r)) is not None and rule.failing]
    notes = _notes_matching(clean, kind.expect_notes)
    what = spec.native[kind.id]
    if caught:
        rule = clean.rule(caught[0])
        return Cell(kind.id, spec.name, State.CAUGHT, True, tuple(caught), rule.summary if rule else "", what)
    if notes:
        return Cell(kind.id, spec.name, State.CAUGHT, True, ("note",), notes[0], what)
    said = "; ".join(f"{r}: {v.verdict} ({v.summary[:140]})" for r in kind.expect if (v := clean.rule(r)))
    return Cell(kind.id, spec.name, State.MISSED, True, (), said or "no expected rule or note", what)


def _newly_failing(clean: Facts, variant: Facts) -> list[str]:
    out = []
    for rule in variant.rules.values():
        before = clean.rule(rule.id)
        if rule.failing and not (before is not None and before.failing):
            out.append(rule.id)
    return out


def _loud(kind: Kind, clean: Facts, variant: Facts) -> str | None:
    """A step that passed on the clean repo and does not on the variant, in a stage the kind must leave
    passing or in one before the first of those (a plant that broke the chain upstream of itself)."""
    before = {s.id for s in clean.steps if s.passed}
    order = ("train", "eval", "export", "infer")
    first = min((order.index(s) for s in kind.silent), default=-1)
    for step in variant.steps:
        upstream = step.stage in order and order.index(step.stage) < first
        if (step.stage in kind.silent or upstream) and step.id in before and not step.passed:
            return f"{step.id} {step.status}"
    return None


def _unobserved(kind: Kind, clean: Facts, variant: Facts) -> str | None:
    """Why the plant did not show, when the data the kind is observed by is the clean repo's."""
    if kind.observe is None:
        return None
    rule_id, key = kind.observe
    before, after = clean.rule(rule_id), variant.rule(rule_id)
    if before is None or after is None or key not in after.data:
        return None
    if after.data.get(key) == before.data.get(key):
        return f"the plant changed nothing {rule_id} saw ({key} is the clean repo's, value for value)"
    return None


def judge_variant(kind: Kind, spec: Repo, clean: Facts, variant: Facts, v: Variant, seconds: float) -> Cell:
    new = _newly_failing(clean, variant)
    caught = [r for r in kind.expect if r in new]
    notes = [n for n in _notes_matching(variant, kind.expect_notes) if n not in clean.notes]

    def cell(state: State, rules: tuple[str, ...] = (), evidence: str = "") -> Cell:
        why = "; ".join(v.planted.changes)
        return Cell(kind.id, spec.name, state, False, rules, evidence, why, round(seconds, 1))

    def summary(rule_id: str) -> str:
        rule = variant.rule(rule_id)
        return rule.summary if rule is not None else ""

    if caught:
        return cell(State.CAUGHT, tuple(caught), summary(caught[0]))
    if notes:
        return cell(State.CAUGHT, ("note",), notes[0])
    loud = _loud(kind, clean, variant)
    if loud is not None:
        return cell(State.LOUD, tuple(new), loud)
    if not kind.expect and new:  # no rule was named: whichever newly fails, the chain still passing
        return cell(State.CAUGHT, tuple(new), summary(new[0]))
    unseen = _unobserved(kind, clean, variant)
    if unseen is not None:
        return cell(State.NO_EFFECT, (), unseen)
    if v.planted.probe_key:
        acted = probe_counts(v.repo, kind.id, v.planted.probe_key)
        if not acted:
            why = "the planted code never ran" if acted is None else "the planted code ran but never acted"
            return cell(State.NO_EFFECT, (), why)
    said = "; ".join(f"{r}: {x.verdict} ({x.summary[:160]})" for r in kind.expect if (x := variant.rule(r)))
    if not kind.expect:
        said = f"no rule FAILs that passed on the clean repo (no rule covers it: {kind.missing_rule})"
    others = f"; other rules newly failing: {', '.join(new)}" if new else ""
    return cell(State.MISSED, (), (said or "no expected rule ran") + others)


@dataclass(frozen=True)
class RepoResult:
    spec: Repo
    cells: tuple[Cell, ...]
    clean_failing: dict[str, str]  # rule id -> summary, every rule failing on the clean repo
    false_alarms: dict[str, str]  # rule id -> summary: failing on the clean repo, not labelled legitimate
    unseen_labels: tuple[str, ...]  # labelled legitimate failures that did not fail
    seconds: float


def false_alarms(
    kinds: tuple[Kind, ...], spec: Repo, clean: Facts
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """(every failing rule, those neither labelled legitimate nor expected of a native kind, the labels of
    failures that did not fail)."""
    failing = {r.id: r.summary for r in clean.failing_rules()}
    native_rules = {r for k in kinds if k.id in spec.native for r in k.expect}
    alarms = {r: s for r, s in failing.items() if r not in spec.legit and r not in native_rules}
    unseen = [r for r in spec.legit if r not in failing]
    return failing, alarms, unseen


def _log(message: str) -> None:
    print(f"silent: {message}", file=sys.stderr, flush=True)


def run_repo(
    spec: Repo,
    kinds: tuple[Kind, ...],
    work: Path,
    repos_dir: Path,
    resume: bool = False,
    keep: bool = False,
    catalogue: tuple[Kind, ...] | None = None,
) -> RepoResult:
    """The clean check of one repo and every kind of `kinds` on it, one check at a time. False alarms are
    judged against the whole `catalogue` (default: `kinds`): a rule a native kind expects is no false alarm
    because --kinds left that kind out."""
    started = time.monotonic()
    home = work / spec.name
    clean_dir = home / "clean"
    clean_report = home / "clean.report.json"
    clean_repo: Path | None = None
    if resume and clean_report.is_file():
        found = [p for p in clean_dir.iterdir() if p.is_dir()] if clean_dir.is_dir() else []
        clean_repo = found[0] if found else None
    if clean_repo is None:
        clean_repo = fresh_copy(spec, repos_dir, clean_dir)
        _log(f"{spec.name}: clean check ...")
        done = tipc_check(clean_repo, spec)
        if done.report is None:
            raise RuntimeError(
                f"{spec.name}: the clean check printed no report (exit {done.returncode}):\n"
                f"{done.stderr_tail}"
            )
        clean_report.parent.mkdir(parents=True, exist_ok=True)
        clean_report.write_text(json.dumps(done.report))
        (home / "clean.seconds").write_text(f"{done.seconds:.1f}\n")
        _log(f"{spec.name}: clean check exit {done.returncode} in {done.seconds:.0f} s")
    clean = load_facts(clean_repo, json.loads(clean_report.read_text()))
    cells = [_cell(kind, spec, clean, home, repos_dir, resume, keep) for kind in kinds]
    failing, alarms, unseen = false_alarms(catalogue or kinds, spec, clean)
    if not keep:
        shutil.rmtree(clean_dir, ignore_errors=True)
    # the checks' own time (a resumed run adds what the earlier one spent on the cells it reuses)
    seconds = sum(c.seconds for c in cells) + _clean_seconds(home, time.monotonic() - started)
    return RepoResult(spec, tuple(cells), failing, alarms, tuple(unseen), seconds)


def _clean_seconds(home: Path, default: float) -> float:
    try:
        return float((home / "clean.seconds").read_text())
    except (OSError, ValueError):
        return default


def _cell(
    kind: Kind, spec: Repo, clean: Facts, home: Path, repos_dir: Path, resume: bool, keep: bool
) -> Cell:
    saved = home / f"{kind.id}.cell.json"
    if resume and saved.is_file():
        return Cell.from_json(json.loads(saved.read_text()))
    cell = _judge_kind(kind, spec, clean, home, repos_dir, keep)
    saved.write_text(json.dumps(cell.to_json(), indent=1))
    return cell


def _judge_kind(kind: Kind, spec: Repo, clean: Facts, home: Path, repos_dir: Path, keep: bool) -> Cell:
    if kind.id in spec.native:
        return judge_native(kind, spec, clean)
    why = why_not(kind, spec, clean)
    if why is not None:
        return Cell(kind.id, spec.name, State.NA, why=why)
    parent = home / kind.id
    try:
        variant = build_variant(kind, spec, clean, parent, repos_dir, interpreter(spec))
    except NotApplicable as exc:
        shutil.rmtree(parent, ignore_errors=True)
        return Cell(kind.id, spec.name, State.NA, why=str(exc))
    _log(f"{spec.name}: {kind.id}: {'; '.join(variant.planted.changes)}")
    done = tipc_check(variant.repo, spec, reuse_run=variant.reuse_run)
    try:
        if done.report is None:
            why = f"the check printed no report (exit {done.returncode}): {done.stderr_tail[-500:]}"
            return Cell(kind.id, spec.name, State.ERROR, evidence=why, seconds=round(done.seconds, 1))
        (parent / "report.json").write_text(json.dumps(done.report))
        cell = judge_variant(kind, spec, clean, load_facts(variant.repo, done.report), variant, done.seconds)
        _log(f"{spec.name}: {kind.id}: {cell.state.value} {' '.join(cell.rules)} ({done.seconds:.0f} s)")
        return cell
    finally:
        if not keep:
            shutil.rmtree(variant.repo, ignore_errors=True)
