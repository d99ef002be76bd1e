"""The review summary per acceptance requirement (seed 004 §4.1.3, §4.2.3, §4.3.4): which rules judge each
requirement is data (specs/review/requirements.yaml, schema tipc.requirements/1); a submission's report gives
each requirement a verdict (PASS / FAIL / N-A) and one line of evidence, and its distance from acceptance (the
requirements it fails).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "tipc.requirements/1"
EVIDENCE_CHARS = 160


@dataclass(frozen=True)
class Requirement:
    id: str
    section: str
    title: str
    rules: tuple[str, ...]

    def judges(self, rule_id: str) -> bool:
        return any(rule_id.startswith(r[:-1]) if r.endswith("*") else rule_id == r for r in self.rules)

    @property
    def header(self) -> str:
        return f"{self.section} {self.id}"


def default_path() -> Path:
    from tipc.core.resources import data_dir

    return data_dir("specs") / "review" / "requirements.yaml"


@functools.cache
def load() -> tuple[Requirement, ...]:
    return _load(default_path())


def _load(path: Path) -> tuple[Requirement, ...]:
    from tipc.core.errors import ConfigError
    from tipc.core.yamlschema import Document, Enum, Field, Map, Seq, Str

    entry = Map(
        {
            "id": Field(Str(pattern=r"[a-z0-9_]+"), True),
            "section": Field(Str(scalar=True), True),
            "title": Field(Str(), True),
            "rules": Field(Seq(Str(), min_items=1), True),
        }
    )
    schema = Map(
        {
            "schema": Field(Enum((SCHEMA,)), True, identifies=True),
            "requirements": Field(Seq(entry, min_items=1), True),
        }
    )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    doc = Document.from_bytes(data, str(path))
    raw = doc.conform(schema)
    seen: set[str] = set()
    for i, e in enumerate(raw["requirements"]):
        if e["id"] in seen:
            raise doc.error(("requirements", i, "id"), f"{e['id']!r} is given twice")
        seen.add(e["id"])
    return tuple(
        Requirement(e["id"], str(e["section"]), e["title"], tuple(e["rules"])) for e in raw["requirements"]
    )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"


def cells(
    report: dict[str, Any], requirements: tuple[Requirement, ...] | None = None
) -> dict[str, dict[str, str]]:
    """{requirement id: {"verdict": PASS|FAIL|N-A, "evidence": one line}} for the requirements the report's
    rules judge (none when it has no rule of them)."""
    requirements = requirements if requirements is not None else load()
    rules = [r for r in report.get("rules", []) if isinstance(r, dict)]
    out: dict[str, dict[str, str]] = {}
    for req in requirements:
        mine = [r for r in rules if req.judges(str(r.get("id", "")))]
        if mine:
            out[req.id] = _cell(mine)
    return out


def _cell(rules: list[dict[str, Any]]) -> dict[str, str]:
    """FAIL when an error-severity rule FAILs, PASS when one passes (or warns), else N-A (a SKIP too)."""
    failed = [r for r in rules if r.get("verdict") == "FAIL" and r.get("severity", "error") == "error"]
    passed = [r for r in rules if r.get("verdict") in ("PASS", "WARN")]
    if failed:
        verdict, pick = "FAIL", failed[0]
    elif passed:
        verdict, pick = "PASS", passed[0]
    else:
        verdict, pick = "N-A", next((r for r in rules if r.get("verdict") == "N-A"), rules[0])
    summary = str(pick.get("summary") or pick.get("error") or "")
    if verdict == "N-A" and pick.get("verdict") == "SKIP":
        summary = f"not checked: {summary}"
    return {"verdict": verdict, "evidence": _short(f"{pick.get('id')}: {summary}")}


def distance(row_cells: dict[str, dict[str, str]], verdict: str, total: int) -> int:
    """How far a submission is from acceptance: the requirements it fails; every one when its check gave no
    report to judge (an error, a timeout, a rejected submission)."""
    if verdict in ("ERROR", "TIMEOUT", "REJECTED", "STOPPED") and not row_cells:
        return total
    return sum(1 for c in row_cells.values() if c["verdict"] == "FAIL")
