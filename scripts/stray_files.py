"""Fail on files that must not be committed: anything over 1 MiB, and packages or archives (wheels, zips,
tarballs) whatever their size. Stdlib only.

    python scripts/stray_files.py            # every file git tracks (the test command)
    python scripts/stray_files.py FILE...    # these files (the pre-commit hook passes the staged ones)

Data a test or the demo needs is made by the code, or kept small (the demo's lite_data.tar is 430 KiB).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MAX_BYTES = 1 << 20
PACKAGED = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".egg", ".rwprobe")


def tracked(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return [name for name in out.decode("utf-8", "surrogateescape").split("\0") if name]


def why_stray(path: Path) -> str | None:
    name = path.name.lower()
    packaged = next((s for s in PACKAGED if name.endswith(s)), None)
    if packaged is not None:
        return f"a {packaged} file"
    try:
        size = path.stat().st_size
    except OSError:
        return None  # deleted in the working tree: nothing to commit
    return f"{size / (1 << 20):.1f} MiB (over {MAX_BYTES >> 20} MiB)" if size > MAX_BYTES else None


def main(argv: list[str]) -> int:
    root = Path.cwd()
    names = argv or tracked(root)
    stray = [(name, why) for name in names if (why := why_stray(root / name)) is not None]
    for name, why in stray:
        sys.stderr.write(f"{name}: {why}: not for the repository (remove it with git rm --cached)\n")
    return 1 if stray else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
