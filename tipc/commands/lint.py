"""`tipc lint CONFIG... | REPO`: located findings with stable codes (docs/lint-codes.md)."""

from __future__ import annotations

import argparse

from tipc.commands import positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="CONFIG|REPO",
        help="config files, or a repo folder (every file under REPO/test_tipc/configs/**)",
    )
    parser.add_argument("--dialect", help="read every config with this dialect instead of detecting it")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--quiet", "-q", action="store_true", help="hide info-level findings in text output")
    parser.add_argument(
        "--max-steps",
        type=positive_int,
        metavar="N",
        help="planning cap per mode while linting (default 1000, or TIPC_MAX_STEPS); TIPC270 past it",
    )


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from tipc.core.errors import EXIT_CHECK_FAILED, EXIT_OK
    from tipc.core.findings import Level
    from tipc.planning.lint import lint_paths

    findings = lint_paths(
        [Path(p) for p in args.paths], dialect=args.dialect, strict=True, max_steps=args.max_steps
    )
    errors = sum(1 for f in findings if f.level is Level.ERROR)
    warnings = sum(1 for f in findings if f.level is Level.WARNING)
    if args.format == "json":
        payload = {
            "findings": [f.to_json() for f in findings],
            "summary": {"errors": errors, "warnings": warnings, "total": len(findings)},
        }
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        for finding in findings:
            if args.quiet and finding.level is Level.INFO:
                continue
            sys.stdout.write(finding.format() + "\n")
        sys.stdout.write(f"{errors} error(s), {warnings} warning(s), {len(findings)} finding(s)\n")
    return EXIT_CHECK_FAILED if errors else EXIT_OK
