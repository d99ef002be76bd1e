from __future__ import annotations

import pytest

from tipc.core.fs import is_safe_relative
from tipc.judge.rules.files import glob_regex


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.md", "README.md", True),
        ("*.md", "docs/a.md", False),
        ("**/*.md", "README.md", True),
        ("**/*.md", "a/b/c.md", True),
        ("docs/**", "docs/a/b.png", True),
        ("{,tools/}train.py", "tools/train.py", True),
        ("{,tools/}train.py", "x/train.py", False),
        ("lite_data*.t[ag]*", "lite_data_v2.tar", True),
        ("[!a]b", "ab", False),
        ("a?c", "a/c", False),
        ("a+b(c).txt", "a+b(c).txt", True),
    ],
)
def test_glob_regex(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is hit


@pytest.mark.parametrize(
    ("path", "safe"),
    [
        ("a/b", True),
        ("../a", False),
        ("a/../../b", False),
        ("/etc", False),
        ("~/x", False),
        ("C:/x", False),
        ("", False),
    ],
)
def test_is_safe_relative(path: str, safe: bool) -> None:
    assert is_safe_relative(path) is safe
