"""The previous tokenizer (what tipc.config.bash used before its linear one): the oracle the tokenizer tests
compare with, and the "previous approach" of bench/lint_corpus.py."""

from __future__ import annotations

import shlex


def shlex_words(command: str) -> list[str] | None:
    """Words of `command` by the stdlib's POSIX shlex (no comments); None when the quoting does not close."""
    lexer = shlex.shlex(command, posix=True)
    lexer.whitespace = " \t\n"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None
