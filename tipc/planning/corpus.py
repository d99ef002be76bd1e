"""Comparing a Plan with a corpus `expected.json` (the commands a repo's own script logged).

Implements the corpus README's normalisation: status line -> command text -> shell words, with redirections
dropped and paths made repo-relative, token by token. Used by the corpus tests and bench/lint_corpus.py.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tipc.core.steps import Plan

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MARKERS = ("Run successfully with command - ", "Run failed with command - ")


@dataclass(frozen=True)
class Case:
    """One corpus config with its expectations."""

    config: Path
    repo: Path  # the folder the script was run from
    owner_repo: str
    expected: dict[str, list[str]]  # mode -> normalised command strings
    python: str | None
    script_sha256: str | None = None  # of the repo's test_train_inference_python.sh

    @property
    def dialect(self) -> str | None:
        """The dialect its script fingerprint names (what detection gives inside the real repo)."""
        from tipc.config.detect import from_fingerprint

        return from_fingerprint(self.script_sha256)

    @property
    def name(self) -> str:
        return f"{self.owner_repo}:{self.config.relative_to(self.repo).as_posix()}"


def iter_cases(corpus: Path) -> Iterator[Case]:
    for exp_path in sorted(corpus.rglob("*.txt.expected.json")):
        data = json.loads(exp_path.read_text(encoding="utf-8"))
        folder = exp_path.relative_to(corpus).parts[0]
        repo = corpus / folder / data.get("root", ".")
        config = repo / data["config"]
        sha = data.get("script_sha256", {}).get("test_train_inference_python.sh")
        yield Case(config, repo.resolve(), data["repo"], data["modes"], data.get("python"), sha)


def status_text(line: str, model_name: str) -> str:
    """README step 1: the command text of one status line."""
    text = _ANSI.sub("", line)
    for marker in _MARKERS:
        if marker in text:
            text = text.split(marker, 1)[1]
            break
    text = text.rstrip()
    if text.endswith("!"):
        text = text[:-1].rstrip()
    if model_name and text.startswith(f"{model_name} - "):
        text = text[len(model_name) + 3 :]
    match = re.search(r" - (\S+)$", text)
    if match:
        text = text[: match.start()]
    return text


def _rel(value: str, root: str) -> str:
    if value.startswith(root + "/"):
        value = value[len(root) + 1 :]
    while value.startswith("./"):
        value = value[2:]
    return value


# What makes shlex.split differ from str.split: quotes, the escape, and whitespace shlex does not split on.
_PLAIN = re.compile(r"[\"'\\]|[^\S \t\r\n]")


def tokens(command: str, root: str) -> list[str]:
    """README steps 3-5: shell words, redirections dropped, paths repo-relative."""
    if _PLAIN.search(command) is None:
        words = command.split()  # what shlex.split gives where nothing is quoted or escaped, 30x faster
    else:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word == ">":
            skip = True
            continue
        if word.startswith(">") or word == "2>&1":
            continue
        if "=" in word:
            key, _, value = word.partition("=")
            out.append(f"{key}={_rel(value, root)}")
        else:
            out.append(_rel(word, root))
    return out


def plan_commands(plan: Plan) -> list[str]:
    """The normalised command text of every planned step, as the script's status lines would give it."""
    from tipc.planning.planner import status_line

    return [status_text(status_line(plan, step), plan.model_name) for step in plan.steps]


@dataclass(frozen=True)
class Comparison:
    ok: bool
    detail: str


def compare(plan: Plan, expected: list[str]) -> Comparison:
    root = plan.repo
    got = [tokens(c, root) for c in plan_commands(plan)]
    want = [tokens(c, root) for c in expected]
    for n, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return Comparison(
                False, f"step {n + 1} differs:\n  plan:     {shlex.join(g)}\n  expected: {shlex.join(w)}"
            )
    if len(got) != len(want):
        extra = got[len(want) :] if len(got) > len(want) else want[len(got) :]
        side = "plan has" if len(got) > len(want) else "expected has"
        return Comparison(
            False, f"{len(got)} planned vs {len(want)} expected; {side} extra: {shlex.join(extra[0])}"
        )
    return Comparison(True, f"{len(got)} steps match")
