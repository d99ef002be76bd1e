"""What a documented command needs and makes (`_Inputs`): each input found in the repo, made by an earlier
command (a dependency), replaced by the config's lite data (a substitution) or missing (why the step is not
applicable); a multi-device launch on a machine without a GPU (`_not_here`); what the command makes,
remembered for the commands after it.
"""

from __future__ import annotations

import posixpath

from tipc.planning.documented.model import Kind, Substitution
from tipc.planning.documented.state import _DocState, _Made, _PlannerState
from tipc.planning.documented.words import (
    _PYTHON,
    _URL,
    _archive_stem,
    _at_top,
    _exists,
    _ext,
    _looks_like_path,
    _mentioned,
    _norm,
    _options,
    _python_parts,
    _script_index,
    norm_key,
)


class _Inputs(_PlannerState):
    """What a documented command needs and makes: its inputs, each found in the repo, made by an earlier
    command (a dependency), replaced by the lite data (a substitution) or missing (why it cannot run); why it
    cannot run on this machine (`_not_here`); what it makes, remembered for the commands after it."""

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
