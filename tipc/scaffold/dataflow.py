"""Where a script writes or reads its weights, read statically: `paddle.save` / `paddle.load` targets.

A target built from an argument says which flag carries the weights and in which form:
- "file": the argument is the weights file itself (`paddle.load(args.pretrained)`);
- "dir": the argument is a folder the script joins a file name onto
  (`os.path.join(args.output_dir, "latest.pdparams")`, `"%s/%s/final.pdparams" % (args.model_dir, kind)`).
Arguments are matched by the flags' `dest` names, as attributes (`args.x`, `opt.x`) or as plain names (a
helper's parameter named after the flag, `run_training(model_dir=args.model_dir)`).
"""

from __future__ import annotations

import ast
import copy
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

_WEIGHT_SUFFIX = ".pdparams"
_STABLE_ORDER = ("final", "latest", "last", "model", "best")


@dataclass(frozen=True)
class WeightRef:
    dest: str  # the argparse dest the path is built from
    style: str  # "file" | "dir"
    # dir style: the constant path joined onto the folder, e.g. "latest.pdparams" or
    # "models/model_best.pdparams"; the bare file name when a folder in between is not known statically
    name: str | None
    line: int
    direct: bool  # True: the argument of a paddle.save/paddle.load call; False: a path expression elsewhere

    def where(self, path: str) -> str:
        return f"{path}:{self.line}"


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _refs(node: ast.AST, dests: set[str]) -> list[str]:
    """Flag dests named in `node`, in source order: `args.x` attributes first, else plain names."""
    attrs = [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in dests]
    if attrs:
        return attrs
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in dests]


def _file_name(node: ast.AST) -> str | None:
    """The stable `.pdparams` file name a path expression ends in, if any."""
    for text in _strings(node):
        tail = text.rsplit("/", 1)[-1]
        if tail.endswith(_WEIGHT_SUFFIX) and not tail.startswith(".") and not re.search(r"[{}%]", tail):
            return tail
    return None


def _weights_piece(node: ast.AST) -> bool:
    """True when a string piece of the expression names a `.pdparams` file (also `f"{name}.pdparams"`)."""
    return any(_WEIGHT_SUFFIX in text for text in _strings(node))


def _unwrap(node: ast.expr) -> ast.expr:
    """`str(x)`, `Path(x)` -> x: conversions that keep the path."""
    while isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name not in ("str", "Path", "abspath", "expanduser", "realpath"):
            break
        node = node.args[0]
    return node


def _assignments(tree: ast.AST) -> dict[str, ast.expr]:
    """name -> the last expression assigned to it anywhere in the file."""
    out: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
    return out


_MAX_DEPTH = 4  # `model_dir = join(args.log_dir, "models")` then `join(model_dir, "x.pdparams")`, ...


def _resolve(
    node: ast.expr, assigned: dict[str, ast.expr], keep: set[str], seen: tuple[str, ...] = ()
) -> ast.expr:
    """`node` with the local names in it replaced by what was assigned to them (a few levels deep); names in
    `keep` (the flags' dests, a helper's parameters named after them) stay."""

    class _Substitute(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.expr:
            if name.id in keep or name.id not in assigned or name.id in seen or len(seen) >= _MAX_DEPTH:
                return name
            return _resolve(assigned[name.id], assigned, keep, (*seen, name.id))

    result = _Substitute().visit(copy.deepcopy(node))
    return result if isinstance(result, ast.expr) else node


def _classify(
    target: ast.expr, dests: set[str], assigned: dict[str, ast.expr]
) -> tuple[str, str, str | None]:
    """(dest, style, path under the folder) of one path expression, or ('', '', None) when no flag is behind
    it."""
    target = _unwrap(_resolve(_unwrap(target), assigned, dests))
    refs = _refs(target, dests)
    if not refs:
        return "", "", None
    direct = isinstance(target, (ast.Attribute, ast.Name))
    if direct:
        return refs[0], "file", None
    if not (_weights_piece(target) or _joins_onto(target, refs[0])):
        return "", "", None  # a path built for something else (a log, a folder of images)
    return refs[0], "dir", _sub_path(target, refs[0]) or _file_name(target)


# Stands for the flag's value in a path spelled out by `_text`.
_FLAG = "\x00"


def _is_flag(node: ast.expr, dest: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == dest) or (
        isinstance(node, ast.Name) and node.id == dest
    )


def _join_all(parts: list[str]) -> str:
    out = parts[0]
    for part in parts[1:]:
        out = out.rstrip("/") + "/" + part.lstrip("/") if out else part
    return out


def _format_pieces(template: str, values: list[str], style: str) -> str | None:
    """`"%s/%s" % (a, b)` / `"{}/{}".format(a, b)` with the values known; None for any other placeholder."""
    pattern = r"%s" if style == "%" else r"\{\d*\}"
    pieces = re.split(pattern, template)
    if len(pieces) != len(values) + 1 or re.search(r"%[^%]" if style == "%" else r"[{}]", "".join(pieces)):
        return None
    out = pieces[0]
    for value, piece in zip(values, pieces[1:], strict=True):
        out += value + piece
    return out


def _text(node: ast.expr, dest: str) -> str | None:
    """The path `node` spells out, the flag `dest` written as `_FLAG`; None when a part of it is not known
    statically (a loop variable, a call)."""
    node = _unwrap(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if dest and _is_flag(node, dest):
        return _FLAG
    if isinstance(node, ast.JoinedStr):
        parts = [
            _text(v.value, dest) if isinstance(v, ast.FormattedValue) else _text(v, dest) for v in node.values
        ]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p is not None)
    if isinstance(node, ast.BinOp):
        return _binop_text(node, dest)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        return _call_text(node, node.func, dest)
    return None


def _binop_text(node: ast.BinOp, dest: str) -> str | None:
    """`a + "x"`, `Path(a) / "x"` and `"%s/x" % a` spelled out (see `_text`)."""
    if isinstance(node.op, (ast.Add, ast.Div)):
        left, right = _text(node.left, dest), _text(node.right, dest)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, ast.Add) else _join_all([left, right])
    if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
        items = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        values = [_text(v, dest) for v in items]
        if not isinstance(node.left.value, str) or any(v is None for v in values):
            return None
        return _format_pieces(node.left.value, [v for v in values if v is not None], "%")
    return None


def _all_known(values: list[str | None]) -> list[str] | None:
    return None if any(v is None for v in values) else [v for v in values if v is not None]


def _call_text(node: ast.Call, func: ast.Attribute, dest: str) -> str | None:
    """`"{}/x".format(a)`, `os.path.join(a, "x")`, `"/".join([a, "x"])` spelled out (see `_text`)."""
    owner = func.value
    literal = owner.value if isinstance(owner, ast.Constant) and isinstance(owner.value, str) else None
    if func.attr == "format" and literal is not None:
        values = _all_known([_text(a, dest) for a in node.args])
        return None if values is None else _format_pieces(literal, values, "{}")
    if func.attr != "join" or not node.args:
        return None
    items = node.args
    if literal is not None:  # "/".join([a, b]) joins with the string; os.path.join(a, b) with "/"
        if len(node.args) != 1 or not isinstance(node.args[0], (ast.List, ast.Tuple)):
            return None
        items = list(node.args[0].elts)
    values = _all_known([_text(a, dest) for a in items])
    if values is None:
        return None
    return literal.join(values) if literal is not None else _join_all(values)


def _sub_path(node: ast.expr, dest: str) -> str | None:
    """The constant path joined onto a folder flag (`models/model_best.pdparams`), if all of it is known."""
    text = _text(node, dest)
    if text is None or not text.startswith(_FLAG) or text.count(_FLAG) != 1:
        return None
    rest = posixpath.normpath(text[1:].lstrip("/")) if text[1:].strip("/") else ""
    if not rest.endswith(_WEIGHT_SUFFIX) or rest.startswith("..") or re.search(r"[{}%*]", rest):
        return None
    return rest


def _joins_onto(node: ast.expr, dest: str) -> bool:
    """`os.path.join(args.<dest>, ...)`: a file name (maybe another flag) joined onto the folder flag."""
    if not (isinstance(node, ast.Call) and len(node.args) > 1 and ast.unparse(node.func).endswith("join")):
        return False
    first = _unwrap(node.args[0])
    return (isinstance(first, ast.Attribute) and first.attr == dest) or (
        isinstance(first, ast.Name) and first.id == dest
    )


def model_dir_refs(script: Path, dests: set[str]) -> list[WeightRef]:
    """Flags an inference script joins the exported model's file names onto (`inference.pdmodel`)."""
    tree = _parse(script)
    if tree is None:
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Call, ast.BinOp, ast.JoinedStr)):
            continue
        if any(t.endswith(_MODEL_SUFFIXES) for t in _strings(node)):
            refs = _refs(node, dests)
            if refs and (_joins_onto(node, refs[0]) or not isinstance(node, ast.Call)):
                out.append(WeightRef(refs[0], "dir", None, getattr(node, "lineno", 0), True))
    return out


_MODEL_SUFFIXES = (".pdmodel", ".pdiparams")


def _calls(tree: ast.AST, verb: str) -> list[ast.Call]:
    """`paddle.save(...)` / `paddle.load(...)` (also `paddle.framework.save`, `fluid.io.save`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == verb:
            base = ast.unparse(node.func.value)
            if "paddle" in base or "fluid" in base:
                found.append(node)
    return found


def _parse(script: Path) -> ast.Module | None:
    try:
        return ast.parse(script.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None


def weight_refs(script: Path, dests: set[str], verb: str) -> list[WeightRef]:
    """Weights paths `verb` ("save" or "load") is given in `script`, built from one of `dests`.

    Direct call arguments come first; for "load" the path expressions holding a `.pdparams` name and a flag
    (`name = "%s/final.pdparams" % args.model_dir`, later loaded through a helper) follow.
    """
    tree = _parse(script)
    if tree is None:
        return []
    assigned = _assignments(tree)
    out: list[WeightRef] = []
    slot = 1 if verb == "save" else 0
    for call in _calls(tree, verb):
        if len(call.args) <= slot:
            continue
        dest, style, name = _classify(call.args[slot], dests, assigned)
        if dest and not (verb == "load" and "resume" in dest):  # resuming training is not evaluating
            out.append(WeightRef(dest, style, name, call.lineno, True))
    if verb == "load" and not out:
        saving = {id(n) for call in _calls(tree, "save") for n in ast.walk(call)}
        for node in ast.walk(tree):
            if id(node) in saving:
                continue  # where the script writes weights is not where it reads them
            if isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call)) and _weights_piece(node):
                dest, style, name = _classify(node, dests, assigned)
                if dest and style == "dir" and "resume" not in dest:
                    out.append(WeightRef(dest, style, name, getattr(node, "lineno", 0), False))
    return _ranked(out)


def literal_save_paths(script: Path, dests: set[str]) -> list[tuple[str, int]]:
    """(path, line) of every `.pdparams` file `script` saves to a path no flag is behind
    (`os.path.join("output", "best_model", "model.pdparams")`), stable names first.

    Training that writes there whatever it is given is read back by later stages from that very path.
    """
    tree = _parse(script)
    if tree is None:
        return []
    assigned = _assignments(tree)
    found: dict[str, int] = {}
    for call in _calls(tree, "save"):
        if len(call.args) < 2:
            continue
        target = _resolve(_unwrap(call.args[1]), assigned, dests)
        if _refs(target, dests):
            continue
        text = _text(target, "")
        if text is None or not text.endswith(_WEIGHT_SUFFIX) or text.startswith("/"):
            continue
        path = posixpath.normpath(text)
        if not path.startswith("..") and not re.search(r"[{}%*]", path):
            found.setdefault(path, call.lineno)

    def rank(item: tuple[str, int]) -> tuple[int, int]:
        tail = item[0].rsplit("/", 1)[-1]
        return (next((i for i, w in enumerate(_STABLE_ORDER) if w in tail), len(_STABLE_ORDER)), item[1])

    return sorted(found.items(), key=rank)


def _ranked(refs: list[WeightRef]) -> list[WeightRef]:
    """Stable names first (final/latest/...), per-epoch and nameless ones last; duplicates dropped."""

    def rank(ref: WeightRef) -> tuple[int, int]:
        if ref.name is None:
            return (len(_STABLE_ORDER) + (0 if ref.style == "file" else 1), ref.line)
        tail = ref.name.rsplit("/", 1)[-1]
        hit = next((i for i, word in enumerate(_STABLE_ORDER) if word in tail), len(_STABLE_ORDER))
        return (hit, ref.line)

    unique = {(r.dest, r.style, r.name): r for r in sorted(refs, key=rank, reverse=True)}
    return sorted(unique.values(), key=rank)


def literal_paths_under(script: Path, folder: str) -> list[int]:
    """Lines of `script` holding a string literal path inside `folder` (`"logs/%s/params.crf"`).

    A later stage that reads or writes such a path relies on train writing into `folder` itself,
    whatever flags it is given.
    """
    tree = _parse(script)
    if tree is None or not folder or folder in (".", "/"):
        return []
    prefix = folder.strip("/").removeprefix("./") + "/"
    return sorted(
        {
            n.lineno
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and n.value.removeprefix("./").startswith(prefix)
        }
    )
