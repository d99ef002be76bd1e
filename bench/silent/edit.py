"""Edits the injectors make to a copy of a repo: code inserted into an entry script at the place that runs
first (before its `if __name__ == "__main__":` block, or at its top for code that must run before the
script reads its arguments), a config line's value replaced, a file aged as if committed long ago.

Everything here works from how scripts and configs are written, never from a repo's name."""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

# The mtime a planted "committed" file gets: long before any run (2022-04-10, when DnCNN's weights were
# committed); without .git, tipc's lineage tells committed from fresh by mtime against the run's start.
COMMITTED_MTIME = 1649548800.0
MARK = "silent-bench"


class EditError(ValueError):
    """The file cannot be edited as asked (not Python, no such line, ...)."""


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either side)."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, *test.comparators]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return bool(names and consts)


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(int(d.lineno) for d in decorators)])


def insertion_line(source: str, where: str) -> int:
    """The 0-based line index to insert top-level code at.

    `main`: before the `if __name__ == "__main__":` block; a script without one runs at import, so after its
    last top-level import (paddle is imported, the work has not started). `top`: after the docstring and
    the `from __future__` imports, before anything else (code that rewrites sys.argv before it is parsed).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise EditError(f"not Python: {exc}") from exc
    body = tree.body
    if where == "main":
        for node in body:
            if isinstance(node, ast.If) and _is_main_test(node.test):
                return _first_line(node) - 1
        imports = [n for n in body if isinstance(n, ast.Import | ast.ImportFrom)]
        if imports:
            return max(n.end_lineno or n.lineno for n in imports)
        return len(source.splitlines())
    if where != "top":
        raise EditError(f"unknown insertion point {where!r}")
    for node in body:
        is_doc = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node is body[0]
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (is_doc or is_future):
            return _first_line(node) - 1
    return len(source.splitlines())


def insert_code(script: Path, code: str, where: str = "main") -> None:
    """Insert `code` (top-level statements) into `script` at `where`, fenced by marker comments."""
    source = script.read_text(encoding="utf-8", errors="surrogateescape")
    at = insertion_line(source, where)
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block = f"# --- {MARK}: planted ---\n{code.rstrip()}\n# --- {MARK}: end ---\n"
    lines.insert(at, block)
    new = "".join(lines)
    try:
        ast.parse(new)
    except SyntaxError as exc:  # never leave a broken script behind a "plant"
        raise EditError(f"{script}: the planted code does not parse there: {exc}") from exc
    script.write_text(new, encoding="utf-8", errors="surrogateescape")


def age(path: Path, when: float = COMMITTED_MTIME) -> None:
    """Give `path` the mtime of a file committed long ago."""
    os.utime(path, (when, when))


@dataclass(frozen=True)
class ConfigLine:
    """One line of a positional config: its 1-based number, key and value (split at the first ':')."""

    number: int
    key: str
    value: str
    text: str


def config_lines(config: Path) -> list[ConfigLine]:
    out = []
    for no, raw in enumerate(config.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        key, sep, value = raw.partition(":")
        out.append(ConfigLine(no, key.strip() if sep else "", value.strip() if sep else "", raw))
    return out


def set_config_value(config: Path, number: int, value: str) -> tuple[str, str]:
    """Replace the value of line `number` (1-based), keeping its key; (old line, new line)."""
    text = config.read_text(encoding="utf-8", errors="surrogateescape")
    lines = text.splitlines(keepends=True)
    if not 1 <= number <= len(lines):
        raise EditError(f"{config}: no line {number}")
    old = lines[number - 1]
    ending = old[len(old.rstrip("\r\n")) :]
    key, sep, _ = old.rstrip("\r\n").partition(":")
    if not sep:
        raise EditError(f"{config}:{number}: not a key:value line")
    lines[number - 1] = f"{key}:{value}{ending}"
    config.write_text("".join(lines), encoding="utf-8", errors="surrogateescape")
    return old.rstrip("\r\n"), lines[number - 1].rstrip("\r\n")


def replace_in_config(config: Path, number: int, old: str, new: str) -> tuple[str, str]:
    """Replace `old` by `new` inside line `number`; (old line, new line)."""
    text = config.read_text(encoding="utf-8", errors="surrogateescape")
    lines = text.splitlines(keepends=True)
    if not 1 <= number <= len(lines) or old not in lines[number - 1]:
        raise EditError(f"{config}:{number}: {old!r} not on that line")
    before = lines[number - 1]
    lines[number - 1] = before.replace(old, new)
    config.write_text("".join(lines), encoding="utf-8", errors="surrogateescape")
    return before.rstrip("\r\n"), lines[number - 1].rstrip("\r\n")


def norm_key(key: str) -> str:
    """`--use-gpu`, `Global.use_gpu`, `use_gpu` -> `use_gpu`."""
    return key.split(".")[-1].lstrip("-").lower().replace("-", "_")


_INTERPRETER = re.compile(r"(^|/)(python[\d.]*|pypy3?)$")


def command_tokens(argv: tuple[str, ...]) -> list[str]:
    """The argv as tokens; a `sh -c "..."` / `bash -c` command split as the shell would."""
    if len(argv) >= 3 and argv[-2] == "-c" and os.path.basename(argv[0]) in ("sh", "bash", "dash"):
        try:
            return shlex.split(argv[-1])
        except ValueError:
            return argv[-1].split()
    return list(argv)


def entry_script(repo: Path, cwd: str, argv: tuple[str, ...]) -> Path | None:
    """The repo's Python script a step runs: the first `.py` argument that is a file of the repo, else a
    `-m module` that is one. A launcher module of Paddle's (`-m paddle.distributed.launch ... train.py`) is
    passed over for the script it launches."""
    tokens = command_tokens(argv)
    base = (repo / cwd).resolve()
    root = repo.resolve()
    for tok in tokens:
        if tok.endswith(".py"):
            path = (base / tok).resolve()
            if path.is_file() and path.is_relative_to(root):
                return path
    for i, tok in enumerate(tokens[:-1]):
        if tok == "-m":
            rel = Path(*tokens[i + 1].split("."))
            for cand in (base / rel.with_suffix(".py"), base / rel / "__main__.py"):
                if cand.is_file() and cand.resolve().is_relative_to(root):
                    return cand.resolve()
    return None


def depth(repo: Path, script: Path) -> int:
    """How many folders `script` lies below the repo root (its prelude finds the root from __file__)."""
    return len(script.resolve().relative_to(repo.resolve()).parts) - 1
