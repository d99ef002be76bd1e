"""`tipc init`: scaffold a conformant test_tipc/ folder, or clean up an existing hand-edited config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tipc.commands._target import parse_sets
from tipc.core.errors import EXIT_OK, ConfigError, UserError
from tipc.core.findings import Finding
from tipc.core.fs import atomic_write_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tipc.scaffold.slots import COMPACT_SLOTS, TEMPLATE_SLOTS

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    import textwrap

    def listing(slots: dict[str, int]) -> str:
        text = ", ".join(f"{name}({line})" for name, line in slots.items())
        return textwrap.fill(text, width=100, initial_indent="  ", subsequent_indent="  ")

    parser.epilog = (
        "slots for --set SLOT=VALUE or SLOT.key=KEY, with their line in the 51-line template dialect:\n"
        f"{listing(TEMPLATE_SLOTS)}\nand in the 32-line compact dialect:\n{listing(COMPACT_SLOTS)}\n\n"
        "What cannot be inferred is printed as TODO and listed in test_tipc/README.md; exit code 0.\n"
        "Existing files are never overwritten without --force (exit 2)."
    )
    parser.add_argument("repo", nargs="?", help="the model repo (default: current folder)")
    parser.add_argument("--model", help="model name: names configs/<model>/ and the output folder")
    parser.add_argument(
        "--dialect",
        choices=("template", "compact"),
        default=None,
        help="config layout: the 51-line template or the 32-line compact one (default: the template, or "
        "compact when the inference script has no MKLDNN flag for the template's raw MKLDNN slot)",
    )
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="SLOT=VALUE",
        help="fill a slot yourself (e.g. gpu_list=0, epoch.key=--max_epochs); repeatable",
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.add_argument(
        "--from-config",
        metavar="OLD.txt",
        help="rewrite an existing hand-edited config into a clean one (mechanical fixes only)",
    )
    parser.add_argument(
        "--output", metavar="NEW.txt", help="with --from-config: where to write (default: in place)"
    )


def _parse_sets(raw: list[str]) -> list[tuple[str, str]]:
    pairs = parse_sets(raw, form="SLOT=VALUE")
    for item, (_, value) in zip(raw, pairs, strict=True):
        if "\n" in value or "\r" in value:
            raise UserError(f"--set {item!r}: a slot value must be one line")
    return list(pairs)


def run(args: argparse.Namespace) -> int:
    if args.from_config:
        return _from_config(args)
    if args.output:
        raise UserError("--output goes with --from-config; tipc init writes into REPO/test_tipc/")
    if not args.model:
        raise UserError("tipc init: --model NAME is required (or use --from-config OLD.txt)")
    from tipc.scaffold import infer_slots, render_test_tipc
    from tipc.scaffold.render import check_destination, diff_text, plan_writes, write_all
    from tipc.scaffold.slots import slots_of

    repo = Path(args.repo or ".")
    if not repo.is_dir():
        raise UserError(f"{repo}: not a folder")
    filled = infer_slots(repo, args.model, args.dialect, _parse_sets(args.sets))
    dialect = filled.dialect
    files = render_test_tipc(filled, repo)
    dest = repo / "test_tipc"
    check_destination(repo, dest)
    planned = plan_writes(dest, files)

    out = sys.stdout
    if args.dry_run:
        for p in planned:
            label = f"test_tipc/{p.rel}"
            if p.old is None:
                out.write(f"--- would create {label} ---\n{p.text}")
            elif p.changed:
                out.write(
                    f"--- would {'overwrite' if args.force else 'change (needs --force)'} {label} ---\n"
                )
                out.write(diff_text(p, label))
            else:
                out.write(f"--- unchanged {label} ---\n")
        out.write("dry run: nothing written\n")
    else:
        written = write_all(dest, planned, force=args.force)
        for rel in written:
            out.write(f"wrote test_tipc/{rel}\n")

    slots = slots_of(dialect)
    if filled.todos:
        sys.stderr.write(
            f"warning: {len(filled.todos)} thing(s) could not be inferred; they are listed in "
            "test_tipc/README.md (TODO) and below:\n"
        )
        for todo in filled.todos:
            sys.stderr.write(f"  TODO {todo.format(slots.get(todo.slot) if todo.slot else None)}\n")
    else:
        out.write("every slot was inferred; next: tipc check " + str(repo) + "\n")
    return EXIT_OK


def _from_config(args: argparse.Namespace) -> int:
    from tipc.scaffold.fix_config import fix_text
    from tipc.scaffold.render import PlannedFile, diff_text

    src = Path(args.from_config)
    if src.is_dir():
        raise UserError(f"{src}: is a directory, expected a config file (--from-config OLD.txt)")
    if not src.is_file():
        raise UserError(f"{src}: no such config file")
    data = src.read_bytes()
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise ConfigError(str(src), line, "binary file (NUL byte), expected a text config")
    if not data.strip():
        raise ConfigError(str(src), None, "empty config: expected a train_infer_python.txt-family config")
    raw = data.decode("utf-8", errors="replace")
    target = Path(args.output) if args.output else src
    if target.is_dir():
        raise UserError(f"{target}: is a directory, expected the config file to write (--output NEW.txt)")
    if not target.parent.is_dir():
        # Creating folders the user did not ask for hides a mistyped path; refuse before any work.
        raise UserError(f"{target}: folder {target.parent} does not exist (create it first)")
    _check_writable_parent(target)
    report = fix_text(raw, args.dialect)
    old = target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
    out = sys.stdout
    layout = "51-line" if report.dialect == "template" else "32-line compact"
    out.write(f"{src}: read with the {layout} slot layout; {len(report.fixes)} mechanical fix(es)\n")
    for fix in report.fixes:
        out.write(f"  {src}:{fix}\n")
    # Diff against the text with LF line ends: a CRLF file would otherwise show every line as changed
    # (the line-end fix is listed above).
    shown = raw.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if shown != report.text:
        out.write(diff_text(PlannedFile(str(src), src, report.text, shown), str(src)))
    _lint_report(src, raw, report.text, target, args.dialect)
    if args.dry_run:
        out.write("dry run: nothing written\n")
        return EXIT_OK
    if old == report.text:
        out.write(f"{target} is already clean; nothing written\n")
        return EXIT_OK
    if old is not None and not args.force:
        raise UserError(f"{target} exists already (use --force to overwrite it, or --output NEW.txt)")
    try:
        atomic_write_text(target, report.text, newline="\n")
    except OSError as exc:
        raise UserError(f"{target}: cannot write: {exc.strerror or exc}") from None
    out.write(f"wrote {target}\n")
    return EXIT_OK


def _check_writable_parent(target: Path) -> None:
    """Refuse an output path whose folder cannot be written, before any work."""
    from tipc.commands import unwritable_dir

    problem = unwritable_dir(target.parent)
    if problem is not None:
        raise UserError(f"{target}: {problem} to write into")


def _lint_report(src: Path, raw: str, cleaned: str, target: Path, dialect: str | None) -> None:
    """Lint the original and the cleaned text with the real linter; print what is left for a human.

    Both are linted as the same dialect profile: the one detected for the source where it lies (its repo's
    script fingerprint counts), unless --dialect names one. The cleaned text is linted from a scratch copy
    with the same file name, so nothing is written next to the user's config.
    """
    import tempfile

    from tipc.config.detect import detect
    from tipc.config.discover import find_repo_root
    from tipc.config.parse import parse_text
    from tipc.core.findings import Level
    from tipc.planning.lint import lint_paths

    profile = dialect or detect(parse_text(cleaned, str(src)), src, find_repo_root(src)).dialect

    def lint(text: str) -> list[Finding]:
        with tempfile.TemporaryDirectory(prefix="tipc-init-") as tmp:
            path = Path(tmp) / target.name
            path.write_bytes(text.encode("utf-8"))
            return [
                Finding(str(target), f.line, f.col, f.level, f.code, f.message)
                for f in lint_paths([path], dialect=profile)
            ]

    def count(findings: list[Finding], level: Level) -> int:
        return sum(f.level is level for f in findings)

    before, after = lint(raw), lint(cleaned)
    sys.stdout.flush()  # keep the diff above and the findings below in order on a terminal
    for finding in after:
        if finding.level is not Level.INFO:
            sys.stderr.write(finding.format() + "\n")
    sys.stdout.write(
        f"lint ({profile} dialect): {count(before, Level.ERROR)} error(s), {count(before, Level.WARNING)} "
        f"warning(s) before; {count(after, Level.ERROR)} error(s), {count(after, Level.WARNING)} warning(s) "
        "after the mechanical fixes"
        + (
            "; what is left needs a human (listed on stderr)\n"
            if after and any(f.level is not Level.INFO for f in after)
            else "\n"
        )
    )
