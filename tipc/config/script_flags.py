"""Read a script's argparse flags by static analysis (the `ast` module); the script is never run.

Covers the styles seen in model repos: `parser.add_argument(...)` on the parser, on argument groups, on
subparsers, inside helper functions that receive the parser (in the same file or in a local module the script
imports), flag names held in module constants (also `*NAMES` tuples), `dest=`, `action="store_true"`, and
`self.add_argument` in ArgumentParser subclasses.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path

from tipc.config.parse import read_repo_text
from tipc.core.errors import ConfigError

_SWITCH_ACTIONS = frozenset({"store_true", "store_false", "store_const", "count", "help", "version"})


@dataclass(frozen=True)
class Flag:
    """One `add_argument` call, as written in the source."""

    options: tuple[str, ...]  # option strings in source order, e.g. ("--batch-size", "-b"); () if positional
    dest: str
    type_name: str | None = None  # "int", "str", "str2bool", "bool", ... as written; None when absent
    default: object = None  # the literal default, or None when absent or not a literal
    default_text: str | None = None  # source text of the default when it is not a literal
    action: str | None = None
    required: bool = False
    choices: tuple[object, ...] | None = None
    subcommand: str | None = None  # the subparser name the flag belongs to, if any
    path: str = ""
    line: int = 0

    @property
    def flag(self) -> str:
        """The spelling to put in a config: the first long option, else the first option, else dest."""
        for opt in self.options:
            if opt.startswith("--"):
                return opt
        return self.options[0] if self.options else self.dest

    @property
    def positional(self) -> bool:
        return not self.options

    @property
    def is_switch(self) -> bool:
        """True when the flag takes no value (`--flag=False` would be an argparse error)."""
        return self.action in _SWITCH_ACTIONS

    @property
    def names(self) -> tuple[str, ...]:
        """Normalised names (no dashes, lower case, `-` -> `_`) of every option and the dest."""
        out = [normalise(o) for o in self.options]
        out.append(normalise(self.dest))
        return tuple(dict.fromkeys(out))


def normalise(name: str) -> str:
    return name.lstrip("-").lower().replace("-", "_")


@dataclass(frozen=True)
class ScriptFlags:
    path: str
    flags: tuple[Flag, ...]
    uses_argparse: bool
    error: str | None = None  # set when the file could not be parsed; flags is then empty

    def find(self, names: tuple[str, ...]) -> Flag | None:
        """The flag matching the earliest of `names` (normalised synonyms, in preference order)."""
        for wanted in names:
            for flag in self.flags:
                if wanted in flag.names:
                    return flag
        return None


class _Constants:
    """Module-level `NAME = "literal"` (and tuples of literals) assignments."""

    def __init__(self, tree: ast.Module) -> None:
        self.values: dict[str, object] = {}
        for node in tree.body:
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(node, ast.Assign):
                targets, value = list(node.targets), node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    literal = self._literal(value)
                    if literal is not None:
                        self.values[target.id] = literal

    def _literal(self, node: ast.expr) -> object:
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None

    def resolve(self, node: ast.expr) -> object:
        if isinstance(node, ast.Name) and node.id in self.values:
            return self.values[node.id]
        return self._literal(node)


def _name_of(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Lambda):
        return "lambda"
    return None


def _subparser_names(tree: ast.AST) -> dict[str, str]:
    """Variables bound to `x.add_parser("name")` -> "name"."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "add_parser"
            and node.value.args
            and isinstance(node.value.args[0], ast.Constant)
            and isinstance(node.value.args[0].value, str)
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value.args[0].value
    return names


def _option_strings(node: ast.Call, consts: _Constants) -> list[str]:
    """The option strings of an add_argument call (literal, named constants, or a starred tuple of them)."""
    options: list[str] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            value = consts.resolve(arg.value)
            if isinstance(value, (tuple, list)):
                options.extend(v for v in value if isinstance(v, str))
            continue
        value = consts.resolve(arg)
        if isinstance(value, str):
            options.append(value)
    return options


def _dest(options: list[str], dashed: list[str], kw: dict[str, ast.expr], consts: _Constants) -> str:
    """argparse's dest: dest=, else the first long option (else the first short one), else the positional."""
    if "dest" in kw and isinstance(consts.resolve(kw["dest"]), str):
        return str(consts.resolve(kw["dest"]))
    if dashed:
        longs = [o for o in dashed if o.startswith("--")]
        return (longs or dashed)[0].lstrip("-").replace("-", "_")
    return options[0]


def _default(kw: dict[str, ast.expr], consts: _Constants, source: str) -> tuple[object, str | None]:
    """(the default's value, its source text when it is an expression with no literal value)."""
    if "default" not in kw:
        return None, None
    default = consts.resolve(kw["default"])
    if default is None and not (isinstance(kw["default"], ast.Constant) and kw["default"].value is None):
        return None, ast.get_source_segment(source, kw["default"])
    return default, None


def _flag_of(
    node: ast.Call, consts: _Constants, source: str, path: str, subparsers: dict[str, str]
) -> Flag | None:
    """The flag one `x.add_argument(...)` call defines; None when its option strings cannot be read."""
    options = _option_strings(node, consts)
    if not options:
        return None
    kw = {k.arg: k.value for k in node.keywords if k.arg is not None}
    dashed = [o for o in options if o.startswith("-")]
    default, default_text = _default(kw, consts, source)
    action = consts.resolve(kw["action"]) if "action" in kw else None
    required = consts.resolve(kw["required"]) if "required" in kw else False
    choices = consts.resolve(kw["choices"]) if "choices" in kw else None
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    sub = subparsers.get(receiver.id) if isinstance(receiver, ast.Name) else None
    return Flag(
        options=tuple(dashed),
        dest=_dest(options, dashed, kw, consts),
        type_name=_name_of(kw.get("type")),
        default=default,
        default_text=default_text,
        action=action if isinstance(action, str) else _name_of(kw.get("action")),
        required=bool(required) if dashed else "nargs" not in kw,
        choices=tuple(choices) if isinstance(choices, (list, tuple)) else None,
        subcommand=sub,
        path=path,
        line=node.lineno,
    )


def _flags_in(scope: ast.AST, consts: _Constants, source: str, path: str) -> list[Flag]:
    subparsers = _subparser_names(scope)
    flags: list[Flag] = []
    for node in ast.walk(scope):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            flag = _flag_of(node, consts, source, path, subparsers)
            if flag is not None:
                flags.append(flag)
    return flags


def _local_module(repo: Path, script: Path, module: str, level: int) -> Path | None:
    """The file of a repo-local module imported by `script`, or None for third-party modules."""
    parts = module.split(".") if module else []
    bases = [script.parent] if level else [script.parent, repo]
    for base in bases:
        for _ in range(max(level - 1, 0)):
            base = base.parent
        candidate = base.joinpath(*parts)
        for file in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            try:
                file.resolve().relative_to(repo.resolve())
            except ValueError:
                continue
            if file.is_file():
                return file
    return None


def _called_names(tree: ast.AST) -> set[str]:
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name_of(node.func)
            if name:
                called.add(name)
    return called


def read_flags(script: Path, repo: Path | None = None) -> ScriptFlags:
    """Every argparse flag `script` defines, including those added by helpers imported from the repo."""
    repo = repo or script.parent
    rel = _relative(script, repo)
    try:
        source = read_repo_text(script, repo)
        tree = ast.parse(source, filename=str(script))
    except ConfigError as exc:
        return ScriptFlags(rel, (), False, error=f"cannot read: {exc.message}")
    except (OSError, SyntaxError, ValueError) as exc:
        return ScriptFlags(rel, (), False, error=f"cannot parse: {exc}")
    consts = _Constants(tree)
    guarded = _guarded_dests(tree)
    flags = [
        replace(f, required=True) if f.dest in guarded and _valueless_default(f) else f
        for f in _flags_in(tree, consts, source, rel)
    ]
    uses_argparse = "argparse" in source or bool(flags)

    # Helpers from repo-local modules called here: `add_common_args(parser)`, `program.preprocess()`, ...
    for module_file, name in _imported_calls(tree, repo, script):
        flags.extend(_flags_of_helper(module_file, name, repo))
    unique: dict[tuple[str, ...], Flag] = {}
    for flag in flags:
        unique.setdefault((*flag.options, flag.dest, flag.subcommand or ""), flag)
    return ScriptFlags(rel, tuple(unique.values()), uses_argparse)


def _valueless_default(flag: Flag) -> bool:
    return not flag.positional and not flag.is_switch and flag.default is None and flag.default_text is None


def _guarded_dests(tree: ast.AST) -> set[str]:
    """Attributes a script refuses to run without, though argparse does not require them:
    `if not args.cfg: raise ...` or `if args.cfg is None: sys.exit(...)` (PaddleSeg's train.py and its
    forks check their `--config` so)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not any(_stops(s) for s in node.body):
            continue
        test, attr = node.test, None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            attr = test.operand
        elif (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Is)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            attr = test.left
        if isinstance(attr, ast.Attribute) and isinstance(attr.value, ast.Name):
            found.add(attr.attr)
    return found


def _stops(statement: ast.stmt) -> bool:
    """A `raise`, or a call of `exit`/`sys.exit`/`quit`."""
    if isinstance(statement, ast.Raise):
        return True
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and _dotted(statement.value.func) in ("exit", "sys.exit", "quit")
    )


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _imported_names(
    tree: ast.Module, repo: Path, script: Path
) -> tuple[dict[str, tuple[Path, str]], dict[str, Path]]:
    """Names bound by imports from the repo: functions/classes -> (module file, name), modules -> file."""
    functions: dict[str, tuple[Path, str]] = {}
    modules: dict[str, Path] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                local = alias.asname or alias.name
                dotted = f"{node.module}.{alias.name}" if node.module else alias.name
                submodule = _local_module(repo, script, dotted, node.level)
                if submodule is not None:
                    modules[local] = submodule
                    continue
                parent = _local_module(repo, script, node.module or "", node.level)
                if parent is not None:
                    functions[local] = (parent, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found = _local_module(repo, script, alias.name, 0)
                if found is not None:
                    modules[alias.asname or alias.name] = found
    return functions, modules


def _imported_calls(tree: ast.Module, repo: Path, script: Path) -> list[tuple[Path, str]]:
    """(module file, top-level name) for every call of a function or class imported from the repo."""
    functions, modules = _imported_names(tree, repo, script)
    calls: list[tuple[Path, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in functions:
            calls.append(functions[node.func.id])
        elif isinstance(node.func, ast.Attribute):
            base = _dotted(node.func.value)
            if base in modules:
                calls.append((modules[base], node.func.attr))
    return [c for c in dict.fromkeys(calls) if c[0].resolve() != script.resolve()]


def _flags_of_helper(module_file: Path, name: str, repo: Path, depth: int = 3) -> list[Flag]:
    """Flags added by top-level def/class `name` of `module_file` and the same-module helpers it calls."""
    try:
        source = read_repo_text(module_file, repo)
        tree = ast.parse(source, filename=str(module_file))
    except (ConfigError, OSError, SyntaxError, ValueError):
        return []
    consts = _Constants(tree)
    defs = {
        n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    rel = _relative(module_file, repo)
    flags: list[Flag] = []
    seen: set[str] = set()
    todo = [(name, 0)]
    while todo:
        current, level = todo.pop()
        if current in seen or current not in defs:
            continue
        seen.add(current)
        flags.extend(_flags_in(defs[current], consts, source, rel))
        if level < depth:
            todo.extend((called, level + 1) for called in _called_names(defs[current]) if called in defs)
    return flags


def _relative(path: Path, repo: Path) -> str:
    try:
        return path.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
