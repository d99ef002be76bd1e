"""What a submission's notebooks and scripts need from the submission itself (seed 001 artefact 6: "additional
scripts required by the notebooks"): the repo-local modules they import and the scripts they run.

Read statically (ast for `.py`, the code cells of `.ipynb`); nothing is imported or run. An import counts as
the submission's own when its first name is a module or package of the repo (a `.py` file or a folder at the
importing file's folder or at the root) or when it is relative; it then must resolve to a file or folder of
the repo. Other imports are third-party packages and are not judged here. Notebook lines `%run x.py` and
`!python x.py` name scripts that must exist.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_FILE_BYTES = 4 * 1024 * 1024
# `%run x.py`, `!python x.py`, `!python3 tools/x.py --flag`, `%run -i x.py`
_RUNS = re.compile(r"^\s*(?:%run(?:\s+-\w+)*|!\s*python[0-9.]*(?:\s+-u)?)\s+([^\s;|&]+\.py)\b")


@dataclass(frozen=True)
class Missing:
    path: str  # the importing file, repo-relative
    line: int | None
    what: str  # the module or script


def _code_of(path: Path) -> list[tuple[int | None, str]]:
    """(first line, source) chunks of a .py file or of a notebook's code cells (line None: cells)."""
    try:
        raw = path.read_bytes()[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
    except OSError:
        return []
    if path.suffix.lower() != ".ipynb":
        return [(1, raw)]
    try:
        nb = json.loads(raw)
    except ValueError:
        return []
    cells = nb.get("cells", []) if isinstance(nb, dict) else []
    out: list[tuple[int | None, str]] = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            src = cell.get("source", "")
            out.append((None, "".join(src) if isinstance(src, list) else str(src)))
    return out


def _local_tops(rel_file: PurePosixPath, files: set[str], dirs: set[str]) -> dict[str, PurePosixPath]:
    """Top-level names that are the repo's own, with the folder they live in (the file's folder first)."""
    tops: dict[str, PurePosixPath] = {}
    for base in (PurePosixPath("."), rel_file.parent):  # later wins: the importing file's folder first
        prefix = "" if base.as_posix() == "." else base.as_posix() + "/"
        for f in files:
            if f.startswith(prefix) and f.endswith(".py") and "/" not in f[len(prefix) :]:
                tops[f[len(prefix) : -3]] = base
        for d in dirs:
            if d.startswith(prefix) and "/" not in d[len(prefix) :] and d[len(prefix) :]:
                tops[d[len(prefix) :]] = base
    return tops


def _resolves(base: PurePosixPath, parts: list[str], files: set[str], dirs: set[str]) -> bool:
    """The dotted module path `parts` is a module (`.py`) or a package folder under `base`. (Only the names
    a `from M import a, b` takes may be attributes; M itself must be a module.)"""
    rel = base.joinpath(*parts).as_posix()
    rel = "" if rel == "." else rel
    return (rel + ".py") in files or (bool(rel) and rel in dirs)


@dataclass(frozen=True)
class _Tree:
    """The repo's files and folders (repo-relative), as the import and script checks look them up."""

    files: set[str]
    dirs: set[str]
    lower_files: set[str]


def _missing_scripts(rel: str, first_line: int | None, source: str, tree: _Tree) -> list[Missing]:
    """`%run x.py` / `!python x.py` lines naming a script that is neither beside the file nor at the root."""
    rel_path = PurePosixPath(rel)
    out: list[Missing] = []
    for offset, text in enumerate(source.splitlines()):
        m = _RUNS.match(text)
        if m is not None:
            script = m.group(1)
            cands = {(rel_path.parent / script).as_posix().lstrip("./"), script.lstrip("./")}
            if not any(c.lower() in tree.lower_files for c in cands):
                out.append(Missing(rel, None if first_line is None else first_line + offset, script))
    return out


def _absolute_import(node: ast.Import, tops: dict[str, PurePosixPath], tree: _Tree) -> list[str]:
    """`import a.b`: the repo's own modules that do not resolve."""
    out = []
    for alias in node.names:
        parts = alias.name.split(".")
        if parts[0] in tops and not _resolves(tops[parts[0]], parts, tree.files, tree.dirs):
            out.append(alias.name)
    return out


def _from_import(
    node: ast.ImportFrom, rel_path: PurePosixPath, tops: dict[str, PurePosixPath], tree: _Tree
) -> list[str]:
    """`from M import x` (relative or the repo's own M): what does not resolve."""
    mod = (node.module or "").split(".") if node.module else []
    if not node.level:
        if mod and mod[0] in tops and not _resolves(tops[mod[0]], mod, tree.files, tree.dirs):
            return [".".join(mod)]
        return []
    base = rel_path.parent
    for _ in range(node.level - 1):
        base = base.parent
    if mod:
        return [] if _resolves(base, mod, tree.files, tree.dirs) else ["." * node.level + ".".join(mod)]
    # `from . import x`: a module beside the file, or a name its package defines
    init = (base / "__init__.py").as_posix().lstrip("./")
    return [
        "." * node.level + alias.name
        for alias in node.names
        if init not in tree.files and not _resolves(base, [alias.name], tree.files, tree.dirs)
    ]


def _missing_modules(
    rel: str, first_line: int | None, source: str, tops: dict[str, PurePosixPath], tree: _Tree
) -> list[Missing]:
    """The repo-local imports of one chunk of Python that resolve to no file or folder of the repo."""
    rel_path = PurePosixPath(rel)
    # notebooks: magics and shell lines are not Python; blank them for the parser
    code = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines())
    try:
        parsed = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    out: list[Missing] = []
    for node in ast.walk(parsed):
        if isinstance(node, ast.Import):
            names = _absolute_import(node, tops, tree)
        elif isinstance(node, ast.ImportFrom):
            names = _from_import(node, rel_path, tops, tree)
        else:
            continue
        line = None if first_line is None else first_line + node.lineno - 1
        out += [Missing(rel, line, name) for name in names]
    return out


def missing_imports(root: Path, rel_files: list[str], files: list[str], dirs: list[str]) -> list[Missing]:
    tree = _Tree(set(files), set(dirs), {f.lower() for f in files})
    out: list[Missing] = []
    for rel in rel_files:
        tops = _local_tops(PurePosixPath(rel), tree.files, tree.dirs)
        for first_line, source in _code_of(root / rel):
            out += _missing_scripts(rel, first_line, source, tree)
            out += _missing_modules(rel, first_line, source, tops, tree)
    return out
