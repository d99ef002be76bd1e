"""A real headless browser for tests that look at a page as a person would (Debian's chromium)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest


def chromium() -> str:
    """The chromium binary, or skip the calling test with the reason."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("no headless chromium here (scripts/system_deps.sh installs it as root)")
    return found


def screenshot(page: Path, png: Path, *, width: int = 1280, height: int = 2000) -> Path:
    """Render a local page offline and write a PNG of it; fail the test if the browser does not write one."""
    png.parent.mkdir(parents=True, exist_ok=True)
    argv = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
        f"--screenshot={png}",
        page.resolve().as_uri(),
    ]
    subprocess.run(argv, check=False, capture_output=True, timeout=120)
    assert png.exists() and png.stat().st_size > 0, f"chromium wrote no screenshot of {page}"
    return png


def dump_dom(page: Path) -> str:
    """The page's DOM after its scripts ran, as the browser serialises it."""
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.resolve().as_uri()]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120)
    return done.stdout


def measure(page: Path, expression: str, *, width: int = 1400, height: int = 900) -> Any:
    """What a JavaScript `expression` finds in the laid-out page at a `width` x `height` viewport, as JSON.

    The page under test carries no script (its CSP forbids one), so the browser loads a measuring copy beside
    it: the CSP meta removed and one script appended that evaluates the expression after layout and writes
    its JSON into the DOM. Nothing else changes, so what it measures is the page's own layout."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text, count=1)
    probe = (
        "<script>document.documentElement.setAttribute('data-measured', JSON.stringify((function(){return ("
        + expression
        + ");})()));</script>"
    )
    at = text.rfind("</body>")
    copy = page.with_name(page.stem + ".measure.html")
    copy.write_text(text[:at] + probe + text[at:] if at >= 0 else text + probe, encoding="utf-8")
    argv = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        f"--window-size={width},{height}", "--dump-dom", copy.resolve().as_uri(),
    ]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120)
    found = re.search(r'<html[^>]*\sdata-measured="([^"]*)"', done.stdout)
    assert found, f"the measuring script left nothing in {copy}: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def artefacts(tmp_path: Path) -> Path:
    """Where a test keeps what a person should be able to look at afterwards (screenshots):
    $TIPC_TEST_ARTEFACTS when set (CI uploads it), else the test's own tmp folder."""
    folder = Path(os.environ.get("TIPC_TEST_ARTEFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
