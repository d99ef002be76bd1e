"""Print (or record) the normalised sha256 of TIPC scripts.

    python -m tipc.judge.rules.hash_script FILE...                      # print "<sha256>  FILE" lines
    python -m tipc.judge.rules.hash_script --add train_infer_python \\
        examples/lenet_digits/test_tipc/test_train_inference_python.sh \\
        examples/lenet_digits/test_tipc/common_func.sh             # record them in specs/templates/

With --add, each file is recorded under its path from `test_tipc/` on (the path a repo must have), with the
given path as its origin unless --origin says otherwise, with short hashes of its normalised lines (so a
check can point at the first line a copy changed). Recording a hash twice is a no-op (it only adds missing
line hashes). With --dialect, the entries also name the tipc dialect the script runs (how
`tipc.config.detect` recognises it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tipc.config.known_scripts import (
    TEMPLATE_SCHEMA,
    KnownHash,
    line_fingerprints,
    load_template,
    script_hash,
    templates_dir,
)
from tipc.core.errors import TipcError
from tipc.core.fs import atomic_write_text

_HEADER = (
    "# Canonical TIPC script hashes (sha256 of the normalised text: comments, blank lines and surrounding\n"
    "# spaces removed). Edit with: python -m tipc.judge.rules.hash_script --add NAME FILE...\n"
)


def repo_relative(path: Path) -> str:
    parts = path.as_posix().split("/")
    if "test_tipc" in parts:
        return "/".join(parts[parts.index("test_tipc") :])
    return f"test_tipc/{path.name}"


def _entry(known: KnownHash) -> dict[str, str]:
    entry = {"origin": known.origin}
    if known.sha256:
        entry["sha256"] = known.sha256
    if known.raw_sha256:
        entry["raw_sha256"] = known.raw_sha256
    if known.dialect:
        entry["dialect"] = known.dialect
    if known.lines:
        entry["lines"] = " ".join(known.lines)
    return entry


def add_hashes(
    template_file: Path, name: str, files: Sequence[Path], origin: str | None, dialect: str | None = None
) -> list[str]:
    data: dict[str, Any]
    if template_file.is_file():
        current = load_template(template_file)  # validates before we touch it
        data = {
            "schema": TEMPLATE_SCHEMA,
            "name": current.name,
            "description": current.description,
            "files": {rel: [_entry(k) for k in known] for rel, known in current.files.items()},
        }
    else:
        data = {"schema": TEMPLATE_SCHEMA, "name": name, "description": f"{name} scripts", "files": {}}
    added = []
    for file in files:
        rel = repo_relative(file)
        text = file.read_text(encoding="utf-8", errors="replace")
        digest = script_hash(text)
        entries = data["files"].setdefault(rel, [])
        same = [e for e in entries if e.get("sha256") == digest]
        if same:
            for e in same:
                if "lines" not in e:  # recorded before line fingerprints existed: add them
                    e["lines"] = " ".join(line_fingerprints(text))
                    added.append(f"{digest}  {rel} (line fingerprints)")
                if dialect and e.get("dialect") != dialect:
                    e["dialect"] = dialect
                    added.append(f"{digest}  {rel} (dialect {dialect})")
            continue
        new = {"origin": origin or file.as_posix(), "sha256": digest}
        if dialect:
            new["dialect"] = dialect
        new["lines"] = " ".join(line_fingerprints(text))
        entries.append(new)
        added.append(f"{digest}  {rel}")
    text = _HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
    atomic_write_text(template_file, text)
    return added


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tipc.judge.rules.hash_script", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--add", metavar="NAME", help="record the hashes in specs/templates/NAME.yaml")
    parser.add_argument("--origin", help="where the script comes from (default: the path given)")
    parser.add_argument("--dialect", help="the tipc dialect the script runs (recorded with --add)")
    parser.add_argument("--templates-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    missing = [f for f in args.files if not f.is_file()]
    if missing:
        sys.stderr.write(f"hash_script: no such file: {missing[0]}\n")
        return 2
    if not args.add:
        for file in args.files:
            print(f"{script_hash(file.read_text(encoding='utf-8', errors='replace'))}  {file}")
        return 0
    directory = args.templates_dir or templates_dir()
    try:
        if args.dialect:
            from tipc.config.dialects import get as get_dialect

            get_dialect(args.dialect)  # an unknown name is a usage error, before the file is touched
        added = add_hashes(directory / f"{args.add}.yaml", args.add, args.files, args.origin, args.dialect)
    except TipcError as exc:
        sys.stderr.write(f"hash_script: {exc.render()}\n")
        return exc.exit_code
    for line in added:
        print(f"added {line}")
    if not added:
        print("nothing new: every hash was already recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
