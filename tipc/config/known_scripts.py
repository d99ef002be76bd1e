"""Canonical TIPC scripts as data: the sha256 of their normalised text, recorded in `specs/templates/`.

Seed 002 §4.2.1 says test_train_inference_python.sh and common_func.sh need no changes ("无需改动"), so a
repo's copies should equal a known template. Normalising first (comments, blank lines and surrounding spaces
dropped, CRLF folded) keeps cosmetic edits from counting as changes. Known hashes are data in
`specs/templates/<name>.yaml`; add one with `python -m tipc.judge.rules.hash_script --add NAME FILE`.
Detection reads the dialect recorded with a script (tipc.config.detect); the rule that a repo's scripts
match a template is tipc.judge.rules.templates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from tipc.core.errors import RuleError
from tipc.core.fs import is_safe_relative
from tipc.core.yamlschema import Document, Enum, Field, Map, Scalar, Seq, Str

TEMPLATE_SCHEMA = "tipc.template-hashes/1"


def _strip_comment(line: str) -> str:
    """Drop a bash comment: `#` starting a word, outside quotes (so `${#a[@]}` and `"#"` stay)."""
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(line):
        if escaped:
            escaped = False
            continue
        if ch == "\\" and quote != "'":
            escaped = True
            continue
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in ("'", '"'):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;(|&"):
            return line[:i]
    return line


def normalised_lines(text: str) -> list[tuple[int, str]]:
    """(1-based physical line number, normalised text) of each line that survives normalisation."""
    out = []
    for no, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        line = _strip_comment(raw).strip()
        if line:
            out.append((no, line))
    return out


def normalise(text: str) -> str:
    return "\n".join(line for _, line in normalised_lines(text)) + "\n"


LINE_HASH_CHARS = 12


def line_fingerprints(text: str) -> tuple[str, ...]:
    """Short hashes of the normalised lines: enough to find where a copy departs from a template without
    shipping the template's text."""
    return tuple(line_hash(line) for _, line in normalised_lines(text))


def line_hash(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:LINE_HASH_CHARS]


def script_hash(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class KnownHash:
    sha256: str | None  # of the normalised text
    origin: str
    raw_sha256: str | None = None  # of the exact bytes (how the corpus fingerprints official scripts)
    dialect: str | None = None  # the tipc dialect this script runs (read by tipc.config.detect)
    lines: tuple[str, ...] = ()  # line_fingerprints of the normalised text, when recorded

    def matches(self, normalised: str, raw: str) -> bool:
        return self.sha256 == normalised or self.raw_sha256 == raw


@dataclass(frozen=True)
class Template:
    name: str
    description: str
    files: dict[str, tuple[KnownHash, ...]]  # repo-relative script path -> accepted hashes
    path: str


def templates_dir() -> Path:
    from tipc.core.resources import data_dir

    return data_dir("specs") / "templates"


def _inside_repo(text: str) -> str | None:
    return None if is_safe_relative(text) else "relative, no '..'"


def _line_hashes(text: str) -> str | None:
    hashes = text.split()
    if hashes and all(len(h) == LINE_HASH_CHARS and not h.strip("0123456789abcdef") for h in hashes):
        return None
    return f"space-separated {LINE_HASH_CHARS}-digit lower-case hex line hashes"


_DIGEST = Str(pattern="[0-9a-f]{64}", what="64 lower-case hex digits")
_KNOWN = Map(
    {
        "sha256": Field(_DIGEST),
        "raw_sha256": Field(_DIGEST),
        "origin": Field(Scalar(), True),
        "dialect": Field(Str(what="a dialect name")),
        "lines": Field(Str(check=_line_hashes, what="line hashes")),
    }
)
TEMPLATE = Map(
    {
        "schema": Field(Enum((TEMPLATE_SCHEMA,)), identifies=True),
        "name": Field(Str(), True),
        "description": Field(Scalar()),
        "files": Field(
            Map(
                values=Seq(_KNOWN, nullable=True, what="a list of {sha256, origin}"),
                keys=Str(check=_inside_repo, what="a repo-relative script path"),
                what="a mapping of script paths to lists of {sha256, origin}",
            ),
            True,
        ),
    }
)


def load_template(path: Path) -> Template:
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise RuleError(where, None, f"cannot read template hashes: {exc}") from None
    doc = Document(text, where, RuleError)
    data = doc.conform(TEMPLATE)
    files: dict[str, tuple[KnownHash, ...]] = {}
    for rel, entries in data["files"].items():
        hashes = []
        for i, entry in enumerate(entries):
            if "sha256" not in entry and "raw_sha256" not in entry:
                raise doc.error(("files", rel, i), "each entry needs sha256 or raw_sha256 (and origin)")
            lines = entry.get("lines")
            hashes.append(
                KnownHash(
                    entry.get("sha256"),
                    str(entry["origin"]),
                    entry.get("raw_sha256"),
                    entry.get("dialect"),
                    tuple(lines.split()) if lines else (),
                )
            )
        files[rel] = tuple(hashes)
    description = data.get("description")
    return Template(data["name"], "" if description is None else str(description), files, where)
