"""A real headless browser for tests that look at a page as a person would (Debian's chromium)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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
