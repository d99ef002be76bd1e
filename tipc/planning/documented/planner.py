"""The planner of the documented commands (`_Planner.read`, doc by doc): each line cut into commands,
classified, `cd` and `export` carried over to the commands after them in the same doc, each command that
runs made a step (its placement, inputs, redirection, server readiness), repeated commands noted once.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path

from tipc.core.steps import Stage, Step
from tipc.planning.documented.classify import _Classifier
from tipc.planning.documented.inputs import _Inputs
from tipc.planning.documented.model import (
    _STAGES,
    ACCEPTANCE_PURPOSES,
    ID_PREFIX,
    MAX_COMMANDS,
    DocCommand,
    Kind,
)
from tipc.planning.documented.reading import code_blocks, logical_lines, read_doc
from tipc.planning.documented.state import _DocState, _Written
from tipc.planning.documented.words import _expand, _norm, _Segment, _strip_redirect, split_segments
from tipc.planning.serving import PADDLE_SERVING_REASON, _module_requirements, _ready_url

_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIX_WORDS = frozenset({"nohup", "time", "exec", "env", "command"})


class _Planner(_Classifier, _Inputs):
    """The documented commands of one repo, read doc by doc into commands and steps (`read`)."""

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
