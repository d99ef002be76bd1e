"""pytest plugin: `pytest --tipc REPO` turns each rule of `tipc check` into a test item.

Registered through the `pytest11` entry point. Without `--tipc` it adds its options and nothing else (no tipc
module beyond this one is imported), so it costs nothing in other projects' test runs.

Items are the rules of the chosen rulesets (known before anything runs); the check itself runs once per repo,
at the first item, through tipc.api.check (a child `tipc check`). A FAIL verdict fails the item with the
rule's summary and evidence, SKIP and N-A skip it, an internal error errors it, PASS and WARN pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tipc.api import CheckResult
    from tipc.report.progress import PlainProgress, RichProgress


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tipc", "tipc: check a PaddlePaddle repo's TIPC chain")
    group.addoption(
        "--tipc", action="append", default=[], metavar="REPO", help="check REPO: one test per rule"
    )
    group.addoption(
        "--tipc-ruleset",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="ruleset(s) (default: tipc's)",
    )
    group.addoption("--tipc-reuse-run", action="store_true", help="reuse the repo's last run record")
    group.addoption(
        "--tipc-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra `tipc check` argument (repeatable)",
    )


class TipcRuleFailed(Exception):
    """A rule's FAIL verdict, shown without a Python traceback."""


class TipcRepo(pytest.Collector):
    """One repo: its rules as items, its check run once."""

    def __init__(
        self, *, repo: str, rulesets: list[str], reuse_run: bool, extra: list[str], **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.repo, self.rulesets, self.reuse_run, self.extra = repo, rulesets, reuse_run, extra
        self._result: CheckResult | None = None

    def collect(self) -> Iterator[pytest.Item]:
        from tipc.commands.check import load_rulesets

        for ruleset in load_rulesets(list(self.rulesets)):
            for rule in ruleset.rules:
                yield TipcRuleItem.from_parent(self, name=rule.id, ruleset=ruleset.name)

    def result(self) -> CheckResult:
        if self._result is None:
            from tipc.api import check

            with _progress_on_terminal(self.config) as progress:
                self._result = check(
                    self.repo,
                    rulesets=self.rulesets,
                    reuse_run=self.reuse_run,
                    extra_args=self.extra,
                    progress=progress,
                )
        return self._result


@contextlib.contextmanager
def _progress_on_terminal(config: pytest.Config) -> Iterator[PlainProgress | RichProgress]:
    """The check's progress where the user sees it while the first item waits for it (a minute or more):
    pytest's capture is suspended meanwhile, so a live view on a terminal, plain lines in a CI log."""
    import sys

    from tipc.report.progress import make_progress

    capman = config.pluginmanager.getplugin("capturemanager")
    reporter = config.pluginmanager.getplugin("terminalreporter")
    suspended = capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()
    with suspended:
        if reporter is not None:
            reporter.ensure_newline()
        with make_progress(sys.stderr) as display:
            yield display


class TipcRuleItem(pytest.Item):
    def __init__(self, *, ruleset: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.ruleset = ruleset

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, TipcRepo)
        result = parent.result()
        rule = next((r for r in result.rules if r.id == self.name), None)
        if rule is None:
            pytest.skip(f"tipc check reported no verdict for {self.name}")
        if rule.error is not None:
            raise RuntimeError(f"internal error while checking {self.name}: {rule.error}")
        if rule.verdict == "FAIL":
            from tipc.core.jsontypes import objects

            raw = next((r for r in objects(result.report.get("rules")) if r.get("id") == self.name), {})
            lines = [rule.summary]
            for e in objects(raw.get("evidence"))[:10]:
                where = (
                    f"{e.get('path')}:{e.get('line')}" if e.get("line") is not None else e.get("path") or ""
                )
                lines.append(f"  {where} {e.get('text', '')}".rstrip())
            raise TipcRuleFailed("\n".join(lines))
        if rule.verdict in ("SKIP", "N-A"):
            pytest.skip(f"{rule.verdict}: {rule.summary}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, TipcRuleFailed):
            return f"{self.name} FAILED: {excinfo.value}"
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        parent = self.parent
        repo = parent.repo if isinstance(parent, TipcRepo) else ""
        return repo, None, f"tipc {self.ruleset} {self.name}"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    repos: list[str] = config.getoption("tipc") or []
    for repo in repos:
        if not Path(repo).is_dir():
            raise pytest.UsageError(f"--tipc {repo}: not a folder")
        collector = TipcRepo.from_parent(
            session,
            name=f"tipc[{repo}]",
            repo=str(Path(repo).resolve()),
            rulesets=list(config.getoption("tipc_ruleset") or []),
            reuse_run=bool(config.getoption("tipc_reuse_run")),
            extra=list(config.getoption("tipc_arg") or []),
        )
        items.extend(collector.collect())
