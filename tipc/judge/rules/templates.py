"""Canonical TIPC scripts, recognised by the sha256 of their normalised text.

Seed 002 §4.2.1 says test_train_inference_python.sh and common_func.sh need no changes ("无需改动"), so a
repo's copies should equal a known template. Normalising first (comments, blank lines and surrounding spaces
dropped, CRLF folded) keeps cosmetic edits from counting as changes. Known hashes are data in
`specs/templates/<name>.yaml`; add one with `python -m tipc.judge.rules.hash_script --add NAME FILE`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from tipc.core.errors import RuleError
from tipc.core.yamlschema import Document, Enum, Field, Map, Scalar, Seq, Str
from tipc.judge.checks.base import CheckOutcome, Evidence, Verdict
from tipc.judge.rules.files import is_safe_relative

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
    return tuple(_line_hash(line) for _, line in normalised_lines(text))


def _line_hash(line: str) -> str:
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


def check_scripts(repo: Path, template_name: str, directory: Path | None = None) -> CheckOutcome:
    directory = directory or templates_dir()
    path = directory / f"{template_name}.yaml"
    if not path.is_file():
        raise RuleError(str(path), None, f"no template hashes named {template_name!r}")
    template = load_template(path)
    if not any(template.files.values()):
        return CheckOutcome(
            Verdict.SKIP,
            f"no canonical hashes shipped for template {template_name!r} yet",
            (
                Evidence(
                    f"add one with: python -m tipc.judge.rules.hash_script --add {template_name} FILE",
                    path=str(path),
                ),
            ),
        )
    evidence: list[Evidence] = []
    mismatched = 0
    for rel, known in sorted(template.files.items()):
        target = repo / rel
        try:
            data = target.read_bytes()
        except OSError:
            mismatched += 1
            evidence.append(Evidence(f"{rel} is missing"))
            continue
        text = data.decode("utf-8", errors="replace")
        digest = script_hash(text)
        raw = hashlib.sha256(data).hexdigest()
        match = next((k for k in known if k.matches(digest, raw)), None)
        if match is None:
            mismatched += 1
            evidence.append(_first_difference(rel, text, digest, known))
        else:
            evidence.append(Evidence(f"matches {match.origin}", path=rel, numbers=(("sha256", digest),)))
    if mismatched:
        # what differs first: reporters show the first pieces of evidence
        ordered = sorted(evidence, key=lambda e: e.text.startswith("matches "))
        first = ordered[0]
        where = f" (first at {first.location()})" if first.line is not None else ""
        return CheckOutcome(
            Verdict.FAIL,
            f"{mismatched} script(s) differ from template {template_name!r}{where}",
            tuple(ordered),
        )
    return CheckOutcome(Verdict.PASS, f"scripts match template {template_name!r}", tuple(evidence))


def _first_difference(rel: str, text: str, digest: str, known: tuple[KnownHash, ...]) -> Evidence:
    """Evidence for a script that matches no template: where it first departs from the closest template
    whose line fingerprints are recorded (the file alone when none are)."""
    import difflib

    numbers: tuple[tuple[str, float | int | str | None], ...] = (("sha256", digest),)
    candidates = [k for k in known if k.lines]
    if not candidates:
        return Evidence("differs from every known template", path=rel, numbers=numbers)
    lines = normalised_lines(text)
    mine = [_line_hash(line) for _, line in lines]
    best = max(candidates, key=lambda k: difflib.SequenceMatcher(None, k.lines, mine, autojunk=False).ratio())
    ops = [
        op
        for op in difflib.SequenceMatcher(None, best.lines, mine, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)
    numbers = (*numbers, ("changed_lines", changed))
    if not ops:  # same lines in another order of blank/comment lines: nothing to point at
        return Evidence(
            f"differs from every known template (closest: {best.origin})", path=rel, numbers=numbers
        )
    tag, _, _, j1, _ = ops[0]
    if tag == "delete" or j1 >= len(lines):
        at = lines[j1 - 1][0] if j1 > 0 and lines else None
        return Evidence(
            f"differs from every known template; closest: {best.origin}, which has "
            f"{'a line' if tag == 'delete' else 'more lines'} the script lacks after this one",
            path=rel,
            line=at,
            excerpt=lines[j1 - 1][1] if at is not None else None,
            numbers=numbers,
        )
    line_no, line_text = lines[j1]
    return Evidence(
        f"differs from every known template; closest: {best.origin}, first difference here",
        path=rel,
        line=line_no,
        excerpt=line_text,
        numbers=numbers,
    )
