"""The accuracy a README claims for the provided model, and the metrics an evaluation prints.

    claims(text) -> [Claim]            tables and sentences outside code blocks: "| top-1 acc | 0.9600 |",
                                       "top-1 acc 0.7099", "average PSNR, noise 15: 31.73"
    measured(lines) -> {family: Metric} the last value of each metric family in an evaluation's output
    best_claim(claims, family)          the claim for this repo's reproduction (not the reference it copies)

Metric names are data (specs/documented/metrics.yaml, schema tipc.metrics/1).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "tipc.metrics/1"
_NUMBER = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER + r"%?")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass(frozen=True)
class Family:
    id: str
    label: str
    names: re.Pattern[str]
    ratio: bool
    higher: bool
    atol: float


@dataclass(frozen=True)
class Metrics:
    families: tuple[Family, ...]
    composite: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]
    reproduced: re.Pattern[str]
    reference: re.Pattern[str]
    unnamed: re.Pattern[str]
    summary_rows: re.Pattern[str]

    def family(self, family_id: str) -> Family | None:
        return next((f for f in self.families if f.id == family_id), None)

    def named(self, text: str) -> Family | None:
        """The first family whose name appears in `text`."""
        hits = [(m.start(), i, f) for i, f in enumerate(self.families) for m in [f.names.search(text)] if m]
        return min(hits, key=lambda h: (h[0], h[1]))[2] if hits else None


@dataclass(frozen=True)
class Claim:
    family: str | None  # None: a metric column that does not say which (its header reads "复现精度")
    value: float
    text: str  # the table row or sentence, as written
    line: int
    score: int  # higher: more clearly this repo's reproduction of the provided model
    percent: bool = False


@dataclass(frozen=True)
class Metric:
    family: str
    value: float
    line: int
    text: str


def default_path() -> Path:
    from tipc.core.resources import data_dir

    return data_dir("specs") / "documented" / "metrics.yaml"


@functools.cache
def load() -> Metrics:
    return _load(default_path())


def _regex(text: str) -> str | None:
    from tipc.core.yamlschema import regex_problem

    return regex_problem(text)


def _load(path: Path) -> Metrics:
    from tipc.core.errors import ConfigError
    from tipc.core.yamlschema import Document, Enum, Field, Map, Num, Seq, Str

    regex = Str(check=_regex, what="a Python regex")
    family = Map(
        {
            "id": Field(Str(pattern=r"[a-z0-9_]+"), True),
            "label": Field(Str(), True),
            "names": Field(Seq(regex, min_items=1), True),
            "scale": Field(Enum(("ratio", "value")), True),
            "better": Field(Enum(("higher", "lower")), True),
            "atol": Field(Num(minimum=0), True),
        }
    )
    schema = Map(
        {
            "schema": Field(Enum((SCHEMA,)), True, identifies=True),
            "families": Field(Seq(family, min_items=1), True),
            "composite": Field(
                Seq(Map({"pattern": Field(regex, True), "families": Field(Seq(Str(), min_items=2), True)})),
                default=[],
            ),
            "reproduced": Field(Seq(regex, min_items=1), True),
            "reference": Field(Seq(regex, min_items=1), True),
            "unnamed": Field(Seq(regex, min_items=1), True),
            "summary_rows": Field(Seq(regex, min_items=1), True),
        }
    )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    doc = Document.from_bytes(data, str(path))
    raw = doc.conform(schema)
    ids = [f["id"] for f in raw["families"]]
    for i, comp in enumerate(raw["composite"]):
        for name in comp["families"]:
            if name not in ids:
                raise doc.error(("composite", i, "families"), f"{name!r} is not a family id")

    def words(items: list[str]) -> re.Pattern[str]:
        return re.compile("|".join(f"(?:{w})" for w in items), re.IGNORECASE)

    return Metrics(
        families=tuple(
            Family(
                f["id"],
                f["label"],
                re.compile(
                    r"(?<![A-Za-z0-9])(?:" + "|".join(f["names"]) + r")(?![A-Za-z0-9])", re.IGNORECASE
                ),
                f["scale"] == "ratio",
                f["better"] == "higher",
                float(f["atol"]),
            )
            for f in raw["families"]
        ),
        composite=tuple(
            (re.compile(c["pattern"], re.IGNORECASE), tuple(c["families"])) for c in raw["composite"]
        ),
        reproduced=words(raw["reproduced"]),
        reference=words(raw["reference"]),
        unnamed=words(raw["unnamed"]),
        summary_rows=words(raw["summary_rows"]),
    )


# ------------------------------------------------------------------------------------------- claims


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line, text) of a Markdown document's lines outside fenced code blocks."""
    return _prose(text)


def _prose(text: str) -> list[tuple[int, str]]:
    """(line, text) of the lines outside fenced code blocks."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0]:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        out.append((number, line))
    return out


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def _numbers(cell: str) -> list[tuple[float, bool]]:
    text = re.sub(r"\[[^\]]*\]\([^)]*\)", " ", cell)  # links: their targets hold version numbers
    return [(float(m.group(0).rstrip("%")), m.group(0).endswith("%")) for m in _NUMBER_RE.finditer(text)]


def _score(metrics: Metrics, *texts: str) -> int:
    joined = " ".join(texts)
    score = 0
    if metrics.reproduced.search(joined):
        score += 2
    if metrics.reference.search(joined):
        score -= 2
    return score


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")


def _tables(lines: list[tuple[int, str]]) -> Iterable[tuple[str, list[str], list[tuple[int, list[str]]]]]:
    """(the heading the table sits under, its header cells, its rows)."""
    i = 0
    heading = ""
    while i + 1 < len(lines):
        (_, head), (_, rule) = lines[i], lines[i + 1]
        if "|" in head and _TABLE_RULE.match(rule) and "-" in rule:
            header = _cells(head)
            rows: list[tuple[int, list[str]]] = []
            j = i + 2
            while j < len(lines) and "|" in lines[j][1] and lines[j][1].strip():
                rows.append((lines[j][0], _cells(lines[j][1])))
                j += 1
            yield heading, header, rows
            i = j
        else:
            m = _HEADING.match(head)
            heading = m.group(1) if m else heading
            i += 1


def _table_claims(
    metrics: Metrics, header: list[str], rows: list[tuple[int, list[str]]], heading: str = ""
) -> list[Claim]:
    # A table under a heading that names the accuracy ("# 复现精度", "## Results") none of whose columns names
    # a metric (cutpaste_paddle's per-class AUC table) states it as columns named so would; where a column
    # names one, that column is the claim and the others (epochs, batch size) are not.
    named_any = any(metrics.named(name) or metrics.unnamed.search(name) for name in header[1:])
    section = heading if metrics.unnamed.search(heading) and not named_any else ""
    out: list[Claim] = []
    for col, name in enumerate(header):
        if col == 0:
            continue
        column = _Column(
            f"{name} ({section})" if section else name,
            metrics.named(name),
            next((fams for pat, fams in metrics.composite if pat.search(name)), None),
        )
        for number, cells in rows:
            if col < len(cells):
                out.extend(_cell_claims(metrics, column, cells, col, number))
    return out


@dataclass(frozen=True)
class _Column:
    name: str
    family: Family | None
    composite: tuple[str, ...] | None


def _cell_claims(metrics: Metrics, column: _Column, cells: list[str], col: int, number: int) -> list[Claim]:
    """The claims of one table cell: its column (or row label) names the metric, or the table compares this
    repo's reproduction with a reference."""
    label = cells[0]
    fam = column.family or metrics.named(label)
    comparing = any(
        bool(metrics.reproduced.search(t) or metrics.reference.search(t)) for t in (label, column.name)
    )
    if fam is None and column.composite is None and not metrics.unnamed.search(column.name) and not comparing:
        return []
    values = _numbers(cells[col])
    if not values:
        return []
    score = _score(metrics, column.name, label) + (1 if fam is not None else 0)
    score += 1 if metrics.summary_rows.search(label) else 0
    text = "| " + " | ".join(cells) + " |"
    if column.composite is not None and "/" in cells[col]:
        out = []
        for fam_id, part in zip(column.composite, (p.strip() for p in cells[col].split("/")), strict=False):
            got = _numbers(part)
            if got:
                out.append(Claim(fam_id, got[0][0], text, number, score + 1, got[0][1]))
        return out
    named = fam.id if fam is not None else (column.composite[0] if column.composite else None)
    return [Claim(named, values[0][0], text, number, score, values[0][1])]


def _sentence_claims(metrics: Metrics, lines: list[tuple[int, str]]) -> list[Claim]:
    out: list[Claim] = []
    for number, line in lines:
        if "|" in line:
            continue
        for fam in metrics.families:
            for m in fam.names.finditer(line):
                tail = line[m.end() : m.end() + 48]
                words = [v.group(0) for v in _NUMBER_RE.finditer(tail)]
                if not words:
                    continue
                # "PSNR, noise 15: 31.73": a metric's value has decimals where a setting has none
                word = next((w for w in words if "." in w), words[0])
                value, percent = float(word.rstrip("%")), word.endswith("%")
                out.append(Claim(fam.id, value, line.strip(), number, _score(metrics, line) - 1, percent))
                break
    return out


def claims(text: str, metrics: Metrics | None = None) -> list[Claim]:
    """Every accuracy claim of a README, in table and sentence form."""
    metrics = metrics or load()
    lines = _prose(text)
    found: list[Claim] = []
    for heading, header, rows in _tables(lines):
        found.extend(_table_claims(metrics, header, rows, heading))
    found.extend(_sentence_claims(metrics, lines))
    return found


def best_claim(found: list[Claim], family: str, *, only_family: bool) -> Claim | None:
    """The claim for `family`: named claims, and unnamed ones when `family` is the only metric measured;
    the most clearly reproduced first, then the earliest."""
    usable = [c for c in found if c.family == family or (c.family is None and only_family)]
    if not usable:
        return None
    return max(usable, key=lambda c: (c.score, c.family is not None, -c.line))


# ------------------------------------------------------------------------------------------- measured


def measured(lines: Iterable[str], metrics: Metrics | None = None) -> dict[str, Metric]:
    """The last value of each metric family printed in an evaluation's output (`acc: 0.96`, `Acc@1 0.564`,
    `Averate PSNR: 31.73`)."""
    metrics = metrics or load()
    found: dict[str, Metric] = {}
    follow = re.compile(r"(?:\s*(?:[:=]|is)\s*|\s+)(" + _NUMBER + r")(%?)")
    for number, line in enumerate(lines, start=1):
        for fam in metrics.families:
            for m in fam.names.finditer(line):
                after = follow.match(line, m.end())
                if after is None:
                    continue
                value = float(after.group(1))
                if after.group(2):
                    value /= 100.0
                found[fam.id] = Metric(fam.id, value, number, line.strip())
    return found


def compare(claim: Claim, got: Metric, family: Family, atol: float | None = None) -> dict[str, Any]:
    """The comparison in numbers: the claim in the measured value's scale (percent or ratio), the
    difference, the tolerance, and whether the measured value reaches the claim."""
    claimed = claim.value
    note = ""
    if family.ratio and (claim.percent or claimed > 1.0 >= abs(got.value)):
        claimed, note = claimed / 100.0, "the claim is a percentage"
    tol = family.atol if atol is None else atol
    diff = got.value - claimed
    reaches = diff >= -tol if family.higher else diff <= tol
    return {
        "claimed": claimed,
        "measured": got.value,
        "diff": diff,
        "atol": tol,
        "reaches": reaches,
        "note": note,
    }
