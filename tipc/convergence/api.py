"""`do_convergence_test`: seed 003's test helper, returning a value instead of raising or printing."""

from __future__ import annotations

from pathlib import Path

from tipc.convergence import config as config_mod
from tipc.convergence import harness
from tipc.convergence.result import ConvergeResult


def do_convergence_test(
    storage_path: str | Path,
    manifest_suffix: str,
    test_config_path: str | Path,
    do_gather: bool = False,
    *,
    tests: list[str] | None = None,
    jobs: int = 1,
    timeout_s: float | None = None,
    python: str | None = None,
    seeds: int = 1,
    envelope_mode: str = "minmax",
    envelope_k: float = 3.0,
    output: str | Path | None = None,
    margins: str = "tipc",
) -> ConvergeResult:
    """Gather (do_gather=True) or run every test of the config; the manifest of test T is
    `<storage_path>/T_<manifest_suffix>`. Returns a ConvergeResult (`.passed`, `.tests`, `.segments`).
    `margins="original"` compares as the original harness does (math.isclose; see tipc.convergence.compare).
    Raises tipc.core.errors.ConfigError for a bad config or manifest. Unlike the original, the working
    directory and sys.path of the caller are left alone."""
    from tipc.convergence.compare import MARGIN_SEMANTICS
    from tipc.core.errors import UserError

    if margins not in MARGIN_SEMANTICS:
        raise UserError(f"margins={margins!r}: expected one of {', '.join(MARGIN_SEMANTICS)}")
    path = str(test_config_path)
    selected = config_mod.select(config_mod.load(path), tests, path)
    opts = harness.Options(
        storage=Path(storage_path),
        manifest_name=manifest_suffix,
        jobs=jobs,
        timeout_s=timeout_s,
        output=Path(output) if output is not None else None,
        python=python,
        seeds=seeds,
        envelope_mode=envelope_mode,
        envelope_k=envelope_k,
        margins=margins,
    )
    mode = "gather" if do_gather else "run"
    result = ConvergeResult(mode)
    for cfg in selected:
        result.tests.append(harness.gather(cfg, opts) if do_gather else harness.run(cfg, opts))
    return result
