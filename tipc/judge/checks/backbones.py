"""Seed 004 §4.3.4: the backbone table, each backbone's training log and its TIPC chain, verified.

For each lightweight backbone of §4.3.3 that the README's table, a config or a log names:
- the table row: its metric (a number; `coming soon` is none) and its changed hyper-parameters;
- its training log (a .log/.txt file named after the backbone): the last and the best value of the table's
  metric in it, compared with the table within the metric's tolerance;
- its TIPC config (test_tipc/configs naming the backbone): the chain `tipc check` ran for it
  (`backbone:<config>` records; the checked config is the basic chain), every step passed; or why not.
Args: chain (default "backbones").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.yamlschema import Field, Map, Str
from tipc.judge.checks._common import excerpt, outcome, read_lines
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import registered

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord
    from tipc.judge.checks.claims import Metrics
    from tipc.planning.docs_vocab import Vocabulary

_LOG_SUFFIXES = (".log", ".txt")
MAX_LOGS_WALKED = 20_000


@dataclass
class _Backbone:
    name: str
    row: tuple[int, str] | None = None  # README line and text
    value: float | None = None
    family: str | None = None
    hyper: str = ""
    logs: list[str] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    facts: list[Evidence] = field(default_factory=list)


def _table_rows(text: str, vocab: Vocabulary, metrics: Metrics) -> dict[str, _Backbone]:
    from tipc.judge.checks.claims import _numbers, _prose, _tables

    found: dict[str, _Backbone] = {}
    for _heading, header, rows in _tables(_prose(text)):
        metric_col = next(
            (i for i, h in enumerate(header) if i and (metrics.named(h) or metrics.unnamed.search(h))), 1
        )
        family = metrics.named(header[metric_col]) if metric_col < len(header) else None
        hyper_col = next(
            (i for i, h in enumerate(header) if i and ("超参" in h or "hyper" in h.lower())), None
        )
        for number, cells in rows:
            name = vocab.backbone_in(cells[0]) if cells else None
            if name is None or name in found:
                continue
            b = _Backbone(name, row=(number, "| " + " | ".join(cells) + " |"))
            values = _numbers(cells[metric_col]) if metric_col < len(cells) else []
            b.value = values[0][0] if values else None
            b.family = family.id if family is not None else None
            b.hyper = cells[hyper_col] if hyper_col is not None and hyper_col < len(cells) else ""
            found[name] = b
    return found


def _logs(repo: Path, vocab: Vocabulary) -> dict[str, list[str]]:
    import os

    from tipc.planning.docs_vocab import squash

    out: dict[str, list[str]] = {}
    walked = 0
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("output", "node_modules"))
        rel_root = Path(root).relative_to(repo)
        for name in sorted(files):
            walked += 1
            rel = (rel_root / name).as_posix()
            if not name.lower().endswith(_LOG_SUFFIXES) or "test_tipc/output" in rel:
                continue
            backbone = vocab.backbone_in(rel)
            if backbone is not None and ("log" in squash(rel) or "train" in squash(rel)):
                out.setdefault(backbone, []).append(rel)
        if walked > MAX_LOGS_WALKED:
            break
    return out


def _check_log(repo: Path, b: _Backbone, metrics: Metrics) -> None:
    from tipc.judge.checks.claims import measured

    if not b.logs:
        b.problems.append("no training log named after it")
        return
    log = b.logs[0]
    lines = read_lines(repo / log) or []
    got_all = [measured([line]) for line in lines]
    fam = b.family or next((f for g in got_all for f in g), None)
    values = [g[fam].value for g in got_all if fam in g] if fam else []
    if not values or not fam:  # values come from a family: no family, no values
        b.problems.append(f"{log} holds no {fam or 'metric'} value")
        return
    family = metrics.family(fam)
    best = max(values) if family is None or family.higher else min(values)
    b.facts.append(
        Evidence(f"{b.name}: training log {log}: last {fam} {values[-1]:g}, best {best:g}", path=log)
    )
    if b.value is None or family is None:
        return
    claimed = b.value / 100.0 if family.ratio and b.value > 1 >= best else b.value
    if min(abs(values[-1] - claimed), abs(best - claimed)) > family.atol:
        b.problems.append(
            f"the table says {fam} {b.value:g}, its log ends at {values[-1]:g} (best {best:g}), beyond "
            f"{family.atol:g}"
        )


def _check_chain(ctx: CheckContext, b: _Backbone, chain_records: Mapping[str, RunRecord]) -> None:
    from tipc.core.steps import Status

    if not b.configs:
        b.problems.append("no TIPC config under test_tipc/configs names it")
        return
    for config in b.configs:
        record = chain_records.get(f"backbone:{config}")
        if record is None and ctx.record is not None and str(ctx.record.plan.config_path).endswith(config):
            record = ctx.record
        if record is None:
            b.problems.append(f"its chain {config} did not run (the backbone rule's chain was not run)")
            continue
        failed = [r for r in record.results if r.status not in (Status.PASSED, Status.SKIPPED)]
        if failed:
            b.problems.append(
                f"its chain {config}: {failed[0].step_id} {failed[0].status.value} ({failed[0].reason})"
            )
        else:
            ran = sum(1 for r in record.results if r.status is Status.PASSED)
            b.facts.append(Evidence(f"{b.name}: chain {config}: {ran} step(s) passed"))


@registered("backbones", args=Map({"chain": Field(Str(what="a chain name"))}))
def check_backbones(ctx: CheckContext, **args: object) -> CheckOutcome:
    from tipc.judge.checks import claims as claims_mod
    from tipc.planning.docs_vocab import load
    from tipc.planning.documented.configs import backbone_configs
    from tipc.planning.documented.reading import read_doc

    repo = Path(ctx.repo)
    vocab, metrics = load(), claims_mod.load()
    readme = read_doc(repo / "README.md", repo) or ""
    found = _table_rows(readme, vocab, metrics)
    for backbone, logs in _logs(repo, vocab).items():
        found.setdefault(backbone, _Backbone(backbone)).logs = logs
    records = {k: v for k, v in (ctx.records or {}).items() if k.startswith("backbone:")}
    for name, path in backbone_configs(repo, vocab):
        found.setdefault(name, _Backbone(name)).configs.append(path.relative_to(repo).as_posix())
    if not found:
        return outcome(
            Verdict.NA, "no lightweight backbone of seed 004 §4.3.3 is named by the README, a config or a log"
        )
    evidence: list[Evidence] = []
    for b in found.values():
        if b.row is None:
            b.problems.append("no row in the README's backbone table")
        elif b.value is None:
            b.problems.append(f"its table row gives no metric (README.md:{b.row[0]})")
        else:
            evidence.append(
                Evidence(
                    f"{b.name}: table {b.family or 'metric'} {b.value:g}; hyper-parameters: {b.hyper or '-'}",
                    path="README.md",
                    line=b.row[0],
                    excerpt=excerpt(b.row[1]),
                )
            )
        _check_log(repo, b, metrics)
        _check_chain(ctx, b, records)
        evidence.extend(b.facts)
        evidence.extend(Evidence(f"{b.name}: {p}") for p in b.problems)
    failing = [b for b in found.values() if b.problems]
    data = {
        "backbones": {
            b.name: {"value": b.value, "logs": b.logs, "configs": b.configs, "problems": b.problems}
            for b in found.values()
        }
    }
    if failing:
        first = failing[0]
        return CheckOutcome(
            Verdict.FAIL,
            f"{len(failing)} of {len(found)} backbone(s) not verified: {first.name}: {first.problems[0]}",
            tuple(evidence),
            data,
        )
    return CheckOutcome(
        Verdict.PASS,
        f"{len(found)} backbone(s) verified: table, training log and TIPC chain agree",
        tuple(evidence),
        data,
    )
