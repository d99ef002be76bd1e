"""The commands a repo's docs give, planned as steps: seed 004 §4.1.3 ("按照文档操作步骤") and §4.2.3
("根据文档说明流程") ask that following the docs works, so tipc follows them.

    plan_documented(repo, model_name=..., config=..., overrides=...) -> Documented

The shell code blocks of README.md, `test_tipc/docs/*.md` and `deploy/**/README*.md` (in that order, each
doc starting in the repo root) are read into commands; `cd` and `export` carry over to the commands after
them in the same doc. Every command is one of (the vocabulary is data: specs/documented/commands.yaml):

- run: a python or shell script, or a file utility (`tar -xf`): a step, run as written, with the chain's
  switches (`--device cpu` adds the script's CPU flag; the runner puts `--python` in place of `python3`);
- setup: fetches or installs (`git clone`, `pip install`, `wget`, `conda`): a step run only with
  `--network`, otherwise listed with what it would fetch;
- chain: the TIPC scripts (`bash test_tipc/test_train_inference_python.sh`, `tipc run`): tipc runs the
  chain itself, so they are listed, not run twice;
- handled / outside / template: stopping processes (tipc stops what it started), tools outside the
  acceptance's python chain (cmake, adb, paddle2onnx), usage templates with placeholders: listed, not run.

What a command needs decides whether it can run: an input the repo lacks that an earlier command makes is
a dependency on that step (a skipped download skips what needs it, with the reason); a full dataset the
repo does not ship is replaced by the TIPC config's lite data for the same option, stated as a
substitution; missing weights or archives at the repo's top (downloads) make the step not applicable.
Pure apart from reading the docs, the config and the scripts' flags.
"""

from __future__ import annotations

import glob as globlib
import os
import posixpath
import re
import shlex
import shutil
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from tipc.core.errors import ConfigError
from tipc.core.steps import Mode, Overrides, Plan, Stage, Step
from tipc.planning.docs_vocab import Vocabulary
from tipc.planning.docs_vocab import load as load_vocabulary
from tipc.planning.serving import PADDLE_SERVING_REASON, _module_requirements, _ready_url

DOC_LIMIT_BYTES = 2 * 1024 * 1024
MAX_COMMANDS = 200
CHAIN = "documented"
MODE = Mode.DOCUMENTED
ID_PREFIX = "doc/"


class Kind(str, Enum):
    RUN = "run"
    SETUP = "setup"
    CHAIN = "chain"
    STATE = "state"
    HANDLED = "handled"
    OUTSIDE = "outside"
    TEMPLATE = "template"
    REPEAT = "repeat"


_STAGES = {
    "train": Stage.TRAIN,
    "eval": Stage.EVAL,
    "export": Stage.EXPORT,
    "convert": Stage.EXPORT,
    "infer": Stage.INFER,
    "serve": Stage.SERVE,
    "client": Stage.CLIENT,
}
# Purposes of the acceptance's python chain (a doc with none of them documents something else).
ACCEPTANCE_PURPOSES = frozenset({"train", "eval", "predict", "export", "infer", "serve", "client", "convert"})

_PYTHON = re.compile(r"^(?:.*/)?python[0-9.]*$")
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_URL_IN = re.compile(r"https?://[^\s'\"()]+", re.IGNORECASE)
_LOOPBACK = re.compile(r"^[a-z]+://(127\.\d+\.\d+\.\d+|localhost|\[::1\]|0\.0\.0\.0)([:/]|$)", re.IGNORECASE)
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")
_CHAIN_WHY = "the TIPC chain: tipc runs it itself (the chain rules judge it)"
_COMMAND_WORD = re.compile(r"[A-Za-z0-9_./~][\w./+~-]*")
_PREFIX_WORDS = frozenset({"nohup", "time", "exec", "env", "command"})
_PY_OPTS_WITH_VALUE = frozenset({"-W", "-X", "-Q"})
_REDIRECT_TAIL = re.compile(
    r"(?:\s+\d?>>?\s*[^\s&|;<>]+|\s+\d?>&\d|\s*&>\s*[^\s&|;<>]+|\s*\|\s*tee(?:\s+-a)?\s+\S+)+\s*$"
)


@dataclass(frozen=True)
class DocCommand:
    """One command of the docs, where it is written and what tipc makes of it."""

    step_id: str  # "" for kinds that are not steps
    doc: str  # repo-relative doc path
    line: int  # 1-based line in the doc
    text: str  # the command as written (prompt removed, continuation lines joined)
    cwd: str  # repo-relative working folder ("." the repo root)
    kind: Kind
    purpose: str  # train, eval, predict, export, infer, serve, client, convert, data, setup, other...
    why: str = ""  # kinds that do not run (or run only with --network): why, and what it would fetch
    background: bool = False

    @property
    def location(self) -> str:
        return f"{self.doc}:{self.line}"

    def to_json(self) -> dict[str, object]:
        return {
            "step_id": self.step_id,
            "doc": self.doc,
            "line": self.line,
            "text": self.text,
            "cwd": self.cwd,
            "kind": self.kind.value,
            "purpose": self.purpose,
            "why": self.why,
            "background": self.background,
        }


@dataclass(frozen=True)
class Substitution:
    """A value of a documented command tipc replaced, and why (a full dataset the repo does not ship)."""

    step_id: str
    key: str
    written: str
    used: str
    source: str  # where the value used comes from, e.g. test_tipc/configs/m/train_infer_python.txt:10

    def text(self) -> str:
        return (
            f"--{self.key}={self.written} is not in the repo: the lite data {self.used} ({self.source}) is "
            "used instead"
        )


@dataclass(frozen=True)
class Documented:
    plan: Plan
    commands: tuple[DocCommand, ...]
    substitutions: tuple[Substitution, ...] = ()
    notes: tuple[str, ...] = ()
    docs: tuple[str, ...] = ()

    def command(self, step_id: str) -> DocCommand | None:
        return next((c for c in self.commands if c.step_id == step_id), None)

    def substitutions_of(self, step_id: str) -> list[Substitution]:
        return [s for s in self.substitutions if s.step_id == step_id]


# ------------------------------------------------------------------------------------------ reading docs


@dataclass(frozen=True)
class _Block:
    line: int  # line of the opening fence
    info: str  # the info string's first word, lower case ("" none)
    lines: tuple[tuple[int, str], ...]


def read_doc(path: Path, repo: Path) -> str | None:
    from tipc.config.parse import read_bytes_bounded

    try:
        data = read_bytes_bounded(path, DOC_LIMIT_BYTES, "a doc", within=repo)
    except ConfigError:
        return None
    return data.decode("utf-8", errors="replace")


def doc_paths(repo: Path, vocab: Vocabulary) -> list[str]:
    """The docs read, repo-relative, in order (each once)."""
    found: list[str] = []
    for source in vocab.docs:
        if source.first_of:
            for name in source.first_of:
                match = repo_glob(repo, name)
                if match:
                    found.append(match[0])
                    break
        elif source.glob:
            found.extend(repo_glob(repo, source.glob))
    return list(dict.fromkeys(found))


_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv"})
MAX_WALKED = 50_000


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.IGNORECASE)


def repo_glob(repo: Path, pattern: str) -> list[str]:
    """Repo-relative regular files matching `pattern` (case ignored; `**/` spans folders), sorted; tipc's
    output, VCS folders and links are not walked."""
    regex = _glob_regex(pattern)
    top = pattern.split("/", 1)[0]
    start = repo
    if "/" in pattern and not any(ch in top for ch in "*?["):
        matches = [p for p in (repo.iterdir() if repo.is_dir() else []) if p.name.lower() == top.lower()]
        if not matches:
            return []
        start = matches[0]
    found: list[str] = []
    walked = 0
    for root, dirs, files in os.walk(start):
        rel_root = Path(root).relative_to(repo).as_posix()
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _SKIP_DIRS
            and not os.path.islink(os.path.join(root, d))
            and f"{rel_root}/{d}".lstrip("./") != "test_tipc/output"
        )
        for name in sorted(files):
            walked += 1
            rel = name if rel_root == "." else f"{rel_root}/{name}"
            full = os.path.join(root, name)
            if regex.fullmatch(rel) and os.path.isfile(full) and not os.path.islink(full):
                found.append(rel)
        if walked > MAX_WALKED or "/" not in pattern:
            break
    return sorted(found)


def code_blocks(text: str) -> list[_Block]:
    """Fenced code blocks (``` or ~~~, indented in lists too), with their first line numbers."""
    blocks: list[_Block] = []
    fence: str | None = None
    indent = 0
    start, info = 0, ""
    body: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(raw)
        if fence is None:
            if match:
                fence, indent, start, info = (
                    match.group(2),
                    len(match.group(1)),
                    number,
                    match.group(3).lower(),
                )
                body = []
            continue
        if (
            match
            and match.group(2)[0] == fence[0]
            and len(match.group(2)) >= len(fence)
            and not match.group(3)
        ):
            blocks.append(_Block(start, info, tuple(body)))
            fence = None
            continue
        line = raw[indent:] if raw[:indent].strip() == "" else raw.lstrip()
        body.append((number, line))
    return blocks


def logical_lines(block: _Block, vocab: Vocabulary) -> list[tuple[int, str, bool]]:
    """(line, text, prompted) of each command candidate: prompts removed, `\\` continuations joined,
    comment-only lines dropped."""
    out: list[tuple[int, str, bool]] = []
    pending: tuple[int, str, bool] | None = None
    for number, raw in block.lines:
        line = raw.rstrip()
        if pending is not None:
            start, text, prompted = pending
            joined = text + " " + line.strip()
            if joined.endswith("\\"):
                pending = (start, joined[:-1].rstrip(), prompted)
            else:
                out.append((start, joined, prompted))
                pending = None
            continue
        stripped = line.strip()
        prompted = False
        for prompt in vocab.prompts:
            m = prompt.match(stripped)
            if m:
                stripped, prompted = stripped[m.end() :], True
                break
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending = (number, stripped[:-1].rstrip(), prompted)
        else:
            out.append((number, stripped, prompted))
    if pending is not None:
        out.append(pending)
    return out


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


# ------------------------------------------------------------------------------------------ the config


def lite_values(config: Path | None, repo: Path) -> dict[str, tuple[str, int, str]]:
    """{normalised option key: (lite value, line, key as written)} from the TIPC config: its `-key:value`
    slots
    and the `--k=v` words of its commands; a `mode=value|...` slot gives its lite_train_lite_infer value."""
    out: dict[str, tuple[str, int, str]] = {}
    if config is None:
        return out
    text = read_doc(config, repo)
    if text is None:
        return out
    for number, raw in enumerate(text.splitlines(), start=1):
        key, sep, value = raw.strip().partition(":")
        if not sep or not value.strip():
            continue
        value = value.strip()
        if "lite_train_lite_infer=" in value:
            value = value.split("lite_train_lite_infer=", 1)[1].split("|", 1)[0]
        if key.startswith("-") and value.lower() != "null" and "|" not in value:
            out.setdefault(norm_key(key.lstrip("-")), (value, number, key.lstrip("-")))
        try:
            words = shlex.split(value)
        except ValueError:
            continue
        for k, v, _ in _options(words):
            if v and v.lower() != "null":
                out.setdefault(norm_key(k), (v, number, k))
    return out


# ------------------------------------------------------------------------------------------ the planner


@dataclass(frozen=True)
class _Written:
    """A command as the docs write it, classified."""

    line: int
    text: str
    words: tuple[str, ...]
    env: dict[str, str]
    kind: Kind
    purpose: str
    why: str
    seg: _Segment
    redirect: str


@dataclass
class _DocState:
    doc: str
    cwd: str = "."
    outside: str = ""  # why the commands run outside the repo now ("" when inside)
    cwd_dep: str | None = None  # a step that makes the working folder
    cwd_missing: str = ""  # why the working folder cannot exist
    env: dict[str, str] = field(default_factory=dict)
    clones: dict[str, bool] = field(default_factory=dict)  # clone folder (lower case) -> it is this repo
    servers: list[str] = field(default_factory=list)


@dataclass
class _Made:
    """What an earlier command makes or mentions, for the commands after it."""

    step_id: str
    location: str
    text: str
    paths: set[str]  # repo-relative paths it makes or names
    basenames: set[str]
    runs: bool  # a step that runs (else its dependents are skipped with its reason)


@dataclass
class _Planner:
    repo: Path
    vocab: Vocabulary
    overrides: Overrides
    lite: dict[str, tuple[str, int, str]]
    config_rel: str
    sandboxed: bool
    network: bool
    gpus: bool | None = None  # whether this machine has a GPU (None: not known, as if it had)
    commands: list[DocCommand] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    substitutions: list[Substitution] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    made: list[_Made] = field(default_factory=list)
    seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], str] = field(default_factory=dict)
    downloads: list[tuple[str, str]] = field(default_factory=list)  # (location, text) of weight fetches
    ids: set[str] = field(default_factory=set)

    # ---- docs

    def read(self, doc: str) -> None:
        text = read_doc(self.repo / doc, self.repo)
        if text is None:
            self.notes.append(f"{doc}: not read (a link out of the repo, not a regular file, or too large)")
            return
        state = _DocState(doc)
        candidates: list[tuple[int, str, bool, bool]] = []  # (line, text, prompted, shell block)
        for block in code_blocks(text):
            shell_block = block.info in self.vocab.shell_info
            if block.info and not shell_block:
                continue
            for number, line, prompted in logical_lines(block, self.vocab):
                candidates.append((number, line, prompted, shell_block))
        first = len(self.commands)
        first_step = len(self.steps)
        for number, line, prompted, shell_block in candidates:
            for k, seg in enumerate(split_segments(line)):
                if len(self.steps) >= MAX_COMMANDS:
                    self.notes.append(
                        f"{doc}:{number}: more than {MAX_COMMANDS} documented commands; the rest are not "
                        "planned"
                    )
                    return
                self.command(state, number, k, seg, prompted or shell_block)
        self._scope(doc, first, first_step)

    def _scope(self, doc: str, first: int, first_step: int) -> None:
        """A doc beside the code (deploy/, test_tipc/docs/) that runs no command of the acceptance's python
        chain documents something else (a C++ or Lite deployment): its commands are listed, not run."""
        if doc == self._readme or any(
            (c.kind is Kind.RUN and c.purpose in ACCEPTANCE_PURPOSES) or c.kind is Kind.CHAIN
            for c in self.commands[first:]
        ):
            return
        why = (
            "this doc documents no training, evaluation, prediction, export, inference or serving python "
            "command (another deployment): its commands are listed, not run"
        )
        for i in range(first, len(self.commands)):
            cmd = self.commands[i]
            if cmd.kind is Kind.RUN:
                self.commands[i] = replace(cmd, kind=Kind.OUTSIDE, why=why)
            elif cmd.kind is Kind.SETUP and self.network:
                self.commands[i] = replace(cmd, why=f"{cmd.why}; {why}")
        for i in range(first_step, len(self.steps)):
            step = self.steps[i]
            self.steps[i] = replace(step, not_applicable=step.not_applicable or why, depends_on=())
        for made in self.made:
            if any(made.step_id == s.id for s in self.steps[first_step:]):
                made.runs = False

    _readme: str = ""
    cloned: bool = False

    # ---- one command

    def _new_id(self, doc: str, line: int, k: int) -> str:
        base = f"{ID_PREFIX}{doc}:{line}"
        sid = base if k == 0 else f"{base}#{k + 1}"
        n = 2
        while sid in self.ids:
            sid = f"{base}#{n}"
            n += 1
        self.ids.add(sid)
        return sid

    def command(self, state: _DocState, line: int, k: int, seg: _Segment, certain: bool) -> None:
        seg, redirect = _strip_redirect(seg)
        try:
            words = shlex.split(seg.text)
        except ValueError:
            if certain:
                self.notes.append(
                    f"{state.doc}:{line}: cannot be split as a shell splits words: {seg.text[:120]}"
                )
            return
        env: dict[str, str] = {}
        while words and (_ENV_WORD.match(words[0]) or words[0] in _PREFIX_WORDS):
            word = words.pop(0)
            if "=" in word and _ENV_WORD.match(word):
                name, value = word.split("=", 1)
                env[name] = value
        if not words:
            return
        first = words[0]
        if first in self.vocab.state:
            if certain or first in ("cd", "export"):
                self._state(state, line, seg.text, words)
            return
        kind, purpose, why = self._classify(state, words, certain)
        if kind is None:
            return
        if words[0] == "git" and "clone" in words[1:3]:
            self._clone(state, words)
        text = seg.text
        key = (state.cwd, text, tuple(sorted({**state.env, **env}.items())))
        if key in self.seen and kind is not Kind.CHAIN:
            self.commands.append(
                DocCommand(
                    "", state.doc, line, text, state.cwd, Kind.REPEAT, purpose, f"repeats {self.seen[key]}"
                )
            )
            return
        self.seen[key] = f"{state.doc}:{line}"
        sid = self._new_id(state.doc, line, k)
        self._step(state, sid, _Written(line, text, tuple(words), env, kind, purpose, why, seg, redirect))

    def _classify(self, state: _DocState, words: list[str], certain: bool) -> tuple[Kind | None, str, str]:
        """(kind, purpose, why) of a command; kind None: not a command (output or prose in a block)."""
        first = words[0]
        if not _COMMAND_WORD.fullmatch(first):
            return None, "", ""  # a tree listing (`|--train.sh`), an option, output
        placeholder = self._placeholder(words)
        if placeholder is not None:
            why = f"a usage template ({placeholder} is a placeholder), not run as written"
            return Kind.TEMPLATE, "template", why
        if _PYTHON.match(first):
            kind, purpose, why = self._python_kind(state, words)
            fetched = [u for w in words for u in _URL_IN.findall(w) if not _LOOPBACK.match(u)]
            if kind is Kind.RUN and fetched:
                return Kind.SETUP, "setup", self._fetch_text(["python", *fetched])
            return kind, purpose, why
        if first in ("bash", "sh", "zsh") or first.endswith(".sh"):
            return self._script_kind(state, words, certain)
        return self._tool_kind(state, words, certain)

    def _placeholder(self, words: list[str]) -> str | None:
        for word in words[1:]:
            for part in (word, word.split("=", 1)[-1]):
                if any(p.search(part) for p in self.vocab.placeholders):
                    return word
        return None

    def _script_kind(self, state: _DocState, words: list[str], certain: bool) -> tuple[Kind | None, str, str]:
        first = words[0]
        script = first if first.endswith(".sh") else next((w for w in words[1:] if not w.startswith("-")), "")
        if not script:
            return (Kind.OUTSIDE, "other", "an interactive shell: not run") if certain else (None, "", "")
        rel = _norm(state.cwd, script) or script
        if self.vocab.is_chain_script(rel) or self.vocab.is_chain_script(script):
            return Kind.CHAIN, "chain", _CHAIN_WHY
        entry = self.vocab.purpose_of(script, tuple(words), None)
        if entry is not None and entry.outside:
            return (
                Kind.OUTSIDE,
                entry.purpose,
                f"a {entry.purpose} script, outside the acceptance's python chain",
            )
        return Kind.RUN, entry.purpose if entry is not None else "other", ""

    def _tool_kind(self, state: _DocState, words: list[str], certain: bool) -> tuple[Kind | None, str, str]:
        v = self.vocab
        first = words[0]
        outside = f"{first}: a tool outside the acceptance's python chain"
        if first in v.chain_words:
            return Kind.CHAIN, "chain", _CHAIN_WHY
        if first == "curl":
            urls = [w for w in words[1:] if _URL.match(w)]
            if urls and all(_LOOPBACK.match(u) for u in urls):
                return Kind.RUN, "client", ""
            return Kind.SETUP, "setup", self._fetch_text(words)
        if v.is_setup(first):
            return Kind.SETUP, "setup", self._fetch_text(words)
        if first in v.handled:
            return Kind.HANDLED, "handled", "tipc stops the processes it started itself (by process group)"
        if first in v.outside:
            return Kind.OUTSIDE, "other", outside
        if first in v.utilities:
            return Kind.RUN, "data", ""
        if certain and not first.endswith(":"):
            rel = _norm(state.cwd, first)
            if shutil.which(first) or (rel is not None and (self.repo / rel).is_file()):
                return Kind.OUTSIDE, "other", outside
        return None, "", ""

    def _python_kind(self, state: _DocState, words: list[str]) -> tuple[Kind | None, str, str]:
        v = self.vocab
        script, module, rest = _python_parts(words)
        if module is not None and module.split(".")[0] in v.setup_modules:
            return Kind.SETUP, "setup", self._fetch_text(words[words.index("-m") + 2 :], installer="pip")
        if module is not None and v.is_launcher(module):
            inner = next((w for w in rest if w.endswith(".py")), "")
            entry = v.purpose_of(inner, tuple(rest), None)
            return Kind.RUN, entry.purpose if entry is not None else "other", ""
        if module == "tipc" and (not rest or rest[0] != "serve"):
            return Kind.CHAIN, "chain", _CHAIN_WHY
        entry = v.purpose_of(script or "", tuple(rest), module)
        if entry is not None and entry.outside:
            return (
                Kind.OUTSIDE,
                entry.purpose,
                f"a {entry.purpose} script, outside the acceptance's python chain",
            )
        return Kind.RUN, entry.purpose if entry is not None else "other", ""

    def _fetch_text(self, words: list[str], installer: str = "") -> str:
        """What a set-up command would fetch or install, in words."""
        first = installer or words[0]
        rest = [w for w in words[1:] if not w.startswith("-")]
        urls = [w for w in words if _URL.match(w)]
        if first == "git":
            clone = rest[:1] == ["clone"]
            what = (
                f"would clone {(urls or rest[1:2] or ['?'])[0]}"
                if clone
                else f"would run git {' '.join(rest[:2])}"
            )
        elif re.match(r"pip[0-9.]*$", first) or installer == "pip":
            what = self._pip_text(words, rest)
        elif urls:
            what = "would download " + ", ".join(urls[:3])
        else:
            what = f"would run {' '.join(words[:4])}"
        return f"set-up command: {what}" + ("" if self.network else "; runs only with --network")

    def _pip_text(self, words: list[str], rest: list[str]) -> str:
        req = next((words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-r", "--requirement")), None)
        if req is None:
            return "would install " + (", ".join(w for w in rest[:7] if w != "install") or "packages")
        listed = self._requirements(req)
        return f"would install the packages of {req}" + (f" ({listed})" if listed else "")

    def _requirements(self, req: str) -> str:
        text = read_doc(self.repo / req, self.repo) if _norm(".", req) is not None else None
        if text is None:
            return ""
        names = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
        names = [n for n in names if n and not n.startswith("-")]
        return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")

    def _clone(self, state: _DocState, words: list[str]) -> None:
        """Remember the folder a `git clone` makes: a later `cd` into it is a `cd` into this repo."""
        rest = [w for w in words[words.index("clone") + 1 :] if not w.startswith("-")]
        if not rest:
            return
        url = rest[0]
        name = url.rstrip("/").rsplit("/", 1)[-1]
        name = name[:-4] if name.endswith(".git") else name
        folder = rest[1] if len(rest) > 1 else name
        # This repo when the URL names it, or when it is the README's first clone (its "get the code" step).
        here = re.split(r"[^a-z0-9]+", self.repo.name.lower())
        is_self = name.lower() in here or self.repo.name.lower() == name.lower()
        if state.doc == self._readme and not self.cloned:
            is_self = True
        self.cloned = True
        state.clones[folder.lower()] = is_self

    # ---- state

    def _state(self, state: _DocState, line: int, text: str, words: list[str]) -> None:
        first = words[0]
        why = ""
        if first in ("cd", "pushd"):
            why = self._cd(state, words[1] if len(words) > 1 else "")
        elif first == "export":
            for word in words[1:]:
                name, sep, value = word.partition("=")
                if sep and _ENV_WORD.match(word):
                    state.env[name] = _expand(value, state.env)
        elif first == "unset":
            for name in words[1:]:
                state.env.pop(name, None)
        elif first == "popd":
            state.cwd, state.outside = ".", ""
        else:
            why = f"{first}: shell state tipc does not carry from one command to the next"
        self.commands.append(DocCommand("", state.doc, line, text, state.cwd, Kind.STATE, "state", why))

    def _cd(self, state: _DocState, written: str) -> str:
        unset = [m for m in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", written) if m not in state.env]
        if unset and not (written.startswith("$") and state.clones and list(state.clones.values())[-1]):
            state.outside = f"cd {written} names ${unset[0]}, which the docs never set"
            return state.outside
        target = _expand(written, state.env)
        if not target or target == "~" or target.startswith(("/", "~", "$")):
            if written.startswith("$") and state.clones and list(state.clones.values())[-1]:
                state.cwd, state.outside = ".", ""  # `cd $repo_name` after a clone of this repo
                return "into the clone: the repo itself"
            state.outside = f"cd {written or '~'} leaves the repo"
            return state.outside
        head = target.strip("/").split("/", 1)[0]
        if state.clones.get(head.lower()):
            state.cwd, state.outside, state.cwd_dep, state.cwd_missing = (
                self._into_clone(target),
                "",
                None,
                "",
            )
            return f"into the clone of this repo: {state.cwd}"
        rel = _norm(state.cwd, target)
        if rel is None:
            state.outside = f"cd {target} leaves the repo"
            return state.outside
        state.cwd, state.outside, state.cwd_dep, state.cwd_missing = rel, "", None, ""
        if not (self.repo / rel).is_dir():
            made = self._maker(rel)
            if made is not None:
                state.cwd_dep = made.step_id
            else:
                state.cwd_missing = (
                    f"its working folder {rel} is not in the repo and no documented command makes it"
                )
        return ""

    def _into_clone(self, target: str) -> str:
        """The folder a `cd` into a cloned repo reaches here: the longest tail of the path that is a folder
        of this repo (the clone is this repo, maybe as a folder of a larger one), else the root."""
        parts = [p for p in target.strip("/").split("/")[1:] if p and p != "."]
        for i in range(len(parts)):
            tail = "/".join(parts[i:])
            if (self.repo / tail).is_dir():
                return tail
        return "."

    # ---- the step

    def _step(self, state: _DocState, sid: str, w: _Written) -> None:
        cwd, argv, depends, na = self._placement(state, sid, w)
        background = w.seg.background or (w.purpose == "serve" and w.kind is Kind.RUN)
        if not background:
            depends = [*state.servers, *depends]  # a server of this doc runs until its last dependent ends
        shell = w.seg.shell and w.kind is Kind.RUN
        argv_t = (
            ("bash", "-c", shlex.join(argv) if argv != list(w.words) else w.seg.text)
            if shell
            else tuple(argv)
        )
        requires = self._serving_modules(w, argv_t, cwd, shell)
        step = Step(
            id=sid,
            stage=_STAGES.get(w.purpose, Stage.OTHER),
            argv=argv_t,
            cwd=cwd,
            env=tuple(sorted({**state.env, **w.env}.items())),
            depends_on=tuple(dict.fromkeys(d for d in depends if d != sid)),
            status_command=argv_t[2] if shell else shlex.join(argv_t),
            shell=shell,
            background=background,
            ready_url=_server_url(argv_t, self.repo / cwd) if background and not shell else None,
            source_lines=(w.line,),
            requires_modules=requires,
            requires_reason=PADDLE_SERVING_REASON if requires else "",
            writes_unknown="a documented command writes where the docs say",
            not_applicable=na,
        )
        self.steps.append(step)
        if background and w.kind is Kind.RUN and not na:
            state.servers.append(sid)
        self.commands.append(
            DocCommand(sid, state.doc, w.line, w.text, cwd, w.kind, w.purpose, na or w.why, background)
        )
        runs = w.kind in (Kind.RUN, Kind.SETUP) and not na
        self._remember(sid, f"{state.doc}:{w.line}", w.text, cwd, list(w.words), w.kind, runs=runs)
        self._redirect_note(state.doc, w)

    def _redirect_note(self, doc: str, w: _Written) -> None:
        if w.redirect:
            self.notes.append(
                f"{doc}:{w.line}: the output redirection `{w.redirect}` is left out: tipc keeps the "
                "output in the step's log"
            )

    def _serving_modules(self, w: _Written, argv: tuple[str, ...], cwd: str, shell: bool) -> tuple[str, ...]:
        """The Paddle Serving modules a serving command needs (the runner skips it, saying so, without)."""
        if w.kind is not Kind.RUN or w.purpose not in ("serve", "convert", "client") or shell:
            return ()
        return _module_requirements(list(argv), self.repo / cwd)

    def _placement(self, state: _DocState, sid: str, w: _Written) -> tuple[str, list[str], list[str], str]:
        """(cwd, argv, depends_on, not_applicable): where a command runs, what it needs, why not here."""
        runnable = w.kind is Kind.RUN or (w.kind is Kind.SETUP and self.network)
        na = "" if runnable else w.why
        cwd, argv = state.cwd, list(w.words)
        depends: list[str] = []
        if runnable:
            cwd, argv, depends, na = self._needs(state, sid, w.line, argv, w.kind, w.purpose)
        if runnable and not na and not self.sandboxed:
            na = "documented commands write where the docs say: they run only in tipc's sandbox"
        if w.kind is Kind.RUN and not na and w.purpose == "serve" and not w.seg.background:
            self.notes.append(
                f"{state.doc}:{w.line}: a server written in the foreground: started in the background"
            )
        return cwd, argv, depends, na

    def _needs(
        self, state: _DocState, sid: str, line: int, argv: list[str], kind: Kind, purpose: str
    ) -> tuple[str, list[str], list[str], str]:
        """(cwd, argv, depends_on, not_applicable): where the command runs and what it reads, resolved."""
        cwd = state.cwd
        depends: list[str] = [state.cwd_dep] if state.cwd_dep is not None else []
        if state.outside:
            return cwd, argv, depends, f"runs outside the repo ({state.outside})"
        if state.cwd_missing:
            return cwd, argv, depends, state.cwd_missing
        if kind is Kind.SETUP:
            return cwd, argv, depends, ""
        script_at = _script_index(argv)
        if script_at is not None:
            cwd = self._script_cwd(state, cwd, argv[script_at])
            if cwd != state.cwd:
                depends = []
        why = self._not_here(argv, purpose)
        if why:
            return cwd, argv, depends, why
        na = ""
        for key, value, index in self._inputs(argv, script_at):
            dep, reason = self._need(sid, key, value, index, argv, cwd)
            if dep is not None:
                depends.append(dep)
            na = na or reason
        return cwd, argv, depends, na

    def _not_here(self, argv: list[str], purpose: str) -> str:
        """Why a command cannot run in this sandbox at all ("" when it can)."""
        if _PYTHON.match(argv[0]):
            _, module, _ = _python_parts(argv)
            if module is not None and self.vocab.is_launcher(module):
                if self.overrides.device == "cpu":
                    return f"a multi-device launch ({module}) under --device cpu"
                if self.gpus is False:  # the docs are right for a GPU machine: not the repo's failure
                    return f"a multi-device launch ({module}) on a machine without a GPU"
        if purpose == "data":
            outside = next((w for w in argv[1:] if w.startswith(("/", "~")) and w != "/dev/null"), None)
            if outside is not None:
                return f"touches {outside}, outside the repo"
        return ""

    def _need(
        self, sid: str, key: str, value: str, index: int, argv: list[str], cwd: str
    ) -> tuple[str | None, str]:
        """(the step that makes an input, why the command cannot run without it) for one input it reads; a
        dataset the repo does not ship is replaced by the lite data first (argv is changed in place)."""
        norm = norm_key(key) if key else ""
        rel = _norm(cwd, value)
        if (rel is None or not _exists(self.repo, rel)) and key and self.vocab.data_key.search(norm):
            used = self._substitute(sid, key, value, index, argv, cwd)
            if used is not None:
                value, rel = used, _norm(cwd, used)
        if rel is None:
            return None, f"needs {value}, outside the repo"
        if _exists(self.repo, rel):
            return None, ""
        if rel == "test_tipc/output" or rel.startswith("test_tipc/output/"):
            chain = next((m for m in reversed(self.made) if self._is_chain(m.step_id)), None)
            if chain is not None:
                return chain.step_id, ""
            return None, f"needs {value}, which the TIPC chain's script writes (tipc runs the chain itself)"
        made = self._maker(rel)
        if made is not None:
            return made.step_id, ""
        if not _at_top(self.repo, rel):
            return None, ""  # inside a folder the repo ships: it runs, and a typo fails with its own error
        return None, self._missing(rel, value, key, norm)

    def _missing(self, rel: str, value: str, key: str, norm: str) -> str:
        """Why a command cannot run without an input the repo lacks and no documented command makes."""
        if _ext(rel) in self.vocab.weights_ext or (key and self.vocab.weights_key.search(norm)):
            return self._missing_weights(value)
        if _ext(rel) in self.vocab.archive_ext:
            return f"needs {value}, an archive the repo does not ship and no documented command makes"
        if key and self.vocab.data_key.search(norm):
            return (
                f"needs the dataset {value}, which the repo does not ship (the TIPC config has no lite data "
                f"for --{key})"
            )
        return f"needs {value}, which is not in the repo and no documented command makes"

    def _is_chain(self, step_id: str) -> bool:
        cmd = next((c for c in self.commands if c.step_id == step_id), None)
        return cmd is not None and cmd.kind is Kind.CHAIN

    def _missing_weights(self, value: str) -> str:
        if self.downloads:
            where, text = self.downloads[-1]
            return (
                f"needs the weights {value}, which the repo does not ship; the docs download weights "
                f"(`{text[:100]}`, {where}), which cannot happen offline"
            )
        return f"needs the weights {value}, which the repo does not ship and no documented command makes"

    def _script_cwd(self, state: _DocState, cwd: str, script: str) -> str:
        """Where the script is found: the working folder, else beside the doc, else the repo root."""
        here = _norm(cwd, script)
        if here is not None and (self.repo / here).is_file():
            return cwd
        doc_dir = posixpath.dirname(state.doc) or "."
        for folder in (doc_dir, "."):
            found = _norm(folder, script)
            if found is not None and (self.repo / found).is_file():
                if folder != cwd:
                    self.notes.append(
                        f"{state.doc}: {script} is not in {cwd}: run from {folder}, where it is"
                    )
                return folder
        return cwd

    def _inputs(self, argv: list[str], script_at: int | None) -> list[tuple[str, str, int]]:
        """(option key or "", value, word index) of the path-like values a command reads."""
        first = argv[0]
        if first in ("cp", "mv", "ln"):
            operands = [i for i in range(1, len(argv)) if not argv[i].startswith("-")]
            return [("", argv[i], i) for i in operands[:-1] if "$" not in argv[i]]
        if first in ("tar", "unzip"):
            archives = self.vocab.archive_ext
            return [
                ("", w, i) for i, w in enumerate(argv) if i and not w.startswith("-") and _ext(w) in archives
            ]
        if first in ("mkdir", "rm", "touch", "echo", "cd", "wget", "curl", "git", "sleep", "printf"):
            return []
        return self._argument_inputs(argv, (script_at + 1) if script_at is not None else 1)

    def _argument_inputs(self, argv: list[str], start: int) -> list[tuple[str, str, int]]:
        """The options' path values (not the outputs) and the path-like operands after `start`."""
        found: list[tuple[str, str, int]] = []
        taken: set[int] = set()
        for key, value, index in _options(argv[start:]):
            taken.add(index + start)
            if not self.vocab.output_key.search(norm_key(key)) and _looks_like_path(value):
                found.append((key, value, index + start))
        for i in range(start, len(argv)):
            word, before = argv[i], argv[i - 1]
            option_value = before.startswith("-") and "=" not in before
            if i not in taken and not word.startswith("-") and _looks_like_path(word) and not option_value:
                found.append(("", word, i))
        return found

    def _substitute(
        self, sid: str, key: str, value: str, index: int, argv: list[str], cwd: str
    ) -> str | None:
        """The TIPC config's lite value for `key` in place of a dataset the repo does not ship (argv changed
        in place, the substitution recorded); None when the config has none."""
        found = self.lite.get(norm_key(key))
        if found is None:
            return None
        lite, number, _ = found
        lite_rel = _norm(".", lite)
        if lite_rel is None or lite == value:
            return None
        used = lite if cwd == "." else posixpath.relpath(lite_rel, cwd)
        word = argv[index]
        argv[index] = word[: len(word) - len(value)] + used if word.endswith(value) else used
        self.substitutions.append(Substitution(sid, key, value, used, f"{self.config_rel}:{number}"))
        return used

    def _maker(self, rel: str) -> _Made | None:
        """The latest earlier command that makes or names `rel` (or a folder above it, or its file name)."""
        base = rel.rstrip("/").rsplit("/", 1)[-1]
        for made in reversed(self.made):
            if rel in made.paths or any(
                rel.startswith(p.rstrip("/") + "/") for p in made.paths if p not in (".", "")
            ):
                return made
            if any(p.startswith(rel.rstrip("/") + "/") for p in made.paths):
                return made
        for made in reversed(self.made):
            if base and base in made.basenames:
                return made
        return None

    def _remember(
        self, sid: str, where: str, text: str, cwd: str, words: list[str], kind: Kind, runs: bool
    ) -> None:
        """What the command makes, for the commands after it: the outputs of a command tipc understands (a
        python script's output options, mkdir, cp/mv/ln targets, an unpacked archive's folder), every path
        and downloaded file name of one it does not run or understand (a set-up, a tool outside the chain)."""
        paths: set[str] = set()
        basenames: set[str] = set()
        first = words[0] if words else ""
        understood = kind is Kind.RUN and not (first in ("bash", "sh", "zsh") or first.endswith(".sh"))
        for value in self._made_values(words, understood):
            if _URL.match(value):
                name = value.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]
                name = name[:-4] if name.endswith(".git") else name
                if name:
                    basenames.update((name, _archive_stem(name)))
                    if _ext(name) in self.vocab.weights_ext:
                        self.downloads.append((where, text))
                continue
            rel = _norm(cwd, value)
            if rel is None:
                continue
            paths.add(rel)
            if _ext(rel) in self.vocab.archive_ext:  # unpacked here, or beside the archive
                stem = _archive_stem(rel)
                paths.update((posixpath.join(posixpath.dirname(rel), stem), _norm(cwd, stem) or stem))
        self.made.append(_Made(sid, where, text, paths, basenames, runs))

    def _made_values(self, words: list[str], understood: bool) -> list[str]:
        """The words naming what a command makes (every path-like word of one tipc does not understand)."""
        first = words[0] if words else ""
        operands = [w for w in words[1:] if not w.startswith("-")]
        if not understood:
            return _mentioned(words, operands[-1:])
        if first in ("mkdir", "cp", "mv", "ln"):
            return operands if first == "mkdir" else operands[-1:]
        if first in ("tar", "unzip"):
            folders = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-C", "-d", "--directory")]
            return [*(w for w in operands if _ext(w) in self.vocab.archive_ext), *folders]
        outputs = self.vocab.output_key
        return [value for key, value, _ in _options(words[1:]) if value and outputs.search(norm_key(key))]


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


def _server_url(argv: tuple[str, ...], cwd: Path) -> str | None:
    url = _ready_url(list(argv), cwd)
    if url is not None:
        return url
    for i, word in enumerate(argv):
        if word in ("--port", "-p") and i + 1 < len(argv) and argv[i + 1].isdigit():
            return f"tcp://127.0.0.1:{argv[i + 1]}"
        if word.startswith("--port=") and word[7:].isdigit():
            return f"tcp://127.0.0.1:{word[7:]}"
    return None


def backbone_configs(repo: Path, vocab: Vocabulary | None = None) -> list[tuple[str, Path]]:
    """(backbone, config) of the repo's train configs that name a lightweight backbone of seed 004 §4.3.3, in
    their path or model_name."""
    from tipc.config.discover import find_configs

    vocab = vocab or load_vocabulary()
    out: list[tuple[str, Path]] = []
    for path in find_configs(repo):
        text = read_doc(path, repo) or ""
        model = next(
            (ln.split(":", 1)[1].strip() for ln in text.splitlines()[:8] if ln.startswith("model_name:")), ""
        )
        name = vocab.backbone_in(path.relative_to(repo).as_posix()) or vocab.backbone_in(model)
        if name is not None:
            out.append((name, path))
    return out


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"


def plan_documented(
    repo: Path,
    *,
    model_name: str,
    config: Path | None = None,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
    sandboxed: bool = True,
    network: bool = False,
    gpus: bool | None = None,
    vocab: Vocabulary | None = None,
) -> Documented:
    """The documented commands of `repo` as a plan (chain "documented"); `config` is the TIPC config whose
    lite data stands in for a full dataset the repo does not ship; `gpus`: whether this machine has a GPU
    (False: a multi-device launch is not run here; None: not known)."""
    repo = Path(repo).resolve()
    vocab = vocab or load_vocabulary()
    config_rel = ""
    if config is not None:
        try:
            config_rel = Path(config).resolve().relative_to(repo).as_posix()
        except ValueError:
            config_rel = str(config)
    planner = _Planner(
        repo=repo,
        vocab=vocab,
        overrides=overrides,
        lite=lite_values(config, repo),
        config_rel=config_rel,
        sandboxed=sandboxed,
        network=network,
        gpus=gpus,
    )
    docs = doc_paths(repo, vocab)
    planner._readme = docs[0] if docs and "/" not in docs[0] else ""
    for doc in docs:
        planner.read(doc)
    steps = tuple(planner.steps)
    notes = list(planner.notes)
    if overrides.device == "cpu":
        from tipc.planning.device_flags import add_cpu_flags

        steps, findings = add_cpu_flags(steps, repo, "documented commands")
        notes.extend(f.message for f in findings)
    output_dir = f"test_tipc/output/{_safe(model_name)}/{MODE}"
    plan = Plan(
        config_path=str(config) if config is not None else "",
        repo=str(repo),
        mode=MODE,
        dialect=CHAIN,
        model_name=model_name,
        output_dir=output_dir,
        results_log=f"{output_dir}/results_documented.log",
        status_format="template",
        steps=steps,
        overrides=overrides,
        chain=CHAIN,
    )
    commands = tuple(
        replace(c, cwd=next((s.cwd for s in steps if s.id == c.step_id), c.cwd)) if c.step_id else c
        for c in planner.commands
    )
    return Documented(plan, commands, tuple(planner.substitutions), tuple(dict.fromkeys(notes)), tuple(docs))
