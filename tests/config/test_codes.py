"""tipc/config/codes.py is the one table of finding codes and their levels: the docs are generated from it,
and every finding tipc emits has a code and a level it lists (the source's literal pairs, and what lint and
plan report over the corpus and seeded mutants of it)."""

from __future__ import annotations

import ast
import random
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.config.test_fuzz_bounded import MUTATIONS
from tests.planning.test_corpus import CORPUS
from tipc.config.codes import CODES, render_markdown
from tipc.core.errors import ConfigError
from tipc.core.findings import Finding, Level
from tipc.core.steps import MODES, Overrides
from tipc.planning.corpus import iter_cases
from tipc.planning.lint import lint_paths
from tipc.planning.planner import plan

TIPC = Path(__file__).parents[2] / "tipc"

DOC = Path(__file__).parents[2] / "docs" / "lint-codes.md"


def test_doc_table_is_in_sync_with_the_code_table() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown()


def test_every_code_in_the_source_is_documented() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in TIPC.rglob("*.py"))
    used = set(re.findall(r'"(TIPC\d{3})"', source))
    assert used <= set(CODES), sorted(used - set(CODES))


def test_every_corpus_config_lints_with_documented_codes_only() -> None:
    if CORPUS is None:
        pytest.skip("corpus not found: shared/tipc-corpus")
    for case in iter_cases(CORPUS):
        for finding in lint_paths([case.config], dialect=case.dialect):
            assert finding.code in CODES, finding.format()
            assert finding.line >= 0 and finding.col >= 0


def test_dialect_table_in_docs_is_in_sync() -> None:
    from tipc.config.dialects import render_markdown as dialect_table

    doc = (Path(__file__).parents[2] / "docs" / "config.md").read_text(encoding="utf-8")
    assert doc.endswith(dialect_table())


def _literal_levels() -> dict[tuple[str, str], list[str]]:
    """(code, level name) -> where: every call in tipc/ passing a literal code and a literal Level (the
    level may sit in a conditional expression among the call's arguments)."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(TIPC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            args = [*node.args, *(k.value for k in node.keywords)]
            literals = [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            codes = [text for text in literals if re.fullmatch(r"TIPC\d{3}", text)]
            levels = {
                n.attr
                for a in args
                for n in ast.walk(a)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "Level"
            }
            for code in codes:
                for level in levels:
                    found[(code, level)].append(f"{path.relative_to(TIPC.parent)}:{node.lineno}")
    return found


def test_the_levels_written_in_the_source_are_in_the_table() -> None:
    found = _literal_levels()
    assert ("TIPC260", "WARNING") in found  # the scan sees the calls it is meant to (TIPC260 once drifted)
    drift = {
        f"{code} {level}: {where[0]}"
        for (code, level), where in found.items()
        if code in CODES and Level[level] not in CODES[code].levels
    }
    assert not drift, sorted(drift)


def _collect(findings: Iterable[Finding], seen: dict[str, set[Level]]) -> None:
    for f in findings:
        seen[f.code].add(f.level)


@pytest.mark.skipif(CORPUS is None, reason="corpus not found: shared/tipc-corpus")
def test_every_finding_lint_and_plan_emit_has_a_code_and_level_of_the_table(tmp_path: Path) -> None:
    assert CORPUS is not None
    cases = list(iter_cases(CORPUS))
    configs = [(case.config, case.dialect) for case in cases]
    rng = random.Random(20261127)
    for n in range(80):  # seeded mutants reach the levels the clean configs never need
        case = rng.choice(cases)
        lines = case.config.read_text(encoding="utf-8").split("\n")
        for mutation in rng.sample(MUTATIONS, rng.randint(1, 3)):
            mutation(rng, lines)
        config = tmp_path / f"m{n}" / "test_tipc" / "configs" / "m" / case.config.name
        config.parent.mkdir(parents=True)
        config.write_text("\n".join(lines), encoding="utf-8", newline="")
        configs.append((config, case.dialect))
    seen: dict[str, set[Level]] = defaultdict(set)
    for config, dialect in configs:
        try:
            _collect(lint_paths([config], dialect=dialect), seen)
            for mode in MODES:
                _collect(plan(config, mode, dialect=dialect).findings, seen)
            cpu = Overrides(device="cpu", sets=(("epoch", "1"),))
            _collect(plan(config, MODES[0], dialect=dialect, overrides=cpu).findings, seen)
        except ConfigError:
            continue  # a located error is not a finding
    assert len(seen) > 30  # the run reached most of the table
    drift = {
        f"{code} {level.value}" for code, levels in seen.items() for level in levels
        if code not in CODES or level not in CODES[code].levels
    }
    assert not drift, sorted(drift)
