"""Just enough Markdown reading for spec rules: headings, code (fenced and inline) and image references.

Every item keeps its 1-based line so evidence can point at `file:line`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_HTML_HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.IGNORECASE)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^)]*[\"'])?\s*\)")
_HTML_IMAGE = re.compile(r"<img\b[^>]*\bsrc\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
_TAGS = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str


@dataclass(frozen=True)
class Code:
    line: int
    text: str
    fenced: bool


@dataclass(frozen=True)
class Image:
    line: int
    target: str


@dataclass(frozen=True)
class MarkdownDoc:
    headings: tuple[Heading, ...]
    code: tuple[Code, ...]
    images: tuple[Image, ...]


def parse(text: str) -> MarkdownDoc:
    headings: list[Heading] = []
    code: list[Code] = []
    images: list[Image] = []
    fence: str | None = None
    previous_text: tuple[int, str] | None = None  # candidate setext heading line
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        fence_match = _FENCE.match(line)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
            else:
                code.append(Code(number, line, fenced=True))
            continue
        if fence_match:
            fence = fence_match.group(1)
            previous_text = None
            continue
        atx = _ATX.match(line)
        if atx:
            headings.append(Heading(number, len(atx.group(1)), (atx.group(2) or "").strip()))
            previous_text = None
        elif _SETEXT.match(line) and previous_text is not None:
            level = 1 if line.strip().startswith("=") else 2
            headings.append(Heading(previous_text[0], level, previous_text[1]))
            previous_text = None
        else:
            for html in _HTML_HEADING.finditer(line):
                headings.append(Heading(number, int(html.group(1)), _TAGS.sub("", html.group(2)).strip()))
            previous_text = (number, line.strip()) if line.strip() else None
        for span in _INLINE_CODE.finditer(line):
            code.append(Code(number, span.group(2).strip(), fenced=False))
        for image in _MD_IMAGE.finditer(line):
            images.append(Image(number, image.group(1)))
        for image in _HTML_IMAGE.finditer(line):
            images.append(Image(number, image.group(1)))
    return MarkdownDoc(tuple(headings), tuple(code), tuple(images))
