"""One module per CLI verb, exposing add_arguments(parser) and run(args) -> int (its help: cli.VERBS)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def unwritable_dir(path: Path) -> str | None:
    """Why `path` cannot be (created and) written as a folder, or None. Checked before any work starts, so a
    typo in an output path costs an error message, not a run whose results cannot be saved."""
    if path.exists():
        if not path.is_dir():
            return f"{path} is a file, expected a folder"
        return None if os.access(path, os.W_OK) else f"{path} is not writable"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is a file, expected a folder"
            return None if os.access(parent, os.W_OK) else f"{parent} is not writable"
    return None


def non_negative_int(text: str) -> int:
    """argparse type for counts that may be zero: a whole number >= 0 (usage error, exit 2, otherwise)."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def positive_int(text: str) -> int:
    """argparse type for counts and limits: a whole number >= 1 (usage error, exit 2, otherwise)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)
