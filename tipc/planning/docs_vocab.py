"""The vocabulary of documented commands (`specs/documented/commands.yaml`, schema tipc.documented/1), loaded
and validated once: which docs are read, which code blocks are shell, and what kind of command a word is.

Kept as data so a new tool or doc layout is a line of YAML, not a branch in the planner; every problem in the
file is a located ConfigError (exit 2).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "tipc.documented/1"
FILENAME = "commands.yaml"


@dataclass(frozen=True)
class DocSource:
    """One entry of `docs`: a glob (every match, sorted) or the first existing file of `first_of`."""

    glob: str | None
    first_of: tuple[str, ...]


@dataclass(frozen=True)
class Purpose:
    purpose: str
    flags: tuple[re.Pattern[str], ...]
    names: tuple[re.Pattern[str], ...]
    modules: tuple[re.Pattern[str], ...]
    outside: bool


@dataclass(frozen=True)
class Vocabulary:
    docs: tuple[DocSource, ...]
    shell_info: frozenset[str]
    prompts: tuple[re.Pattern[str], ...]
    placeholders: tuple[re.Pattern[str], ...]
    setup_words: frozenset[str]
    setup_patterns: tuple[re.Pattern[str], ...]
    setup_modules: frozenset[str]
    chain_words: frozenset[str]
    chain_scripts: tuple[re.Pattern[str], ...]
    state: frozenset[str]
    handled: frozenset[str]
    outside: frozenset[str]
    utilities: frozenset[str]
    purposes: tuple[Purpose, ...]
    launchers: tuple[re.Pattern[str], ...]
    output_key: re.Pattern[str]
    weights_key: re.Pattern[str]
    data_key: re.Pattern[str]
    weights_ext: frozenset[str]
    archive_ext: frozenset[str]
    backbones: tuple[str, ...] = ()

    def backbone_in(self, text: str) -> str | None:
        """The backbone `text` names (spelled with any case, dashes or underscores), or None."""
        flat = squash(text)
        return next((b for b in self.backbones if squash(b) in flat), None)

    def is_setup(self, word: str) -> bool:
        return word in self.setup_words or any(p.fullmatch(word) for p in self.setup_patterns)

    def is_chain_script(self, path: str) -> bool:
        return any(p.search(path) for p in self.chain_scripts)

    def purpose_of(self, name: str, flags: tuple[str, ...], module: str | None) -> Purpose | None:
        """The purpose of a script (its file name without folders) or module, its flags first."""
        stem = re.sub(r"\.(py|sh)$", "", name.rsplit("/", 1)[-1])
        for entry in self.purposes:
            if any(p.search(f) for p in entry.flags for f in flags):
                return entry
            if module is not None and any(p.search(module) for p in entry.modules):
                return entry
            if stem and any(p.search(stem) for p in entry.names):
                return entry
        return None

    def is_launcher(self, module: str) -> bool:
        return any(p.search(module) for p in self.launchers)


def squash(text: str) -> str:
    """Lower case without separators: MobileNetV3_large_x1_0 and mobilenet_v3_large_x1.0 read alike."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def default_path() -> Path:
    from tipc.core.resources import data_dir

    return data_dir("specs") / "documented" / FILENAME


def _regex_problem(text: str) -> str | None:
    from tipc.core.yamlschema import regex_problem

    return regex_problem(text)


def _schema() -> Any:
    from tipc.core.yamlschema import Bool, Enum, Field, Map, Seq, Str

    regex = Str(check=_regex_problem, what="a Python regex")
    regexes = Seq(regex, min_items=1)
    words = Seq(Str(), min_items=1)
    doc = Map({"glob": Field(Str()), "first_of": Field(words)}, min_items=1)
    purpose = Map(
        {
            "purpose": Field(Str(pattern=r"[a-z_]+"), True),
            "flags": Field(regexes, default=[]),
            "names": Field(regexes, default=[]),
            "modules": Field(regexes, default=[]),
            "outside": Field(Bool(), default=False),
        }
    )
    return Map(
        {
            "schema": Field(Enum((SCHEMA,)), True, identifies=True),
            "docs": Field(Seq(doc, min_items=1), True),
            "shell_info": Field(words, True),
            "prompts": Field(regexes, True),
            "placeholders": Field(regexes, True),
            "kinds": Field(
                Map(
                    {
                        "setup": Field(
                            Map(
                                {
                                    "words": Field(words, True),
                                    "patterns": Field(regexes, default=[]),
                                    "python_modules": Field(words, default=[]),
                                }
                            ),
                            True,
                        ),
                        "chain": Field(
                            Map({"words": Field(words, default=[]), "scripts": Field(regexes, default=[])}),
                            True,
                        ),
                        "state": Field(words, True),
                        "handled": Field(words, True),
                        "outside": Field(words, True),
                        "utilities": Field(words, True),
                    }
                ),
                True,
            ),
            "purposes": Field(Seq(purpose, min_items=1), True),
            "launchers": Field(regexes, True),
            "keys": Field(
                Map(
                    {
                        "output": Field(regex, True),
                        "weights": Field(regex, True),
                        "data": Field(regex, True),
                    }
                ),
                True,
            ),
            "weights_ext": Field(words, True),
            "archive_ext": Field(words, True),
            "backbones": Field(words, default=[]),
        }
    )


def _compile(patterns: list[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


def load(path: Path | None = None) -> Vocabulary:
    """The vocabulary at `path` (default: the one tipc ships, read once)."""
    if path is None:
        return _default()
    return _load(path)


@functools.cache
def _default() -> Vocabulary:
    return _load(default_path())


def _load(path: Path) -> Vocabulary:
    from tipc.core.errors import ConfigError
    from tipc.core.yamlschema import Document

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    doc = Document.from_bytes(data, str(path))
    raw = doc.conform(_schema())
    for i, entry in enumerate(raw["docs"]):
        if ("glob" in entry) == ("first_of" in entry):
            raise doc.error(("docs", i), "give exactly one of glob, first_of")
    kinds = raw["kinds"]
    keys = raw["keys"]
    return Vocabulary(
        docs=tuple(DocSource(e.get("glob"), tuple(e.get("first_of") or ())) for e in raw["docs"]),
        shell_info=frozenset(w.lower() for w in raw["shell_info"]),
        prompts=_compile(raw["prompts"]),
        placeholders=_compile(raw["placeholders"]),
        setup_words=frozenset(kinds["setup"]["words"]),
        setup_patterns=_compile(kinds["setup"]["patterns"]),
        setup_modules=frozenset(kinds["setup"]["python_modules"]),
        chain_words=frozenset(kinds["chain"]["words"]),
        chain_scripts=_compile(kinds["chain"]["scripts"]),
        state=frozenset(kinds["state"]),
        handled=frozenset(kinds["handled"]),
        outside=frozenset(kinds["outside"]),
        utilities=frozenset(kinds["utilities"]),
        purposes=tuple(
            Purpose(
                e["purpose"], _compile(e["flags"]), _compile(e["names"]), _compile(e["modules"]), e["outside"]
            )
            for e in raw["purposes"]
        ),
        launchers=_compile(raw["launchers"]),
        output_key=re.compile(keys["output"], re.IGNORECASE),
        weights_key=re.compile(keys["weights"], re.IGNORECASE),
        data_key=re.compile(keys["data"], re.IGNORECASE),
        weights_ext=frozenset(e.lower() for e in raw["weights_ext"]),
        archive_ext=frozenset(e.lower() for e in raw["archive_ext"]),
        backbones=tuple(raw["backbones"]),
    )
