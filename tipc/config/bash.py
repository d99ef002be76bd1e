"""Small, exact emulations of the bash idioms the TIPC scripts build commands with.

Each function mirrors one shell behaviour (word splitting with a non-whitespace IFS, the scripts'
`func_set_params` / `func_parser_*` helpers, `[ a = b ]` tests on unquoted words). Keeping them here, pure and
tiny, lets the planner read like the scripts while staying testable.
"""

from __future__ import annotations

import functools
import re

OMITTED = " "  # what `func_set_params` prints for an omitted parameter


def ifs_split(text: str, sep: str) -> list[str]:
    """Split like bash does for an unquoted expansion when IFS is one non-whitespace character.

    Every separator ends a field; an empty string yields no field at all and a trailing separator does not
    start a new one ("a|" -> ["a"]), but a leading or doubled separator yields empty fields.
    """
    if text == "":
        return []
    parts = text.split(sep)
    if parts[-1] == "":
        parts.pop()
    return parts


def common_fields(line: str) -> list[str]:
    """`IFS=":"; array=(${line})` as common_func.sh does it: split on every colon."""
    return ifs_split(line, ":")


def common_key(line: str) -> str:
    fields = common_fields(line)
    return fields[0] if fields else ""


def common_value(line: str) -> str:
    """Field 1 of the every-colon split; later fields are dropped (URLs become `https`)."""
    fields = common_fields(line)
    return fields[1] if len(fields) > 1 else ""


def first_colon_key(line: str) -> str:
    """PaddleDetection utils_func.sh: the text before the first colon (the whole line without one)."""
    return line.split(":", 1)[0]


def first_colon_value(line: str) -> str:
    """PaddleDetection utils_func.sh: the text after the first colon, or the whole line without one."""
    return line.split(":", 1)[1] if ":" in line else line


@functools.lru_cache(maxsize=1024)  # planning asks it for the same slot in every step of a mode
def mode_value(value: str, mode: str) -> str:
    """`func_parser_params`: the value of the first `mode=value` alternative whose mode equals MODE.

    The value is the text between the first and second `=`; a missing mode (or a plain value) gives "".
    An empty MODE (PaddleClas calls the helper without one) matches only an alternative with an empty mode.
    """
    for alternative in ifs_split(value, "|"):
        fields = ifs_split(alternative, "=")
        alt_mode = fields[0] if fields else ""
        if alt_mode == mode:
            return fields[1] if len(fields) > 1 else ""
    return ""


def is_mode_keyed(value: str) -> bool:
    return any("=" in alt for alt in ifs_split(value, "|"))


def set_param(key: str, value: str) -> str:
    """`func_set_params`: `key=value`, or one space when the key or the value is null/blank/empty."""
    if key == "null":
        return OMITTED
    if value in ("null", " ") or len(value) == 0:
        return OMITTED
    return f"{key}={value}"


def test_eq(word: str, literal: str) -> bool:
    """`[ ${word} = "literal" ]` on an unquoted word: an empty word makes the test error out, i.e. false."""
    return word != "" and word == literal


def test_ne(word: str, literal: str) -> bool:
    """`[ ${word} != "literal" ]`: an empty word errors out (false), so an empty stage script is skipped."""
    return word != "" and word != literal


_REDIRECT = re.compile(r"^\d*>>?|^&>|^\d*<")
_REDIRECT_ALONE = re.compile(r"\d*>>?")
_REDIRECT_START = frozenset("0123456789>&<")

# The pieces of POSIX shell words (what `shlex.shlex(posix=True)` with whitespace " \t\n" reads): unquoted
# text, a single-quoted string, a double-quoted string, an escaped character. Possessive quantifiers: a
# failed match never backtracks, so each character is looked at once, in C.
_PIECES = r"[^ \t\n'\"\\]++|'[^']*+'|\"(?:[^\"\\]++|\\.)*+\"|\\."
_VALID = re.compile(rf"(?:[ \t\n]++|{_PIECES})*+", re.S)
_WORD = re.compile(rf"(?:{_PIECES})++", re.S)
_QUOTED = re.compile(r"'([^']*+)'|\"((?:[^\"\\]++|\\.)*+)\"|\\(.)", re.S)
_BLANKS = re.compile(r"[^ \t\n]+")
_DQ_ESCAPE = re.compile(r"\\([\\\"])")


def _unquoted(m: re.Match[str]) -> str:
    single, double, escaped = m.groups()
    if single is not None:
        return str(single)
    if double is not None:
        # In double quotes a backslash escapes only `"` and itself; before anything else it is kept.
        return _DQ_ESCAPE.sub(r"\1", double)
    return str(escaped)


def shell_words(command: str) -> list[str] | None:
    """POSIX shell words of `command` in linear time (None: unbalanced quotes or a trailing backslash).

    Same results as `shlex.shlex(command, posix=True)` with whitespace " \\t\\n", whitespace_split and no
    commenters, which reads character by character in Python (slow, and quadratic on long tokens). Here the
    scanning is done by regular expressions; Python touches only the words that hold quotes or escapes.
    """
    if "'" not in command and '"' not in command and "\\" not in command:
        return _BLANKS.findall(command)  # no quoting at all: the words are the runs of non-blanks
    if _VALID.fullmatch(command) is None:
        return None
    return [
        _QUOTED.sub(_unquoted, word) if "'" in word or '"' in word or "\\" in word else word
        for word in _WORD.findall(command)
    ]


def is_shell_words(command: str) -> bool:
    """Whether `command` splits into shell words (balanced quotes, no trailing backslash)."""
    if "'" not in command and '"' not in command and "\\" not in command:
        return True
    return _VALID.fullmatch(command) is not None


@functools.lru_cache(maxsize=4096)
def _split_command(command: str) -> tuple[tuple[str, ...], bool]:
    words = shell_words(command)
    tokens = words if words is not None else [t for t in command.split(" ") if t]
    return without_redirections(tokens), words is not None


def without_redirections(tokens: list[str]) -> tuple[str, ...]:
    """Shell words as the command's argv: `2>&1`, `>file` and `> file` (with its target) dropped."""
    argv: list[str] = []
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if token in ("2>&1", "1>&2"):
            continue
        if token[:1] in _REDIRECT_START and _REDIRECT.match(token):
            # `>` alone takes the next word as its target; `>file` carries it.
            if token.rstrip("0123456789") in (">", ">>", "&>", "<") or _REDIRECT_ALONE.fullmatch(token):
                skip_next = True
            continue
        argv.append(token)
    return tuple(argv)


def command_argv(command: str) -> tuple[tuple[str, ...], bool]:
    """`split_command` as an immutable, cached result (the planner's hot path)."""
    return _split_command(command)


def split_command(command: str) -> tuple[list[str], bool]:
    """Split a command string into argv the way `eval` would, dropping redirections.

    Returns (argv, exact): `exact` is False when the string is not valid POSIX shell words (unbalanced
    quotes) and a plain whitespace split was used instead. Linear in the command's length; planning splits
    the same commands in several modes, so results are cached.
    """
    # bash splits words on space, tab and newline only: a CRLF file's `\r` stays inside the words.
    argv, exact = _split_command(command)
    return list(argv), exact


def word_count_nodes(ips: str) -> int:
    """`IFS=","; ips_array=(${ips}); ${#ips_array[@]}`."""
    return len(ifs_split(ips, ","))
