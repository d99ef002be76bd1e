"""pytest plugin (entry point `pytest11`): one test item per checkpoint segment of a convergence config.

    pytest --converge-config convergence.yaml --converge-storage /data/conv [--converge-test NAME]

It loads into every pytest run of an environment where tipc is installed, so importing it costs nothing and
it does nothing unless --converge-config is given. A failing segment shows, per failing step: the metric,
expected and actual value, operator and margin.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tipc.convergence.config import TestConfig
    from tipc.convergence.harness import Options
    from tipc.convergence.manifest import Manifest, Segment


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tipc-converge", "convergence segments (tipc converge)")
    group.addoption(
        "--converge-config", metavar="CONFIG", help="seed-003 convergence config: one test per segment"
    )
    group.addoption(
        "--converge-storage", metavar="STORAGE", help="where the gathered manifest and checkpoints are"
    )
    group.addoption("--converge-manifest-name", metavar="NAME", default=None, help="manifest name (suffix)")
    group.addoption(
        "--converge-test", action="append", default=[], metavar="NAME", help="only this config test"
    )
    group.addoption(
        "--converge-python", metavar="PATH", default=None, help="interpreter for python executables"
    )
    group.addoption(
        "--converge-timeout", type=float, default=None, metavar="S", help="per-segment time limit"
    )


class ConvergeFailure(Exception):
    pass


class SegmentItem(pytest.Item):
    def __init__(
        self, *, cfg: TestConfig, opts: Options, manifest: Manifest, segment: Segment, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.cfg, self.opts, self.manifest, self.segment = cfg, opts, manifest, segment

    def runtest(self) -> None:
        from tipc.convergence.harness import run_segment
        from tipc.convergence.result import PASS

        result = run_segment(self.cfg, self.opts, self.manifest, self.segment)
        self.user_properties.append(("checks", len(result.checks)))
        if result.status != PASS:
            raise ConvergeFailure(
                f"segment @ step {result.start_step} ({result.checkpoint}) FAILED\n{result.failure_text()}"
                + (f"\nlog: {result.log_path}" if result.log_path else "")
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConvergeFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.cfg.path), self.cfg.line - 1, self.name


class ConfigTestCollector(pytest.Collector):
    def __init__(self, *, cfg: TestConfig, opts: Options, **kw: Any) -> None:
        super().__init__(**kw)
        self.cfg, self.opts = cfg, opts

    def collect(self) -> list[pytest.Item]:
        from tipc.convergence.harness import manifest_file
        from tipc.convergence.manifest import load
        from tipc.core.errors import ConfigError

        try:
            manifest = load(
                manifest_file(self.opts.storage.resolve(), self.cfg.name, self.opts.manifest_name)
            )
        except ConfigError as exc:
            raise self.CollectError(exc.render()) from None
        return [
            SegmentItem.from_parent(
                self,
                name=f"segment_{seg.start_step}",
                cfg=self.cfg,
                opts=self.opts,
                manifest=manifest,
                segment=seg,
            )
            for seg in manifest.segments
        ]


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so those select segments too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    path = config.getoption("--converge-config", default=None)
    if not path:
        return
    storage = config.getoption("--converge-storage")
    if not storage:
        raise pytest.UsageError("--converge-config needs --converge-storage")
    from tipc.convergence import config as cfg_mod
    from tipc.convergence.harness import DEFAULT_MANIFEST, Options
    from tipc.core.errors import ConfigError

    try:
        tests = cfg_mod.select(cfg_mod.load(path), config.getoption("--converge-test") or None, path)
    except ConfigError as exc:
        raise pytest.UsageError(exc.render()) from None
    opts = Options(
        storage=Path(storage),
        manifest_name=config.getoption("--converge-manifest-name") or DEFAULT_MANIFEST,
        python=config.getoption("--converge-python"),
        timeout_s=config.getoption("--converge-timeout"),
    )
    for cfg in tests:
        where = Path(path).resolve()
        shown = where.relative_to(config.rootpath) if where.is_relative_to(config.rootpath) else where
        collector = ConfigTestCollector.from_parent(
            session, name=cfg.name, nodeid=f"{shown.as_posix()}::{cfg.name}", cfg=cfg, opts=opts
        )
        report = session.ihook.pytest_make_collect_report(collector=collector)
        if report.failed:
            # a bad manifest: say where, as a collection error would
            session.ihook.pytest_collectreport(report=report)
            continue
        items.extend(x for x in report.result if isinstance(x, pytest.Item))
