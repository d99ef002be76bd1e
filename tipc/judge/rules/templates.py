"""The rule that a repo's TIPC scripts equal a canonical template (the hashes: tipc.config.known_scripts).

Where a copy differs, the evidence points at the first line it departs from the closest template whose line
fingerprints are recorded.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tipc.config.known_scripts import (
    KnownHash,
    line_hash,
    load_template,
    normalised_lines,
    script_hash,
    templates_dir,
)
from tipc.core.errors import RuleError
from tipc.judge.checks.base import CheckOutcome, Evidence, Verdict


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
    mine = [line_hash(line) for _, line in lines]
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
