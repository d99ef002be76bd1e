"""Shell words and paths of one documented line, pure: the line cut into commands (`split_segments`, a
trailing redirection split off by `_strip_redirect`), a python command's script, module and arguments, its
`--key=value` options (`_options`, `norm_key`), what looks like a path, a URL or an archive, and whether a
repo-relative path exists or sits at the repo's top.
"""

from __future__ import annotations

import glob as globlib
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

_PYTHON = re.compile(r"^(?:.*/)?python[0-9.]*$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_PY_OPTS_WITH_VALUE = frozenset({"-W", "-X", "-Q"})
_REDIRECT_TAIL = re.compile(
    r"(?:\s+\d?>>?\s*[^\s&|;<>]+|\s+\d?>&\d|\s*&>\s*[^\s&|;<>]+|\s*\|\s*tee(?:\s+-a)?\s+\S+)+\s*$"
)


# ------------------------------------------------------------------------------------------ shell words


@dataclass(frozen=True)
class _Segment:
    text: str
    background: bool
    shell: bool  # needs a shell (pipes, redirections, expansions, globs)


_TOKEN = re.compile(r"""'[^']*'|"(?:\\.|[^"\\])*"|\\.|&&|&>|>&|;|&|.""", re.DOTALL)
_SHELL_CHARS = frozenset("|<>()$`*?[")


def split_segments(text: str) -> list[_Segment]:
    """A command line split at `&&`, `;` and `&` outside quotes; `#` starts a comment. `||`, pipes,
    redirections, `$` expansions and globs keep the segment whole, run by a shell."""
    segments: list[_Segment] = []
    buf, shell = "", False
    for match in _TOKEN.finditer(text):
        tok = match.group(0)
        if tok in ("&&", ";", "&"):
            if buf.strip():
                segments.append(_Segment(buf.strip(), tok == "&", shell))
            buf, shell = "", False
            continue
        if tok == "#" and (not buf or buf[-1].isspace()):
            break  # a comment
        if tok in ("&>", ">&") or tok in _SHELL_CHARS or (tok[0] == '"' and ("$" in tok or "`" in tok)):
            shell = True
        buf += tok
    if buf.strip():
        segments.append(_Segment(buf.strip(), False, shell))
    return segments


def _strip_redirect(seg: _Segment) -> tuple[_Segment, str]:
    """A segment without its trailing output redirection (tipc keeps the output in the step log)."""
    m = _REDIRECT_TAIL.search(seg.text)
    if m is None or not seg.shell:
        return seg, ""
    head = seg.text[: m.start()].rstrip()
    again = split_segments(head)
    if len(again) != 1:
        return seg, ""
    return _Segment(head, seg.background, again[0].shell), m.group(0).strip()


# ------------------------------------------------------------------------------------------ paths


def _norm(cwd: str, value: str) -> str | None:
    """`value` as a repo-relative path seen from `cwd`; None when it leaves the repo or is absolute."""
    if value.startswith("/") or value.startswith("~"):
        return None
    joined = posixpath.normpath(posixpath.join(cwd, value))
    if joined == ".." or joined.startswith("../"):
        return None
    return joined


def _ext(path: str) -> str:
    base = path.rstrip("/").rsplit("/", 1)[-1].lower()
    if base.endswith((".tar.gz", ".tar.bz2", ".tar.xz")):
        return "tar"
    return base.rsplit(".", 1)[-1] if "." in base else ""


def _looks_like_path(value: str) -> bool:
    if not value or value.startswith("-") or _URL.match(value) or "=" in value:
        return False
    try:
        float(value)
        return False
    except ValueError:
        pass
    if value.lower() in ("true", "false", "none", "null", "cpu", "gpu"):
        return False
    return "/" in value or bool(re.search(r"\.[A-Za-z][A-Za-z0-9]{0,7}$", value))


def _archive_stem(path: str) -> str:
    base = path.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"(\.tar)?\.(tar|tgz|zip|gz|bz2|xz|7z|rar)$", "", base, flags=re.IGNORECASE)


def _options(words: list[str]) -> list[tuple[str, str, int]]:
    """(key, value, index of the value's word) of `--k=v`, `--k v` and `-o A.k=v`; key without dashes."""
    out: list[tuple[str, str, int]] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("-") and "=" in word:
            key, value = word.lstrip("-").split("=", 1)
            out.append((key, value, i))
        elif word.startswith("-") and len(word) > 1 and not _is_number(word):
            nxt = words[i + 1] if i + 1 < len(words) else None
            if nxt is not None and not nxt.startswith("-"):
                if word in ("-o", "--opt", "--override", "--opts") and "=" in nxt:
                    key, value = nxt.split("=", 1)
                    out.append((key, value, i + 1))
                else:
                    out.append((word.lstrip("-"), nxt, i + 1))
                i += 1
        i += 1
    return out


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def norm_key(key: str) -> str:
    return key.split(".")[-1].strip().lower().replace("-", "_")


def _exists(repo: Path, rel: str) -> bool:
    if any(ch in rel for ch in "*?["):
        return bool(globlib.glob(str(repo / rel)))
    return os.path.lexists(repo / rel)


def _at_top(repo: Path, rel: str) -> bool:
    """True when the nearest existing folder above `rel` is the repo root: a path a download or an outside
    dataset would make, not a typo inside a folder the repo ships."""
    parent = posixpath.dirname(rel.rstrip("/"))
    while parent not in ("", ".") and not (repo / parent).is_dir():
        parent = posixpath.dirname(parent)
    return parent in ("", ".")


def _mentioned(words: list[str], last: list[str]) -> list[str]:
    """Every URL and path-like word (and the last operand) of a command tipc does not understand."""
    values = [w.split("=", 1)[1] if w.startswith("-") and "=" in w else w for w in words[1:]]
    return [v for v in values if _URL.match(v) or _looks_like_path(v) or v in last]


def _python_parts(words: list[str]) -> tuple[str | None, str | None, list[str]]:
    """(script, module, arguments after them) of a python command line."""
    i = 1
    while i < len(words):
        word = words[i]
        if word == "-m" and i + 1 < len(words):
            return None, words[i + 1], words[i + 2 :]
        if word == "-c":
            return None, None, words[i + 2 :]
        if word in _PY_OPTS_WITH_VALUE:
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        return word, None, words[i + 1 :]
    return None, None, []


def _script_index(argv: list[str]) -> int | None:
    """The index of the script a python or shell command runs (the .py after a launcher too)."""
    if not argv:
        return None
    if argv[0].endswith(".sh"):
        return 0
    if argv[0] in ("bash", "sh", "zsh"):
        return next((i for i in range(1, len(argv)) if not argv[i].startswith("-")), None)
    if not _PYTHON.match(argv[0]):
        return None
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "-m":
            return next((j for j in range(i + 2, len(argv)) if argv[j].endswith(".py")), None)
        if word in _PY_OPTS_WITH_VALUE:
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        return i
    return None


def _expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: env.get(m.group(1), ""), value)
