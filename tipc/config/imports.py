"""What a repo's entry scripts import, read statically (the `ast` module; nothing of the repo is run).

From each entry script the imports are followed through the repo's own modules (a module is the repo's when
a file or package of that name sits in the script's folder, one of its parent folders up to the repo root, or
the step's working folder, as `sys.path` tricks in model repos make it). The result names:

- every module from outside the repo, with where it is first imported (`file:line`); imports guarded by
  `try: ... except ImportError` are optional;
- every import of the repo's own package that names a module missing from the repo (a folder deleted by the
  last commit reads as `No module named ...` only when the step runs);
- the `paddle.X.Y` attribute chains the code uses, to compare with an interpreter's Paddle;
- the repo files reached (code search for causes looks there first).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 2000  # files followed per scan: a repo vendoring a library stops here, not at its end
MAX_FILE_BYTES = 2_000_000
_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", "venv", "site-packages"})


@dataclass(frozen=True)
class Use:
    """Where a name is used: repo-relative path and line."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class ImportScan:
    entries: tuple[str, ...]  # the entry scripts scanned (repo-relative)
    files: tuple[str, ...]  # repo files reached, entry scripts first (repo-relative)
    external: dict[str, Use] = field(default_factory=dict)  # top-level module -> first required import
    # imported only under try/except ImportError or inside functions (needed only when that code runs)
    optional: dict[str, Use] = field(default_factory=dict)
    missing_local: dict[str, Use] = field(default_factory=dict)  # dotted name of the repo's own, absent
    paddle_apis: dict[str, Use] = field(default_factory=dict)  # paddle.X.Y chains the code uses
    unreadable: tuple[str, ...] = ()  # files that could not be parsed (syntax of another Python, ...)


def entry_scripts(argv: Sequence[str], cwd: Path, repo: Path) -> list[Path]:
    """The Python scripts (or `-m` modules) an argv runs, as files of the repo."""
    out: list[Path] = []
    words = list(argv)
    for i, word in enumerate(words):
        if word == "-m" and i + 1 < len(words):
            found = _module_file(words[i + 1].split("."), [cwd, repo])
            if found is not None:
                out.append(found)
            continue
        if word.endswith(".py"):
            path = (cwd / word).resolve() if not Path(word).is_absolute() else Path(word)
            if path.is_file() and _inside(path, repo):
                out.append(path)
    return out


def scan(repo: Path, entries: Iterable[Path], extra_roots: Sequence[Path] = ()) -> ImportScan:
    """Follow the imports of `entries` (files of `repo`) through the repo's own modules."""
    repo = repo.resolve()
    queue = [p.resolve() for p in entries if p.is_file()]
    entry_rel = tuple(_rel(p, repo) for p in queue)
    found = _Scan(repo, extra_roots, queue)
    found.run()
    # a module imported both ways counts as required
    optional = {k: v for k, v in found.optional.items() if k not in found.external}
    return ImportScan(
        entries=entry_rel,
        files=tuple(_rel(p, repo) for p in found.seen),
        external=found.external,
        optional=optional,
        missing_local=found.missing,
        paddle_apis=found.apis,
        unreadable=tuple(found.unreadable),
    )


class _Scan:
    """One scan under way: the files still to read (breadth first), those read, and what they import."""

    def __init__(self, repo: Path, extra_roots: Sequence[Path], queue: list[Path]) -> None:
        self.repo = repo
        self.extra_roots = extra_roots
        self.queue = queue
        # a module reached from an entry script is looked up where that script's modules are
        self.roots_of: dict[Path, list[Path]] = {p: _roots(p, repo, extra_roots) for p in queue}
        self.seen: dict[Path, None] = {}
        self.external: dict[str, Use] = {}
        self.optional: dict[str, Use] = {}
        self.missing: dict[str, Use] = {}
        self.apis: dict[str, Use] = {}
        self.unreadable: list[str] = []

    def run(self) -> None:
        while self.queue and len(self.seen) < MAX_FILES:
            path = self.queue.pop(0)
            if path not in self.seen:
                self.seen[path] = None
                self._read(path)

    def _read(self, path: Path) -> None:
        tree = _parse(path)
        rel = _rel(path, self.repo)
        if tree is None:
            self.unreadable.append(rel)
            return
        roots = self.roots_of.get(path) or _roots(path, self.repo, self.extra_roots)
        visitor = _Imports(path)
        visitor.visit(tree)
        for imp in visitor.imports:
            self._take(imp, Use(rel, imp.line), path, roots)
        for chain, line in visitor.paddle_chains:
            self.apis.setdefault(chain, Use(rel, line))

    def _take(self, imp: _Import, use: Use, path: Path, roots: list[Path]) -> None:
        """Book an outside module, or queue the repo files an import reaches and note what of it is absent."""
        targets = _resolve(imp, path, roots, self.repo)
        if targets is None:  # not the repo's: an outside module
            top = imp.module.split(".")[0]
            if top and top != "__future__":
                book = self.optional if imp.optional else self.external
                book.setdefault(top, use)
            return
        files, absent = targets
        for f in files:
            if f not in self.seen:
                self.roots_of.setdefault(f, roots)
                self.queue.append(f)
        if absent is not None and not imp.optional:
            self.missing.setdefault(absent, use)


# ------------------------------------------------------------------------------------------------ reading


@dataclass(frozen=True)
class _Import:
    module: str  # absolute dotted name, or relative (leading dots) as written
    names: tuple[str, ...]  # `from module import names` ('' for `import module`)
    line: int
    optional: bool
    level: int = 0


class _Imports(ast.NodeVisitor):
    """Imports (with whether an ImportError handler guards them) and `paddle.X.Y` chains."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.imports: list[_Import] = []
        self.paddle_chains: list[tuple[str, int]] = []
        self._guarded = (
            0  # inside a try guarded by an ImportError handler, or a function (imported when called)
        )
        self._paddle_names: dict[str, str] = {}  # local name -> dotted paddle name it stands for

    def visit_Try(self, node: ast.Try) -> None:
        guards = any(_catches_import_error(h) for h in node.handlers)
        self._guarded += guards
        for stmt in node.body:
            self.visit(stmt)
        self._guarded -= guards
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._guarded += 1
        self.generic_visit(node)
        self._guarded -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append(_Import(alias.name, ("",), node.lineno, self._guarded > 0))
            if alias.name == "paddle" or alias.name.startswith("paddle."):
                local = alias.asname or alias.name.split(".")[0]
                self._paddle_names[local] = alias.name if alias.asname else "paddle"
                if alias.name != "paddle":
                    self.paddle_chains.append((alias.name, node.lineno))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        names = tuple(a.name for a in node.names)
        self.imports.append(_Import(module, names, node.lineno, self._guarded > 0, node.level))
        if node.level == 0 and (module == "paddle" or module.startswith("paddle.")):
            for alias in node.names:
                if alias.name == "*":
                    continue
                dotted = f"{module}.{alias.name}"
                self._paddle_names[alias.asname or alias.name] = dotted
                self.paddle_chains.append((dotted, node.lineno))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = _chain(node)
        if chain is not None:
            head, *rest = chain.split(".")
            base = self._paddle_names.get(head)
            if base is not None and rest:
                self.paddle_chains.append((".".join([base, *rest]), node.lineno))
                return  # the inner attributes are prefixes of this chain
        self.generic_visit(node)


def _chain(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    if kinds is None:
        return True  # a bare except guards everything
    names = [kinds] if not isinstance(kinds, ast.Tuple) else list(kinds.elts)
    return any(
        isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError", "Exception") for n in names
    )


def _parse(path: Path) -> ast.Module | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        source = path.read_bytes()
        return ast.parse(source, filename=str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# ---------------------------------------------------------------------------------------------- resolving


def _roots(path: Path, repo: Path, extra: Sequence[Path]) -> list[Path]:
    """Where an entry script's absolute imports are looked up in the repo: its folder and each parent up to
    the repo root, then the extra roots (the step's working folder)."""
    out: list[Path] = []
    folder = path.parent
    while _inside(folder, repo):
        out.append(folder)
        if folder == repo:
            break
        folder = folder.parent
    for e in extra:
        e = e.resolve()
        if e not in out and _inside(e, repo):
            out.append(e)
    return out


def _resolve(
    imp: _Import, path: Path, roots: Sequence[Path], repo: Path
) -> tuple[list[Path], str | None] | None:
    """The repo files an import reaches and the dotted name of the first missing module of the repo's own
    package; None when the import is not of the repo's code."""
    if imp.level:
        base = path.parent
        for _ in range(imp.level - 1):
            base = base.parent
        parts = [p for p in imp.module.split(".") if p]
        return _walk(base, parts, imp.names, "." * imp.level + imp.module, repo)
    parts = imp.module.split(".")
    for root in roots:
        if _module_file([parts[0]], [root]) is not None or (root / parts[0]).is_dir():
            return _walk(root, parts, imp.names, imp.module, repo)
    return None


def _walk(
    base: Path, parts: list[str], names: tuple[str, ...], dotted: str, repo: Path
) -> tuple[list[Path], str | None]:
    """Descend `parts` from `base`: packages (folders), then a module file (what follows it is an attribute).
    A part found neither way is missing from the repo."""
    files: list[Path] = []
    folder = base
    in_package = True
    for i, part in enumerate(parts):
        if (folder / part).is_dir():
            folder = folder / part
            if (folder / "__init__.py").is_file():
                files.append(folder / "__init__.py")
            continue
        if (folder / f"{part}.py").is_file():
            files.append(folder / f"{part}.py")
            in_package = False
            break
        missing = _dotted(base, repo, parts[: i + 1]) if dotted.startswith(".") else ".".join(parts[: i + 1])
        return _kept(files, repo), missing
    if in_package:  # `from pkg import name`: a name may be a submodule of the package
        for name in names:
            sub = folder / f"{name}.py" if name and name != "*" else None
            if sub is not None and sub.is_file():
                files.append(sub)
            elif name and name != "*" and (folder / name / "__init__.py").is_file():
                files.append(folder / name / "__init__.py")
    return _kept(files, repo), None


def _dotted(base: Path, repo: Path, parts: list[str]) -> str:
    """The absolute dotted name of `parts` under the package folder `base` (a relative import)."""
    try:
        prefix = [p for p in base.resolve().relative_to(repo).parts]
    except ValueError:
        prefix = []
    # the folders above the outermost package are search roots, not parts of the name
    while prefix and not (repo.joinpath(*prefix) / "__init__.py").is_file():
        prefix = prefix[1:]
    return ".".join([*prefix, *parts])


def _kept(files: list[Path], repo: Path) -> list[Path]:
    return [f.resolve() for f in files if _inside(f, repo)]


def _module_file(parts: Sequence[str], roots: Sequence[Path]) -> Path | None:
    for root in roots:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py") if parts else base, base / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return not any(part in _SKIP_DIRS for part in path.resolve().relative_to(folder.resolve()).parts)


def _rel(path: Path, repo: Path) -> str:
    try:
        return path.resolve().relative_to(repo).as_posix()
    except ValueError:
        return str(path)
