from __future__ import annotations

from pathlib import Path

import pytest

from tests.planning.test_corpus import CORPUS
from tipc.config.codes import CODES, render_markdown
from tipc.planning.corpus import iter_cases
from tipc.planning.lint import lint_paths

DOC = Path(__file__).parents[2] / "docs" / "lint-codes.md"


def test_doc_table_is_in_sync_with_the_code_table() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown()


def test_every_code_in_the_source_is_documented() -> None:
    import re

    source = "\n".join(
        p.read_text(encoding="utf-8") for p in (Path(__file__).parents[2] / "tipc").rglob("*.py")
    )
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
