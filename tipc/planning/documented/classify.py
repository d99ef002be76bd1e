"""Command classification: what a documented command is from its words (`_Classifier._classify` -> kind,
purpose, why: run, setup/download, chain, handled, outside, template), following the vocabulary
(specs/documented/commands.yaml), and what a setup command would fetch or install.
"""

from __future__ import annotations

import re
import shutil

from tipc.planning.documented.model import Kind
from tipc.planning.documented.reading import read_doc
from tipc.planning.documented.state import _DocState, _PlannerState
from tipc.planning.documented.words import _PYTHON, _URL, _norm, _python_parts

_URL_IN = re.compile(r"https?://[^\s'\"()]+", re.IGNORECASE)
_LOOPBACK = re.compile(r"^[a-z]+://(127\.\d+\.\d+\.\d+|localhost|\[::1\]|0\.0\.0\.0)([:/]|$)", re.IGNORECASE)
_CHAIN_WHY = "the TIPC chain: tipc runs it itself (the chain rules judge it)"
_COMMAND_WORD = re.compile(r"[A-Za-z0-9_./~][\w./+~-]*")


class _Classifier(_PlannerState):
    """What a documented command is, from its words: its kind, purpose and why (`_classify`); what a
    setup command would fetch or install."""

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
