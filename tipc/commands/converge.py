"""`tipc converge gather|run|init`: convergence regression by checkpoint segments (seed 003's harness)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.errors import EXIT_CHECK_FAILED, EXIT_OK, UserError
from tipc.core.fs import atomic_write_text

if TYPE_CHECKING:
    from tipc.convergence.result import ConvergeResult
    from tipc.core.progress import Progress

EPILOG = """\
examples:
  tipc converge gather -t convergence.yaml -s /data/conv    # known-good run: checkpoints + manifest
  tipc converge run -t convergence.yaml -s /data/conv -j 4  # restart from every checkpoint and compare
  tipc converge gather -t convergence.yaml -s /data/conv --seeds 3 --envelope std
  tipc converge init path/to/repo > convergence.yaml        # propose a config from the repo's TIPC config
exit codes: 0 every segment passed, 1 a segment failed, 2 config/manifest error (file:line)
"""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t", "--test-config-path", required=True, metavar="CONFIG", help="seed-003 YAML test config"
    )
    p.add_argument("-s", "--storage-path", required=True, metavar="STORAGE", help="checkpoints and manifests")
    p.add_argument(
        "--manifest-name",
        default=None,
        metavar="NAME",
        help="manifest file name, prefixed with the test name (default: convergence_harness_manifest.json)",
    )
    p.add_argument(
        "--test",
        dest="tests",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this test of the config (repeatable)",
    )
    p.add_argument(
        "-j", "--jobs", type=int, default=1, metavar="N", help="segments (or seed runs) in parallel"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="time limit per segment / gather run (default: the config's timeout_s, else 3600)",
    )
    p.add_argument("--python", help="interpreter to use where the executable is python/python3")
    p.add_argument(
        "--margins",
        choices=("tipc", "original"),
        default="tipc",
        help="tipc: tolerance = margin x |recorded| on every operator; original: the original harness's "
        "math.isclose(rel_tol=margin), strict < and > (default: %(default)s)",
    )
    p.add_argument("--output", metavar="DIR", help="logs and scratch (default: STORAGE/tipc-converge)")
    p.add_argument("--report-dir", metavar="DIR", help="also write converge.{json,junit.xml,md,html} there")
    p.add_argument(
        "--format",
        choices=("text", "json", "junit", "markdown", "html"),
        default="text",
        help="what to print on stdout (default: %(default)s)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    sub.required = True
    g = sub.add_parser("gather", help="run the known-good configuration and record segments")
    _common(g)
    g.add_argument(
        "--seeds", type=int, default=1, metavar="K", help="record K runs (needs flags.gather.seed)"
    )
    g.add_argument(
        "--envelope",
        choices=("minmax", "std"),
        default="minmax",
        help="with --seeds: the band is min..max, or mean ± k·std (default: %(default)s)",
    )
    g.add_argument("--std-k", type=float, default=3.0, metavar="K", help="k for --envelope std (default: 3)")
    r = sub.add_parser("run", help="restart from every recorded checkpoint and compare the metrics")
    _common(r)
    i = sub.add_parser("init", help="propose a seed-003 config from a TIPC repo")
    i.add_argument("repo", metavar="REPO", help="model repo with test_tipc/")
    i.add_argument("--config", "-c", help="the TIPC train_infer_python config (default: found in the repo)")
    i.add_argument("-o", "--out", metavar="FILE", help="write the proposal there instead of stdout")


def run(args: argparse.Namespace) -> int:
    if args.action == "init":
        from tipc.convergence.init import propose

        # `directory:` is written relative to where the file goes, so that it can be committed.
        base = Path(args.out).resolve().parent if args.out else Path.cwd()
        proposal = propose(Path(args.repo), args.config, base)
        if args.out:
            try:
                atomic_write_text(args.out, proposal.yaml_text)
            except OSError as exc:
                raise UserError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
        else:
            sys.stdout.write(proposal.yaml_text)
        for line in proposal.messages:
            sys.stderr.write(f"tipc converge init: {line}\n")
        return EXIT_OK if proposal.can_resume else EXIT_CHECK_FAILED

    from tipc.convergence import report
    from tipc.report.progress import make_progress

    if args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    seeds = getattr(args, "seeds", 1)
    if seeds < 1:
        raise UserError("--seeds must be at least 1")
    with make_progress() as progress:  # each gather run and segment, on stderr
        result = _converge(args, seeds, progress)
    if args.report_dir:
        try:
            report.write_all(result, Path(args.report_dir))
        except OSError as exc:
            raise UserError(f"{args.report_dir}: cannot write the reports: {exc.strerror or exc}") from None
    sys.stdout.write(report.render(result, args.format))
    return EXIT_OK if result.passed else EXIT_CHECK_FAILED


def _converge(args: argparse.Namespace, seeds: int, progress: Progress) -> ConvergeResult:
    from tipc.convergence.api import do_convergence_test
    from tipc.convergence.harness import DEFAULT_MANIFEST

    return do_convergence_test(
        args.storage_path,
        args.manifest_name or DEFAULT_MANIFEST,
        args.test_config_path,
        do_gather=args.action == "gather",
        tests=args.tests or None,
        jobs=args.jobs,
        timeout_s=args.timeout,
        python=args.python,
        seeds=seeds,
        envelope_mode=getattr(args, "envelope", "minmax"),
        envelope_k=getattr(args, "std_k", 3.0),
        output=args.output,
        margins=args.margins,
        progress=progress,
    )
