"""Upstream attribution: where a missing path is named (the step's command line, a download, the repo's
code) and whether an earlier step should have made it (prepare.sh names its folder, the step writes above
it, its code names the file, or its stage makes such files: weights are training's, models export's).
A `follows` cause names an earlier step only when this says the file was that step's to make.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from tipc.judge.causes.model import Context, Earlier, _Facts
from tipc.judge.causes.repo_code import _grep, _search_code


def _nearest(ctx: Context, stage: str) -> Earlier | None:
    same = [e for e in ctx.earlier if e.stage == stage]
    consumed = [e for e in same if e.id in ctx.depends_on]
    found = consumed or same
    return found[0] if found else None


_DOWNLOAD_CACHES = re.compile(
    r"(?:^|/)(?:\.cache|\.paddle\w*|\.paddleclas|\.paddleseg|\.paddlenlp|\.paddledet|hapi/weights|\.keras|"
    r"\.torch)(?:/|$)"
)


_DOWNLOAD_LINE = re.compile(r"(?i)\bdownload(?:ing|ed)?\b")


def _norm_path(text: str) -> str:
    text = text.strip().strip("'\"`").replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text


def _origin(path: str, facts: _Facts) -> tuple[str, str | None]:
    """Where a missing path is named: the step's command line (the config), a download, the code (with
    where), or unknown."""
    norm = _norm_path(path)
    name = PurePosixPath(norm).name
    for word in facts.argv_words:
        value = _norm_path(word.split("=", 1)[1] if word.startswith("-") and "=" in word else word)
        if not value or len(value) < 3:
            continue
        if value == norm or ("/" in value and norm.startswith(value.rstrip("/") + "/")):
            return "argv", None
    if _DOWNLOAD_CACHES.search(norm) or any(
        _DOWNLOAD_LINE.search(line) and name and name in line for line in facts.lines
    ):
        return "download", None
    if name:
        literal = re.compile(r"""['"][^'"\n]*""" + re.escape(name) + r"""['"]""")
        found = _search_code(facts, literal)
        if found is not None:
            return "code", found[0]
    return "unknown", None


def _would_make(step: Earlier, path: str, facts: _Facts) -> str | None:
    """Why an earlier step should have made `path`, or None: prepare.sh names the folder the path starts in
    (never the chain's output folder); another step (of a stage that makes such files: weights are
    training's, models export's) writes to a folder above it (the planner knows its writes), or its code
    names the file, or, where its writes are unknown, its stage makes such files."""
    norm = _norm_path(path)
    if step.stage == "prepare":
        return _prepare_would_make(norm, facts)
    makers = _MAKERS.get(PurePosixPath(norm).suffix)
    if makers is not None and step.stage not in makers:
        return None  # weights come from training, a model from export: an eval step only reads them
    why = _writes_above(step, norm) or _code_names(step, norm, facts)
    if why is not None:
        return why
    if not step.writes and makers is not None:
        return f"the {step.stage} stage writes such files"
    return None


def _in_output_dir(norm: str, facts: _Facts) -> bool:
    out_dir = _norm_path(facts.context.output_dir).rstrip("/")
    return bool(out_dir) and (norm == out_dir or norm.startswith(out_dir + "/") or f"/{out_dir}/" in norm)


def _prepare_would_make(norm: str, facts: _Facts) -> str | None:
    """prepare.sh names the folder `norm` starts in (the chain's output folder is never prepare's)."""
    if _in_output_dir(norm, facts):
        return None
    parts = [p for p in PurePosixPath(norm).parts if p not in ("/", ".", "..") and p not in _GENERIC_PARTS]
    first = parts[0] if parts else ""
    if len(first) >= 3 and re.search(rf"(?<![\w.-]){re.escape(first)}(?![\w-])", facts.context.prepare_text):
        return f"test_tipc/prepare.sh names `{first}`"
    return None


def _writes_above(step: Earlier, norm: str) -> str | None:
    """The step writes `norm` itself, a folder above it, or a file it is the stem of."""
    for written in step.writes:
        value = _norm_path(written).rstrip("/")
        if len(value) >= 3 and (
            norm == value or norm.startswith(value + "/") or norm.startswith(value + ".")
        ):
            return f"it writes to `{value}`"
    return None


def _code_names(step: Earlier, norm: str, facts: _Facts) -> str | None:
    """The step's own code names the file `norm` ends in (as a string literal)."""
    name = PurePosixPath(norm).name
    if not (name and "." in name and step.code_files and facts.context.repo is not None):
        return None
    literal = re.compile(r"""['"][^'"\n]*""" + re.escape(name) + r"""['"]""")
    for rel in step.code_files:
        hit = _grep(facts.context.repo / rel, literal)
        if hit is not None:
            return f"its code names `{name}` at {rel}:{hit[0]}"
    return None


# Which stages make a file of a kind (by suffix): a weights file is training's, a model file export's.
_WEIGHTS = (".pdparams", ".pdopt", ".pdckpt", ".pth", ".ckpt")


_MODELS = (".pdmodel", ".pdiparams", ".onnx")


_MAKERS: dict[str, frozenset[str]] = {
    **{s: frozenset({"train"}) for s in _WEIGHTS},
    **{s: frozenset({"export", "quant"}) for s in _MODELS},
}


_GENERIC_PARTS = frozenset(
    {
        "test_tipc",
        "output",
        "home",
        "root",
        "tmp",
        "work",
        "usr",
        "lib",
        "python",
        "src",
        "tools",
        "configs",
        "~",
    }
)
